/* out[i] = in[i] * scale + 1 over the DPU's N elements (heap: in at 0, out at N * 4); sum into `result_sum`. */
#include <stdint.h>
#include <defs.h>
#include <mram.h>
#include <barrier.h>
#include <mutex.h>

#include "common.h"

__host dpu_arguments_t DPU_INPUT_ARGUMENTS;
__host uint32_t result_sum;
__host uint32_t spin_result;

BARRIER_INIT(my_barrier, NR_TASKLETS);
MUTEX_INIT(sum_mutex);

int main(void) {
    unsigned int tasklet_id = me();
    if (tasklet_id == 0) {
        result_sum = 0;
        spin_result = 0;
    }
    barrier_wait(&my_barrier);
    uint32_t acc = tasklet_id;
    for (uint32_t k = 0; k < DPU_INPUT_ARGUMENTS.work; k++) {
        acc = acc * 1103515245u + 12345u;
    }
    __dma_aligned uint32_t cache[64];
    uint32_t local = 0;
    uint32_t base = (uint32_t)DPU_MRAM_HEAP_POINTER;
    for (uint32_t i = tasklet_id * 64; i < N; i += 64 * NR_TASKLETS) {
        mram_read((__mram_ptr void const *)(base + i * 4), cache, sizeof(cache));
        for (unsigned k = 0; k < 64; k++) {
            cache[k] = cache[k] * DPU_INPUT_ARGUMENTS.scale + 1;
            local += cache[k];
        }
        mram_write(cache, (__mram_ptr void *)(base + N * 4 + i * 4), sizeof(cache));
    }
    mutex_lock(sum_mutex);
    result_sum += local;
    spin_result ^= acc;
    mutex_unlock(sum_mutex);
    return 0;
}
