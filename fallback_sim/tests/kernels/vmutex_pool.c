/*
 * vmutex_pool.c: virtual mutexes (VMUTEX_INIT, vmutex_lock/unlock) and mutex pools (MUTEX_POOL_INIT,
 * mutex_pool_lock/unlock) guarding arrays of MRAM counters.
 *
 * Every tasklet, ROUNDS times, increments each of the NR_COUNTERS counters of both arrays once, with a DMA
 * read-modify-write inside the critical section. All tasklets walk the counters in the same order, so they
 * contend for the same counter at the same time. Counter k of
 * vmutex_counters is guarded by virtual mutex k, counter k of pool_counters by pool id k (pool mutex
 * k % NR_POOL_MUTEXES). Once per round each tasklet also holds two different virtual mutexes at once, which
 * deadlocks unless distinct ids are distinct locks.
 *
 * DPU outputs (MRAM):  vmutex_counters[k] = pool_counters[k] = NR_TASKLETS * ROUNDS for every k < NR_COUNTERS
 * Any NR_TASKLETS. Most telling with DPUSIM_FLAG_YIELD_ON_DMA.
 */
#include <stdint.h>

#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <mutex_pool.h>
#include <vmutex.h>

#define NR_COUNTERS 64
#define NR_HW_MUTEXES 8
#define NR_POOL_MUTEXES 8
#define ROUNDS 2

VMUTEX_INIT(counter_vmutexes, NR_COUNTERS, NR_HW_MUTEXES);
MUTEX_POOL_INIT(counter_pool, NR_POOL_MUTEXES);

__mram_noinit uint64_t vmutex_counters[NR_COUNTERS];
__mram_noinit uint64_t pool_counters[NR_COUNTERS];

__dma_aligned uint64_t zeros[NR_COUNTERS];
__dma_aligned uint64_t scratch[NR_TASKLETS];

BARRIER_INIT(start_barrier, NR_TASKLETS);

static void increment(__mram_ptr uint64_t *counter)
{
    uint64_t *value = &scratch[me()];
    mram_read(counter, value, sizeof(*value));
    *value += 1;
    mram_write(value, counter, sizeof(*value));
}

int main(void)
{
    if (me() == 0) {
        mram_write(zeros, vmutex_counters, sizeof(zeros));
        mram_write(zeros, pool_counters, sizeof(zeros));
    }
    barrier_wait(&start_barrier);

    for (uint32_t round = 0; round < ROUNDS; round++) {
        for (uint32_t k = 0; k < NR_COUNTERS; k++) {
            uint16_t id = (uint16_t)k;
            vmutex_lock(&counter_vmutexes, id);
            increment(&vmutex_counters[id]);
            vmutex_unlock(&counter_vmutexes, id);

            mutex_pool_lock(&counter_pool, id);
            increment(&pool_counters[id]);
            mutex_pool_unlock(&counter_pool, id);
        }

        uint16_t first = (uint16_t)(me() % NR_COUNTERS);
        uint16_t second = (uint16_t)((first + 1) % NR_COUNTERS);
        vmutex_lock(&counter_vmutexes, first);
        vmutex_lock(&counter_vmutexes, second);
        vmutex_unlock(&counter_vmutexes, second);
        vmutex_unlock(&counter_vmutexes, first);
    }
    return 0;
}
