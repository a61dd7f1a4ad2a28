/*
 * main.c: the kernel's entry, linked with libstats.a. The host writes nr_values values; each of the NR_TASKLETS
 * tasklets sums its contiguous slice of them (slice_sum) and counts them per bucket (count_buckets); after a
 * barrier, tasklet 0 adds the tasklets' results into total and buckets, which the host reads.
 */
#include <barrier.h>
#include <defs.h>
#include <stdint.h>

#include "stats.h"

__host uint32_t nr_values;
__host uint32_t values[MAX_VALUES];
__host uint32_t total;
__host uint32_t buckets[NR_BUCKETS];

static uint32_t partial_sums[NR_TASKLETS];
static uint32_t partial_buckets[NR_TASKLETS][NR_BUCKETS];

BARRIER_INIT(partials_ready, NR_TASKLETS);

int main(void)
{
    uint32_t tasklet = me();
    uint32_t count = nr_values <= MAX_VALUES ? nr_values : MAX_VALUES;
    uint32_t per_tasklet = (count + NR_TASKLETS - 1) / NR_TASKLETS;
    uint32_t first = tasklet * per_tasklet < count ? tasklet * per_tasklet : count;
    uint32_t last = first + per_tasklet < count ? first + per_tasklet : count;

    partial_sums[tasklet] = slice_sum(values + first, last - first);
    for (uint32_t bucket = 0; bucket < NR_BUCKETS; bucket++) {
        partial_buckets[tasklet][bucket] = 0;
    }
    count_buckets(values + first, last - first, partial_buckets[tasklet]);
    barrier_wait(&partials_ready);

    if (tasklet == 0) {
        /* Set, never read: clang 13 and later warn under -Wall (-Wunused-but-set-variable), the SDK's clang 12
         * does not, so -Werror keeps building. */
        uint32_t last_gathered = 0;
        total = 0;
        for (uint32_t bucket = 0; bucket < NR_BUCKETS; bucket++) {
            buckets[bucket] = 0;
        }
        for (uint32_t t = 0; t < NR_TASKLETS; t++) {
            total += partial_sums[t];
            for (uint32_t bucket = 0; bucket < NR_BUCKETS; bucket++) {
                buckets[bucket] += partial_buckets[t][bucket];
            }
            last_gathered = t;
        }
    }
    return 0;
}
