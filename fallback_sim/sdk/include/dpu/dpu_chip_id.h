/*
 * dpu_chip_id.h: the chip ids a rank's description reports (upmem-sim's libdpu-compatible headers, SDK 2025.1
 * values). Ids up to vD_fpga4 are v1A chips (24 hardware threads); the _v1_4 ids are v1B chips (16 threads).
 * The SDK's compiler wrapper targets v1B when the driver's dpu_chip_id is above 8.
 */
#ifndef UPMEM_SIM_DPU_CHIP_ID_H
#define UPMEM_SIM_DPU_CHIP_ID_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum _dpu_chip_id_e {
    vD = 0,
    vD_cas = 1,
    vD_fun = 2,
    vD_asic1 = 3,
    vD_asic8 = 4,
    vD_fpga1 = 5,
    vD_fpga8 = 6,
    vD_asic4 = 7,
    vD_fpga4 = 8,
    vD_fun_v1_4 = 66,
    vD_asic1_v1_4 = 67,
    vD_asic8_v1_4 = 68,
    vD_fpga1_v1_4 = 69,
    vD_fpga8_v1_4 = 70,
    vD_asic4_v1_4 = 71,
    vD_fpga4_v1_4 = 72,
} dpu_chip_id_e;

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_CHIP_ID_H */
