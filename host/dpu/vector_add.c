/*
 * c = a + b over `nr_elements` 32-bit integers per DPU. The host writes a then b at the start of the MRAM heap;
 * tasklet t handles blocks t, t + NR_TASKLETS, ... of BLOCK_ELEMENTS, and c follows b in MRAM. Each tasklet's
 * two 1 KiB WRAM blocks are globals: on the stack they would overflow the default 1 KiB DPU stack.
 */
#include <defs.h>
#include <mram.h>
#include <stdint.h>

#define BLOCK_ELEMENTS 256
#define BLOCK_BYTES (BLOCK_ELEMENTS * sizeof(uint32_t))

__host uint32_t nr_elements;

static __dma_aligned uint32_t a_blocks[NR_TASKLETS][BLOCK_ELEMENTS];
static __dma_aligned uint32_t b_blocks[NR_TASKLETS][BLOCK_ELEMENTS];

int main(void) {
    uint32_t *a = a_blocks[me()];
    uint32_t *b = b_blocks[me()];
    const uint32_t heap = (uint32_t)DPU_MRAM_HEAP_POINTER;
    const uint32_t bytes = nr_elements * sizeof(uint32_t);
    for (uint32_t first = me() * BLOCK_ELEMENTS; first < nr_elements; first += NR_TASKLETS * BLOCK_ELEMENTS) {
        const uint32_t offset = first * sizeof(uint32_t);
        mram_read((__mram_ptr void *)(heap + offset), a, BLOCK_BYTES);
        mram_read((__mram_ptr void *)(heap + bytes + offset), b, BLOCK_BYTES);
        for (uint32_t i = 0; i < BLOCK_ELEMENTS; i++)
            a[i] += b[i];
        mram_write(a, (__mram_ptr void *)(heap + 2 * bytes + offset), BLOCK_BYTES);
    }
    return 0;
}
