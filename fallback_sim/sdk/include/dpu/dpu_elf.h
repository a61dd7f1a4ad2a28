/*
 * dpu_elf.h: DPU ELF files (upmem-sim's libdpu-compatible headers).
 *
 * Only the machine number is declared; the SDK's ELF reading functions are not implemented by upmem-sim.
 * upmem-sim's dpu_load refuses a real DPU binary (e_machine == EM_DPU) with a message naming the simulator build.
 */
#ifndef UPMEM_SIM_DPU_ELF_H
#define UPMEM_SIM_DPU_ELF_H

/* ELF e_machine of DPU binaries. */
#ifndef EM_DPU
#define EM_DPU 245
#endif

#endif /* UPMEM_SIM_DPU_ELF_H */
