/*
 * Program A. State that must survive launches but not dpu_load: an initialised __host counter, a .bss counter,
 * an initialised __mram array, and the WRAM heap (mem_alloc without mem_reset).
 */
#include <stdint.h>
#include <defs.h>
#include <mram.h>
#include <alloc.h>
#include <barrier.h>
#include <mutex.h>

#include "common.h"

__host uint32_t counter = COUNTER_A;
__host uint32_t kind = 'A';
__host uint32_t bss_copy;
__host uint32_t heap_first;
__host uint32_t seen_tasklets;
__mram uint64_t mram_init[2] = {7, 8};

static uint32_t launches_bss;

BARRIER_INIT(my_barrier, NR_TASKLETS);
MUTEX_INIT(seen_mutex);

int main(void) {
    unsigned int tasklet_id = me();
    if (tasklet_id == 0) {
        counter++;
        launches_bss++;
        bss_copy = launches_bss;
        seen_tasklets = 0;
        /* No mem_reset(): the heap keeps growing from launch to launch until the next dpu_load. */
        heap_first = (uint32_t)(uintptr_t)mem_alloc(64);
        __dma_aligned uint64_t value[2];
        mram_read(mram_init, value, sizeof(value));
        value[0]++;
        mram_write(value, mram_init, sizeof(value));
    }
    barrier_wait(&my_barrier);
    mutex_lock(seen_mutex);
    seen_tasklets |= 1u << tasklet_id;
    mutex_unlock(seen_mutex);

    __dma_aligned uint32_t cache[32];
    uint32_t base = (uint32_t)DPU_MRAM_HEAP_POINTER;
    for (uint32_t i = tasklet_id * 32; i < N; i += 32 * NR_TASKLETS) {
        mram_read((__mram_ptr void const *)(base + i * 4), cache, sizeof(cache));
        for (unsigned k = 0; k < 32; k++) {
            cache[k] = output_a(cache[k], counter);
        }
        mram_write(cache, (__mram_ptr void *)(base + N * 4 + i * 4), sizeof(cache));
    }
    return 0;
}
