/*
 * dpu_description.h: description of a rank (upmem-sim's libdpu-compatible headers).
 *
 * As in the SDK, dpu_description_t is a pointer; it is returned by dpu_get_description (dpu_management.h), owned
 * by the rank and valid while the rank is allocated. The layout is upmem-sim's own (see dpu_hw_description.h).
 */
#ifndef UPMEM_SIM_DPU_DESCRIPTION_H
#define UPMEM_SIM_DPU_DESCRIPTION_H

#include <dpu_hw_description.h>
#include <dpu_target.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _dpu_description_t {
    /* Backend of the rank: FUNCTIONAL_SIMULATOR for upmem-sim. */
    dpu_type_t type;
    struct dpu_hw_description_t hw;
} *dpu_description_t;

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_DESCRIPTION_H */
