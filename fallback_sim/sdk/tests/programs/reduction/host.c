/*
 * Reduction, PrIM RED style: int64 values spread unevenly over NR_DPUS DPUs; each DPU reduces its slice
 * (tree and chain of handshakes, barriers); per-DPU results are gathered with dpu_push_xfer(DPU_XFER_FROM_DPU)
 * and the host adds them up and checks every per-tasklet figure against the CPU.
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
#define INPUT_SIZE 654321u
#endif
#define NR_REPS 3

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
    const uint32_t input_size_dpu = divceil(input_size, nr_of_dpus);
    T *A = calloc((size_t)input_size_dpu * nr_of_dpus, sizeof(T));
    dpu_arguments_t *args = calloc(nr_of_dpus, sizeof(*args));
    dpu_results_t *results = calloc(nr_of_dpus, sizeof(*results));
    srand(1);
    T expected_total = 0;
    for (i = 0; i < input_size; i++) {
        A[i] = (T)(rand() % 2000001) - 1000000;
        expected_total += A[i];
    }
    for (i = 0; i < nr_of_dpus; i++) {
        uint32_t first = i * input_size_dpu;
        args[i].size = first >= input_size ? 0 : (input_size - first < input_size_dpu ? input_size - first : input_size_dpu);
        args[i].transfer_size = input_size_dpu * sizeof(T);
    }

    DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &args[i])); }
    DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, "DPU_INPUT_ARGUMENTS", 0, sizeof(args[0]), DPU_XFER_DEFAULT));
    DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &A[(size_t)i * input_size_dpu])); }
    DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, input_size_dpu * sizeof(T),
                             DPU_XFER_DEFAULT));

    T total = 0;
    for (int rep = 0; rep < NR_REPS; rep++) {
        DPU_ASSERT(dpu_launch(dpu_set, DPU_SYNCHRONOUS));
        memset(results, 0, nr_of_dpus * sizeof(*results));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &results[i])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_FROM_DPU, "DPU_RESULTS", 0, sizeof(results[0]),
                                 DPU_XFER_DEFAULT));

        total = 0;
        for (i = 0; i < nr_of_dpus; i++) {
            const T *slice = &A[(size_t)i * input_size_dpu];
            T dpu_total = 0, prefix = 0;
            for (uint32_t t = 0; t < NR_TASKLETS; t++) {
                T partial = 0;
                /* Tasklet t reads blocks t, t + NR_TASKLETS, ... of BLOCK_SIZE bytes. */
                for (uint32_t e = t * (BLOCK_SIZE / sizeof(T)); e < args[i].size;
                     e += NR_TASKLETS * (BLOCK_SIZE / sizeof(T))) {
                    for (uint32_t k = e; k < e + BLOCK_SIZE / sizeof(T) && k < args[i].size; k++) {
                        partial += slice[k];
                    }
                }
                prefix += partial;
                dpu_total += partial;
                CHECK(results[i].partial[t] == partial, "rep %d DPU %u tasklet %u partial %lld, expected %lld", rep,
                      i, t, (long long)results[i].partial[t], (long long)partial);
                CHECK(results[i].prefix[t] == prefix, "rep %d DPU %u tasklet %u prefix %lld, expected %lld", rep, i,
                      t, (long long)results[i].prefix[t], (long long)prefix);
            }
            CHECK(results[i].sum == dpu_total, "rep %d DPU %u tree sum %lld, expected %lld", rep, i,
                  (long long)results[i].sum, (long long)dpu_total);
            CHECK(results[i].barrier_sum == dpu_total, "rep %d DPU %u barrier sum %lld, expected %lld", rep, i,
                  (long long)results[i].barrier_sum, (long long)dpu_total);
            CHECK(results[i].launches == (uint32_t)rep + 1, "rep %d DPU %u counted %u launches", rep, i,
                  results[i].launches);
            CHECK(results[i].cycles > 0, "rep %d DPU %u perfcounter_get() gave 0", rep, i);
            total += results[i].sum;
        }
        CHECK(total == expected_total, "rep %d total %lld, expected %lld", rep, (long long)total,
              (long long)expected_total);
    }

    DPU_ASSERT(dpu_free(dpu_set));
    printf("reduction: %u int64 on %u DPUs x %u tasklets, %d reps: sum %lld: %s (%u errors)\n", input_size,
           nr_of_dpus, NR_TASKLETS, NR_REPS, (long long)total, errors ? "FAILED" : "OK", errors);
    free(A);
    free(args);
    free(results);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
