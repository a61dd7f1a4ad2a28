/*
 * Streams MRAM through WRAM: tasklet t reads blocks t, t + NR_TASKLETS, ... of `block_bytes` each from the
 * first `bytes` of the MRAM heap, `passes` times, and folds every word into its checksum.
 */
#include <defs.h>
#include <mram.h>
#include <stdint.h>

#define MAX_BLOCK_BYTES 2048

__host uint32_t bytes;
__host uint32_t block_bytes;
__host uint32_t passes;
__host uint64_t checksums[NR_TASKLETS];

/* Each tasklet's WRAM buffer: a global, as a block does not fit a tasklet's 1 KiB stack. */
__dma_aligned uint64_t blocks[NR_TASKLETS][MAX_BLOCK_BYTES / sizeof(uint64_t)];

int main(void) {
    uint64_t *block = blocks[me()];
    const uint32_t base = (uint32_t)DPU_MRAM_HEAP_POINTER;
    const uint32_t nr_blocks = bytes / block_bytes;
    uint64_t checksum = 0;
    for (uint32_t pass = 0; pass < passes; pass++)
        for (uint32_t b = me(); b < nr_blocks; b += NR_TASKLETS) {
            mram_read((__mram_ptr void *)(base + b * block_bytes), block, block_bytes);
            checksum ^= block[0] + block[block_bytes / sizeof(uint64_t) - 1];
        }
    checksums[me()] = checksum;
    return 0;
}
