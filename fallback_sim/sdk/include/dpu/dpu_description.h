/*
 * dpu_description.h: description of a rank (upmem-sim's libdpu-compatible headers).
 *
 * As in the SDK, dpu_description_t is a pointer; it is returned by dpu_get_description (dpu_management.h), owned
 * by the rank and valid while the rank is allocated. The layout is the SDK 2025.1's; upmem-sim fills hw and type
 * and leaves the configuration flags false and the internals null.
 */
#ifndef UPMEM_SIM_DPU_DESCRIPTION_H
#define UPMEM_SIM_DPU_DESCRIPTION_H

#include <stdbool.h>
#include <stdint.h>

#include <dpu_hw_description.h>
#include <dpu_target.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _dpu_description_t {
    struct dpu_hw_description_t hw;
    /* Backend of the rank: FUNCTIONAL_SIMULATOR for upmem-sim. */
    dpu_type_t type;
    /* How the backend drives the rank (FPGA and repair options). */
    struct {
        bool mram_access_by_dpu_only;
        bool api_must_switch_mram_mux;
        bool init_mram_mux;
        bool do_iram_repair;
        bool do_wram_repair;
        bool ignore_vpd;
        bool enable_cycle_accurate_behavior;
        bool disable_api_safe_checks;
        bool disable_reset_on_alloc;
        bool ila_control_refresh;
    } configuration;
    uint32_t refcount;
    /* The backend's own data. */
    struct {
        void *data;
        void (*free)(void *data);
    } _internals;
} *dpu_description_t;

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_DESCRIPTION_H */
