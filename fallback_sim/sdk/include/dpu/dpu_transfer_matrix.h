/*
 * dpu_transfer_matrix.h: the per-rank table of prepared host buffers (upmem-sim's libdpu-compatible headers).
 *
 * dpu_prepare_xfer stores one host pointer per DPU in its rank's transfer matrix, which has one entry per DPU
 * of a rank. The SDK's matrix structure and its *_for_matrix functions are not implemented by upmem-sim, so
 * only the constant is declared.
 */
#ifndef UPMEM_SIM_DPU_TRANSFER_MATRIX_H
#define UPMEM_SIM_DPU_TRANSFER_MATRIX_H

#define MAX_NR_DPUS_PER_RANK 64

#endif /* UPMEM_SIM_DPU_TRANSFER_MATRIX_H */
