/*
 * Vector addition, PrIM VA style: NR_DPUS and NR_TASKLETS come from the makefile; the input size is not a
 * multiple of the number of DPUs, of the block size, nor of 2 elements (so the last DPU's slice is odd and
 * shorter). Per-DPU arguments and vectors go out with dpu_prepare_xfer/dpu_push_xfer to DPU_INPUT_ARGUMENTS and
 * DPU_MRAM_HEAP_POINTER_NAME; results come back the same way and are checked against the CPU.
 */
#define _POSIX_C_SOURCE 200809L
#include <dpu.h>
#include <dpu_log.h>
#include <dpu_management.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#ifndef DPU_BINARY
#define DPU_BINARY "./bin/dpu_code"
#endif
#ifndef INPUT_SIZE
#define INPUT_SIZE 1000003u
#endif
#define NR_REPS 3

int main(void) {
    struct dpu_set_t dpu_set, dpu;
    uint32_t nr_of_dpus, i;
    unsigned errors = 0;

    DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &dpu_set));
    DPU_ASSERT(dpu_load(dpu_set, DPU_BINARY, NULL));
    DPU_ASSERT(dpu_get_nr_dpus(dpu_set, &nr_of_dpus));
    printf("Allocated %u DPU(s), %u tasklets each\n", nr_of_dpus, NR_TASKLETS);
    if (nr_of_dpus != NR_DPUS) {
        printf("FAILED: dpu_alloc(%u) gave %u DPUs\n", NR_DPUS, nr_of_dpus);
        return EXIT_FAILURE;
    }

    const uint32_t input_size = INPUT_SIZE;
    /* Elements per DPU, rounded up to 8 bytes: every DPU gets the same transfer, the last one fewer elements. */
    const uint32_t input_size_dpu = divceil(input_size, nr_of_dpus);
    const uint32_t input_size_dpu_8bytes = ((input_size_dpu * sizeof(T)) % 8) != 0 ? input_size_dpu + 1 : input_size_dpu;
    const uint32_t total = input_size_dpu_8bytes * nr_of_dpus;

    T *A = calloc(total, sizeof(T));
    T *B = calloc(total, sizeof(T));
    T *C = calloc(total, sizeof(T));
    T *C_host = calloc(total, sizeof(T));
    dpu_arguments_t *input_args = calloc(nr_of_dpus, sizeof(*input_args));
    srand(0);
    for (i = 0; i < input_size; i++) {
        A[i] = (T)rand();
        B[i] = (T)rand();
        C_host[i] = A[i] + B[i];
    }

    for (i = 0; i < nr_of_dpus; i++) {
        uint32_t first = i * input_size_dpu_8bytes;
        input_args[i].size = first >= input_size ? 0
                             : (input_size - first < input_size_dpu_8bytes ? input_size - first : input_size_dpu_8bytes);
        input_args[i].transfer_size = input_size_dpu_8bytes * sizeof(T);
        input_args[i].kernel = kernel1;
    }
    if (input_args[nr_of_dpus - 1].size == input_size_dpu_8bytes || input_args[nr_of_dpus - 1].size % 2 == 0) {
        printf("note: the last DPU's slice is not uneven (%u elements)\n", input_args[nr_of_dpus - 1].size);
    }

    for (int rep = 0; rep < NR_REPS; rep++) {
        memset(C, 0xAB, total * sizeof(T));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &input_args[i])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, "DPU_INPUT_ARGUMENTS", 0, sizeof(input_args[0]),
                                 DPU_XFER_DEFAULT));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, A + input_size_dpu_8bytes * i)); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0,
                                 input_size_dpu_8bytes * sizeof(T), DPU_XFER_DEFAULT));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, B + input_size_dpu_8bytes * i)); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME,
                                 input_size_dpu_8bytes * sizeof(T), input_size_dpu_8bytes * sizeof(T),
                                 DPU_XFER_DEFAULT));

        DPU_ASSERT(dpu_launch(dpu_set, DPU_SYNCHRONOUS));

        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, C + input_size_dpu_8bytes * i)); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME,
                                 2 * input_size_dpu_8bytes * sizeof(T), input_size_dpu_8bytes * sizeof(T),
                                 DPU_XFER_DEFAULT));

        unsigned rep_errors = 0;
        for (i = 0; i < total; i++) {
            /* Past the input, the zero padding adds up to zero. */
            if (C[i] != C_host[i]) {
                if (rep_errors < 5) {
                    printf("FAILED: rep %d, element %u: DPU %u, host %u\n", rep, i, C[i], C_host[i]);
                }
                rep_errors++;
            }
        }
        errors += rep_errors;
    }

    /* Tasklet 0 of each DPU printed its slice size. */
    char line[128];
    DPU_FOREACH(dpu_set, dpu, i) {
        if (i != 0 && i != nr_of_dpus - 1) {
            continue;
        }
        char *text = NULL;
        size_t length = 0;
        FILE *log = open_memstream(&text, &length);
        DPU_ASSERT(dpu_log_read(dpu, log));
        fclose(log);
        /* dpu_log_read's first line names the DPU by its dpu_get_id. */
        snprintf(line, sizeof(line), "=== DPU#0x%x ===\nva: %u elements, %u tasklets\n", dpu_get_id(dpu.dpu),
                 input_args[i].size, NR_TASKLETS);
        if (strcmp(text, line) != 0) {
            printf("FAILED: log of DPU %u is \"%s\", expected \"%s\"\n", i, text, line);
            errors++;
        }
        free(text);
    }

    DPU_ASSERT(dpu_free(dpu_set));
    printf("vector_add: %u elements on %u DPUs x %u tasklets, %d reps: %s (%u errors)\n", input_size, nr_of_dpus,
           NR_TASKLETS, NR_REPS, errors ? "FAILED" : "OK", errors);
    free(A);
    free(B);
    free(C);
    free(C_host);
    free(input_args);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
