/* Program B: other symbols, another tasklet count, another computation, a counter with the same name. */
#include <stdint.h>
#include <defs.h>
#include <mram.h>
#include <barrier.h>
#include <mutex.h>

#include "common.h"

__host uint32_t counter = COUNTER_B;
__host uint32_t kind = 'B';
__host uint32_t b_only;
__host uint32_t seen_tasklets;

BARRIER_INIT(my_barrier, NR_TASKLETS);
MUTEX_INIT(seen_mutex);

int main(void) {
    unsigned int tasklet_id = me();
    if (tasklet_id == 0) {
        counter++;
        b_only += 2;
        seen_tasklets = 0;
    }
    barrier_wait(&my_barrier);
    mutex_lock(seen_mutex);
    seen_tasklets |= 1u << tasklet_id;
    mutex_unlock(seen_mutex);
    barrier_wait(&my_barrier);
    if (tasklet_id == 0) {
        __dma_aligned uint32_t cache[N];
        mram_read(DPU_MRAM_HEAP_POINTER, cache, sizeof(cache));
        for (unsigned k = 0; k < N; k++) {
            cache[k] = output_b(cache[k], counter);
        }
        mram_write(cache, DPU_MRAM_HEAP_POINTER + sizeof(cache), sizeof(cache));
    }
    return 0;
}
