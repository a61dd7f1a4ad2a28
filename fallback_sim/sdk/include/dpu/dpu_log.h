/*
 * dpu_log.h: reading a DPU's printf output (upmem-sim's libdpu-compatible headers).
 *
 * Only dpulog_read_for_dpu is declared: the SDK's other log helpers are not implemented by upmem-sim.
 */
#ifndef UPMEM_SIM_DPU_LOG_H
#define UPMEM_SIM_DPU_LOG_H

#include <stdio.h>

#include <dpu_error.h>
#include <dpu_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Writes the printf output of the DPU's last launch to `stream` (the older entry point of dpu_log_read, used as
 * `dpulog_read_for_dpu(dpu.dpu, stdout)` inside DPU_FOREACH).
 */
dpu_error_t dpulog_read_for_dpu(struct dpu_t *dpu, FILE *stream);

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_LOG_H */
