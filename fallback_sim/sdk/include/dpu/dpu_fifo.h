/*
 * dpu_fifo.h: WRAM FIFO links (upmem-sim's libdpu-compatible headers).
 *
 * dpu.h includes this header, as the SDK's does. The FIFO API (dpu_link_input_fifo, dpu_fifo_prepare_xfer,
 * dpu_fifo_push_xfer, ...) is out of upmem-sim's scope and is not declared; nothing of it is needed by dpu.h.
 */
#ifndef UPMEM_SIM_DPU_FIFO_H
#define UPMEM_SIM_DPU_FIFO_H

#include <dpu_transfer_matrix.h>
#include <dpu_types.h>

#endif /* UPMEM_SIM_DPU_FIFO_H */
