/*
 * dpu_program.h: loaded DPU programs (low-level API; upmem-sim's libdpu-compatible headers).
 *
 * In upmem-sim struct dpu_program_t is opaque: its public fields in the SDK (nr_threads_enabled, printf buffer
 * addresses, symbols, refcount, program_path) are not provided, and the SDK's program functions are not
 * implemented, so none is declared. Use dpu_load (its `program` out-parameter) and dpu_get_symbol (dpu.h).
 */
#ifndef UPMEM_SIM_DPU_PROGRAM_H
#define UPMEM_SIM_DPU_PROGRAM_H

#include <dpu_error.h>
#include <dpu_types.h>

#endif /* UPMEM_SIM_DPU_PROGRAM_H */
