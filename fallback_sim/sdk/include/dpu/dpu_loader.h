/*
 * dpu_loader.h: low-level loading of DPU programs (upmem-sim's libdpu-compatible headers).
 *
 * The SDK's loader functions are not implemented by upmem-sim and are not declared; use dpu_load,
 * dpu_load_from_memory and dpu_load_from_incbin (dpu.h).
 */
#ifndef UPMEM_SIM_DPU_LOADER_H
#define UPMEM_SIM_DPU_LOADER_H

#include <dpu_error.h>
#include <dpu_types.h>

#endif /* UPMEM_SIM_DPU_LOADER_H */
