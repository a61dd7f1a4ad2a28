/*
 * dpu_hw_description.h: hardware characteristics of a rank's DPUs (upmem-sim's libdpu-compatible headers).
 *
 * The layout is the SDK 2025.1's member for member (tests/abi/abi_check.c checks it), so that a program built
 * against these headers reads the SDK's libdpu correctly and the other way round. upmem-sim fills the members
 * that describe its DPUs and leaves the link-training ones (carousel, pcb_transformation) zero.
 */
#ifndef UPMEM_SIM_DPU_HW_DESCRIPTION_H
#define UPMEM_SIM_DPU_HW_DESCRIPTION_H

#include <stdint.h>

#include <dpu_chip_id.h>
#include <dpu_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dpu_hw_description_t {
    struct {
        /* Which chip: its version follows (dpu_chip_id.h). upmem-sim: the profile key chipId, default vD_asic8. */
        dpu_chip_id_e chip_id;
    } signature;
    struct {
        struct dpu_carousel_config carousel;
        /* The DPU clock is fck_frequency_in_mhz / clock_division MHz. */
        uint32_t fck_frequency_in_mhz;
        uint8_t reset_wait_duration;
        uint8_t std_temperature;
        uint8_t clock_division;
    } timings;
    struct {
        /* CIs (slices) per rank, DPUs (members) per CI, and which CIs are present. */
        uint8_t nr_of_control_interfaces;
        uint8_t nr_of_dpus_per_control_interface;
        uint8_t ci_mask;
    } topology;
    struct {
        /* Per DPU: MRAM and WRAM in bytes, IRAM in instructions. */
        mram_size_t mram_size;
        wram_size_t wram_size;
        iram_size_t iram_size;
        uint8_t ci_pc_lsb_nr_phys_bits;
    } memories;
    struct {
        struct dpu_bit_config pcb_transformation;
        /* Hardware threads: the most tasklets a program may have (24 on v1A, 16 on v1B). */
        uint8_t nr_of_threads;
        uint32_t nr_of_atomic_bits;
        uint32_t nr_of_notify_bits;
        uint8_t nr_of_work_registers_per_thread;
    } dpu;
};

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_HW_DESCRIPTION_H */
