/*
 * dpu_characteristics.h: hardware characteristics of the DPU (v1A, the chip the simulator models).
 */
#ifndef DPUSIM_DPU_CHARACTERISTICS_H
#define DPUSIM_DPU_CHARACTERISTICS_H

#define DPU_NR_THREADS 24
#define DPU_NR_ATOMIC_BITS 256
#define DPU_NR_WORK_REGS 24

#endif /* DPUSIM_DPU_CHARACTERISTICS_H */
