/*
 * mram_full.c: MRAM variables that fill all 64 MiB, so that the MRAM heap (DPU_MRAM_HEAP_POINTER, host symbol
 * __sys_used_mram_end) starts at the end of MRAM and is empty, as the SDK's linker script allows. Tasklet 0
 * copies the initialised word `first` into the last 8 bytes of MRAM and reports where the heap starts.
 *
 * DPU outputs: heap_pointer = (uint32_t)DPU_MRAM_HEAP_POINTER (0x0C000000: MRAM's end)
 *              the last word of `rest` (MRAM offset 64 MiB - 8) = `first` (0x0123456789ABCDEF)
 * NR_TASKLETS = 1.
 */
#include <stdint.h>

#include <defs.h>
#include <mram.h>

#define MRAM_BYTES (64u << 20)

__mram uint64_t first = 0x0123456789ABCDEFull;
__mram_noinit uint8_t rest[MRAM_BYTES - sizeof(uint64_t)];

__host uint32_t heap_pointer;

__dma_aligned uint64_t word;

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    heap_pointer = (uint32_t)DPU_MRAM_HEAP_POINTER;
    mram_read(&first, &word, sizeof(word));
    mram_write(&word, &rest[sizeof(rest) - sizeof(word)], sizeof(word));
    return 0;
}
