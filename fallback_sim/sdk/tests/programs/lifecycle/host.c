/*
 * Lifecycle, as PrIM's timing loops do it: ITERATIONS rounds of dpu_alloc / dpu_load / launches / dpu_free,
 * reloading the same binary and a different one within an allocation, with results checked every time:
 *   - WRAM globals (initialised and .bss), the heap and __mram variables persist across launches;
 *   - dpu_load resets them (and switches symbols and tasklet count with the binary), but keeps the rest of MRAM;
 *   - a fresh allocation starts from zeroed memories.
 */
#include <dpu.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define BINARY_A "./bin/dpu_code"
#define BINARY_B "./bin/dpu_code_b"
#define SENTINEL_OFFSET (64 * 1024)

static unsigned errors;

#define CHECK(cond, ...)                                                                                             \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            if (errors < 40) {                                                                                       \
                printf("FAILED: " __VA_ARGS__);                                                                      \
                printf("\n");                                                                                        \
            }                                                                                                        \
            errors++;                                                                                                \
        }                                                                                                            \
    } while (0)

static uint32_t in[NR_DPUS][N], out[NR_DPUS][N];
static uint32_t heap_first_a; /* heap_first of program A's first launch after a load */

static uint32_t read_u32(struct dpu_set_t dpu, const char *name) {
    uint32_t value = 0;
    DPU_ASSERT(dpu_copy_from(dpu, name, 0, &value, sizeof(value)));
    return value;
}

/* Runs the loaded program (A or B) `launches` times and checks it every time. */
static void run(struct dpu_set_t set, char program, int launches, int it) {
    struct dpu_set_t dpu;
    uint32_t i, nr_dpus;
    DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));
    uint32_t initial = program == 'A' ? COUNTER_A : COUNTER_B;
    uint32_t tasklets = program == 'A' ? NR_TASKLETS : NR_TASKLETS_B;
    DPU_FOREACH(set, dpu, i) {
        CHECK(read_u32(dpu, "kind") == (uint32_t)program, "it %d: DPU %u runs program %c, expected %c", it, i,
              read_u32(dpu, "kind"), program);
        CHECK(read_u32(dpu, "counter") == initial, "it %d: program %c DPU %u: counter %u after dpu_load, expected %u",
              it, program, i, read_u32(dpu, "counter"), initial);
    }
    uint32_t previous_heap[NR_DPUS] = {0};
    for (int launch = 1; launch <= launches; launch++) {
        for (i = 0; i < nr_dpus; i++) {
            for (uint32_t e = 0; e < N; e++) {
                in[i][e] = (uint32_t)(it * 7919 + launch * 104729) ^ (i << 16) ^ e;
            }
        }
        DPU_FOREACH(set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, in[i])); }
        DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, sizeof(in[0]),
                                 DPU_XFER_DEFAULT));
        DPU_ASSERT(dpu_launch(set, DPU_SYNCHRONOUS));
        memset(out, 0, sizeof(out));
        DPU_FOREACH(set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, out[i])); }
        DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, sizeof(in[0]), sizeof(out[0]),
                                 DPU_XFER_DEFAULT));
        uint32_t counter = initial + (uint32_t)launch;
        DPU_FOREACH(set, dpu, i) {
            for (uint32_t e = 0; e < N; e++) {
                uint32_t want = program == 'A' ? output_a(in[i][e], counter) : output_b(in[i][e], counter);
                CHECK(out[i][e] == want, "it %d: program %c launch %d DPU %u out[%u] = %u, expected %u", it, program,
                      launch, i, e, out[i][e], want);
            }
            CHECK(read_u32(dpu, "counter") == counter, "it %d: program %c launch %d DPU %u: counter %u, expected %u",
                  it, program, launch, i, read_u32(dpu, "counter"), counter);
            CHECK(read_u32(dpu, "seen_tasklets") == (1u << tasklets) - 1,
                  "it %d: program %c launch %d DPU %u: tasklets 0x%x ran, expected %u tasklets", it, program, launch,
                  i, read_u32(dpu, "seen_tasklets"), tasklets);
            if (program == 'A') {
                uint64_t mram_init[2] = {0, 0};
                DPU_ASSERT(dpu_copy_from(dpu, "mram_init", 0, mram_init, sizeof(mram_init)));
                CHECK(mram_init[0] == 7 + (uint64_t)launch && mram_init[1] == 8,
                      "it %d: launch %d DPU %u: mram_init = {%llu, %llu}", it, launch, i,
                      (unsigned long long)mram_init[0], (unsigned long long)mram_init[1]);
                CHECK(read_u32(dpu, "bss_copy") == (uint32_t)launch, "it %d: launch %d DPU %u: .bss counter %u", it,
                      launch, i, read_u32(dpu, "bss_copy"));
                uint32_t heap = read_u32(dpu, "heap_first");
                if (launch == 1) {
                    if (heap_first_a == 0) {
                        heap_first_a = heap;
                    }
                    CHECK(heap == heap_first_a, "it %d: DPU %u: first mem_alloc after dpu_load at 0x%x, expected 0x%x",
                          it, i, heap, heap_first_a);
                } else {
                    CHECK(heap > previous_heap[i], "it %d: launch %d DPU %u: the heap did not persist (0x%x then 0x%x)",
                          it, launch, i, previous_heap[i], heap);
                }
                previous_heap[i] = heap;
            } else {
                CHECK(read_u32(dpu, "b_only") == 2u * (uint32_t)launch, "it %d: launch %d DPU %u: b_only %u", it,
                      launch, i, read_u32(dpu, "b_only"));
            }
        }
    }
}

int main(void) {
    struct dpu_set_t set, dpu;
    uint32_t i, nr_dpus;
    uint64_t sentinel = 0x5E5E5E5E12345678ull;

    for (int it = 0; it < ITERATIONS; it++) {
        uint32_t wanted = NR_DPUS - (uint32_t)(it % 5); /* the trimmed part of the rank varies */
        DPU_ASSERT(dpu_alloc(wanted, NULL, &set));
        DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));
        CHECK(nr_dpus == wanted, "it %d: dpu_alloc(%u) gave %u DPUs", it, wanted, nr_dpus);
        char first = it % 3 == 2 ? 'B' : 'A', second = first == 'A' ? 'B' : 'A';
        DPU_ASSERT(dpu_load(set, first == 'A' ? BINARY_A : BINARY_B, NULL));

        /* A fresh allocation: MRAM is zero, whatever the previous round left there. */
        DPU_FOREACH(set, dpu, i) {
            uint64_t words[4] = {1, 1, 1, 1}, sentinel_now = 1;
            DPU_ASSERT(dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, sizeof(in[0]), words, sizeof(words)));
            DPU_ASSERT(dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, SENTINEL_OFFSET, &sentinel_now,
                                     sizeof(sentinel_now)));
            CHECK(words[0] == 0 && words[3] == 0 && sentinel_now == 0,
                  "it %d: DPU %u: MRAM not zero after dpu_alloc (0x%llx, 0x%llx)", it, i, (unsigned long long)words[0],
                  (unsigned long long)sentinel_now);
        }

        run(set, first, 2, it);

        /* Reload the same binary: WRAM and __mram variables start over; the rest of MRAM stays. */
        DPU_ASSERT(dpu_copy_to(set, DPU_MRAM_HEAP_POINTER_NAME, SENTINEL_OFFSET, &sentinel, sizeof(sentinel)));
        DPU_ASSERT(dpu_load(set, first == 'A' ? BINARY_A : BINARY_B, NULL));
        DPU_FOREACH(set, dpu, i) {
            uint64_t sentinel_now = 0;
            DPU_ASSERT(dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, SENTINEL_OFFSET, &sentinel_now,
                                     sizeof(sentinel_now)));
            CHECK(sentinel_now == sentinel, "it %d: DPU %u: MRAM heap data lost by dpu_load (0x%llx)", it, i,
                  (unsigned long long)sentinel_now);
        }
        run(set, first, 3, it);

        /* Load the other binary into the same DPUs. */
        DPU_ASSERT(dpu_load(set, second == 'A' ? BINARY_A : BINARY_B, NULL));
        run(set, second, 2, it);
        uint32_t value;
        dpu_error_t status = DPU_OK;
        DPU_FOREACH(set, dpu) {
            status = dpu_copy_from(dpu, second == 'A' ? "b_only" : "heap_first", 0, &value, sizeof(value));
            break;
        }
        CHECK(status == DPU_ERR_UNKNOWN_SYMBOL, "it %d: program %c still resolves the other program's symbol (%d)",
              it, second, (int)status);

        DPU_ASSERT(dpu_free(set));
    }

    printf("lifecycle: %d rounds of alloc / load / launch / reload / load other / free on up to %u DPUs: %s "
           "(%u errors)\n",
           ITERATIONS, NR_DPUS, errors ? "FAILED" : "OK", errors);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
