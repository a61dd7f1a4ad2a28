/*
 * Sum of 64-bit integers held in MRAM, one partial sum per DPU.
 *
 * Work split: the host writes `nr_elements` integers at the start of the MRAM heap of every DPU. Tasklet t
 * reads blocks t, t + NR_TASKLETS, t + 2 NR_TASKLETS, ... of BLOCK_BYTES each (MRAM -> WRAM by mram_read) and
 * sums them into its own slot; after a barrier, tasklet 0 adds the slots into `sum`, which the host reads.
 * Each tasklet's 2 KiB WRAM block is a global: on the stack it would overflow the default 1 KiB DPU stack.
 */
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <stdint.h>

#define BLOCK_BYTES 2048
#define BLOCK_ELEMENTS (BLOCK_BYTES / sizeof(uint64_t))

__host uint32_t nr_elements;
__host uint64_t sum;

static uint64_t partial[NR_TASKLETS];
static __dma_aligned uint64_t blocks[NR_TASKLETS][BLOCK_ELEMENTS];
BARRIER_INIT(partials_ready, NR_TASKLETS);

int main(void) {
    const uint32_t tasklet = me();
    uint64_t *block = blocks[tasklet];
    const uint32_t mram_base = (uint32_t)DPU_MRAM_HEAP_POINTER;
    const uint32_t nr_blocks = (nr_elements + BLOCK_ELEMENTS - 1) / BLOCK_ELEMENTS;

    uint64_t local = 0;
    for (uint32_t b = tasklet; b < nr_blocks; b += NR_TASKLETS) {
        const uint32_t first = b * BLOCK_ELEMENTS;
        const uint32_t count = nr_elements - first < BLOCK_ELEMENTS ? nr_elements - first : BLOCK_ELEMENTS;
        mram_read((__mram_ptr void *)(mram_base + first * sizeof(uint64_t)), block, BLOCK_BYTES);
        for (uint32_t i = 0; i < count; i++)
            local += block[i];
    }
    partial[tasklet] = local;
    barrier_wait(&partials_ready);

    if (tasklet == 0) {
        uint64_t total = 0;
        for (uint32_t t = 0; t < NR_TASKLETS; t++)
            total += partial[t];
        sum = total;
    }
    return 0;
}
