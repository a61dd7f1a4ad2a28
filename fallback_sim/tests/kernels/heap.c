/*
 * heap.c: mem_alloc and mem_reset, and the persistence of the heap pointer across launches.
 *
 * Every tasklet allocates ALLOC_BYTES (rounded up to ALLOC_STRIDE by the 8-byte alignment), fills its block with
 * its id, waits at a barrier and checks that no other tasklet wrote into it.
 *
 * Host input:   reset_heap: 1 = tasklet 0 calls mem_reset() first (before any other tasklet runs, as PrIM does);
 *               0 = keep the heap pointer of the previous launch.
 * DPU outputs:  heap_start = (uint32_t)mem_reset() (written only when reset_heap is 1)
 *               block_addresses[t] = WRAM address of tasklet t's block
 *               overlap_errors[t] = bytes of tasklet t's block that another tasklet overwrote (must be 0)
 * Expected, with T = NR_TASKLETS and H = heap_start:
 *   launch with reset_heap = 1:  {block_addresses} = {H + ALLOC_STRIDE * k, k < T} (in some order), all 8-aligned
 *   next launch, reset_heap = 0: {block_addresses} = {H + ALLOC_STRIDE * (T + k), k < T}
 *   first launch after dpu_load with reset_heap = 0: the same set as with reset_heap = 1 (the pointer starts at H)
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <alloc.h>
#include <barrier.h>
#include <defs.h>

#define ALLOC_BYTES 20
#define ALLOC_STRIDE 24

__host uint32_t reset_heap;
__host uint32_t heap_start;
__host uint32_t block_addresses[NR_TASKLETS];
__host uint32_t overlap_errors[NR_TASKLETS];

BARRIER_INIT(filled_barrier, NR_TASKLETS);

int main(void)
{
    if (me() == 0 && reset_heap) {
        heap_start = (uint32_t)mem_reset();
    }

    uint8_t *block = mem_alloc(ALLOC_BYTES);
    block_addresses[me()] = (uint32_t)block;
    for (uint32_t i = 0; i < ALLOC_BYTES; i++) {
        block[i] = (uint8_t)me();
    }
    barrier_wait(&filled_barrier);

    uint32_t errors = 0;
    for (uint32_t i = 0; i < ALLOC_BYTES; i++) {
        if (block[i] != (uint8_t)me()) {
            errors++;
        }
    }
    overlap_errors[me()] = errors;
    return 0;
}
