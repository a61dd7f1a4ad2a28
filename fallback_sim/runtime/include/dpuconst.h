/*
 * dpuconst.h: constants of the DPU (v1A, the chip the simulator models).
 */
#ifndef DPUSIM_DPUCONST_H
#define DPUSIM_DPUCONST_H

#define __DPU_NUMBER_OF_THREADS 24
#define __DPU_MRAM_SIZE_LOG2 26

#endif /* DPUSIM_DPUCONST_H */
