/*
 * dpu_hw_description.h: hardware characteristics of a rank's DPUs (upmem-sim's libdpu-compatible headers).
 *
 * The member names are the SDK's ones that programs read (desc->hw.memories.mram_size, desc->hw.topology.*,
 * desc->hw.timings.fck_frequency_in_mhz / clock_division); the SDK's structure has more members, so this layout
 * is upmem-sim's own (source-compatible, not binary-compatible with libdpu). Every member is filled.
 */
#ifndef UPMEM_SIM_DPU_HW_DESCRIPTION_H
#define UPMEM_SIM_DPU_HW_DESCRIPTION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dpu_hw_description_t {
    struct {
        /* Chip version identifier (upmem-sim: the value of the profile key chipId, default that of v1B). */
        uint8_t chip_id;
    } signature;
    struct {
        /* CIs (slices) per rank and DPUs (members) per CI. */
        uint8_t nr_of_control_interfaces;
        uint8_t nr_of_dpus_per_control_interface;
    } topology;
    struct {
        /* Per DPU, in bytes. */
        uint32_t mram_size;
        uint32_t wram_size;
        uint32_t iram_size;
    } memories;
    struct {
        /* The DPU clock is fck_frequency_in_mhz / clock_division MHz. */
        uint32_t fck_frequency_in_mhz;
        uint8_t clock_division;
    } timings;
    struct {
        /* Hardware threads (tasklets) per DPU. */
        uint8_t nr_of_threads;
    } dpu;
};

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_HW_DESCRIPTION_H */
