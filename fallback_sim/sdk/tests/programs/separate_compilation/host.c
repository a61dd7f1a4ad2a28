/*
 * Separate compilation: the kernel built from an object and a static library (see the Makefile). Each DPU gets
 * its own values; its total and bucket counts are checked against the CPU's, and the program checks that it
 * runs NR_TASKLETS tasklets (every tasklet's slice is counted).
 */
#include <dpu.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "stats.h"

#ifndef DPU_BINARY
#define DPU_BINARY "./bin/dpu_code"
#endif

static unsigned errors;

#define CHECK(cond, ...)                                                                                             \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            if (errors < 20) {                                                                                       \
                printf("FAILED: " __VA_ARGS__);                                                                      \
                printf("\n");                                                                                        \
            }                                                                                                        \
            errors++;                                                                                                \
        }                                                                                                            \
    } while (0)

int main(void)
{
    struct dpu_set_t set, dpu;
    uint32_t nr_dpus, index;
    DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &set));
    DPU_ASSERT(dpu_load(set, DPU_BINARY, NULL));
    DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));

    static uint32_t values[NR_DPUS][MAX_VALUES];
    uint32_t counts[NR_DPUS];
    srand(19);
    DPU_FOREACH(set, dpu, index)
    {
        counts[index] = MAX_VALUES - 97 * index;
        for (uint32_t i = 0; i < counts[index]; i++) {
            values[index][i] = (uint32_t)rand() % 100000;
        }
        DPU_ASSERT(dpu_copy_to(dpu, "nr_values", 0, &counts[index], sizeof(uint32_t)));
        DPU_ASSERT(dpu_copy_to(dpu, "values", 0, values[index], MAX_VALUES * sizeof(uint32_t)));
    }
    DPU_ASSERT(dpu_launch(set, DPU_SYNCHRONOUS));

    uint64_t checked = 0;
    DPU_FOREACH(set, dpu, index)
    {
        uint32_t total, buckets[NR_BUCKETS], want_total = 0, want_buckets[NR_BUCKETS] = {0};
        for (uint32_t i = 0; i < counts[index]; i++) {
            want_total += values[index][i];
            want_buckets[values[index][i] % NR_BUCKETS]++;
        }
        DPU_ASSERT(dpu_copy_from(dpu, "total", 0, &total, sizeof(total)));
        DPU_ASSERT(dpu_copy_from(dpu, "buckets", 0, buckets, sizeof(buckets)));
        CHECK(total == want_total, "DPU %u: total %u, expected %u", index, total, want_total);
        for (uint32_t bucket = 0; bucket < NR_BUCKETS; bucket++) {
            CHECK(buckets[bucket] == want_buckets[bucket], "DPU %u bucket %u: %u, expected %u", index, bucket,
                  buckets[bucket], want_buckets[bucket]);
        }
        checked += counts[index];
    }
    DPU_ASSERT(dpu_free(set));
    printf("separate_compilation: %u DPUs, %llu values: %s (%u errors)\n", nr_dpus, (unsigned long long)checked,
           errors ? "FAILED" : "OK", errors);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
