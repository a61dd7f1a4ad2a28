/*
 * Scan, PrIM SCAN-SSA style: one DPU program, two kernels run in sequence on the same loaded program, the
 * kernel chosen by a __host argument: kernel1 (reduce each DPU), the host's scan of the DPU totals, kernel2
 * (scan each DPU from its base). The output is checked against the CPU's inclusive scan; the sequence runs
 * twice, with other inputs, to switch back and forth between kernels.
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
#define INPUT_SIZE 300007u
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

int main(void) {
    struct dpu_set_t dpu_set, dpu;
    uint32_t nr_of_dpus, i;

    DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &dpu_set));
    DPU_ASSERT(dpu_load(dpu_set, DPU_BINARY, NULL));
    DPU_ASSERT(dpu_get_nr_dpus(dpu_set, &nr_of_dpus));

    const uint32_t input_size = INPUT_SIZE;
    const uint32_t input_size_dpu = divceil(input_size, nr_of_dpus);
    const size_t padded = (size_t)input_size_dpu * nr_of_dpus;
    T *A = calloc(padded, sizeof(T));
    T *C = calloc(padded, sizeof(T));
    T *C_host = calloc(padded, sizeof(T));
    dpu_arguments_t *args = calloc(nr_of_dpus, sizeof(*args));
    dpu_results_t *results = calloc(nr_of_dpus, sizeof(*results));

    for (int round = 0; round < 2; round++) {
        srand(3 + round);
        T running = 0;
        for (i = 0; i < input_size; i++) {
            A[i] = (T)(rand() % 1001) - 500 + (round ? 1000000007LL : 0);
            running += A[i];
            C_host[i] = running;
        }
        for (i = 0; i < nr_of_dpus; i++) {
            uint32_t first = i * input_size_dpu;
            args[i].size = first >= input_size ? 0 : (input_size - first < input_size_dpu ? input_size - first : input_size_dpu);
            args[i].transfer_size = input_size_dpu * sizeof(T);
            args[i].kernel = kernel1;
            args[i].t_count = 0;
        }
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &A[(size_t)i * input_size_dpu])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0,
                                 input_size_dpu * sizeof(T), DPU_XFER_DEFAULT));

        /* kernel1: reduction. */
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &args[i])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, "DPU_INPUT_ARGUMENTS", 0, sizeof(args[0]),
                                 DPU_XFER_DEFAULT));
        DPU_ASSERT(dpu_launch(dpu_set, DPU_SYNCHRONOUS));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &results[i])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_FROM_DPU, "DPU_RESULTS", 0, sizeof(results[0]),
                                 DPU_XFER_DEFAULT));

        /* The host scans the DPU totals. */
        T accum = 0;
        for (i = 0; i < nr_of_dpus; i++) {
            T want = 0;
            for (uint32_t e = 0; e < args[i].size; e++) {
                want += A[(size_t)i * input_size_dpu + e];
            }
            CHECK(results[i].kernel_ran == 1, "round %d DPU %u: kernel %u ran, expected kernel1", round, i,
                  results[i].kernel_ran);
            CHECK(results[i].t_count == want, "round %d DPU %u: kernel1 sum %lld, expected %lld", round, i,
                  (long long)results[i].t_count, (long long)want);
            args[i].t_count = accum;
            args[i].kernel = kernel2;
            accum += results[i].t_count;
        }

        /* kernel2: scan, on the same loaded program. */
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &args[i])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, "DPU_INPUT_ARGUMENTS", 0, sizeof(args[0]),
                                 DPU_XFER_DEFAULT));
        DPU_ASSERT(dpu_launch(dpu_set, DPU_SYNCHRONOUS));
        memset(C, 0, padded * sizeof(T));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &C[(size_t)i * input_size_dpu])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, input_size_dpu * sizeof(T),
                                 input_size_dpu * sizeof(T), DPU_XFER_DEFAULT));
        DPU_FOREACH(dpu_set, dpu, i) {
            dpu_results_t result;
            DPU_ASSERT(dpu_copy_from(dpu, "DPU_RESULTS", 0, &result, sizeof(result)));
            CHECK(result.kernel_ran == 2, "round %d DPU %u: kernel %u ran, expected kernel2", round, i,
                  result.kernel_ran);
            for (uint32_t e = 0; e < args[i].size; e++) {
                size_t index = (size_t)i * input_size_dpu + e;
                CHECK(C[index] == C_host[index], "round %d DPU %u element %u: %lld, expected %lld", round, i, e,
                      (long long)C[index], (long long)C_host[index]);
            }
        }
        CHECK(accum == C_host[input_size - 1], "round %d: total %lld, expected %lld", round, (long long)accum,
              (long long)C_host[input_size - 1]);
    }

    DPU_ASSERT(dpu_free(dpu_set));
    printf("two_kernels: scan of %u int64 on %u DPUs x %u tasklets, kernel1 then kernel2, 2 rounds: %s (%u errors)\n",
           input_size, nr_of_dpus, NR_TASKLETS, errors ? "FAILED" : "OK", errors);
    free(A);
    free(C);
    free(C_host);
    free(args);
    free(results);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
