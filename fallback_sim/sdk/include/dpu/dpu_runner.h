/*
 * dpu_runner.h: low-level control of DPU execution (upmem-sim's libdpu-compatible headers).
 *
 * The SDK's per-rank / per-DPU run and poll functions are not implemented by upmem-sim and are not declared;
 * use dpu_launch, dpu_sync and dpu_status (dpu.h).
 */
#ifndef UPMEM_SIM_DPU_RUNNER_H
#define UPMEM_SIM_DPU_RUNNER_H

#include <dpu_error.h>
#include <dpu_types.h>

#endif /* UPMEM_SIM_DPU_RUNNER_H */
