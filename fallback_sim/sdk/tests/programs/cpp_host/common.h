#ifndef _COMMON_H_
#define _COMMON_H_

#include <stdint.h>

#define N 256 /* uint32_t elements per DPU in each MRAM array */

/* What the kernel writes to output[i] for input[i]. */
static inline uint32_t scaled(uint32_t in, uint32_t factor, uint32_t bias) {
    return in * factor + bias;
}

#endif
