/*
 * dpu_target.h: the kinds of DPU backends (upmem-sim's libdpu-compatible headers, SDK 2025.1 values).
 */
#ifndef UPMEM_SIM_DPU_TARGET_H
#define UPMEM_SIM_DPU_TARGET_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Backend type of a rank. The profile strings naming them (profile key `backend=`) are, in order:
 * "simulator", "cas", "model", "hw", "spi", "scenario". upmem-sim's ranks report FUNCTIONAL_SIMULATOR.
 */
typedef enum _dpu_type_t {
    FUNCTIONAL_SIMULATOR = 0,
    CYCLE_ACCURATE_SIMULATOR = 1,
    RTL_SIMULATOR = 2,
    HW = 3,
    BACKUP_SPI = 4,
    SCENARIO = 5,
} dpu_type_t;

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_TARGET_H */
