/*
 * abi_check.c: checks upmem-sim's libdpu-compatible headers (sdk/include/dpu) against the UPMEM SDK 2025.1 facts
 * recorded from the UPMEM SDK 2025.1 (sizes and offsets measured with gcc on x86-64 against the SDK's own
 * headers), section 1.3 (signatures) and section 1.4 (macros).
 *
 * The expected numbers below are typed in from those measurements, never computed from our headers, so a header
 * that drifts fails. Every check is a _Static_assert (compile with -DABI_CHECK_RUNTIME_ONLY to skip them and
 * see the whole runtime report) and a runtime check; the last line printed is "N passed, M failed" and the exit
 * status is non-zero on any failure.
 *
 * Standalone: it does not link with the library. The macro tests (DPU_FOREACH, DPU_RANK_FOREACH,
 * STRUCT_DPU_FOREACH, DPU_CHECK, DPU_ASSERT) run against small fakes of the iterator functions and of
 * dpu_error_to_string defined at the end of this file, which follow the contract documented in dpu.h.
 *
 * Build and run (x86-64 Linux; the layout figures are LP64 ones):
 *   gcc -std=gnu11 -Wall -Wextra -Werror -I fallback_sim/sdk/include/dpu abi_check.c -o /tmp/abi_check
 *   /tmp/abi_check
 */
#include <dpu.h>
#include <dpu_checkpoint.h>
#include <dpu_description.h>
#include <dpu_elf.h>
#include <dpu_loader.h>
#include <dpu_log.h>
#include <dpu_log_internals.h>
#include <dpu_management.h>
#include <dpu_memory.h>
#include <dpu_program.h>
#include <dpu_runner.h>
#include <dpu_sim.h>
#include <dpu_target_macros.h>
#include <dpu_transfer_matrix.h>

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- Harness -------------------------------------------------------------------------------------------- */

static unsigned nr_passed;
static unsigned nr_failed;

static void expect_eq(const char *what, unsigned long long got, unsigned long long want)
{
    if (got == want) {
        nr_passed++;
    } else {
        nr_failed++;
        printf("FAIL: %s: got %llu (0x%llx), want %llu (0x%llx)\n", what, got, got, want, want);
    }
}

static void expect_true(const char *what, bool ok)
{
    if (ok) {
        nr_passed++;
    } else {
        nr_failed++;
        printf("FAIL: %s\n", what);
    }
}

#ifdef ABI_CHECK_RUNTIME_ONLY
#define STATIC_CHECK(cond, message)
#else
#define STATIC_CHECK(cond, message) _Static_assert(cond, message)
#endif

/* `expr` (an integer constant expression) equals `want`, at compile time and at run time. */
#define EXPECT_EQ(expr, want)                                                                                        \
    do {                                                                                                             \
        STATIC_CHECK((expr) == (want), #expr " == " #want);                                                          \
        expect_eq(#expr " == " #want, (unsigned long long)(expr), (unsigned long long)(want));                       \
    } while (0)

/* `expr` has exactly type `type` (not merely a convertible one). */
#define EXPECT_TYPE(expr, type)                                                                                      \
    do {                                                                                                             \
        STATIC_CHECK(_Generic((expr), type: 1, default: 0), #expr " has type " #type);                               \
        expect_true(#expr " has type " #type, _Generic((expr), type: 1, default: 0));                                \
    } while (0)

/* Member `member` of `type` has type `mtype`, is at offset `offset` and has `size` bytes. */
#define EXPECT_MEMBER(type, member, mtype, offset, size)                                                             \
    do {                                                                                                             \
        EXPECT_EQ(offsetof(type, member), offset);                                                                   \
        EXPECT_EQ(sizeof(((type *)0)->member), size);                                                                \
        EXPECT_TYPE(((type *)0)->member, mtype);                                                                     \
    } while (0)

/* Typedef `type` is exactly `want` (an <stdint.h> type). */
#define EXPECT_TYPEDEF(type, want) EXPECT_TYPE((type)0, want)

/*
 * Function `fn` is declared with exactly this return type and these parameter types. _Generic does not evaluate
 * `&fn`, so nothing is linked.
 */
#define EXPECT_FN(fn, ret, ...)                                                                                      \
    do {                                                                                                             \
        STATIC_CHECK(_Generic(&fn, ret(*)(__VA_ARGS__): 1, default: 0), #fn " is " #ret " (" #__VA_ARGS__ ")");      \
        expect_true(#fn " is " #ret " (" #__VA_ARGS__ ")", _Generic(&fn, ret(*)(__VA_ARGS__): 1, default: 0));       \
    } while (0)

/* ---- SDK 2025.1: layouts ----------------------------------------------------------------------- */

static void check_layouts(void)
{
    /* struct dpu_set_t: 24 bytes; kind (4-byte enum) @0; union @8 = list { u32 nr_ranks @8; ranks @16 } | dpu @8 */
    EXPECT_EQ(sizeof(struct dpu_set_t), 24);
    EXPECT_EQ(sizeof(enum dpu_set_kind_t), 4);
    EXPECT_EQ(sizeof(dpu_set_kind_t), 4);
    EXPECT_MEMBER(struct dpu_set_t, kind, enum dpu_set_kind_t, 0, 4);
    EXPECT_MEMBER(struct dpu_set_t, list.nr_ranks, uint32_t, 8, 4);
    EXPECT_MEMBER(struct dpu_set_t, list.ranks, struct dpu_rank_t **, 16, 8);
    EXPECT_MEMBER(struct dpu_set_t, dpu, struct dpu_t *, 8, 8);
    EXPECT_EQ(offsetof(struct dpu_set_t, list), 8);

    /* struct dpu_set_rank_iterator_t: 48 bytes; set @0, count u32 @8, next_idx u32 @12, has_next bool @16,
     * next dpu_set_t @24 */
    EXPECT_EQ(sizeof(struct dpu_set_rank_iterator_t), 48);
    EXPECT_MEMBER(struct dpu_set_rank_iterator_t, set, struct dpu_set_t *, 0, 8);
    EXPECT_MEMBER(struct dpu_set_rank_iterator_t, count, uint32_t, 8, 4);
    EXPECT_MEMBER(struct dpu_set_rank_iterator_t, next_idx, uint32_t, 12, 4);
    EXPECT_MEMBER(struct dpu_set_rank_iterator_t, has_next, bool, 16, 1);
    EXPECT_MEMBER(struct dpu_set_rank_iterator_t, next, struct dpu_set_t, 24, 24);

    /* struct dpu_set_dpu_iterator_t: 88 bytes; rank_iterator @0 (48), count @48, next_idx @52, has_next @56,
     * next @64 */
    EXPECT_EQ(sizeof(struct dpu_set_dpu_iterator_t), 88);
    EXPECT_MEMBER(struct dpu_set_dpu_iterator_t, rank_iterator, struct dpu_set_rank_iterator_t, 0, 48);
    EXPECT_MEMBER(struct dpu_set_dpu_iterator_t, count, uint32_t, 48, 4);
    EXPECT_MEMBER(struct dpu_set_dpu_iterator_t, next_idx, uint32_t, 52, 4);
    EXPECT_MEMBER(struct dpu_set_dpu_iterator_t, has_next, bool, 56, 1);
    EXPECT_MEMBER(struct dpu_set_dpu_iterator_t, next, struct dpu_set_t, 64, 24);

    /* struct dpu_symbol_t { u32 address; u32 size; }: 8 bytes (dpu_mem_max_addr_t / _size_t = u32) */
    EXPECT_EQ(sizeof(struct dpu_symbol_t), 8);
    EXPECT_MEMBER(struct dpu_symbol_t, address, dpu_mem_max_addr_t, 0, 4);
    EXPECT_MEMBER(struct dpu_symbol_t, size, dpu_mem_max_size_t, 4, 4);
    EXPECT_TYPEDEF(dpu_mem_max_addr_t, uint32_t);
    EXPECT_TYPEDEF(dpu_mem_max_size_t, uint32_t);

    /* struct dpu_incbin_t { uint8_t *buffer; size_t size; const char *path; }: 24 bytes */
    EXPECT_EQ(sizeof(struct dpu_incbin_t), 24);
    EXPECT_MEMBER(struct dpu_incbin_t, buffer, uint8_t *, 0, 8);
    EXPECT_MEMBER(struct dpu_incbin_t, size, size_t, 8, 8);
    EXPECT_MEMBER(struct dpu_incbin_t, path, const char *, 16, 8);

    /* struct sg_block_info { uint8_t *addr; uint32_t length; }: 16 bytes */
    EXPECT_EQ(sizeof(struct sg_block_info), 16);
    EXPECT_MEMBER(struct sg_block_info, addr, uint8_t *, 0, 8);
    EXPECT_MEMBER(struct sg_block_info, length, uint32_t, 8, 4);

    /* get_block_t { get_block_func_t f; void *args; size_t args_size; }: 24 bytes;
     * f is bool (*)(struct sg_block_info *out, uint32_t dpu_index, uint32_t block_index, void *args) */
    EXPECT_EQ(sizeof(get_block_t), 24);
    EXPECT_MEMBER(get_block_t, f, get_block_func_t, 0, 8);
    EXPECT_MEMBER(get_block_t, args, void *, 8, 8);
    EXPECT_MEMBER(get_block_t, args_size, size_t, 16, 8);
    EXPECT_TYPE((get_block_func_t)0, bool (*)(struct sg_block_info *, uint32_t, uint32_t, void *));

    /* struct dpu_hw_description_t: 52 bytes; the members the hardware backend reads (chip id, threads, sizes)
     * must be where the SDK's libdpu writes them. */
    EXPECT_EQ(sizeof(struct dpu_hw_description_t), 52);
    EXPECT_MEMBER(struct dpu_hw_description_t, signature.chip_id, dpu_chip_id_e, 0, 4);
    EXPECT_MEMBER(struct dpu_hw_description_t, timings.carousel, struct dpu_carousel_config, 4, 4);
    EXPECT_MEMBER(struct dpu_hw_description_t, timings.fck_frequency_in_mhz, uint32_t, 8, 4);
    EXPECT_MEMBER(struct dpu_hw_description_t, timings.clock_division, uint8_t, 14, 1);
    EXPECT_MEMBER(struct dpu_hw_description_t, topology.nr_of_control_interfaces, uint8_t, 16, 1);
    EXPECT_MEMBER(struct dpu_hw_description_t, topology.nr_of_dpus_per_control_interface, uint8_t, 17, 1);
    EXPECT_MEMBER(struct dpu_hw_description_t, topology.ci_mask, uint8_t, 18, 1);
    EXPECT_MEMBER(struct dpu_hw_description_t, memories.mram_size, mram_size_t, 20, 4);
    EXPECT_MEMBER(struct dpu_hw_description_t, memories.wram_size, wram_size_t, 24, 4);
    EXPECT_MEMBER(struct dpu_hw_description_t, memories.iram_size, iram_size_t, 28, 2);
    EXPECT_MEMBER(struct dpu_hw_description_t, dpu.pcb_transformation, struct dpu_bit_config, 32, 6);
    EXPECT_MEMBER(struct dpu_hw_description_t, dpu.nr_of_threads, uint8_t, 38, 1);
    EXPECT_MEMBER(struct dpu_hw_description_t, dpu.nr_of_atomic_bits, uint32_t, 40, 4);
    EXPECT_MEMBER(struct dpu_hw_description_t, dpu.nr_of_notify_bits, uint32_t, 44, 4);
    EXPECT_MEMBER(struct dpu_hw_description_t, dpu.nr_of_work_registers_per_thread, uint8_t, 48, 1);

    /* struct _dpu_description_t: 88 bytes; hw @0, type @52, configuration (10 bools) @56, refcount @68,
     * _internals { data, free } @72 */
    EXPECT_EQ(sizeof(struct _dpu_description_t), 88);
    EXPECT_MEMBER(struct _dpu_description_t, hw, struct dpu_hw_description_t, 0, 52);
    EXPECT_MEMBER(struct _dpu_description_t, type, dpu_type_t, 52, 4);
    EXPECT_MEMBER(struct _dpu_description_t, configuration.ila_control_refresh, bool, 65, 1);
    EXPECT_MEMBER(struct _dpu_description_t, refcount, uint32_t, 68, 4);
    EXPECT_MEMBER(struct _dpu_description_t, _internals.data, void *, 72, 8);
    EXPECT_MEMBER(struct _dpu_description_t, _internals.free, void (*)(void *), 80, 8);

    /* Scalar typedefs */
    EXPECT_TYPEDEF(dpu_rank_id_t, uint16_t);
    EXPECT_TYPEDEF(dpu_id_t, uint32_t);
    EXPECT_TYPEDEF(dpu_slice_id_t, uint8_t);
    EXPECT_TYPEDEF(dpu_member_id_t, uint8_t);
    EXPECT_TYPEDEF(dpu_thread_t, uint8_t);
    EXPECT_TYPEDEF(iram_addr_t, uint16_t);
    EXPECT_TYPEDEF(wram_addr_t, uint32_t);
    EXPECT_TYPEDEF(mram_addr_t, uint32_t);
    EXPECT_TYPEDEF(dpuinstruction_t, uint64_t);
    EXPECT_TYPEDEF(dpuword_t, uint32_t);
}

/* ---- SDK 2025.1: enums and constants ----------------------------------------------------------- */

static void check_enums(void)
{
    EXPECT_EQ(DPU_SET_RANKS, 0);
    EXPECT_EQ(DPU_SET_DPU, 1);

    EXPECT_EQ(DPU_ASYNCHRONOUS, 0);
    EXPECT_EQ(DPU_SYNCHRONOUS, 1);

    EXPECT_EQ(DPU_XFER_TO_DPU, 0);
    EXPECT_EQ(DPU_XFER_FROM_DPU, 1);

    EXPECT_EQ(DPU_XFER_DEFAULT, 0);
    EXPECT_EQ(DPU_XFER_NO_RESET, 1);
    EXPECT_EQ(DPU_XFER_ASYNC, 2);
    EXPECT_EQ(DPU_XFER_PARALLEL, 4);

    EXPECT_EQ(DPU_SG_XFER_DEFAULT, 0);
    EXPECT_EQ(DPU_SG_XFER_ASYNC, 2);
    EXPECT_EQ(DPU_SG_XFER_DISABLE_LENGTH_CHECK, 4);

    EXPECT_EQ(DPU_CALLBACK_DEFAULT, 0);
    EXPECT_EQ(DPU_CALLBACK_ASYNC, 1);
    EXPECT_EQ(DPU_CALLBACK_NONBLOCKING, 2);
    EXPECT_EQ(DPU_CALLBACK_SINGLE_CALL, 4);
    EXPECT_EQ(DPU_CALLBACK_PARALLEL, 8);

    EXPECT_EQ(FUNCTIONAL_SIMULATOR, 0);
    EXPECT_EQ(CYCLE_ACCURATE_SIMULATOR, 1);
    EXPECT_EQ(RTL_SIMULATOR, 2);
    EXPECT_EQ(HW, 3);
    EXPECT_EQ(BACKUP_SPI, 4);
    EXPECT_EQ(SCENARIO, 5);

    /* dpu_checkpoint.h */
    EXPECT_EQ(DPU_CHECKPOINT_INTERNAL, 1);
    EXPECT_EQ(DPU_CHECKPOINT_IRAM, 2);
    EXPECT_EQ(DPU_CHECKPOINT_MRAM, 8);
    EXPECT_EQ(DPU_CHECKPOINT_WRAM, 0x10);

    /* Enums passed by value: C enums of small values are 4 bytes with gcc (kind and dpu_error_t are measured). */
    EXPECT_EQ(sizeof(dpu_launch_policy_t), 4);
    EXPECT_EQ(sizeof(dpu_xfer_t), 4);
    EXPECT_EQ(sizeof(dpu_xfer_flags_t), 4);
    EXPECT_EQ(sizeof(dpu_sg_xfer_flags_t), 4);
    EXPECT_EQ(sizeof(dpu_callback_flags_t), 4);
    EXPECT_EQ(sizeof(dpu_type_t), 4);

    /* Constants */
    EXPECT_EQ(DPU_ALLOCATE_ALL, UINT_MAX);
    EXPECT_TYPE(DPU_ALLOCATE_ALL, unsigned int);
    EXPECT_EQ(sizeof(DPU_MRAM_HEAP_POINTER_NAME), sizeof("__sys_used_mram_end"));
    expect_true("DPU_MRAM_HEAP_POINTER_NAME is \"__sys_used_mram_end\"",
        strcmp(DPU_MRAM_HEAP_POINTER_NAME, "__sys_used_mram_end") == 0);
    EXPECT_EQ(DPU_BOOT_THREAD, 0);
    EXPECT_EQ(DPU_MAX_NR_CIS, 8);
    EXPECT_EQ(DPU_MAX_NR_DPUS_PER_CI, 8);
    EXPECT_EQ(MAX_NR_DPUS_PER_RANK, 64);
    EXPECT_EQ(EM_DPU, 245);
}

/*
 * dpu_error_t: a signed 4-byte enum, values 0..42, and the DPU_ERR_ASYNC_JOBS bit, which the SDK defines as
 * (int)(1U << 31): negative, and it keeps the enum's type signed.
 */
static void check_errors(void)
{
    EXPECT_EQ(sizeof(dpu_error_t), 4);
    EXPECT_EQ(DPU_OK, 0);
    EXPECT_EQ(DPU_ERR_INTERNAL, 1);
    EXPECT_EQ(DPU_ERR_SYSTEM, 2);
    EXPECT_EQ(DPU_ERR_DRIVER, 3);
    EXPECT_EQ(DPU_ERR_ALLOCATION, 4);
    EXPECT_EQ(DPU_ERR_INVALID_DPU_SET, 5);
    EXPECT_EQ(DPU_ERR_INVALID_THREAD_ID, 6);
    EXPECT_EQ(DPU_ERR_INVALID_NOTIFY_ID, 7);
    EXPECT_EQ(DPU_ERR_INVALID_WRAM_ACCESS, 8);
    EXPECT_EQ(DPU_ERR_INVALID_IRAM_ACCESS, 9);
    EXPECT_EQ(DPU_ERR_INVALID_MRAM_ACCESS, 10);
    EXPECT_EQ(DPU_ERR_INVALID_SYMBOL_ACCESS, 11);
    EXPECT_EQ(DPU_ERR_MRAM_BUSY, 12);
    EXPECT_EQ(DPU_ERR_TRANSFER_ALREADY_SET, 13);
    EXPECT_EQ(DPU_ERR_INVALID_PARALLEL_MEMORY_TRANSFER, 14);
    EXPECT_EQ(DPU_ERR_WRAM_FIFO_FULL, 15);
    EXPECT_EQ(DPU_ERR_NO_PROGRAM_LOADED, 16);
    EXPECT_EQ(DPU_ERR_DIFFERENT_DPU_PROGRAMS, 17);
    EXPECT_EQ(DPU_ERR_CORRUPTED_MEMORY, 18);
    EXPECT_EQ(DPU_ERR_DPU_DISABLED, 19);
    EXPECT_EQ(DPU_ERR_DPU_ALREADY_RUNNING, 20);
    EXPECT_EQ(DPU_ERR_INVALID_MEMORY_TRANSFER, 21);
    EXPECT_EQ(DPU_ERR_INVALID_LAUNCH_POLICY, 22);
    EXPECT_EQ(DPU_ERR_DPU_FAULT, 23);
    EXPECT_EQ(DPU_ERR_ELF_INVALID_FILE, 24);
    EXPECT_EQ(DPU_ERR_ELF_NO_SUCH_FILE, 25);
    EXPECT_EQ(DPU_ERR_ELF_NO_SUCH_SECTION, 26);
    EXPECT_EQ(DPU_ERR_TIMEOUT, 27);
    EXPECT_EQ(DPU_ERR_INVALID_PROFILE, 28);
    EXPECT_EQ(DPU_ERR_UNKNOWN_SYMBOL, 29);
    EXPECT_EQ(DPU_ERR_LOG_FORMAT, 30);
    EXPECT_EQ(DPU_ERR_LOG_CONTEXT_MISSING, 31);
    EXPECT_EQ(DPU_ERR_LOG_BUFFER_TOO_SMALL, 32);
    EXPECT_EQ(DPU_ERR_VPD_INVALID_FILE, 33);
    EXPECT_EQ(DPU_ERR_VPD_NO_REPAIR, 34);
    EXPECT_EQ(DPU_ERR_NO_THREAD_PER_RANK, 35);
    EXPECT_EQ(DPU_ERR_INVALID_BUFFER_SIZE, 36);
    EXPECT_EQ(DPU_ERR_NONBLOCKING_SYNC_CALLBACK, 37);
    EXPECT_EQ(DPU_ERR_TOO_MANY_TASKLETS, 38);
    EXPECT_EQ(DPU_ERR_SG_TOO_MANY_BLOCKS, 39);
    EXPECT_EQ(DPU_ERR_SG_LENGTH_MISMATCH, 40);
    EXPECT_EQ(DPU_ERR_SG_NOT_ACTIVATED, 41);
    EXPECT_EQ(DPU_ERR_SG_NOT_MRAM_SYMBOL, 42);
    EXPECT_EQ((uint32_t)DPU_ERR_ASYNC_JOBS, 0x80000000u);
    EXPECT_EQ(DPU_ERR_ASYNC_JOBS < 0, 1);
    EXPECT_EQ((dpu_error_t)-1 < 0, 1);
    EXPECT_EQ(DPU_ERROR_ASYNC_JOB_TYPE_SHIFT, 16);
    /* The flag composes with a code and is recovered from it. */
    EXPECT_EQ(((uint32_t)DPU_ERR_ASYNC_JOBS | (uint32_t)DPU_ERR_DPU_FAULT) & ~(uint32_t)DPU_ERR_ASYNC_JOBS, 23);
}

/* ---- SDK 2025.1: signatures -------------------------------------------------------------------- */

static void check_signatures(void)
{
    /* dpu.h */
    EXPECT_FN(dpu_alloc, dpu_error_t, uint32_t, const char *, struct dpu_set_t *);
    EXPECT_FN(dpu_alloc_ranks, dpu_error_t, uint32_t, const char *, struct dpu_set_t *);
    EXPECT_FN(dpu_free, dpu_error_t, struct dpu_set_t);
    EXPECT_FN(dpu_get_nr_ranks, dpu_error_t, struct dpu_set_t, uint32_t *);
    EXPECT_FN(dpu_get_nr_dpus, dpu_error_t, struct dpu_set_t, uint32_t *);
    EXPECT_FN(dpu_load, dpu_error_t, struct dpu_set_t, const char *, struct dpu_program_t **);
    EXPECT_FN(dpu_load_from_memory, dpu_error_t, struct dpu_set_t, uint8_t *, size_t, struct dpu_program_t **);
    EXPECT_FN(dpu_load_from_incbin, dpu_error_t, struct dpu_set_t, struct dpu_incbin_t *, struct dpu_program_t **);
    EXPECT_FN(dpu_get_symbol, dpu_error_t, struct dpu_program_t *, const char *, struct dpu_symbol_t *);
    EXPECT_FN(dpu_launch, dpu_error_t, struct dpu_set_t, dpu_launch_policy_t);
    EXPECT_FN(dpu_sync, dpu_error_t, struct dpu_set_t);
    EXPECT_FN(dpu_status, dpu_error_t, struct dpu_set_t, bool *, bool *);
    EXPECT_FN(dpu_copy_to, dpu_error_t, struct dpu_set_t, const char *, uint32_t, const void *, size_t);
    EXPECT_FN(dpu_copy_from, dpu_error_t, struct dpu_set_t, const char *, uint32_t, void *, size_t);
    EXPECT_FN(dpu_copy_to_symbol, dpu_error_t, struct dpu_set_t, struct dpu_symbol_t, uint32_t, const void *, size_t);
    EXPECT_FN(dpu_copy_from_symbol, dpu_error_t, struct dpu_set_t, struct dpu_symbol_t, uint32_t, void *, size_t);
    EXPECT_FN(dpu_broadcast_to, dpu_error_t, struct dpu_set_t, const char *, uint32_t, const void *, size_t,
        dpu_xfer_flags_t);
    EXPECT_FN(dpu_broadcast_to_symbol, dpu_error_t, struct dpu_set_t, struct dpu_symbol_t, uint32_t, const void *,
        size_t, dpu_xfer_flags_t);
    EXPECT_FN(dpu_prepare_xfer, dpu_error_t, struct dpu_set_t, void *);
    EXPECT_FN(dpu_push_xfer, dpu_error_t, struct dpu_set_t, dpu_xfer_t, const char *, uint32_t, size_t,
        dpu_xfer_flags_t);
    EXPECT_FN(dpu_push_xfer_symbol, dpu_error_t, struct dpu_set_t, dpu_xfer_t, struct dpu_symbol_t, uint32_t, size_t,
        dpu_xfer_flags_t);
    EXPECT_FN(dpu_push_sg_xfer, dpu_error_t, struct dpu_set_t, dpu_xfer_t, const char *, uint32_t, size_t,
        get_block_t *, dpu_sg_xfer_flags_t);
    EXPECT_FN(dpu_push_sg_xfer_symbol, dpu_error_t, struct dpu_set_t, dpu_xfer_t, struct dpu_symbol_t, uint32_t,
        size_t, get_block_t *, dpu_sg_xfer_flags_t);
    EXPECT_FN(dpu_callback, dpu_error_t, struct dpu_set_t, dpu_error_t (*)(struct dpu_set_t, uint32_t, void *),
        void *, dpu_callback_flags_t);
    EXPECT_FN(dpu_log_read, dpu_error_t, struct dpu_set_t, FILE *);
    EXPECT_FN(dpu_error_to_string, char *, dpu_error_t);
    EXPECT_FN(dpu_set_rank_iterator_from, struct dpu_set_rank_iterator_t, struct dpu_set_t *);
    EXPECT_FN(dpu_set_rank_iterator_next, void, struct dpu_set_rank_iterator_t *);
    EXPECT_FN(dpu_set_dpu_iterator_from, struct dpu_set_dpu_iterator_t, struct dpu_set_t *);
    EXPECT_FN(dpu_set_dpu_iterator_next, void, struct dpu_set_dpu_iterator_t *);

    /* dpu_log.h, dpu_log_internals.h, dpu_memory.h (2025 signatures: 4 arguments; WRAM in 32-bit words),
     * dpu_management.h */
    EXPECT_FN(dpulog_read_for_dpu, dpu_error_t, struct dpu_t *, FILE *);
    EXPECT_FN(dpulog_read_for_dpu_, dpu_error_t, struct dpu_t *, dpu_log_print_fct_t, void *);
    EXPECT_FN(dpu_copy_to_mram, dpu_error_t, struct dpu_t *, mram_addr_t, const uint8_t *, mram_size_t);
    EXPECT_FN(dpu_copy_from_mram, dpu_error_t, struct dpu_t *, uint8_t *, mram_addr_t, mram_size_t);
    EXPECT_FN(dpu_copy_to_wram_for_dpu, dpu_error_t, struct dpu_t *, wram_addr_t, const dpuword_t *, wram_size_t);
    EXPECT_FN(dpu_get_rank_numa_node, int, struct dpu_rank_t *);

    /*
     * upmem-sim's own contract (signatures chosen for the library, not measured on the SDK): pins what the Rust
     * library exports.
     */
    EXPECT_FN(dpu_copy_from_wram_for_dpu, dpu_error_t, struct dpu_t *, dpuword_t *, wram_addr_t, wram_size_t);
    EXPECT_FN(dpu_get_rank_id, dpu_rank_id_t, struct dpu_rank_t *);
    EXPECT_FN(dpu_get_id, dpu_id_t, struct dpu_t *);
    EXPECT_FN(dpu_get_slice_id, dpu_slice_id_t, struct dpu_t *);
    EXPECT_FN(dpu_get_member_id, dpu_member_id_t, struct dpu_t *);
    EXPECT_FN(dpu_is_enabled, bool, struct dpu_t *);
    EXPECT_FN(dpu_get, struct dpu_t *, struct dpu_rank_t *, dpu_slice_id_t, dpu_member_id_t);
    EXPECT_FN(dpu_get_rank, struct dpu_rank_t *, struct dpu_t *);
    EXPECT_FN(dpu_get_description, dpu_description_t, struct dpu_rank_t *);
    EXPECT_FN(dpu_set_from_rank, struct dpu_set_t, struct dpu_rank_t **);
    EXPECT_FN(dpu_set_from_dpu, struct dpu_set_t, struct dpu_t *);
    EXPECT_FN(dpu_rank_from_set, struct dpu_rank_t *, struct dpu_set_t);
    EXPECT_FN(dpu_from_set, struct dpu_t *, struct dpu_set_t);
    EXPECT_FN(dpu_iterator_from, struct dpu_iterator_t, struct dpu_rank_t *);
    EXPECT_FN(dpu_iterator_next, void, struct dpu_iterator_t *);
    EXPECT_FN(dpu_sim_fault_reason, dpu_error_t, struct dpu_set_t, char *, size_t);
    EXPECT_FN(dpu_sim_stats, dpu_error_t, struct dpu_set_t, struct dpu_sim_stats *);
    EXPECT_EQ(DPU_SIM, 1);
    EXPECT_EQ(sizeof(struct dpu_sim_stats), 64);
    EXPECT_EQ(offsetof(struct dpu_sim_stats, sync_waits), 48);
    EXPECT_EQ(offsetof(struct dpu_sim_stats, nr_tasklets), 56);
    EXPECT_EQ(offsetof(struct dpu_sim_stats, reserved), 60);
    EXPECT_FN(dpu_sim_timing, dpu_error_t, struct dpu_set_t, struct dpu_sim_timing *);
    EXPECT_EQ(DPU_SIM_MAX_TASKLETS, 24);
    EXPECT_EQ(sizeof(struct dpu_sim_timing), 32 + 2 * 24 * 8);
    EXPECT_EQ(offsetof(struct dpu_sim_timing, nr_tasklets), 24);
    EXPECT_EQ(offsetof(struct dpu_sim_timing, tasklet_instructions), 32);
    EXPECT_EQ(offsetof(struct dpu_sim_timing, tasklet_cycles), 32 + 24 * 8);
    EXPECT_FN(dpu_sim_instructions, dpu_error_t, struct dpu_set_t, struct dpu_sim_instructions *);
    EXPECT_FN(dpu_sim_instruction_class_name, const char *, enum dpu_sim_instruction_class);
    EXPECT_EQ(DPU_SIM_CLASS_SDK_ROUTINE, 19);
    EXPECT_EQ(DPU_SIM_CLASS_STACK_LOAD_STORE, 20);
    EXPECT_EQ(DPU_SIM_INSTRUCTION_CLASSES, 21);
    EXPECT_EQ(sizeof(struct dpu_sim_instructions), 8 + 21 * 8);
    EXPECT_FN(dpu_sim_timeline, dpu_error_t, struct dpu_sim_event *, size_t, size_t *);
    EXPECT_FN(dpu_sim_timeline_clear, dpu_error_t, void);
    EXPECT_EQ(sizeof(struct dpu_sim_event), 32);
    EXPECT_EQ(offsetof(struct dpu_sim_event, predicted_ns), 24);
    EXPECT_EQ(DPU_TARGET_MASK, 0xfff);
}

/* ---- SDK 2025.1: macros ------------------------------------------------------------------------ */

/*
 * Fake ranks for the iterator fakes below: rank 0 has DPUs {0, 1, 2} with DPU 1 disabled, rank 1 has DPUs
 * {0, 1}. DPU_FOREACH must yield r0.d0, r0.d2, r1.d0, r1.d1 with i = 0, 1, 2, 3.
 */
struct dpu_t {
    int id;
    bool enabled;
};
struct dpu_rank_t {
    uint32_t nr_dpus;
    struct dpu_t *dpus;
};
static struct dpu_t rank0_dpus[3] = { { 0, true }, { 1, false }, { 2, true } };
static struct dpu_t rank1_dpus[2] = { { 10, true }, { 11, true } };
static struct dpu_rank_t fake_ranks[2] = { { 3, rank0_dpus }, { 2, rank1_dpus } };
static struct dpu_rank_t *fake_rank_list[2] = { &fake_ranks[0], &fake_ranks[1] };

/* Compiled for every accepted form of the macros; `set` is a rank set. */
static void run_foreach_macros(struct dpu_set_t set)
{
    struct dpu_set_t dpu;
    struct dpu_set_t rank;
    uint32_t i = 99;
    int ids[8];
    uint32_t indices[8];
    unsigned n = 0;

    DPU_FOREACH(set, dpu) {
        expect_true("DPU_FOREACH(set, dpu): dpu is a DPU_SET_DPU set", dpu.kind == DPU_SET_DPU);
        if (n < 8)
            ids[n] = dpu.dpu->id;
        n++;
    }
    expect_eq("DPU_FOREACH(set, dpu): number of DPUs", n, 4);
    expect_true("DPU_FOREACH(set, dpu): order and skipping of disabled DPUs",
        n == 4 && ids[0] == 0 && ids[1] == 2 && ids[2] == 10 && ids[3] == 11);

    n = 0;
    DPU_FOREACH(set, dpu, i) {
        if (n < 8) {
            ids[n] = dpu.dpu->id;
            indices[n] = i;
        }
        n++;
    }
    expect_true("DPU_FOREACH(set, dpu, i): i counts enabled DPUs",
        n == 4 && indices[0] == 0 && indices[1] == 1 && indices[2] == 2 && indices[3] == 3 && ids[3] == 11);

    n = 0;
    unsigned nested = 0;
    DPU_RANK_FOREACH(set, rank) {
        expect_true("DPU_RANK_FOREACH(set, rank): rank is a one-rank DPU_SET_RANKS view",
            rank.kind == DPU_SET_RANKS && rank.list.nr_ranks == 1 && rank.list.ranks == &set.list.ranks[n]);
        DPU_FOREACH(rank, dpu) {
            nested++;
        }
        n++;
    }
    expect_eq("DPU_RANK_FOREACH(set, rank): number of ranks", n, 2);
    expect_eq("DPU_FOREACH nested in DPU_RANK_FOREACH: number of DPUs", nested, 4);

    n = 0;
    DPU_RANK_FOREACH(set, rank, i) {
        if (n < 8)
            indices[n] = i;
        n++;
    }
    expect_true("DPU_RANK_FOREACH(set, rank, i): i counts ranks", n == 2 && indices[0] == 0 && indices[1] == 1);

    struct dpu_t *d;
    n = 0;
    STRUCT_DPU_FOREACH(&fake_ranks[0], d) {
        if (n < 8)
            ids[n] = d->id;
        n++;
    }
    expect_true("STRUCT_DPU_FOREACH(rank, dpu): enabled DPUs of the rank", n == 2 && ids[0] == 0 && ids[1] == 2);
    n = 0;
    STRUCT_DPU_FOREACH(&fake_ranks[1], d, i) {
        if (n < 8)
            indices[n] = i;
        n++;
    }
    expect_true("STRUCT_DPU_FOREACH(rank, dpu, i): i counts", n == 2 && indices[0] == 0 && indices[1] == 1);

    /* A single-DPU set iterates over itself. */
    struct dpu_set_t single = { .kind = DPU_SET_DPU, .dpu = &rank1_dpus[1] };
    n = 0;
    DPU_FOREACH(single, dpu, i) {
        expect_true("DPU_FOREACH over a single DPU yields it with i = 0", dpu.dpu == &rank1_dpus[1] && i == 0);
        n++;
    }
    expect_eq("DPU_FOREACH over a single DPU: number of DPUs", n, 1);
}

/* DPU_CHECK: prints "<file>:<line>(<func>): DPU Error (<string>)\n" on stderr, then runs on_error. */
static int check_macro_target(dpu_error_t status, int *line)
{
    *line = __LINE__ + 1;
    DPU_CHECK(status, return 1);
    return 0;
}

static void assert_macro_target(void)
{
    DPU_ASSERT(DPU_ERR_ALLOCATION);
}

/* Runs fn in a child whose stderr goes to a pipe; returns the exit status and what it printed. */
static int run_captured(void (*fn)(void), char *out, size_t out_size)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        fn();
        _exit(0);
    }
    close(fds[1]);
    size_t len = 0;
    ssize_t got;
    while (len + 1 < out_size && (got = read(fds[0], out + len, out_size - 1 - len)) > 0)
        len += (size_t)got;
    out[len] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

static int check_line;
static int check_result;
static void check_in_child(void)
{
    check_result = check_macro_target(DPU_ERR_DPU_FAULT, &check_line);
    if (check_macro_target(DPU_OK, &check_line) != 0)
        _exit(3);
    _exit(check_result == 1 ? 0 : 2);
}

static void run_check_macros(void)
{
    char out[512];
    char want[512];

    /* The line DPU_CHECK is on in check_macro_target. */
    int line;
    (void)check_macro_target(DPU_OK, &line);

    int status = run_captured(check_in_child, out, sizeof(out));
    snprintf(want, sizeof(want), "%s:%d(%s): DPU Error (%s)\n", __FILE__, line, "check_macro_target",
        "dpu is in fault");
    expect_true("DPU_CHECK runs on_error, and not for DPU_OK", WIFEXITED(status) && WEXITSTATUS(status) == 0);
    expect_true("DPU_CHECK message format", strcmp(out, want) == 0);
    if (strcmp(out, want) != 0)
        printf("  got  %s  want %s", out, want);

    status = run_captured(assert_macro_target, out, sizeof(out));
    expect_true("DPU_ASSERT exits with EXIT_FAILURE", WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE);
    expect_true("DPU_ASSERT message", strstr(out, "(assert_macro_target): DPU Error (dpu allocation error)\n") != NULL);
}

/* DPU_INCBIN embeds this very file. */
DPU_INCBIN(abi_check_self, __FILE__);

static void check_incbin(void)
{
    EXPECT_TYPE(abi_check_self, struct dpu_incbin_t);
    expect_true("DPU_INCBIN: buffer is dpu_incbin_<name>", abi_check_self.buffer == dpu_incbin_abi_check_self);
    expect_true("DPU_INCBIN: size is dpu_incbin_<name>_size", abi_check_self.size == dpu_incbin_abi_check_self_size);
    expect_true("DPU_INCBIN: path is the file", abi_check_self.path && strcmp(abi_check_self.path, __FILE__) == 0);
    expect_true("DPU_INCBIN: contents are the file's",
        abi_check_self.size > 100 && memcmp(abi_check_self.buffer, "/*\n * abi_check.c:", 18) == 0);
    /* The last bytes of this file. */
    expect_true("DPU_INCBIN: size is exact",
        abi_check_self.size > 18
            && memcmp(abi_check_self.buffer + abi_check_self.size - 18, "/* end of file */\n", 18) == 0);
}

/* dpu_macro_utils.h */
static void check_macro_utils(void)
{
    int _CONCAT(abi_, value) = 7;
    expect_eq("_CONCAT pastes", (unsigned long long)abi_value, 7);
#define ABI_CHECK_NAME abi_name
    expect_true("_STR stringifies the expansion", strcmp(_STR(ABI_CHECK_NAME), "abi_name") == 0);
}

int main(void)
{
    check_layouts();
    check_enums();
    check_errors();
    check_signatures();

    struct dpu_set_t set = { .kind = DPU_SET_RANKS, .list = { .nr_ranks = 2, .ranks = fake_rank_list } };
    run_foreach_macros(set);
    run_check_macros();
    check_incbin();
    check_macro_utils();

    printf("%u passed, %u failed\n", nr_passed, nr_failed);
    return nr_failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ---- Fakes of the library functions the macros call, following dpu.h's contract ------------------------ */

char *dpu_error_to_string(dpu_error_t status)
{
    switch (status) {
    case DPU_ERR_ALLOCATION:
        return strdup("dpu allocation error");
    case DPU_ERR_DPU_FAULT:
        return strdup("dpu is in fault");
    default:
        return strdup("unknown error");
    }
}

struct dpu_set_rank_iterator_t dpu_set_rank_iterator_from(struct dpu_set_t *set)
{
    struct dpu_set_rank_iterator_t it;
    memset(&it, 0, sizeof(it));
    it.set = set;
    it.count = 0;
    if (set->kind == DPU_SET_RANKS && set->list.nr_ranks > 0) {
        it.has_next = true;
        it.next.kind = DPU_SET_RANKS;
        it.next.list.nr_ranks = 1;
        it.next.list.ranks = &set->list.ranks[0];
        it.next_idx = 1;
    } else if (set->kind == DPU_SET_DPU) {
        it.has_next = true;
        it.next = *set;
        it.next_idx = 1;
    }
    return it;
}

void dpu_set_rank_iterator_next(struct dpu_set_rank_iterator_t *it)
{
    it->count++;
    if (it->set->kind == DPU_SET_RANKS && it->next_idx < it->set->list.nr_ranks) {
        it->next.list.ranks = &it->set->list.ranks[it->next_idx];
        it->next_idx++;
    } else {
        it->has_next = false;
    }
}

/* Moves `it` to the first enabled DPU at or after (rank_iterator.next, next_idx). */
static void fake_dpu_iterator_seek(struct dpu_set_dpu_iterator_t *it)
{
    while (it->rank_iterator.has_next) {
        if (it->rank_iterator.next.kind == DPU_SET_DPU) {
            if (it->next_idx == 0) {
                it->next_idx = 1;
                it->next = it->rank_iterator.next;
                it->has_next = true;
                return;
            }
        } else {
            struct dpu_rank_t *rank = it->rank_iterator.next.list.ranks[0];
            while (it->next_idx < rank->nr_dpus) {
                struct dpu_t *dpu = &rank->dpus[it->next_idx++];
                if (dpu->enabled) {
                    it->next.kind = DPU_SET_DPU;
                    it->next.dpu = dpu;
                    it->has_next = true;
                    return;
                }
            }
        }
        dpu_set_rank_iterator_next(&it->rank_iterator);
        it->next_idx = 0;
    }
    it->has_next = false;
}

struct dpu_set_dpu_iterator_t dpu_set_dpu_iterator_from(struct dpu_set_t *set)
{
    struct dpu_set_dpu_iterator_t it;
    memset(&it, 0, sizeof(it));
    it.rank_iterator = dpu_set_rank_iterator_from(set);
    fake_dpu_iterator_seek(&it);
    return it;
}

void dpu_set_dpu_iterator_next(struct dpu_set_dpu_iterator_t *it)
{
    it->count++;
    fake_dpu_iterator_seek(it);
}

struct dpu_iterator_t dpu_iterator_from(struct dpu_rank_t *rank)
{
    struct dpu_iterator_t it;
    memset(&it, 0, sizeof(it));
    it.rank = rank;
    it.count = (uint32_t)-1;
    dpu_iterator_next(&it);
    return it;
}

void dpu_iterator_next(struct dpu_iterator_t *it)
{
    it->count++;
    it->has_next = false;
    while (it->next_idx < it->rank->nr_dpus) {
        struct dpu_t *dpu = &it->rank->dpus[it->next_idx++];
        if (dpu->enabled) {
            it->next = dpu;
            it->has_next = true;
            return;
        }
    }
    it->next = NULL;
}

/* end of file */
