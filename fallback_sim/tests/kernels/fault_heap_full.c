/*
 * fault_heap_full.c: mem_alloc past the end of WRAM (runtime fault 1, Heap Full); tasklet 0 only.
 *
 *  mode 0: allocate one CHUNK_BYTES block        -> no fault, allocations = 1
 *  mode 1: allocate CHUNK_BYTES blocks forever   -> DPUSIM_FAULT_HEAP_FULL, after fewer than 64 allocations
 *          (allocations, readable after the fault, counts the ones that succeeded)
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <alloc.h>
#include <defs.h>

#define CHUNK_BYTES 1024
#define MAX_CHUNKS 128 /* 128 KiB: twice the WRAM */

__host uint32_t mode;
__host uint32_t allocations;

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    mem_reset();
    allocations = 0;
    uint32_t chunks = mode == 1 ? MAX_CHUNKS : 1;
    for (uint32_t i = 0; i < chunks; i++) {
        uint8_t *chunk = mem_alloc(CHUNK_BYTES);
        chunk[0] = (uint8_t)i;
        allocations++;
    }
    return 0;
}
