#ifndef _COMMON_H_
#define _COMMON_H_

#include <stdint.h>

typedef int64_t T;

#define BLOCK_SIZE_LOG2 BL
#define BLOCK_SIZE (1 << BLOCK_SIZE_LOG2)

/* PrIM SCAN-SSA's arguments: the kernel to run is chosen by the host. */
typedef struct {
    uint32_t size;          /* elements for this DPU */
    uint32_t transfer_size; /* bytes of input in MRAM (output follows at this offset) */
    enum kernels { kernel1 = 0, kernel2 = 1, nr_kernels = 2 } kernel;
    T t_count;              /* kernel2: sum of the elements of the previous DPUs */
} dpu_arguments_t;

typedef struct {
    T t_count; /* kernel1: sum of the DPU's elements */
    uint32_t kernel_ran;
    uint32_t pad;
} dpu_results_t;

#define divceil(n, m) (((n) + (m) - 1) / (m))

#endif
