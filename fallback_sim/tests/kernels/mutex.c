/*
 * mutex.c: MUTEX_INIT mutexes, mutex_trylock, and never-initialised mutex_id_t arrays (all NULL, so one lock).
 *
 * Every tasklet increments two MRAM counters ITERATIONS times each, with a read-modify-write through DMA inside
 * the critical section (so that a simulator switching tasklets at DMA would lose updates without the lock):
 * mutex_counter under counter_mutex, null_counter under uninitialised_mutexes[(t + i) % NR_NULL_MUTEXES].
 * Tasklet 0 also checks trylock semantics first: trylock of a held mutex fails (even by its holder), of a free
 * one succeeds; all NULL mutex ids are the same lock; counter_mutex and the NULL lock are different locks.
 *
 * DPU outputs:  mutex_total = null_total = NR_TASKLETS * ITERATIONS
 *               trylock_errors = 0
 * Any NR_TASKLETS. Most telling with the harness switching tasklets at DMA (DPUSIM_FLAG_YIELD_ON_DMA).
 */
#include <stdint.h>

#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <mutex.h>

#define ITERATIONS 8
#define NR_NULL_MUTEXES 4

__host uint64_t mutex_total;
__host uint64_t null_total;
__host uint32_t trylock_errors;

MUTEX_INIT(counter_mutex);
mutex_id_t uninitialised_mutexes[NR_NULL_MUTEXES];

__mram_noinit uint64_t mutex_counter;
__mram_noinit uint64_t null_counter;
__dma_aligned uint64_t scratch[NR_TASKLETS];

BARRIER_INIT(start_barrier, NR_TASKLETS);
BARRIER_INIT(end_barrier, NR_TASKLETS);

static void increment(__mram_ptr uint64_t *counter)
{
    uint64_t *value = &scratch[me()];
    mram_read(counter, value, sizeof(*value));
    *value += 1;
    mram_write(value, counter, sizeof(*value));
}

static void check_trylock(void)
{
    uint32_t failures = 0;
    mutex_lock(counter_mutex);
    if (mutex_trylock(counter_mutex)) {
        failures++;
        mutex_unlock(counter_mutex);
    }
    mutex_unlock(counter_mutex);
    if (mutex_trylock(MUTEX_GET(counter_mutex))) {
        mutex_unlock(counter_mutex);
    } else {
        failures++;
    }

    mutex_lock(uninitialised_mutexes[0]);
    if (mutex_trylock(uninitialised_mutexes[NR_NULL_MUTEXES - 1])) {
        failures++; /* NULL ids must be one lock */
        mutex_unlock(uninitialised_mutexes[NR_NULL_MUTEXES - 1]);
    }
    if (mutex_trylock(counter_mutex)) {
        mutex_unlock(counter_mutex);
    } else {
        failures++; /* counter_mutex is another lock */
    }
    mutex_unlock(uninitialised_mutexes[0]);
    trylock_errors = failures;
}

int main(void)
{
    if (me() == 0) {
        scratch[0] = 0;
        mram_write(&scratch[0], &mutex_counter, sizeof(uint64_t));
        mram_write(&scratch[0], &null_counter, sizeof(uint64_t));
        check_trylock();
    }
    barrier_wait(&start_barrier);

    for (uint32_t i = 0; i < ITERATIONS; i++) {
        mutex_lock(counter_mutex);
        increment(&mutex_counter);
        mutex_unlock(counter_mutex);

        mutex_id_t null_mutex = uninitialised_mutexes[(me() + i) % NR_NULL_MUTEXES];
        mutex_lock(null_mutex);
        increment(&null_counter);
        mutex_unlock(null_mutex);
    }
    barrier_wait(&end_barrier);

    if (me() == 0) {
        mram_read(&mutex_counter, &scratch[0], sizeof(uint64_t));
        mutex_total = scratch[0];
        mram_read(&null_counter, &scratch[0], sizeof(uint64_t));
        null_total = scratch[0];
    }
    return 0;
}
