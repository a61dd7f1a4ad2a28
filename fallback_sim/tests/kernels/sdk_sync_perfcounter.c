/*
 * sdk_sync_perfcounter.c: perfcounter values and configurations as the SDK 2025.1's compiled v1A runtime gives
 * them, by `mode`. Only tasklet 0 works.
 *
 *  mode 1: counts cycles from a reset, samples the counter NR_SAMPLES times around some DMA: every value is a
 *          multiple of 16 (`time` reads bits 4..35), and so is what perfcounter_config returns
 *  mode 2: perfcounter_config(5, true): only config & 3 reaches the counter, so 5 counts cycles like 1
 *  mode 3: perfcounter_config(COUNT_ENABLE_BOTH, false), a v1B-only configuration: runtime fault 9
 *
 * DPU outputs:  samples[0..NR_SAMPLES), config_value (what the second perfcounter_config returned, mode 1)
 * Any NR_TASKLETS (the others return at once).
 */
#include <stdint.h>

#include <defs.h>
#include <mram.h>
#include <perfcounter.h>

#define NR_SAMPLES 8
#define BLOCK_BYTES 24

__host uint32_t mode;
__host uint64_t samples[NR_SAMPLES];
__host uint64_t config_value;

__dma_aligned uint8_t buffer[BLOCK_BYTES];

static void sample(void)
{
    for (uint32_t i = 0; i < NR_SAMPLES; i++) {
        mram_read(DPU_MRAM_HEAP_POINTER, buffer, BLOCK_BYTES);
        samples[i] = perfcounter_get();
    }
}

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    switch (mode) {
    case 1:
        perfcounter_config(COUNT_CYCLES, true);
        sample();
        config_value = perfcounter_config(COUNT_SAME, false);
        break;
    case 2:
        perfcounter_config((perfcounter_config_t)5, true);
        sample();
        break;
    case 3:
        perfcounter_config(COUNT_ENABLE_BOTH, false);
        break;
    default:
        break;
    }
    return 0;
}
