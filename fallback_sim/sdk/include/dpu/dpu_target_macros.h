/*
 * dpu_target_macros.h: decoding of rank ids (upmem-sim's libdpu-compatible headers).
 *
 * A rank id (dpu_get_rank_id, dpu_management.h) carries the rank's index in its low DPU_TARGET_SHIFT bits and the
 * backend type above them; programs print `dpu_get_rank_id(rank) & DPU_TARGET_MASK` (PrIM, WITH_DPUINFO).
 * upmem-sim's backend type is FUNCTIONAL_SIMULATOR (0), so its rank ids are plain indices.
 */
#ifndef UPMEM_SIM_DPU_TARGET_MACROS_H
#define UPMEM_SIM_DPU_TARGET_MACROS_H

#define DPU_TARGET_SHIFT 12
#define DPU_TARGET_MASK ((1 << DPU_TARGET_SHIFT) - 1)

#endif /* UPMEM_SIM_DPU_TARGET_MACROS_H */
