/*
 * persistence.c: WRAM and MRAM state persists across launches and is reset by dpu_load. Only tasklet 0 works.
 *
 * Each launch increments a .bss counter, a .data counter (initially DATA_START) and an initialised __mram
 * counter (initially MRAM_START, read-modify-written by DMA), and copies them to __host outputs.
 *
 * DPU outputs, after the k-th launch since the program was loaded:
 *     bss_count = k, data_count = DATA_START + k = 100 + k, mram_count = MRAM_START + k = 1000 + k
 * Reloading the program starts again from k = 1.
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>
#include <mram.h>

#define DATA_START 100
#define MRAM_START 1000

__host uint32_t bss_count;
__host uint32_t data_count;
__host uint64_t mram_count;

uint32_t bss_counter;
uint32_t data_counter = DATA_START;
__mram uint64_t mram_counter = MRAM_START;

__dma_aligned uint64_t scratch;

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    bss_count = ++bss_counter;
    data_count = ++data_counter;

    mram_read(&mram_counter, &scratch, sizeof(scratch));
    scratch++;
    mram_write(&scratch, &mram_counter, sizeof(scratch));
    mram_count = scratch;
    return 0;
}
