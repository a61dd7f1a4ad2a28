#ifndef _COMMON_H_
#define _COMMON_H_

#include <stdint.h>

#define N 512 /* uint32_t elements per DPU: input at the MRAM heap's start, output right after */

/* What the kernel computes from an input element and its DPU's argument. */
static inline uint32_t soak_output(uint32_t in, uint32_t argument) {
    return in * 5u + argument;
}

#endif
