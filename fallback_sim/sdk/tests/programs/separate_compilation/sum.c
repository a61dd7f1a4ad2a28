/* sum.c: libstats.a's sums. */
#include "stats.h"

uint32_t slice_sum(const uint32_t *values, uint32_t count)
{
    uint32_t sum = 0;
    for (uint32_t i = 0; i < count; i++) {
        sum += values[i];
    }
    return sum;
}
