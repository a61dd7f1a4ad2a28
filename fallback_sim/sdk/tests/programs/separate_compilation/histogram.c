/* histogram.c: libstats.a's bucket counts. */
#include "stats.h"

void count_buckets(const uint32_t *values, uint32_t count, uint32_t counts[NR_BUCKETS])
{
    for (uint32_t i = 0; i < count; i++) {
        counts[values[i] % NR_BUCKETS]++;
    }
}
