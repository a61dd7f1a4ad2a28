/*
 * dpu_checkpoint.h: what a DPU checkpoint covers (upmem-sim's libdpu-compatible headers, SDK 2025.1 values).
 *
 * Only the flags are declared. The SDK's checkpoint functions (dpu_checkpoint_save, _restore, _serialize, ...)
 * are not implemented by upmem-sim, so they are deliberately not declared: a program that uses them fails to
 * compile here instead of failing to link.
 */
#ifndef UPMEM_SIM_DPU_CHECKPOINT_H
#define UPMEM_SIM_DPU_CHECKPOINT_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum _dpu_checkpoint_flags_t {
    DPU_CHECKPOINT_INTERNAL = 0x1,
    DPU_CHECKPOINT_IRAM = 0x2,
    DPU_CHECKPOINT_MRAM = 0x8,
    DPU_CHECKPOINT_WRAM = 0x10,
} dpu_checkpoint_flags_t;

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_CHECKPOINT_H */
