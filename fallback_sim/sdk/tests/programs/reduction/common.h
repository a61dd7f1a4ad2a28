#ifndef _COMMON_H_
#define _COMMON_H_

#include <stdint.h>

typedef int64_t T;

#define BLOCK_SIZE_LOG2 BL
#define BLOCK_SIZE (1 << BLOCK_SIZE_LOG2)

typedef struct {
    uint32_t size;          /* elements for this DPU */
    uint32_t transfer_size; /* bytes of input in MRAM (the same on every DPU) */
} dpu_arguments_t;

/* What each DPU sends back, gathered with dpu_push_xfer(DPU_XFER_FROM_DPU). */
typedef struct {
    T sum;                       /* the DPU's total (tree reduction over tasklets with handshakes) */
    T partial[NR_TASKLETS];      /* each tasklet's sum of its blocks */
    T prefix[NR_TASKLETS];       /* inclusive prefix of the partial sums (handshake chain) */
    T barrier_sum;               /* the same total, by tasklet 0 after a barrier */
    uint64_t cycles;             /* perfcounter of tasklet 0 */
    uint32_t launches;           /* launches since the program was loaded */
    uint32_t pad;
} dpu_results_t;

#define divceil(n, m) (((n) + (m) - 1) / (m))

#endif
