/*
 * Asynchronous operations, as the SDK documents them: transfers with DPU_XFER_ASYNC, dpu_launch with
 * DPU_ASYNCHRONOUS, dpu_callback (per rank, asynchronous, single call), dpu_status polling and dpu_sync.
 * Operations queued on a rank run in order: a transfer or callback queued after an asynchronous launch sees
 * the launch's results.
 */
#define _POSIX_C_SOURCE 200809L
#include <dpu.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

#ifndef DPU_BINARY
#define DPU_BINARY "./bin/dpu_code"
#endif
#define PROFILE "nrDpusPerRank=16"
#define MAX_RANKS 8

static unsigned errors;

#define CHECK(cond, ...)                                                                                             \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            if (errors < 30) {                                                                                       \
                printf("FAILED: " __VA_ARGS__);                                                                      \
                printf("\n");                                                                                        \
            }                                                                                                        \
            errors++;                                                                                                \
        }                                                                                                            \
    } while (0)

static uint32_t *in, *out;
static uint32_t nr_of_dpus;

struct rank_context {
    uint32_t scale;
    uint32_t calls[MAX_RANKS];        /* calls per rank id */
    uint32_t rank_dpus[MAX_RANKS];    /* dpu_get_nr_dpus of the rank set given */
    uint64_t rank_sum[MAX_RANKS];     /* sum of result_sum over the rank's DPUs */
    uint32_t single_calls;
    uint32_t single_dpus;
};

/* Per rank: reads each DPU's result_sum (the launch queued before must be finished). */
static dpu_error_t per_rank(struct dpu_set_t rank, uint32_t rank_id, void *args) {
    struct rank_context *ctx = args;
    struct dpu_set_t dpu;
    uint32_t nr = 0;
    dpu_error_t status = dpu_get_nr_dpus(rank, &nr);
    if (status != DPU_OK) {
        return status;
    }
    if (rank_id >= MAX_RANKS) {
        return DPU_ERR_INTERNAL;
    }
    __atomic_fetch_add(&ctx->calls[rank_id], 1, __ATOMIC_SEQ_CST);
    ctx->rank_dpus[rank_id] = nr;
    uint64_t sum = 0;
    DPU_FOREACH(rank, dpu) {
        uint32_t value = 0;
        status = dpu_copy_from(dpu, "result_sum", 0, &value, sizeof(value));
        if (status != DPU_OK) {
            return status;
        }
        sum += value;
    }
    ctx->rank_sum[rank_id] = sum;
    return DPU_OK;
}

static dpu_error_t single_call(struct dpu_set_t set, uint32_t rank_id, void *args) {
    struct rank_context *ctx = args;
    uint32_t nr = 0;
    (void)rank_id;
    __atomic_fetch_add(&ctx->single_calls, 1, __ATOMIC_SEQ_CST);
    dpu_error_t status = dpu_get_nr_dpus(set, &nr);
    ctx->single_dpus = nr;
    return status;
}

/* Per rank, synchronously: the rank's input with prepare/push on the rank set. */
static dpu_error_t push_rank_input(struct dpu_set_t rank, uint32_t rank_id, void *args) {
    struct dpu_set_t dpu;
    uint32_t *first_index = args; /* first global DPU index of each rank */
    uint32_t i;
    DPU_FOREACH(rank, dpu, i) {
        dpu_error_t status = dpu_prepare_xfer(dpu, &in[(size_t)(first_index[rank_id] + i) * N]);
        if (status != DPU_OK) {
            return status;
        }
    }
    return dpu_push_xfer(rank, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, N * sizeof(uint32_t),
                         DPU_XFER_DEFAULT);
}

static void fill_input(uint32_t seed) {
    for (size_t e = 0; e < (size_t)nr_of_dpus * N; e++) {
        in[e] = (uint32_t)(e * 2654435761u) ^ seed;
    }
    memset(out, 0, (size_t)nr_of_dpus * N * sizeof(uint32_t));
}

/* Checks `out` and returns each DPU's expected result_sum into sums. */
static void check_output(const char *what, uint32_t scale, uint64_t *rank_sums, uint32_t *rank_of, uint32_t nr_ranks) {
    for (uint32_t r = 0; r < nr_ranks; r++) {
        rank_sums[r] = 0;
    }
    for (uint32_t d = 0; d < nr_of_dpus; d++) {
        uint32_t sum = 0;
        for (uint32_t e = 0; e < N; e++) {
            uint32_t want = in[(size_t)d * N + e] * scale + 1;
            sum += want;
            CHECK(out[(size_t)d * N + e] == want, "%s: DPU %u out[%u] = %u, expected %u", what, d, e,
                  out[(size_t)d * N + e], want);
        }
        rank_sums[rank_of[d]] += sum;
    }
}

int main(void) {
    struct dpu_set_t dpu_set, dpu, rank;
    uint32_t nr_ranks, i, r;

    DPU_ASSERT(dpu_alloc(NR_DPUS, PROFILE, &dpu_set));
    DPU_ASSERT(dpu_load(dpu_set, DPU_BINARY, NULL));
    DPU_ASSERT(dpu_get_nr_dpus(dpu_set, &nr_of_dpus));
    DPU_ASSERT(dpu_get_nr_ranks(dpu_set, &nr_ranks));
    CHECK(nr_of_dpus == NR_DPUS, "%u DPUs", nr_of_dpus);
    CHECK(nr_ranks == (NR_DPUS + 15) / 16, "%u ranks, expected %u", nr_ranks, (NR_DPUS + 15) / 16);
    if (nr_ranks > MAX_RANKS) {
        printf("too many ranks\n");
        return EXIT_FAILURE;
    }

    in = malloc((size_t)nr_of_dpus * N * sizeof(uint32_t));
    out = malloc((size_t)nr_of_dpus * N * sizeof(uint32_t));
    uint32_t *rank_of = malloc(nr_of_dpus * sizeof(uint32_t));
    uint32_t first_index[MAX_RANKS] = {0};
    uint64_t expected_rank_sums[MAX_RANKS];
    {
        uint32_t global = 0;
        DPU_RANK_FOREACH(dpu_set, rank, r) {
            uint32_t nr = 0;
            first_index[r] = global;
            DPU_ASSERT(dpu_get_nr_dpus(rank, &nr));
            for (i = 0; i < nr; i++) {
                rank_of[global++] = r;
            }
        }
    }

    /* 1. The documented pipeline: async inputs, async launch, async outputs, async per-rank callback, sync. */
    {
        dpu_arguments_t args = {.scale = 3, .work = 200000};
        struct rank_context ctx;
        memset(&ctx, 0, sizeof(ctx));
        fill_input(0x1111);
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &in[(size_t)i * N])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, N * sizeof(uint32_t),
                                 DPU_XFER_ASYNC));
        DPU_ASSERT(dpu_broadcast_to(dpu_set, "DPU_INPUT_ARGUMENTS", 0, &args, sizeof(args), DPU_XFER_ASYNC));
        DPU_ASSERT(dpu_launch(dpu_set, DPU_ASYNCHRONOUS));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &out[(size_t)i * N])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, N * sizeof(uint32_t),
                                 N * sizeof(uint32_t), DPU_XFER_ASYNC));
        DPU_ASSERT(dpu_callback(dpu_set, per_rank, &ctx, DPU_CALLBACK_ASYNC));
        DPU_ASSERT(dpu_sync(dpu_set));
        check_output("async pipeline", args.scale, expected_rank_sums, rank_of, nr_ranks);
        for (r = 0; r < nr_ranks; r++) {
            uint32_t expected_dpus = r + 1 < nr_ranks ? 16 : nr_of_dpus - 16 * r;
            CHECK(ctx.calls[r] == 1, "async pipeline: callback called %u times for rank %u", ctx.calls[r], r);
            CHECK(ctx.rank_dpus[r] == expected_dpus, "async pipeline: rank %u has %u DPUs, expected %u", r,
                  ctx.rank_dpus[r], expected_dpus);
        }
        for (r = nr_ranks; r < MAX_RANKS; r++) {
            CHECK(ctx.calls[r] == 0, "async pipeline: callback called for rank %u of %u", r, nr_ranks);
        }
        /* result_sum is a 32-bit sum per DPU: compare per DPU. */
        DPU_FOREACH(dpu_set, dpu, i) {
            uint32_t value = 0, want = 0;
            DPU_ASSERT(dpu_copy_from(dpu, "result_sum", 0, &value, sizeof(value)));
            for (uint32_t e = 0; e < N; e++) {
                want += in[(size_t)i * N + e] * args.scale + 1;
            }
            CHECK(value == want, "async pipeline: DPU %u result_sum %u, expected %u", i, value, want);
        }
        for (r = 0; r < nr_ranks; r++) {
            uint64_t want = 0;
            DPU_RANK_FOREACH(dpu_set, rank, i) {
                if (i != r) {
                    continue;
                }
                DPU_FOREACH(rank, dpu) {
                    uint32_t value = 0;
                    DPU_ASSERT(dpu_copy_from(dpu, "result_sum", 0, &value, sizeof(value)));
                    want += value;
                }
            }
            CHECK(ctx.rank_sum[r] == want, "async pipeline: callback summed %llu for rank %u, expected %llu",
                  (unsigned long long)ctx.rank_sum[r], r, (unsigned long long)want);
        }
    }

    /* 2. Async launch, dpu_status polling until done, dpu_sync, then synchronous reads. */
    {
        dpu_arguments_t args = {.scale = 7, .work = 400000};
        fill_input(0x2222);
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &in[(size_t)i * N])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, N * sizeof(uint32_t),
                                 DPU_XFER_DEFAULT));
        DPU_ASSERT(dpu_copy_to(dpu_set, "DPU_INPUT_ARGUMENTS", 0, &args, sizeof(args)));
        DPU_ASSERT(dpu_launch(dpu_set, DPU_ASYNCHRONOUS));
        bool done = false, fault = true;
        unsigned polls = 0;
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
            DPU_ASSERT(dpu_status(dpu_set, &done, &fault));
            polls++;
            if (done || fault) {
                break;
            }
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - start.tv_sec > 60) {
                break;
            }
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
        CHECK(done && !fault, "dpu_status polling: done=%d fault=%d after %u polls", done, fault, polls);
        printf("dpu_status: done after %u polls\n", polls);
        /* Every rank reports done on its own too. */
        DPU_RANK_FOREACH(dpu_set, rank, r) {
            bool rank_done = false, rank_fault = true;
            DPU_ASSERT(dpu_status(rank, &rank_done, &rank_fault));
            CHECK(rank_done && !rank_fault, "dpu_status of rank %u: done=%d fault=%d", r, rank_done, rank_fault);
        }
        DPU_ASSERT(dpu_sync(dpu_set));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &out[(size_t)i * N])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, N * sizeof(uint32_t),
                                 N * sizeof(uint32_t), DPU_XFER_DEFAULT));
        check_output("status polling", args.scale, expected_rank_sums, rank_of, nr_ranks);
    }

    /* 3. Per-rank synchronous callbacks pushing each rank's input, then each rank launched asynchronously on its
     *    own, one dpu_sync for the set, a single-call callback, and a nonblocking asynchronous callback. */
    {
        dpu_arguments_t args = {.scale = 11, .work = 1000};
        struct rank_context ctx;
        memset(&ctx, 0, sizeof(ctx));
        fill_input(0x3333);
        DPU_ASSERT(dpu_callback(dpu_set, push_rank_input, first_index, DPU_CALLBACK_DEFAULT));
        DPU_ASSERT(dpu_broadcast_to(dpu_set, "DPU_INPUT_ARGUMENTS", 0, &args, sizeof(args), DPU_XFER_DEFAULT));
        DPU_RANK_FOREACH(dpu_set, rank) { DPU_ASSERT(dpu_launch(rank, DPU_ASYNCHRONOUS)); }
        DPU_ASSERT(dpu_sync(dpu_set));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, &out[(size_t)i * N])); }
        DPU_ASSERT(dpu_push_xfer(dpu_set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, N * sizeof(uint32_t),
                                 N * sizeof(uint32_t), DPU_XFER_ASYNC));
        DPU_ASSERT(dpu_sync(dpu_set));
        check_output("per-rank launches", args.scale, expected_rank_sums, rank_of, nr_ranks);

        DPU_ASSERT(dpu_callback(dpu_set, single_call, &ctx, DPU_CALLBACK_SINGLE_CALL));
        CHECK(ctx.single_calls == 1 && ctx.single_dpus == nr_of_dpus,
              "single-call callback: %u calls, %u DPUs (expected 1 call with %u DPUs)", ctx.single_calls,
              ctx.single_dpus, nr_of_dpus);

        memset(&ctx, 0, sizeof(ctx));
        DPU_ASSERT(dpu_callback(dpu_set, per_rank, &ctx, DPU_CALLBACK_ASYNC | DPU_CALLBACK_NONBLOCKING));
        DPU_ASSERT(dpu_sync(dpu_set));
        for (r = 0; r < nr_ranks; r++) {
            CHECK(ctx.calls[r] == 1, "nonblocking callback: %u calls for rank %u", ctx.calls[r], r);
        }
        /* Nothing queued: dpu_sync returns at once. */
        DPU_ASSERT(dpu_sync(dpu_set));
    }

    /* 4. A per-rank asynchronous callback right after an asynchronous launch reads that launch's results. */
    {
        dpu_arguments_t args = {.scale = 5, .work = 300000};
        struct rank_context ctx;
        memset(&ctx, 0, sizeof(ctx));
        DPU_ASSERT(dpu_broadcast_to(dpu_set, "DPU_INPUT_ARGUMENTS", 0, &args, sizeof(args), DPU_XFER_ASYNC));
        DPU_ASSERT(dpu_launch(dpu_set, DPU_ASYNCHRONOUS));
        DPU_ASSERT(dpu_callback(dpu_set, per_rank, &ctx, DPU_CALLBACK_ASYNC));
        DPU_ASSERT(dpu_sync(dpu_set));
        for (r = 0; r < nr_ranks; r++) {
            uint64_t want = 0;
            for (uint32_t d = 0; d < nr_of_dpus; d++) {
                if (rank_of[d] != r) {
                    continue;
                }
                uint32_t sum = 0;
                for (uint32_t e = 0; e < N; e++) {
                    sum += in[(size_t)d * N + e] * args.scale + 1;
                }
                want += sum;
            }
            CHECK(ctx.calls[r] == 1 && ctx.rank_sum[r] == want,
                  "callback after async launch: rank %u: %u calls, sum %llu, expected %llu", r, ctx.calls[r],
                  (unsigned long long)ctx.rank_sum[r], (unsigned long long)want);
        }
    }

    DPU_ASSERT(dpu_free(dpu_set));
    printf("async: %u DPUs in %u ranks x %u tasklets: %s (%u errors)\n", nr_of_dpus, nr_ranks, NR_TASKLETS,
           errors ? "FAILED" : "OK", errors);
    free(in);
    free(out);
    free(rank_of);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
