/*
 * perfcounter.c: perfcounter_config / perfcounter_get and CLOCKS_PER_SEC. Only tasklet 0 works.
 *
 * After resetting the counter to count cycles, tasklet 0 reads SMALL_BLOCKS then LARGE_BLOCKS blocks of
 * BLOCK_BYTES from the MRAM heap, sampling the counter before, between and after; then samples it
 * MONOTONE_SAMPLES times in a row.
 *
 * DPU outputs:  samples[0..2] = counter before, between and after the two read phases
 *               small_cycles = samples[1] - samples[0], large_cycles = samples[2] - samples[1]
 *               monotone_errors (consecutive samples that went down; must be 0)
 *               clocks_per_sec = CLOCKS_PER_SEC (350000000, DPUSIM_CLOCK_HZ)
 * Expected: samples non-decreasing; large_cycles > small_cycles (16 times the DMA volume, so by far);
 *           large_cycles >= LARGE_BLOCKS * (DPUSIM_DMA_READ_ALPHA + BLOCK_BYTES / 2) = 281856 if the counter
 *           includes the DMA cost model.
 * Any NR_TASKLETS (the others return at once).
 */
#include <stdint.h>

#include <defs.h>
#include <mram.h>
#include <perfcounter.h>

#define BLOCK_BYTES 2048
#define SMALL_BLOCKS 16
#define LARGE_BLOCKS 256
#define MONOTONE_SAMPLES 64
#define NR_SAMPLES 3

__host uint64_t samples[NR_SAMPLES];
__host uint64_t small_cycles;
__host uint64_t large_cycles;
__host uint32_t monotone_errors;
__host uint32_t clocks_per_sec;

__dma_aligned uint8_t buffer[BLOCK_BYTES];

static void read_blocks(uint32_t nr_blocks)
{
    uint32_t heap = (uint32_t)DPU_MRAM_HEAP_POINTER;
    for (uint32_t b = 0; b < nr_blocks; b++) {
        mram_read((__mram_ptr void *)(heap + b * BLOCK_BYTES), buffer, BLOCK_BYTES);
    }
}

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    clocks_per_sec = CLOCKS_PER_SEC;
    perfcounter_config(COUNT_CYCLES, true);

    samples[0] = perfcounter_get();
    read_blocks(SMALL_BLOCKS);
    samples[1] = perfcounter_get();
    read_blocks(LARGE_BLOCKS);
    samples[2] = perfcounter_get();
    small_cycles = samples[1] - samples[0];
    large_cycles = samples[2] - samples[1];

    uint32_t errors = 0;
    perfcounter_t previous = perfcounter_get();
    for (uint32_t i = 0; i < MONOTONE_SAMPLES; i++) {
        perfcounter_t now = perfcounter_get();
        errors += now < previous;
        previous = now;
    }
    monotone_errors = errors;
    return 0;
}
