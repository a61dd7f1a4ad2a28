/*
 * Misuse: every documented libdpu error code, produced by the misuse that
 * produces it on the SDK. Each check prints "ok <what>" or "FAILED <what>: expected X got Y"; the last line is
 * "N passed, M failed"; the exit status is non-zero if any check failed.
 */
#include <dpu.h>
#include <dpu_log.h>
#include <dpu_management.h>
#include <dpu_sim.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BINARY "./bin/dpu_code"
#define OTHER_BINARY "./bin/dpu_other"
#define MISSING_BINARY "./bin/no_such_binary"
#define NOT_ELF "./bin/not_an_elf.txt"
#define EM_DPU_ELF64 "./bin/em_dpu_elf64"
#define EM_DPU_ELF32 "./bin/em_dpu_elf32"

static unsigned passed, failed;

static void expect_status(const char *what, dpu_error_t got, dpu_error_t want) {
    if (got == want) {
        printf("ok %s\n", what);
        passed++;
    } else {
        char *got_text = dpu_error_to_string(got), *want_text = dpu_error_to_string(want);
        printf("FAILED %s: expected %u (%s) got %u (%s)\n", what, (unsigned)want, want_text, (unsigned)got, got_text);
        free(got_text);
        free(want_text);
        failed++;
    }
}

static void expect_true(const char *what, bool ok, const char *expected, const char *got) {
    if (ok) {
        printf("ok %s\n", what);
        passed++;
    } else {
        printf("FAILED %s: expected %s got %s\n", what, expected, got);
        failed++;
    }
}

#define EXPECT(what, call, want) expect_status(what, (call), (want))

/* dpu_log_read of a set that is not one DPU: DPU_ERR_INVALID_DPU_SET, and nothing printed (the SDK's prints its
 * "=== DPU#..." line first, for a NULL DPU, and crashes reading that DPU's id). */
static void expect_log_read_refused(const char *what, struct dpu_set_t set) {
    char *text = NULL;
    size_t length = 0;
    FILE *stream = open_memstream(&text, &length);
    expect_status(what, dpu_log_read(set, stream), DPU_ERR_INVALID_DPU_SET);
    fclose(stream);
    char printed[256];
    snprintf(printed, sizeof printed, "%s prints nothing", what);
    expect_true(printed, length == 0, "nothing", text);
    free(text);
}

static void write_file(const char *path, const void *bytes, size_t size) {
    FILE *file = fopen(path, "wb");
    if (file == NULL || fwrite(bytes, 1, size, file) != size) {
        perror(path);
        exit(EXIT_FAILURE);
    }
    fclose(file);
}

static struct dpu_set_t first_dpu(struct dpu_set_t set) {
    struct dpu_set_t dpu, first = {0};
    DPU_FOREACH(set, dpu) {
        first = dpu;
        break;
    }
    return first;
}

static struct dpu_set_t nth_dpu(struct dpu_set_t set, uint32_t n) {
    struct dpu_set_t dpu, found = {0};
    uint32_t i;
    DPU_FOREACH(set, dpu, i) {
        if (i == n) {
            found = dpu;
        }
    }
    return found;
}

/* Per-DPU values of a __host uint32_t, by prepare/push. */
static void set_per_dpu(struct dpu_set_t set, const char *symbol, uint32_t value_dpu1, uint32_t value_others) {
    static uint32_t values[256];
    struct dpu_set_t dpu;
    uint32_t i;
    DPU_FOREACH(set, dpu, i) {
        values[i] = i == 1 ? value_dpu1 : value_others;
        DPU_ASSERT(dpu_prepare_xfer(dpu, &values[i]));
    }
    DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_TO_DPU, symbol, 0, sizeof(uint32_t), DPU_XFER_DEFAULT));
}

/* Scatter/gather: DPU d's blocks are `nr_blocks` pieces of `block_length` bytes of host[d]. */
struct sg_args {
    uint8_t (*host)[64];
    uint32_t nr_blocks;
    uint32_t block_length;
};

static bool get_block(struct sg_block_info *out, uint32_t dpu_index, uint32_t block_index, void *args) {
    struct sg_args *sg = args;
    if (block_index >= sg->nr_blocks) {
        return false;
    }
    out->addr = sg->host[dpu_index] + block_index * sg->block_length;
    out->length = sg->block_length;
    return true;
}

static dpu_error_t nothing(struct dpu_set_t set, uint32_t rank_id, void *args) {
    (void)set;
    (void)rank_id;
    (void)args;
    return DPU_OK;
}

static void check_faults(struct dpu_set_t set) {
    static const struct {
        uint32_t kind;
        const char *name;
        const char *reason;
    } faults[] = {
        {1, "DMA into WRAM past its end", "DMA"},
        {2, "halt()", "halt"},
#if defined(__x86_64__) || defined(__i386__)
        {3, "division by zero", "division by zero"},
#endif
        {4, "failed assert", "assert"},
    };
    char what[160], reason[512];
    for (size_t f = 0; f < sizeof(faults) / sizeof(faults[0]); f++) {
        set_per_dpu(set, "fault_kind", faults[f].kind, 0);
        snprintf(what, sizeof(what), "DPU_ERR_DPU_FAULT: dpu_launch with a DPU faulting on %s", faults[f].name);
        EXPECT(what, dpu_launch(set, DPU_SYNCHRONOUS), DPU_ERR_DPU_FAULT);
        bool done = false, fault = false;
        DPU_ASSERT(dpu_status(set, &done, &fault));
        snprintf(what, sizeof(what), "dpu_status after the %s fault: done, fault", faults[f].name);
        expect_true(what, fault, "fault=1", "fault=0");
        EXPECT("dpu_sim_fault_reason of the faulting DPU", dpu_sim_fault_reason(nth_dpu(set, 1), reason, sizeof(reason)),
               DPU_OK);
        printf("   reason: %s\n", reason);
        snprintf(what, sizeof(what), "dpu_sim_fault_reason names the %s fault", faults[f].name);
        expect_true(what, strstr(reason, faults[f].reason) != NULL, faults[f].reason, reason);
        reason[0] = 'x';
        reason[1] = 0;
        DPU_ASSERT(dpu_sim_fault_reason(nth_dpu(set, 0), reason, sizeof(reason)));
        expect_true("dpu_sim_fault_reason of a DPU not in fault is empty", reason[0] == 0, "\"\"", reason);
        set_per_dpu(set, "fault_kind", 0, 0);
        EXPECT("dpu_launch after a fault, without the fault", dpu_launch(set, DPU_SYNCHRONOUS), DPU_OK);
    }
    /* dpu_sim_fault_reason is for single DPUs. */
    EXPECT("dpu_sim_fault_reason on a set of ranks", dpu_sim_fault_reason(set, reason, sizeof(reason)),
           DPU_ERR_INVALID_DPU_SET);

    /* The fault of an asynchronous launch comes back from dpu_sync, with the ASYNC_JOBS bit. */
    set_per_dpu(set, "fault_kind", 2, 0);
    EXPECT("asynchronous launch of a faulting DPU", dpu_launch(set, DPU_ASYNCHRONOUS), DPU_OK);
    EXPECT("DPU_ERR_DPU_FAULT | DPU_ERR_ASYNC_JOBS from dpu_sync after an asynchronous fault", dpu_sync(set),
           DPU_ERR_DPU_FAULT | DPU_ERR_ASYNC_JOBS);
    set_per_dpu(set, "fault_kind", 0, 0);
    EXPECT("dpu_launch after the asynchronous fault", dpu_launch(set, DPU_SYNCHRONOUS), DPU_OK);
}

int main(void) {
    struct dpu_set_t set, other, rank, dpu, sg_set;
    struct dpu_program_t *program = NULL;
    uint32_t nr, r;
    uint8_t buffer[128] = {0};

    /* ---- Allocation and profiles (1.3, 1.6) ---- */
    EXPECT("DPU_ERR_ALLOCATION: dpu_alloc of more DPUs than the server has (2561 > 40 x 64)",
           dpu_alloc(2561, NULL, &other), DPU_ERR_ALLOCATION);
    EXPECT("DPU_ERR_ALLOCATION: dpu_alloc_ranks of more ranks than the server has (41)",
           dpu_alloc_ranks(41, NULL, &other), DPU_ERR_ALLOCATION);
    EXPECT("DPU_ERR_INVALID_PROFILE: profile entry without '='", dpu_alloc(1, "nrThreadsPerRank", &other),
           DPU_ERR_INVALID_PROFILE);
    EXPECT("DPU_ERR_INVALID_PROFILE: profile flag that is not a boolean", dpu_alloc(1, "sgXferEnable=maybe", &other),
           DPU_ERR_INVALID_PROFILE);
    EXPECT("DPU_ERR_ALLOCATION: backend=hw (no DPU hardware)", dpu_alloc(1, "backend=hw", &other),
           DPU_ERR_ALLOCATION);
    EXPECT("backend=simulator with unknown libdpu keys is accepted",
           dpu_alloc(1, "backend=simulator,nrThreadsPerRank=1,cycleAccurate=true", &other), DPU_OK);
    EXPECT("dpu_free of that set", dpu_free(other), DPU_OK);
    EXPECT("DPU_ERR_INVALID_DPU_SET: dpu_free of the same set twice", dpu_free(other), DPU_ERR_INVALID_DPU_SET);
    EXPECT("DPU_ERR_INVALID_DPU_SET: dpu_get_nr_dpus of a freed set", dpu_get_nr_dpus(other, &nr),
           DPU_ERR_INVALID_DPU_SET);

    /* ---- Invalid sets (1.3) ---- */
    DPU_ASSERT(dpu_alloc(128, NULL, &set));
    DPU_ASSERT(dpu_load(set, BINARY, &program));
    DPU_ASSERT(dpu_get_nr_ranks(set, &nr));
    expect_true("128 DPUs span 2 ranks", nr == 2, "2", nr == 1 ? "1" : "another number");
    DPU_RANK_FOREACH(set, rank, r) {
        EXPECT(r == 0 ? "DPU_ERR_INVALID_DPU_SET: dpu_free of DPU_RANK_FOREACH's first rank"
                      : "DPU_ERR_INVALID_DPU_SET: dpu_free of DPU_RANK_FOREACH's second rank",
               dpu_free(rank), DPU_ERR_INVALID_DPU_SET);
        EXPECT("DPU_ERR_INVALID_DPU_SET: dpu_copy_from on one rank", dpu_copy_from(rank, "w", 0, buffer, 4),
               DPU_ERR_INVALID_DPU_SET);
        expect_log_read_refused("DPU_ERR_INVALID_DPU_SET: dpu_log_read on one rank", rank);
    }
    EXPECT("DPU_ERR_INVALID_DPU_SET: dpu_free of a single DPU", dpu_free(first_dpu(set)), DPU_ERR_INVALID_DPU_SET);
    EXPECT("DPU_ERR_INVALID_DPU_SET: dpu_copy_from on a set of ranks", dpu_copy_from(set, "w", 0, buffer, 4),
           DPU_ERR_INVALID_DPU_SET);
    expect_log_read_refused("DPU_ERR_INVALID_DPU_SET: dpu_log_read on a set of ranks", set);
    EXPECT("the set still works after those calls", dpu_launch(set, DPU_SYNCHRONOUS), DPU_OK);

    /* ---- Symbols, bounds and alignment (1.5) ---- */
    struct dpu_symbol_t symbol;
    struct dpu_set_t one = first_dpu(set);
    EXPECT("DPU_ERR_UNKNOWN_SYMBOL: dpu_get_symbol", dpu_get_symbol(program, "no_such_symbol", &symbol),
           DPU_ERR_UNKNOWN_SYMBOL);
    EXPECT("DPU_ERR_UNKNOWN_SYMBOL: dpu_copy_to", dpu_copy_to(set, "no_such_symbol", 0, buffer, 8),
           DPU_ERR_UNKNOWN_SYMBOL);
    EXPECT("DPU_ERR_UNKNOWN_SYMBOL: dpu_copy_from", dpu_copy_from(one, "no_such_symbol", 0, buffer, 8),
           DPU_ERR_UNKNOWN_SYMBOL);
    DPU_ASSERT(dpu_prepare_xfer(set, buffer));
    EXPECT("DPU_ERR_UNKNOWN_SYMBOL: dpu_push_xfer",
           dpu_push_xfer(set, DPU_XFER_TO_DPU, "no_such_symbol", 0, 8, DPU_XFER_DEFAULT), DPU_ERR_UNKNOWN_SYMBOL);

    EXPECT("WRAM symbol w[4]: 4 bytes at offset 12", dpu_copy_to(set, "w", 12, buffer, 4), DPU_OK);
    EXPECT("DPU_ERR_INVALID_SYMBOL_ACCESS: 20 bytes into the 16-byte w", dpu_copy_to(set, "w", 0, buffer, 20),
           DPU_ERR_INVALID_SYMBOL_ACCESS);
    EXPECT("DPU_ERR_INVALID_SYMBOL_ACCESS: 4 bytes at offset 16 of w", dpu_copy_to(set, "w", 16, buffer, 4),
           DPU_ERR_INVALID_SYMBOL_ACCESS);
    EXPECT("DPU_ERR_INVALID_SYMBOL_ACCESS before alignment: 16 bytes at offset 2 of w (out of bounds and unaligned)",
           dpu_copy_to(set, "w", 2, buffer, 16), DPU_ERR_INVALID_SYMBOL_ACCESS);
    EXPECT("DPU_ERR_INVALID_SYMBOL_ACCESS before alignment: 64 bytes at offset 3 of the 64-byte MRAM m",
           dpu_copy_to(set, "m", 3, buffer, 64), DPU_ERR_INVALID_SYMBOL_ACCESS);
    EXPECT("DPU_ERR_INVALID_SYMBOL_ACCESS: 72 bytes into m", dpu_copy_from(one, "m", 0, buffer, 72),
           DPU_ERR_INVALID_SYMBOL_ACCESS);
    DPU_ASSERT(dpu_get_symbol(program, DPU_MRAM_HEAP_POINTER_NAME, &symbol));
    EXPECT("DPU_ERR_INVALID_SYMBOL_ACCESS: 8 bytes past the end of the MRAM heap",
           dpu_copy_to(set, DPU_MRAM_HEAP_POINTER_NAME, symbol.size, buffer, 8), DPU_ERR_INVALID_SYMBOL_ACCESS);
    EXPECT("the last 8 bytes of the MRAM heap", dpu_copy_to(set, DPU_MRAM_HEAP_POINTER_NAME, symbol.size - 8, buffer, 8),
           DPU_OK);

    EXPECT("DPU_ERR_INVALID_MRAM_ACCESS: MRAM offset 4", dpu_copy_to(set, "m", 4, buffer, 8),
           DPU_ERR_INVALID_MRAM_ACCESS);
    EXPECT("DPU_ERR_INVALID_MRAM_ACCESS: MRAM length 12", dpu_copy_to(set, "m", 0, buffer, 12),
           DPU_ERR_INVALID_MRAM_ACCESS);
    EXPECT("DPU_ERR_INVALID_MRAM_ACCESS: dpu_copy_from at MRAM heap offset 4",
           dpu_copy_from(one, DPU_MRAM_HEAP_POINTER_NAME, 4, buffer, 8), DPU_ERR_INVALID_MRAM_ACCESS);
    DPU_ASSERT(dpu_prepare_xfer(set, buffer));
    EXPECT("DPU_ERR_INVALID_MRAM_ACCESS: dpu_push_xfer of 12 bytes to the MRAM heap",
           dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 12, DPU_XFER_DEFAULT),
           DPU_ERR_INVALID_MRAM_ACCESS);
    EXPECT("DPU_ERR_INVALID_WRAM_ACCESS: WRAM offset 2", dpu_copy_to(set, "w", 2, buffer, 4),
           DPU_ERR_INVALID_WRAM_ACCESS);
    EXPECT("DPU_ERR_INVALID_WRAM_ACCESS: WRAM length 6", dpu_copy_to(set, "w", 0, buffer, 6),
           DPU_ERR_INVALID_WRAM_ACCESS);
    EXPECT("DPU_ERR_INVALID_WRAM_ACCESS: dpu_copy_from at WRAM offset 1", dpu_copy_from(one, "w", 1, buffer, 4),
           DPU_ERR_INVALID_WRAM_ACCESS);
    EXPECT("a 0-byte transfer is a no-op", dpu_copy_to(set, "m", 0, buffer, 0), DPU_OK);

    /* ---- Transfers and launches (1.3) ---- */
    {
        static uint32_t values[128][2];
        struct dpu_set_t d;
        uint32_t i;
        DPU_FOREACH(set, d, i) { DPU_ASSERT(dpu_prepare_xfer(d, values[i])); }
        EXPECT("DPU_ERR_INVALID_PARALLEL_MEMORY_TRANSFER: DPU_XFER_PARALLEL to MRAM",
               dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 8, DPU_XFER_PARALLEL),
               DPU_ERR_INVALID_PARALLEL_MEMORY_TRANSFER);
        DPU_FOREACH(set, d, i) { DPU_ASSERT(dpu_prepare_xfer(d, values[i])); }
        EXPECT("DPU_XFER_PARALLEL to WRAM is allowed", dpu_push_xfer(set, DPU_XFER_TO_DPU, "w", 0, 8, DPU_XFER_PARALLEL),
               DPU_OK);
    }
    EXPECT("DPU_ERR_INVALID_LAUNCH_POLICY: dpu_launch with policy 7", dpu_launch(set, (dpu_launch_policy_t)7),
           DPU_ERR_INVALID_LAUNCH_POLICY);
    check_faults(set);

    /* Already running: DPU 1 spins for a while after an asynchronous launch. */
    set_per_dpu(set, "spin", 400u * 1000 * 1000, 0);
    EXPECT("asynchronous launch of a long kernel", dpu_launch(set, DPU_ASYNCHRONOUS), DPU_OK);
    EXPECT("DPU_ERR_DPU_ALREADY_RUNNING: dpu_launch of the running set", dpu_launch(set, DPU_SYNCHRONOUS),
           DPU_ERR_DPU_ALREADY_RUNNING);
    EXPECT("DPU_ERR_DPU_ALREADY_RUNNING: dpu_launch of its running DPU", dpu_launch(nth_dpu(set, 1), DPU_ASYNCHRONOUS),
           DPU_ERR_DPU_ALREADY_RUNNING);
    {
        /* As in the SDK, dpu_status waits for the set's queued work first (it calls dpu_sync): done. */
        bool done = false, fault = true;
        DPU_ASSERT(dpu_status(set, &done, &fault));
        expect_true("dpu_status of the long launch waits for it: done, no fault", done && !fault, "done=1 fault=0",
                    !done ? "done=0" : "fault=1");
    }
    EXPECT("dpu_sync of the long launch", dpu_sync(set), DPU_OK);
    set_per_dpu(set, "spin", 0, 0);

    /* Callbacks. */
    EXPECT("DPU_ERR_NONBLOCKING_SYNC_CALLBACK: DPU_CALLBACK_NONBLOCKING without DPU_CALLBACK_ASYNC",
           dpu_callback(set, nothing, NULL, DPU_CALLBACK_NONBLOCKING), DPU_ERR_NONBLOCKING_SYNC_CALLBACK);
    EXPECT("DPU_CALLBACK_ASYNC | DPU_CALLBACK_NONBLOCKING is allowed",
           dpu_callback(set, nothing, NULL, DPU_CALLBACK_ASYNC | DPU_CALLBACK_NONBLOCKING), DPU_OK);
    DPU_ASSERT(dpu_sync(set));

    /* ---- Scatter/gather (1.3) ---- */
    {
        static uint8_t host[128][64], back[128][64];
        struct sg_args sg = {host, 2, 32};
        get_block_t get = {.f = get_block, .args = &sg, .args_size = sizeof(sg)};
        EXPECT("DPU_ERR_SG_NOT_ACTIVATED: dpu_push_sg_xfer without sgXferEnable",
               dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, "m", 0, 64, &get, DPU_SG_XFER_DEFAULT), DPU_ERR_SG_NOT_ACTIVATED);

        DPU_ASSERT(dpu_alloc(8, "sgXferEnable=true,sgXferMaxBlocksPerDpu=2", &sg_set));
        DPU_ASSERT(dpu_load(sg_set, BINARY, NULL));
        for (int d = 0; d < 128; d++) {
            for (int b = 0; b < 64; b++) {
                host[d][b] = (uint8_t)(d * 7 + b);
            }
        }
        EXPECT("dpu_push_sg_xfer of 2 blocks of 32 bytes to the 64-byte m",
               dpu_push_sg_xfer(sg_set, DPU_XFER_TO_DPU, "m", 0, 64, &get, DPU_SG_XFER_DEFAULT), DPU_OK);
        bool same = true;
        uint32_t i;
        DPU_FOREACH(sg_set, dpu, i) {
            DPU_ASSERT(dpu_copy_from(dpu, "m", 0, back[i], 64));
            same = same && memcmp(back[i], host[i], 64) == 0;
        }
        expect_true("the gathered blocks landed in each DPU's m", same, "equal", "different");
        memset(host, 0, sizeof(host));
        EXPECT("dpu_push_sg_xfer from the DPUs (scatter)",
               dpu_push_sg_xfer(sg_set, DPU_XFER_FROM_DPU, "m", 0, 64, &get, DPU_SG_XFER_DEFAULT), DPU_OK);
        same = true;
        DPU_FOREACH(sg_set, dpu, i) { same = same && memcmp(back[i], host[i], 64) == 0; }
        expect_true("the scattered blocks came back", same, "equal", "different");
        EXPECT("DPU_ERR_SG_NOT_MRAM_SYMBOL: dpu_push_sg_xfer to the WRAM w",
               dpu_push_sg_xfer(sg_set, DPU_XFER_TO_DPU, "w", 0, 16, &get, DPU_SG_XFER_DEFAULT),
               DPU_ERR_SG_NOT_MRAM_SYMBOL);
        sg.block_length = 24;
        EXPECT("DPU_ERR_SG_LENGTH_MISMATCH: blocks of 48 bytes for a 64-byte transfer",
               dpu_push_sg_xfer(sg_set, DPU_XFER_TO_DPU, "m", 0, 64, &get, DPU_SG_XFER_DEFAULT),
               DPU_ERR_SG_LENGTH_MISMATCH);
        EXPECT("DPU_SG_XFER_DISABLE_LENGTH_CHECK allows them",
               dpu_push_sg_xfer(sg_set, DPU_XFER_TO_DPU, "m", 0, 64, &get, DPU_SG_XFER_DISABLE_LENGTH_CHECK), DPU_OK);
        sg.nr_blocks = 3;
        sg.block_length = 16;
        EXPECT("DPU_ERR_SG_TOO_MANY_BLOCKS: 3 blocks with sgXferMaxBlocksPerDpu=2",
               dpu_push_sg_xfer(sg_set, DPU_XFER_TO_DPU, "m", 0, 48, &get, DPU_SG_XFER_DEFAULT),
               DPU_ERR_SG_TOO_MANY_BLOCKS);
        sg.nr_blocks = 2;
        sg.block_length = 32;
        EXPECT("DPU_ERR_INTERNAL: dpu_push_sg_xfer on a single DPU",
               dpu_push_sg_xfer(first_dpu(sg_set), DPU_XFER_TO_DPU, "m", 0, 64, &get, DPU_SG_XFER_DEFAULT),
               DPU_ERR_INTERNAL);
        EXPECT("DPU_ERR_SG_NOT_ACTIVATED: still, on the set allocated without sgXferEnable",
               dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, "m", 0, 64, &get, DPU_SG_XFER_DEFAULT), DPU_ERR_SG_NOT_ACTIVATED);
        DPU_ASSERT(dpu_free(sg_set));
    }
    DPU_ASSERT(dpu_free(set));

    /* ---- Programs (1.3, 1.5) ---- */
    DPU_ASSERT(dpu_alloc(4, NULL, &set));
    EXPECT("DPU_ERR_NO_PROGRAM_LOADED: dpu_copy_to", dpu_copy_to(set, "w", 0, buffer, 4), DPU_ERR_NO_PROGRAM_LOADED);
    EXPECT("DPU_ERR_NO_PROGRAM_LOADED: dpu_copy_from", dpu_copy_from(first_dpu(set), "w", 0, buffer, 4),
           DPU_ERR_NO_PROGRAM_LOADED);
    DPU_ASSERT(dpu_prepare_xfer(set, buffer));
    EXPECT("DPU_ERR_NO_PROGRAM_LOADED: dpu_push_xfer", dpu_push_xfer(set, DPU_XFER_TO_DPU, "w", 0, 4, DPU_XFER_DEFAULT),
           DPU_ERR_NO_PROGRAM_LOADED);
    EXPECT("DPU_ERR_NO_PROGRAM_LOADED: dpu_launch", dpu_launch(set, DPU_SYNCHRONOUS), DPU_ERR_NO_PROGRAM_LOADED);

    EXPECT("DPU_ERR_ELF_NO_SUCH_FILE: dpu_load of a missing file", dpu_load(set, MISSING_BINARY, NULL),
           DPU_ERR_ELF_NO_SUCH_FILE);
    const char text[] = "this is not an ELF file\n";
    write_file(NOT_ELF, text, sizeof(text) - 1);
    EXPECT("DPU_ERR_ELF_INVALID_FILE: dpu_load of a text file", dpu_load(set, NOT_ELF, NULL), DPU_ERR_ELF_INVALID_FILE);
    /* The headers of DPU hardware binaries: e_machine = EM_DPU (245). */
    uint8_t elf64[64] = {0x7f, 'E', 'L', 'F', 2 /* ELFCLASS64 */, 1 /* little endian */, 1 /* EV_CURRENT */};
    elf64[16] = 2; /* ET_EXEC */
    elf64[18] = 245;
    elf64[20] = 1;  /* e_version */
    elf64[52] = 64; /* e_ehsize */
    write_file(EM_DPU_ELF64, elf64, sizeof(elf64));
    EXPECT("DPU_ERR_ELF_INVALID_FILE: dpu_load of a 64-byte EM_DPU ELF header", dpu_load(set, EM_DPU_ELF64, NULL),
           DPU_ERR_ELF_INVALID_FILE);
    uint8_t elf32[64] = {0x7f, 'E', 'L', 'F', 1 /* ELFCLASS32, as DPU binaries */, 1, 1};
    elf32[16] = 2;
    elf32[18] = 245;
    elf32[20] = 1;
    elf32[40] = 52; /* e_ehsize */
    write_file(EM_DPU_ELF32, elf32, sizeof(elf32));
    EXPECT("DPU_ERR_ELF_INVALID_FILE: dpu_load of an ELF32 EM_DPU header", dpu_load(set, EM_DPU_ELF32, NULL),
           DPU_ERR_ELF_INVALID_FILE);
    EXPECT("DPU_ERR_ELF_INVALID_FILE: dpu_load_from_memory of an EM_DPU header",
           dpu_load_from_memory(set, elf32, sizeof(elf32), NULL), DPU_ERR_ELF_INVALID_FILE);
    EXPECT("DPU_ERR_ELF_INVALID_FILE: dpu_load_from_memory of text",
           dpu_load_from_memory(set, (uint8_t *)text, sizeof(text), NULL), DPU_ERR_ELF_INVALID_FILE);
    EXPECT("DPU_ERR_NO_PROGRAM_LOADED: still, after the failed loads", dpu_copy_to(set, "w", 0, buffer, 4),
           DPU_ERR_NO_PROGRAM_LOADED);

    DPU_ASSERT(dpu_load(set, BINARY, NULL));
    DPU_ASSERT(dpu_load(first_dpu(set), OTHER_BINARY, NULL));
    EXPECT("DPU_ERR_DIFFERENT_DPU_PROGRAMS: dpu_copy_to a set running two programs",
           dpu_copy_to(set, "w", 0, buffer, 4), DPU_ERR_DIFFERENT_DPU_PROGRAMS);
    DPU_ASSERT(dpu_prepare_xfer(set, buffer));
    EXPECT("DPU_ERR_DIFFERENT_DPU_PROGRAMS: dpu_push_xfer to a set running two programs",
           dpu_push_xfer(set, DPU_XFER_TO_DPU, "w", 0, 4, DPU_XFER_DEFAULT), DPU_ERR_DIFFERENT_DPU_PROGRAMS);
    EXPECT("dpu_launch of a set running two programs", dpu_launch(set, DPU_SYNCHRONOUS), DPU_OK);
    {
        uint32_t w0 = 0, w1 = 0;
        DPU_ASSERT(dpu_copy_from(nth_dpu(set, 0), "w", 0, &w0, 4));
        DPU_ASSERT(dpu_copy_from(nth_dpu(set, 1), "w", 0, &w1, 4));
        expect_true("each DPU ran its own program", w0 == 0x07E5 && w1 == 0xD0D0, "0x7e5 and 0xd0d0",
                    "other values");
    }
    DPU_ASSERT(dpu_free(set));

    /* ---- Disabled DPUs (1.3): 60 DPUs of a 64-DPU rank leave (CI 4..7, member 7) disabled ---- */
    DPU_ASSERT(dpu_alloc(60, NULL, &set));
    DPU_ASSERT(dpu_load(set, BINARY, NULL));
    {
        struct dpu_rank_t *rank_ptr = dpu_rank_from_set(set);
        struct dpu_t *trimmed = rank_ptr != NULL ? dpu_get(rank_ptr, 7, 7) : NULL;
        expect_true("dpu_get(rank, 7, 7) is a trimmed DPU", trimmed != NULL && !dpu_is_enabled(trimmed), "disabled",
                    trimmed == NULL ? "NULL" : "enabled");
        if (trimmed != NULL) {
            struct dpu_set_t disabled = dpu_set_from_dpu(trimmed);
            EXPECT("DPU_ERR_DPU_DISABLED: dpu_prepare_xfer on a trimmed DPU", dpu_prepare_xfer(disabled, buffer),
                   DPU_ERR_DPU_DISABLED);
            EXPECT("DPU_ERR_DPU_DISABLED: dpu_copy_to a trimmed DPU", dpu_copy_to(disabled, "w", 0, buffer, 4),
                   DPU_ERR_DPU_DISABLED);
        }
    }
    DPU_ASSERT(dpu_free(set));

    /* ---- Error strings (1.2): malloc'd, freed by the caller ---- */
    {
        static const struct {
            dpu_error_t code;
            const char *text;
        } strings[] = {
            {DPU_ERR_ALLOCATION, "dpu allocation error"},
            {DPU_ERR_INVALID_DPU_SET, "invalid action for this dpu set"},
            {DPU_ERR_INVALID_SYMBOL_ACCESS, "invalid memory symbol access"},
            {DPU_ERR_DPU_FAULT, "dpu is in fault"},
            {DPU_ERR_ELF_NO_SUCH_FILE, "no such ELF file"},
            {DPU_ERR_SG_NOT_MRAM_SYMBOL, "scatter/gather transfer unsupported symbol (must be a mram symbol)"},
            {(dpu_error_t)1000, "unknown error"},
        };
        char what[160];
        for (size_t s = 0; s < sizeof(strings) / sizeof(strings[0]); s++) {
            char *text_got = dpu_error_to_string(strings[s].code);
            snprintf(what, sizeof(what), "dpu_error_to_string(%u) is \"%s\"", (unsigned)strings[s].code,
                     strings[s].text);
            expect_true(what, text_got != NULL && strcmp(text_got, strings[s].text) == 0, strings[s].text,
                        text_got != NULL ? text_got : "NULL");
            free(text_got);
        }
        char *async_text = dpu_error_to_string(DPU_ERR_DPU_FAULT | DPU_ERR_ASYNC_JOBS);
        expect_true("dpu_error_to_string(DPU_ERR_DPU_FAULT | DPU_ERR_ASYNC_JOBS) is a string", async_text != NULL,
                    "a string", "NULL");
        free(async_text);
    }

    printf("skip DPU_ERR_TOO_MANY_TASKLETS: a program with NR_TASKLETS > 24 does not build (dpu-upmem-dpurte-clang "
           "refuses it, as the SDK's toolchain does)\n");
    printf("%u passed, %u failed\n", passed, failed);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
