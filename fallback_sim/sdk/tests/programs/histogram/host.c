/*
 * Histogram, PrIM HST-L style: DEPTH-bit values over NR_DPUS DPUs (uneven slices, odd element counts); each
 * DPU builds its histogram in WRAM under mutexes; the host reads every DPU's histogram and counters with
 * dpu_copy_from and checks them against the CPU, per DPU and merged.
 */
#include <dpu.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#ifndef DPU_BINARY
#define DPU_BINARY "./bin/dpu_code"
#endif
#ifndef INPUT_SIZE
#define INPUT_SIZE 400001u
#endif
#define NR_REPS 2

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

int main(void) {
    struct dpu_set_t dpu_set, dpu;
    uint32_t nr_of_dpus, i;

    DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &dpu_set));
    DPU_ASSERT(dpu_load(dpu_set, DPU_BINARY, NULL));
    DPU_ASSERT(dpu_get_nr_dpus(dpu_set, &nr_of_dpus));
    CHECK(nr_of_dpus == NR_DPUS, "dpu_get_nr_dpus gave %u, expected %u", nr_of_dpus, NR_DPUS);

    const uint32_t input_size = INPUT_SIZE;
    uint32_t input_size_dpu = divceil(input_size, nr_of_dpus);
    input_size_dpu += input_size_dpu % 2; /* 8-byte transfers */
    T *A = calloc((size_t)input_size_dpu * nr_of_dpus, sizeof(T));
    dpu_arguments_t *args = calloc(nr_of_dpus, sizeof(*args));
    uint32_t *histos = calloc((size_t)nr_of_dpus * NR_HISTO, sizeof(uint32_t));
    uint32_t *expected = calloc((size_t)nr_of_dpus * NR_HISTO, sizeof(uint32_t));
    uint32_t merged[NR_HISTO] = {0}, merged_host[NR_HISTO] = {0};
    srand(2);
    for (i = 0; i < input_size; i++) {
        /* Skewed: a few bins get most values, so locks are contended. */
        A[i] = (rand() % 4 == 0) ? (T)(rand() % (1 << DEPTH)) : (T)(rand() % 64);
    }

    for (int rep = 0; rep < NR_REPS; rep++) {
        uint32_t bins = rep == 0 ? NR_HISTO : NR_HISTO / 4;
        memset(expected, 0, (size_t)nr_of_dpus * NR_HISTO * sizeof(uint32_t));
        memset(merged_host, 0, sizeof(merged_host));
        for (i = 0; i < nr_of_dpus; i++) {
            uint32_t first = i * input_size_dpu;
            args[i].size = first >= input_size ? 0 : (input_size - first < input_size_dpu ? input_size - first : input_size_dpu);
            args[i].transfer_size = input_size_dpu * sizeof(T);
            args[i].bins = bins;
            for (uint32_t e = 0; e < args[i].size; e++) {
                uint32_t bin = (A[first + e] * bins) >> DEPTH;
                expected[(size_t)i * NR_HISTO + bin]++;
                merged_host[bin]++;
            }
        }
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &args[i])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, "DPU_INPUT_ARGUMENTS", 0, sizeof(args[0]),
                                 DPU_XFER_DEFAULT));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &A[(size_t)i * input_size_dpu])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0,
                                 input_size_dpu * sizeof(T), DPU_XFER_DEFAULT));

        DPU_ASSERT(dpu_launch(dpu_set, DPU_SYNCHRONOUS));

        memset(merged, 0, sizeof(merged));
        DPU_FOREACH(dpu_set, dpu, i) {
            uint32_t counted = 0, blocks = 0;
            DPU_ASSERT(dpu_copy_from(dpu, "histo", 0, &histos[(size_t)i * NR_HISTO], NR_HISTO * sizeof(uint32_t)));
            DPU_ASSERT(dpu_copy_from(dpu, "nr_counted", 0, &counted, sizeof(counted)));
            DPU_ASSERT(dpu_copy_from(dpu, "nr_blocks", 0, &blocks, sizeof(blocks)));
            uint32_t block_elements = BLOCK_SIZE / sizeof(T);
            CHECK(counted == args[i].size, "rep %d DPU %u counted %u elements, expected %u", rep, i, counted,
                  args[i].size);
            CHECK(blocks == divceil(args[i].size, block_elements), "rep %d DPU %u counted %u blocks, expected %u",
                  rep, i, blocks, divceil(args[i].size, block_elements));
            for (uint32_t b = 0; b < NR_HISTO; b++) {
                uint32_t got = histos[(size_t)i * NR_HISTO + b], want = expected[(size_t)i * NR_HISTO + b];
                CHECK(got == want, "rep %d DPU %u bin %u: %u, expected %u", rep, i, b, got, want);
                merged[b] += got;
            }
        }
        /* The histogram can also be read in two parts at an offset (a multiple of 4 in WRAM). */
        DPU_FOREACH(dpu_set, dpu, i) {
            uint32_t upper[NR_HISTO / 2];
            DPU_ASSERT(dpu_copy_from(dpu, "histo", NR_HISTO / 2 * sizeof(uint32_t), upper, sizeof(upper)));
            CHECK(memcmp(upper, &histos[(size_t)i * NR_HISTO + NR_HISTO / 2], sizeof(upper)) == 0,
                  "rep %d DPU %u: upper half read at an offset differs", rep, i);
        }
        uint64_t total = 0;
        for (uint32_t b = 0; b < NR_HISTO; b++) {
            CHECK(merged[b] == merged_host[b], "rep %d merged bin %u: %u, expected %u", rep, b, merged[b],
                  merged_host[b]);
            total += merged[b];
        }
        CHECK(total == input_size, "rep %d: %llu values counted, expected %u", rep, (unsigned long long)total,
              input_size);
    }

    DPU_ASSERT(dpu_free(dpu_set));
    printf("histogram: %u values, %u bins on %u DPUs x %u tasklets, %d reps: %s (%u errors)\n", input_size, NR_HISTO,
           nr_of_dpus, NR_TASKLETS, NR_REPS, errors ? "FAILED" : "OK", errors);
    free(A);
    free(args);
    free(histos);
    free(expected);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
