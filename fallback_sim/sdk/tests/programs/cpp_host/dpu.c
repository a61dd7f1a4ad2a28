/*
 * The C++ host program's kernel: the tasklets split the DPU's N inputs (MRAM -> WRAM blocks of 32 words) and
 * write output[i] = scaled(input[i], factor, bias) back to MRAM, each adding its outputs into partial[me()];
 * tasklet 0 counts launches and prints one line for the log.
 */
#include <stdint.h>
#include <stdio.h>
#include <defs.h>
#include <mram.h>

#include "common.h"

#define BLOCK_WORDS 32 /* 128 bytes per DMA: a multiple of 8, under 2048 */

__host uint32_t factor;
__host uint32_t bias;
__host uint32_t launches;
__host uint64_t partial[NR_TASKLETS];
__mram_noinit uint32_t input[N];
__mram_noinit uint32_t output[N];

int main(void) {
    __dma_aligned uint32_t block[BLOCK_WORDS];
    uint64_t sum = 0;
    for (uint32_t first = me() * BLOCK_WORDS; first < N; first += BLOCK_WORDS * NR_TASKLETS) {
        mram_read(&input[first], block, sizeof(block));
        for (uint32_t k = 0; k < BLOCK_WORDS; k++) {
            block[k] = scaled(block[k], factor, bias);
            sum += block[k];
        }
        mram_write(block, &output[first], sizeof(block));
    }
    partial[me()] = sum;
    if (me() == 0) {
        launches++;
        printf("factor %u bias %u launch %u\n", factor, bias, launches);
    }
    return 0;
}
