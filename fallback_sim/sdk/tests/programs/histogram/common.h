#ifndef _COMMON_H_
#define _COMMON_H_

#include <stdint.h>

typedef uint32_t T;

#define BLOCK_SIZE_LOG2 BL
#define BLOCK_SIZE (1 << BLOCK_SIZE_LOG2)
#define DEPTH 12 /* input values are DEPTH-bit pixels */

typedef struct {
    uint32_t size;          /* elements for this DPU */
    uint32_t transfer_size; /* bytes of input in MRAM (the same on every DPU) */
    uint32_t bins;          /* bins used, <= NR_HISTO */
    uint32_t pad;
} dpu_arguments_t;

#define divceil(n, m) (((n) + (m) - 1) / (m))

#endif
