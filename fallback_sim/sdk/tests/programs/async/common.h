#ifndef _COMMON_H_
#define _COMMON_H_

#include <stdint.h>

#define N 512 /* uint32_t elements per DPU */

typedef struct {
    uint32_t scale;
    uint32_t work;  /* busy-loop iterations per tasklet, so that launches take a while */
    uint32_t pad[2];
} dpu_arguments_t;

#endif
