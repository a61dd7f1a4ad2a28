/*
 * stats.h: what the kernel and the host share, and the library's functions (libstats.a: sum.c, histogram.c).
 */
#ifndef STATS_H
#define STATS_H

#include <stdint.h>

#define MAX_VALUES 4096
#define NR_BUCKETS 16

/* The sum of values[0 .. count). */
uint32_t slice_sum(const uint32_t *values, uint32_t count);

/* Adds to counts[b] how many of values[0 .. count) fall in bucket b (value % NR_BUCKETS). */
void count_buckets(const uint32_t *values, uint32_t count, uint32_t counts[NR_BUCKETS]);

#endif /* STATS_H */
