/*
 * dpu_log_internals.h: a DPU's printf output handed to a printing function (upmem-sim's libdpu-compatible
 * headers), which the SDK's C++ API (<dpu>) uses to write logs to a std::ostream.
 *
 * Only DPU_LOG_FORMAT_HEADER, dpu_log_print_fct_t and dpulog_read_for_dpu_ are declared: the SDK's
 * dpulog_read_and_display_contents_of parses the raw log buffer of a hardware DPU, which a simulated DPU does
 * not have, and its dpulog_c_print_fct is dpulog_read_for_dpu (dpu_log.h) under another name.
 */
#ifndef UPMEM_SIM_DPU_LOG_INTERNALS_H
#define UPMEM_SIM_DPU_LOG_INTERNALS_H

#include <stddef.h>

#include <dpu_error.h>

struct dpu_t;

#ifdef __cplusplus
extern "C" {
#endif

/* The line that introduces a DPU's log in the C++ API's DpuSet::log, with the DPU's dpu_get_id. */
#define DPU_LOG_FORMAT_HEADER ("=== DPU#0x%x ===\n")

/* A printf-like function that outputs log text to `arg`; it returns DPU_OK, or the error that stops the read. */
typedef dpu_error_t (*dpu_log_print_fct_t)(void *arg, const char *format, ...);

/* Passes the printf output of the DPU's last launch to `print_fct` (with `arg` as its first argument). */
dpu_error_t dpulog_read_for_dpu_(struct dpu_t *dpu, dpu_log_print_fct_t print_fct, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_LOG_INTERNALS_H */
