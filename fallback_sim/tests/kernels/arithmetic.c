/*
 * Arithmetic throughput in the style of PrIM's microbenchmark: tasklet t loads its block of TYPE elements from
 * MRAM into WRAM, then applies `element = element OP operand` to each of them, `repeats` times, and writes the
 * block back. Build with -DTYPE=uint32_t|uint64_t|float|double and -DOP=+|-|*|/.
 */
#include <defs.h>
#include <mram.h>
#include <stdint.h>

#define BLOCK_BYTES 1024
#define ELEMENTS (BLOCK_BYTES / sizeof(TYPE))

__host uint32_t repeats;
__host TYPE operand;

__dma_aligned TYPE blocks[NR_TASKLETS][ELEMENTS];

int main(void) {
    TYPE *block = blocks[me()];
    __mram_ptr void *home = (__mram_ptr void *)((uint32_t)DPU_MRAM_HEAP_POINTER + me() * BLOCK_BYTES);
    const TYPE by = operand;
    mram_read(home, block, BLOCK_BYTES);
    for (uint32_t r = 0; r < repeats; r++)
        for (uint32_t i = 0; i < ELEMENTS; i++)
            block[i] = block[i] OP by;
    mram_write(block, home, BLOCK_BYTES);
    return 0;
}
