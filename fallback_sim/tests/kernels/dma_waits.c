/*
 * dma_waits.c: the tasklets below nr_readers read the first block_bytes (8 to 2,048, a multiple of 8) of their
 * 2 KiB block from MRAM `reads` times, back to back; the others run a plain loop `iterations` times. Readers of
 * whole blocks keep the DMA engine busy and spend nearly all their time waiting for it. On a DPU a tasklet waiting
 * for its transfer issues no instruction, so the others share the pipeline among themselves: each issues every
 * 11 cycles while at most 11 of them can. Readers of 8 bytes wait little, and run a few instructions between
 * transfers, as a gather kernel does.
 *
 * Host input:   nr_readers, block_bytes, reads, iterations (u32)
 * DPU outputs:  sums[t] (u32): a reader's sum of its block's first byte over its reads; the others' loop value
 * NR_TASKLETS <= 16 (the blocks take 2 KiB of WRAM each).
 */
#include <stdint.h>

#include <defs.h>
#include <mram.h>

#define BLOCK_BYTES 2048

__host uint32_t nr_readers;
__host uint32_t block_bytes;
__host uint32_t reads;
__host uint32_t iterations;
__host uint32_t sums[NR_TASKLETS];

__mram_noinit uint8_t blocks[NR_TASKLETS][BLOCK_BYTES];
__dma_aligned uint8_t buffers[NR_TASKLETS][BLOCK_BYTES];

int main(void)
{
    uint32_t id = me();
    uint32_t sum = 0;
    if (id < nr_readers) {
        for (uint32_t r = 0; r < reads; r++) {
            mram_read(blocks[id], buffers[id], block_bytes);
            sum += buffers[id][0];
        }
    } else {
        for (uint32_t i = 0; i < iterations; i++) {
            sum = (sum << 1) ^ i;
        }
    }
    sums[id] = sum;
    return 0;
}
