#ifndef _COMMON_H_
#define _COMMON_H_

#include <stdint.h>

#define N 256 /* uint32_t elements per DPU: input at the MRAM heap's start, output right after */
#define COUNTER_A 100
#define COUNTER_B 500

static inline uint32_t output_a(uint32_t in, uint32_t counter) {
    return in * 3 + counter;
}

static inline uint32_t output_b(uint32_t in, uint32_t counter) {
    return (in ^ 0x5A5A5A5Au) + counter;
}

#endif
