/*
 * Histogram, PrIM HST-L style: one histogram in WRAM shared by all tasklets, each bin update under a mutex
 * (striped over an array of atomic bits, as HST-L does), input read from MRAM with mram_read. Tasklets also
 * count the elements they processed into a shared counter under a MUTEX_INIT mutex, and into a second counter
 * under a never-initialised mutex_id_t (all such ids name one lock, as on hardware).
 */
#include <stdint.h>
#include <defs.h>
#include <mram.h>
#include <alloc.h>
#include <barrier.h>
#include <mutex.h>
#include <atomic_bit.h>

#include "common.h"

#define NR_LOCKS 32

__host dpu_arguments_t DPU_INPUT_ARGUMENTS;
__host uint32_t histo[NR_HISTO];
__host uint32_t nr_counted;
__host uint32_t nr_blocks;

ATOMIC_BIT_INIT(bin_locks)[NR_LOCKS];
MUTEX_INIT(count_mutex);
mutex_id_t uninitialised_mutexes[4]; /* NULL: one lock */

BARRIER_INIT(my_barrier, NR_TASKLETS);

static void histogram(uint32_t *input, unsigned int l_size, uint32_t bins) {
    for (unsigned int j = 0; j < l_size; j++) {
        T d = input[j];
        uint32_t bin = (d * bins) >> DEPTH;
        mutex_id_t lock = &ATOMIC_BIT_GET(bin_locks)[bin % NR_LOCKS];
        mutex_lock(lock);
        histo[bin] += 1;
        mutex_unlock(lock);
    }
}

int main(void) {
    unsigned int tasklet_id = me();
    if (tasklet_id == 0) {
        mem_reset();
        for (unsigned int b = 0; b < NR_HISTO; b++) {
            histo[b] = 0;
        }
        nr_counted = 0;
        nr_blocks = 0;
    }
    barrier_wait(&my_barrier);

    uint32_t input_size_dpu_bytes = DPU_INPUT_ARGUMENTS.size * sizeof(T);
    uint32_t bins = DPU_INPUT_ARGUMENTS.bins;
    uint32_t base_tasklet = tasklet_id << BLOCK_SIZE_LOG2;
    uint32_t mram_base_addr_A = (uint32_t)DPU_MRAM_HEAP_POINTER;
    T *cache_A = (T *)mem_alloc(BLOCK_SIZE);

    for (unsigned int byte_index = base_tasklet; byte_index < input_size_dpu_bytes;
         byte_index += BLOCK_SIZE * NR_TASKLETS) {
        uint32_t l_size_bytes =
            (byte_index + BLOCK_SIZE >= input_size_dpu_bytes) ? (input_size_dpu_bytes - byte_index) : BLOCK_SIZE;
        /* The DMA moves whole 8-byte words: an odd tail reads one element more, which is not counted. */
        mram_read((__mram_ptr void const *)(mram_base_addr_A + byte_index), cache_A, (l_size_bytes + 7) & ~7u);
        histogram(cache_A, l_size_bytes / sizeof(T), bins);

        mutex_lock(count_mutex);
        nr_counted += l_size_bytes / sizeof(T);
        mutex_unlock(count_mutex);

        mutex_lock(uninitialised_mutexes[tasklet_id % 4]);
        nr_blocks += 1;
        mutex_unlock(uninitialised_mutexes[tasklet_id % 4]);
    }
    barrier_wait(&my_barrier);
    return 0;
}
