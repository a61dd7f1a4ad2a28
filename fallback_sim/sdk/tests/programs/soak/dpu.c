/*
 * The soak kernel: each tasklet maps its share of the DPU's N inputs (blocks of 32 words, MRAM -> WRAM -> MRAM)
 * through soak_output with the DPU's __host argument; outputs go right after the inputs, and tasklet 0 reports
 * how many elements the DPU maps.
 */
#include <stdint.h>
#include <defs.h>
#include <mram.h>

#include "common.h"

#define BLOCK_WORDS 32 /* 128 bytes per DMA: a multiple of 8, under 2048 */

__host uint32_t argument;
__host uint32_t processed; /* elements mapped, written by tasklet 0 */

int main(void) {
    __dma_aligned uint32_t block[BLOCK_WORDS];
    uint32_t base = (uint32_t)DPU_MRAM_HEAP_POINTER;
    for (uint32_t first = me() * BLOCK_WORDS; first < N; first += BLOCK_WORDS * NR_TASKLETS) {
        mram_read((__mram_ptr void const *)(base + first * 4), block, sizeof(block));
        for (uint32_t k = 0; k < BLOCK_WORDS; k++) {
            block[k] = soak_output(block[k], argument);
        }
        mram_write(block, (__mram_ptr void *)(base + N * 4 + first * 4), sizeof(block));
    }
    if (me() == 0) {
        processed = N;
    }
    return 0;
}
