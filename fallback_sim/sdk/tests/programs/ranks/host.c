/*
 * Ranks: an allocation spanning several ranks with a trimmed last rank (NR_DPUS = 100 on ranks of 64), per-rank
 * work with DPU_RANK_FOREACH (counts, prepare/push and copy_to per rank, DPU_FOREACH inside a rank, launches
 * per rank), the low-level rank and DPU objects (dpu_management.h), dpu_alloc_ranks, DPU_ALLOCATE_ALL, and the
 * simulator's size keys in the profile argument (nrRanks, nrDpusPerRank, disabledDpus).
 */
#include <dpu.h>
#include <dpu_management.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#ifndef DPU_BINARY
#define DPU_BINARY "./bin/dpu_code"
#endif

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

#define MAX_DPUS 256

/* Loads, fills, runs and checks a set rank by rank; returns the number of DPUs seen. */
static uint32_t run_per_rank(struct dpu_set_t set, uint32_t tag_base, const char *what) {
    static uint32_t in[MAX_DPUS][N], out[MAX_DPUS][N];
    struct dpu_set_t rank, dpu;
    uint32_t r, i, global = 0;
    uint32_t rank_first[64], rank_size[64], nr_ranks = 0;

    DPU_RANK_FOREACH(set, rank, r) {
        uint32_t tag = tag_base + r;
        rank_first[r] = global;
        DPU_FOREACH(rank, dpu, i) {
            for (uint32_t e = 0; e < N; e++) {
                in[global + i][e] = (global + i) * 1000 + e;
            }
            DPU_ASSERT(dpu_prepare_xfer(dpu, in[global + i]));
        }
        rank_size[r] = i;
        DPU_ASSERT(dpu_push_xfer(rank, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, sizeof(in[0]),
                                 DPU_XFER_DEFAULT));
        DPU_ASSERT(dpu_copy_to(rank, "rank_tag", 0, &tag, sizeof(tag)));
        global += rank_size[r];
        nr_ranks++;
    }
    DPU_ASSERT(dpu_launch(set, DPU_SYNCHRONOUS));
    memset(out, 0, sizeof(out));
    DPU_RANK_FOREACH(set, rank, r) {
        DPU_FOREACH(rank, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, out[rank_first[r] + i])); }
        DPU_ASSERT(dpu_push_xfer(rank, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, sizeof(in[0]), sizeof(out[0]),
                                 DPU_XFER_DEFAULT));
    }
    for (r = 0; r < nr_ranks; r++) {
        for (i = rank_first[r]; i < rank_first[r] + rank_size[r]; i++) {
            for (uint32_t e = 0; e < N; e++) {
                uint32_t want = expected_output(in[i][e], tag_base + r);
                CHECK(out[i][e] == want, "%s: DPU %u (rank %u) out[%u] = %u, expected %u", what, i, r, e, out[i][e],
                      want);
            }
        }
    }
    return global;
}

/* The DPUs of a set in DPU_FOREACH order must be those of its ranks, rank after rank. */
static void check_iteration_order(struct dpu_set_t set, const char *what) {
    static struct dpu_t *flat[MAX_DPUS], *nested[MAX_DPUS];
    struct dpu_set_t rank, dpu;
    uint32_t i, nr_flat = 0, nr_nested = 0, r;
    DPU_FOREACH(set, dpu, i) {
        CHECK(i == nr_flat, "%s: DPU_FOREACH index %u at position %u", what, i, nr_flat);
        CHECK(dpu.kind == DPU_SET_DPU, "%s: DPU_FOREACH gave a set of kind %d", what, (int)dpu.kind);
        flat[nr_flat++] = dpu.dpu;
    }
    DPU_RANK_FOREACH(set, rank, r) {
        uint32_t nr_rank_dpus = 0, nr_rank_ranks = 0, count = 0;
        CHECK(rank.kind == DPU_SET_RANKS && rank.list.nr_ranks == 1, "%s: rank %u is not a one-rank set", what, r);
        DPU_ASSERT(dpu_get_nr_dpus(rank, &nr_rank_dpus));
        DPU_ASSERT(dpu_get_nr_ranks(rank, &nr_rank_ranks));
        CHECK(nr_rank_ranks == 1, "%s: rank %u has %u ranks", what, r, nr_rank_ranks);
        struct dpu_rank_t *rank_ptr = dpu_rank_from_set(rank);
        CHECK(rank_ptr != NULL && rank_ptr == rank.list.ranks[0], "%s: dpu_rank_from_set of rank %u", what, r);
        int last_linear = -1;
        DPU_FOREACH(rank, dpu, i) {
            CHECK(i == count, "%s: rank %u: DPU_FOREACH index %u at position %u", what, r, i, count);
            count++;
            nested[nr_nested++] = dpu.dpu;
            CHECK(dpu_get_rank(dpu.dpu) == rank_ptr, "%s: rank %u: dpu_get_rank differs", what, r);
            CHECK(dpu_from_set(dpu) == dpu.dpu, "%s: dpu_from_set differs", what);
            CHECK(dpu_is_enabled(dpu.dpu), "%s: rank %u: DPU_FOREACH gave a disabled DPU", what, r);
            dpu_description_t description = dpu_get_description(rank_ptr);
            int linear = dpu_get_slice_id(dpu.dpu) * description->hw.topology.nr_of_dpus_per_control_interface +
                         dpu_get_member_id(dpu.dpu);
            CHECK(linear > last_linear, "%s: rank %u: DPU_FOREACH not in linear order (%d after %d)", what, r, linear,
                  last_linear);
            last_linear = linear;
        }
        CHECK(count == nr_rank_dpus, "%s: rank %u: DPU_FOREACH gave %u DPUs, dpu_get_nr_dpus %u", what, r, count,
              nr_rank_dpus);
        /* STRUCT_DPU_FOREACH over the rank object gives the same DPUs. */
        struct dpu_t *d;
        uint32_t k;
        STRUCT_DPU_FOREACH(rank_ptr, d, k) {
            CHECK(k < count && nested[nr_nested - count + k] == d, "%s: rank %u: STRUCT_DPU_FOREACH DPU %u differs",
                  what, r, k);
        }
    }
    CHECK(nr_flat == nr_nested, "%s: %u DPUs overall, %u rank by rank", what, nr_flat, nr_nested);
    for (i = 0; i < nr_flat && i < nr_nested; i++) {
        CHECK(flat[i] == nested[i], "%s: DPU %u differs between the two iterations", what, i);
    }
}

/* Which DPUs of a rank are enabled: libdpu trims the highest member ids first, CIs from the top. */
static void check_trim(struct dpu_rank_t *rank_ptr, uint32_t enabled_wanted, const char *what) {
    dpu_description_t description = dpu_get_description(rank_ptr);
    uint32_t nr_cis = description->hw.topology.nr_of_control_interfaces;
    uint32_t per_ci = description->hw.topology.nr_of_dpus_per_control_interface;
    uint32_t surplus = nr_cis * per_ci - enabled_wanted, enabled = 0;
    for (uint32_t ci = 0; ci < nr_cis; ci++) {
        for (uint32_t member = 0; member < per_ci; member++) {
            struct dpu_t *dpu = dpu_get(rank_ptr, (dpu_slice_id_t)ci, (dpu_member_id_t)member);
            CHECK(dpu != NULL, "%s: dpu_get(%u, %u) is NULL", what, ci, member);
            if (dpu == NULL) {
                continue;
            }
            /* Position in the trimming order: member per_ci-1 of CIs nr_cis-1..0, then member per_ci-2, ... */
            uint32_t order = (per_ci - 1 - member) * nr_cis + (nr_cis - 1 - ci);
            bool want = order >= surplus;
            CHECK(dpu_is_enabled(dpu) == want, "%s: DPU (ci %u, member %u) enabled=%d, expected %d", what, ci, member,
                  dpu_is_enabled(dpu), want);
            CHECK(dpu_get_slice_id(dpu) == ci && dpu_get_member_id(dpu) == member, "%s: ids of DPU (%u, %u)", what,
                  ci, member);
            /* libdpu's dpu_get_id: rank id, slice and member id in one word. */
            uint32_t id = (uint32_t)dpu_get_rank_id(rank_ptr) << 16 | ci << 8 | member;
            CHECK(dpu_get_id(dpu) == id, "%s: dpu_get_id of DPU (%u, %u) is 0x%x, expected 0x%x", what, ci, member,
                  dpu_get_id(dpu), id);
            enabled += dpu_is_enabled(dpu);
        }
    }
    CHECK(enabled == enabled_wanted, "%s: %u enabled DPUs in the rank, expected %u", what, enabled, enabled_wanted);
}

int main(void) {
    struct dpu_set_t set, set2, rank, dpu;
    uint32_t nr_dpus, nr_ranks, r, i;

    /* 1. NR_DPUS over ranks of 64: two ranks, the last one trimmed. */
    DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &set));
    DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));
    DPU_ASSERT(dpu_get_nr_ranks(set, &nr_ranks));
    CHECK(nr_dpus == NR_DPUS, "dpu_alloc(%u): %u DPUs", NR_DPUS, nr_dpus);
    CHECK(nr_ranks == (NR_DPUS + 63) / 64, "dpu_alloc(%u): %u ranks", NR_DPUS, nr_ranks);
    DPU_ASSERT(dpu_load(set, DPU_BINARY, NULL));
    check_iteration_order(set, "alloc(NR_DPUS)");
    uint16_t rank_ids[64];
    DPU_RANK_FOREACH(set, rank, r) {
        struct dpu_rank_t *rank_ptr = dpu_rank_from_set(rank);
        dpu_description_t description = dpu_get_description(rank_ptr);
        uint32_t in_rank = 0;
        DPU_ASSERT(dpu_get_nr_dpus(rank, &in_rank));
        uint32_t wanted = r + 1 < nr_ranks ? 64 : NR_DPUS - 64 * r;
        CHECK(in_rank == wanted, "rank %u: %u DPUs, expected %u", r, in_rank, wanted);
        CHECK(description != NULL, "rank %u: no description", r);
        if (description == NULL) {
            continue;
        }
        CHECK(description->hw.topology.nr_of_control_interfaces == 8 &&
                  description->hw.topology.nr_of_dpus_per_control_interface == 8,
              "rank %u: topology %u x %u, expected 8 x 8", r, description->hw.topology.nr_of_control_interfaces,
              description->hw.topology.nr_of_dpus_per_control_interface);
        CHECK(description->hw.memories.mram_size == 64u << 20, "rank %u: MRAM %u", r,
              description->hw.memories.mram_size);
        CHECK(description->hw.memories.wram_size == 64u << 10, "rank %u: WRAM %u", r,
              description->hw.memories.wram_size);
        CHECK(description->hw.dpu.nr_of_threads == 24, "rank %u: %u threads per DPU", r,
              description->hw.dpu.nr_of_threads);
        CHECK(description->hw.timings.fck_frequency_in_mhz > 0 && description->hw.timings.clock_division > 0,
              "rank %u: timings %u MHz / %u", r, description->hw.timings.fck_frequency_in_mhz,
              description->hw.timings.clock_division);
        check_trim(rank_ptr, wanted, r == 0 ? "rank 0" : "last rank");
        rank_ids[r] = dpu_get_rank_id(rank_ptr);
        for (uint32_t other = 0; other < r; other++) {
            CHECK(rank_ids[other] != rank_ids[r], "ranks %u and %u have the same id %u", other, r, rank_ids[r]);
        }
    }
    /* A single DPU is a set too: one DPU, one rank, iterated once by both macros. */
    DPU_FOREACH(set, dpu, i) {
        if (i != 70) {
            continue;
        }
        struct dpu_set_t inner, inner_rank;
        uint32_t k, count = 0, rank_count = 0, one_dpus = 0, one_ranks = 0;
        DPU_FOREACH(dpu, inner, k) {
            CHECK(k == 0 && inner.dpu == dpu.dpu, "DPU_FOREACH over a single DPU gave index %u", k);
            count++;
        }
        DPU_RANK_FOREACH(dpu, inner_rank) {
            uint32_t in_inner = 0;
            DPU_ASSERT(dpu_get_nr_dpus(inner_rank, &in_inner));
            rank_count += in_inner;
        }
        DPU_ASSERT(dpu_get_nr_dpus(dpu, &one_dpus));
        DPU_ASSERT(dpu_get_nr_ranks(dpu, &one_ranks));
        CHECK(count == 1 && rank_count == 1 && one_dpus == 1 && one_ranks == 1,
              "a single-DPU set: DPU_FOREACH %u, DPU_RANK_FOREACH %u, %u DPUs, %u ranks (expected 1 each)", count,
              rank_count, one_dpus, one_ranks);
    }
    uint32_t seen = run_per_rank(set, 100, "alloc(NR_DPUS)");
    CHECK(seen == NR_DPUS, "run_per_rank saw %u DPUs", seen);

    /* Launching rank by rank, synchronously: each rank's DPUs run once more. */
    DPU_RANK_FOREACH(set, rank) { DPU_ASSERT(dpu_launch(rank, DPU_SYNCHRONOUS)); }
    DPU_FOREACH(set, dpu, i) {
        uint32_t launches = 0;
        DPU_ASSERT(dpu_copy_from(dpu, "launches", 0, &launches, sizeof(launches)));
        CHECK(launches == 2, "DPU %u ran %u times, expected 2", i, launches);
    }

    /* One buffer prepared on the whole set goes to every DPU; the prepared buffers are then cleared, so a second
     * push without prepare transfers nothing. With DPU_XFER_NO_RESET they stay. */
    {
        static uint32_t shared[N], other[N], back[MAX_DPUS][N];
        for (uint32_t e = 0; e < N; e++) {
            shared[e] = 0xC0FFEE00 + e;
            other[e] = 0xBAD00000 + e;
        }
        DPU_ASSERT(dpu_prepare_xfer(set, shared));
        DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, sizeof(shared),
                                 DPU_XFER_DEFAULT));
        DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, sizeof(shared),
                                 DPU_XFER_DEFAULT));
        DPU_FOREACH(set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, back[i])); }
        DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, sizeof(shared),
                                 DPU_XFER_NO_RESET));
        DPU_FOREACH(set, dpu, i) {
            CHECK(memcmp(back[i], shared, sizeof(shared)) == 0, "DPU %u did not get the set-wide prepared buffer",
                  i);
        }
        /* The FROM buffers were kept (NO_RESET): pushing them TO the DPUs writes back what was read. */
        DPU_FOREACH(set, dpu, i) { memcpy(back[i], other, sizeof(other)); }
        DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, sizeof(other),
                                 DPU_XFER_DEFAULT));
        DPU_FOREACH(set, dpu, i) {
            uint32_t first[2] = {0, 0};
            DPU_ASSERT(dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0, first, sizeof(first)));
            CHECK(first[0] == other[0] && first[1] == other[1],
                  "DPU %u: a push with the buffers kept by DPU_XFER_NO_RESET wrote 0x%x", i, first[0]);
        }
    }

    /* 2. dpu_alloc_ranks next to the first set: other ranks, independent. */
    DPU_ASSERT(dpu_alloc_ranks(2, NULL, &set2));
    DPU_ASSERT(dpu_get_nr_ranks(set2, &nr_ranks));
    DPU_ASSERT(dpu_get_nr_dpus(set2, &nr_dpus));
    CHECK(nr_ranks == 2 && nr_dpus == 128, "dpu_alloc_ranks(2): %u ranks, %u DPUs", nr_ranks, nr_dpus);
    DPU_RANK_FOREACH(set2, rank, r) {
        uint16_t id = dpu_get_rank_id(dpu_rank_from_set(rank));
        CHECK(id != rank_ids[0] && id != rank_ids[1], "dpu_alloc_ranks gave rank id %u, already in the first set",
              id);
    }
    DPU_ASSERT(dpu_load(set2, DPU_BINARY, NULL));
    check_iteration_order(set2, "alloc_ranks(2)");
    seen = run_per_rank(set2, 500, "alloc_ranks(2)");
    CHECK(seen == 128, "alloc_ranks(2): run_per_rank saw %u DPUs", seen);
    DPU_FOREACH(set, dpu, i) {
        uint32_t launches = 0;
        DPU_ASSERT(dpu_copy_from(dpu, "launches", 0, &launches, sizeof(launches)));
        CHECK(launches == 2, "first set: DPU %u ran %u times after the second set ran", i, launches);
    }
    DPU_ASSERT(dpu_free(set2));
    DPU_ASSERT(dpu_free(set));

    /* 3. The simulated server's size from the profile argument: 3 ranks of 16 DPUs (8 CIs x 2). */
    const char *small = "nrRanks=3,nrDpusPerRank=16";
    DPU_ASSERT(dpu_alloc(DPU_ALLOCATE_ALL, small, &set));
    DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));
    DPU_ASSERT(dpu_get_nr_ranks(set, &nr_ranks));
    CHECK(nr_dpus == 48 && nr_ranks == 3, "dpu_alloc(ALL, %s): %u DPUs, %u ranks", small, nr_dpus, nr_ranks);
    DPU_ASSERT(dpu_free(set));

    DPU_ASSERT(dpu_alloc(40, small, &set));
    DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));
    DPU_ASSERT(dpu_get_nr_ranks(set, &nr_ranks));
    CHECK(nr_dpus == 40 && nr_ranks == 3, "dpu_alloc(40, %s): %u DPUs, %u ranks", small, nr_dpus, nr_ranks);
    DPU_RANK_FOREACH(set, rank, r) {
        struct dpu_rank_t *rank_ptr = dpu_rank_from_set(rank);
        dpu_description_t description = dpu_get_description(rank_ptr);
        CHECK(description->hw.topology.nr_of_control_interfaces == 8 &&
                  description->hw.topology.nr_of_dpus_per_control_interface == 2,
              "%s: rank %u topology %u x %u", small, r, description->hw.topology.nr_of_control_interfaces,
              description->hw.topology.nr_of_dpus_per_control_interface);
        check_trim(rank_ptr, r < 2 ? 16 : 8, "40 of 3x16");
    }
    DPU_ASSERT(dpu_load(set, DPU_BINARY, NULL));
    check_iteration_order(set, "40 of 3x16");
    seen = run_per_rank(set, 900, "40 of 3x16");
    CHECK(seen == 40, "40 of 3x16: run_per_rank saw %u DPUs", seen);
    /* Every rank is taken: one more is an allocation error. */
    dpu_error_t status = dpu_alloc_ranks(1, small, &set2);
    CHECK(status == DPU_ERR_ALLOCATION, "dpu_alloc_ranks(1) with every rank taken gave %d", (int)status);
    DPU_ASSERT(dpu_free(set));

    DPU_ASSERT(dpu_alloc_ranks(DPU_ALLOCATE_ALL, small, &set));
    DPU_ASSERT(dpu_get_nr_ranks(set, &nr_ranks));
    DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));
    CHECK(nr_ranks == 3 && nr_dpus == 48, "dpu_alloc_ranks(ALL, %s): %u ranks, %u DPUs", small, nr_ranks, nr_dpus);
    DPU_ASSERT(dpu_free(set));

    /* 4. Broken DPUs (disabledDpus) are skipped by every iteration and count. */
    const char *broken = "nrRanks=2,nrDpusPerRank=8,disabledDpus=3:9";
    DPU_ASSERT(dpu_alloc(DPU_ALLOCATE_ALL, broken, &set));
    DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));
    CHECK(nr_dpus == 14, "dpu_alloc(ALL, %s): %u DPUs", broken, nr_dpus);
    DPU_ASSERT(dpu_load(set, DPU_BINARY, NULL));
    check_iteration_order(set, broken);
    /* Ranks of 8 DPUs are 8 slices of one DPU: server DPU n is rank n / 8, slice n % 8, id (n / 8) << 16 | (n % 8)
     * << 8. DPU_FOREACH gives all but DPUs 3 and 9, in order. */
    uint32_t next = 0;
    DPU_FOREACH(set, dpu, i) {
        if (next == 3 || next == 9) {
            next++; /* disabled */
        }
        uint32_t id = dpu_get_id(dpu.dpu), want = (next / 8) << 16 | (next % 8) << 8;
        CHECK(id == want, "%s: DPU_FOREACH's DPU %u has id 0x%x, expected 0x%x (server DPU %u)", broken, i, id, want,
              next);
        next++;
    }
    seen = run_per_rank(set, 1300, broken);
    CHECK(seen == 14, "%s: run_per_rank saw %u DPUs", broken, seen);
    DPU_ASSERT(dpu_free(set));

    printf("ranks: %u DPUs over ranks of 64, alloc_ranks, 3x16 and 2x8 profiles: %s (%u errors)\n", NR_DPUS,
           errors ? "FAILED" : "OK", errors);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
