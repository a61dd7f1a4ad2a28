/*
 * atomic_bit.c: ATOMIC_BIT_INIT arrays used as lock bytes (mutex_id_t = &ATOMIC_BIT_GET(name)[i], as PrIM's
 * HST-L does) and ATOMIC_BIT_ACQUIRE/RELEASE on a single bit.
 *
 * Every tasklet, ITERATIONS times: increments bucket (t + i) % NR_BUCKETS under that bucket's bit, and the total
 * under total_bit, each with a DMA read-modify-write inside the critical section. Tasklet 0 then checks that
 * distinct bits are distinct locks and that a held bit cannot be taken again.
 *
 * DPU outputs (MRAM):  bucket_counters[b] = NR_TASKLETS * ITERATIONS / NR_BUCKETS, total_counter =
 *                      NR_TASKLETS * ITERATIONS
 * DPU outputs (WRAM):  lock_errors = 0
 * Any NR_TASKLETS. Most telling with DPUSIM_FLAG_YIELD_ON_DMA.
 */
#include <stdint.h>

#include <atomic_bit.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <mutex.h>

#define NR_BUCKETS 4
#define ITERATIONS 8 /* a multiple of NR_BUCKETS, so every bucket gets the same count */

__host uint32_t lock_errors;

ATOMIC_BIT_INIT(bucket_bits)[NR_BUCKETS];
ATOMIC_BIT_INIT(total_bit);

__mram_noinit uint64_t bucket_counters[NR_BUCKETS];
__mram_noinit uint64_t total_counter;

__dma_aligned uint64_t zeros[NR_BUCKETS];
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

static void check_locks(void)
{
    uint32_t failures = 0;
    mutex_id_t first = &ATOMIC_BIT_GET(bucket_bits)[0];
    mutex_id_t second = &ATOMIC_BIT_GET(bucket_bits)[1];
    mutex_lock(first);
    if (mutex_trylock(second)) {
        mutex_unlock(second);
    } else {
        failures++;
    }
    if (mutex_trylock(first)) {
        failures++;
        mutex_unlock(first);
    }
    mutex_unlock(first);
    lock_errors = failures;
}

int main(void)
{
    if (me() == 0) {
        mram_write(zeros, bucket_counters, sizeof(zeros));
        mram_write(zeros, &total_counter, sizeof(uint64_t));
    }
    barrier_wait(&start_barrier);

    for (uint32_t i = 0; i < ITERATIONS; i++) {
        uint32_t bucket = (me() + i) % NR_BUCKETS;
        mutex_id_t bucket_mutex = &ATOMIC_BIT_GET(bucket_bits)[bucket];
        mutex_lock(bucket_mutex);
        increment(&bucket_counters[bucket]);
        mutex_unlock(bucket_mutex);

        ATOMIC_BIT_ACQUIRE(total_bit);
        increment(&total_counter);
        ATOMIC_BIT_RELEASE(total_bit);
    }
    barrier_wait(&end_barrier);

    if (me() == 0) {
        check_locks();
    }
    return 0;
}
