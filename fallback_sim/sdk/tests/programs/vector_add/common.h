#ifndef _COMMON_H_
#define _COMMON_H_

#include <stdint.h>

/* Shared by host.c and dpu.c, as in PrIM's support/common.h. */
typedef uint32_t T;

#define BLOCK_SIZE_LOG2 BL
#define BLOCK_SIZE (1 << BLOCK_SIZE_LOG2)

typedef struct {
    uint32_t size;          /* elements for this DPU (may be odd, may be fewer on the last DPU) */
    uint32_t transfer_size; /* bytes of each vector in MRAM, the same on every DPU (a multiple of 8) */
    enum kernels { kernel1 = 0, nr_kernels = 1 } kernel;
} dpu_arguments_t;

#define divceil(n, m) (((n) + (m) - 1) / (m))

#endif
