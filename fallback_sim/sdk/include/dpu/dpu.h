/*
 * dpu.h: the UPMEM host API (libdpu), as declared by the UPMEM SDK 2025.1, for upmem-sim.
 *
 * upmem-sim's headers declare the SDK's functions with the SDK's signatures, enum values, C layouts and macros
 * (written from the SDK's documented interface, not from SDK code), so unchanged UPMEM host programs compile against them and
 * link with upmem-sim's libdpu-compatible library. Functions of the SDK that upmem-sim does not implement are
 * not declared: a program using them fails at compile time rather than at link time.
 *
 * Like the SDK's, this header does not include the low-level headers (dpu_management.h, dpu_memory.h,
 * dpu_log.h, dpu_program.h, ...): programs include them explicitly. upmem-sim's own extensions are in dpu_sim.h.
 */
#ifndef UPMEM_SIM_DPU_H
#define UPMEM_SIM_DPU_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <dpu_checkpoint.h>
#include <dpu_error.h>
#include <dpu_types.h>
#include <dpu_macro_utils.h>
#include <dpu_fifo.h>
#include <dpu_bank_interface_pmc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* As nr_dpus / nr_ranks: allocate every free rank. */
#define DPU_ALLOCATE_ALL UINT_MAX

/* ---- Allocation ----------------------------------------------------------------------------------------- */

/*
 * Allocates whole ranks until they hold at least `nr_dpus` DPUs, then disables the surplus DPUs of the last rank
 * so that the set holds exactly `nr_dpus` enabled DPUs. DPU_ALLOCATE_ALL takes every free rank.
 * `profile` ("key=value,key=value", NULL = "") is read after $UPMEM_PROFILE_BASE and before $UPMEM_PROFILE.
 * Errors: DPU_ERR_ALLOCATION (not enough DPUs), DPU_ERR_INVALID_PROFILE.
 */
dpu_error_t dpu_alloc(uint32_t nr_dpus, const char *profile, struct dpu_set_t *dpu_set);

/* Same as dpu_alloc, counting ranks. DPU_ALLOCATE_ALL is allowed. */
dpu_error_t dpu_alloc_ranks(uint32_t nr_ranks, const char *profile, struct dpu_set_t *dpu_set);

/* Frees a set returned by dpu_alloc / dpu_alloc_ranks (any other set: DPU_ERR_INVALID_DPU_SET). */
dpu_error_t dpu_free(struct dpu_set_t dpu_set);

/* Number of ranks of the set (1 for a single DPU). */
dpu_error_t dpu_get_nr_ranks(struct dpu_set_t dpu_set, uint32_t *nr_ranks);

/* Number of enabled DPUs of the set (1 for a single DPU). */
dpu_error_t dpu_get_nr_dpus(struct dpu_set_t dpu_set, uint32_t *nr_dpus);

/* ---- Programs ------------------------------------------------------------------------------------------- */

/*
 * Loads the DPU binary at `binary_path` into every DPU of the set; they share one program, stored in `*program`
 * unless `program` is NULL. Errors: DPU_ERR_ELF_NO_SUCH_FILE, DPU_ERR_ELF_INVALID_FILE, DPU_ERR_TOO_MANY_TASKLETS.
 */
dpu_error_t dpu_load(struct dpu_set_t dpu_set, const char *binary_path, struct dpu_program_t **program);

/* Same as dpu_load, from a binary held in memory. */
dpu_error_t dpu_load_from_memory(struct dpu_set_t dpu_set, uint8_t *buffer, size_t buffer_size,
                                 struct dpu_program_t **program);

/* Same as dpu_load, from a binary embedded by DPU_INCBIN. */
dpu_error_t dpu_load_from_incbin(struct dpu_set_t dpu_set, struct dpu_incbin_t *incbin,
                                 struct dpu_program_t **program);

/*
 * Looks `symbol_name` up (exact name, every ELF symbol) in `program`: DPU_ERR_UNKNOWN_SYMBOL if absent. The size
 * of DPU_MRAM_HEAP_POINTER_NAME is the rest of MRAM.
 */
dpu_error_t dpu_get_symbol(struct dpu_program_t *program, const char *symbol_name, struct dpu_symbol_t *symbol);

/* ---- Execution ------------------------------------------------------------------------------------------ */

/*
 * Boots the DPUs of the set. DPU_SYNCHRONOUS returns when all have stopped (DPU_ERR_DPU_FAULT if one faulted);
 * DPU_ASYNCHRONOUS returns once they are booted (see dpu_sync, dpu_status).
 * Errors: DPU_ERR_DPU_ALREADY_RUNNING, DPU_ERR_INVALID_LAUNCH_POLICY, DPU_ERR_NO_PROGRAM_LOADED.
 */
dpu_error_t dpu_launch(struct dpu_set_t dpu_set, dpu_launch_policy_t policy);

/* Waits for every queued asynchronous job on the set's ranks; their errors carry DPU_ERR_ASYNC_JOBS. */
dpu_error_t dpu_sync(struct dpu_set_t dpu_set);

/* `*done`: every DPU of the set has finished; `*fault`: some DPU of the set is in fault. */
dpu_error_t dpu_status(struct dpu_set_t dpu_set, bool *done, bool *fault);

/* ---- Transfers ------------------------------------------------------------------------------------------ */
/*
 * Symbols are checked for bounds first (symbol_offset + length > symbol size: DPU_ERR_INVALID_SYMBOL_ACCESS),
 * then for alignment: WRAM offset and length multiples of 4 (DPU_ERR_INVALID_WRAM_ACCESS), MRAM multiples of 8
 * (DPU_ERR_INVALID_MRAM_ACCESS), IRAM multiples of 8 (DPU_ERR_INVALID_IRAM_ACCESS). A name is resolved in the
 * set's common program (DPU_ERR_NO_PROGRAM_LOADED, DPU_ERR_DIFFERENT_DPU_PROGRAMS).
 */

/* Copies `src` to `symbol_name + symbol_offset` of every DPU of the set (as dpu_broadcast_to, DPU_XFER_DEFAULT). */
dpu_error_t dpu_copy_to(struct dpu_set_t dpu_set, const char *symbol_name, uint32_t symbol_offset, const void *src,
                        size_t length);

/* Copies from `symbol_name + symbol_offset` of a single DPU (any other set: DPU_ERR_INVALID_DPU_SET). */
dpu_error_t dpu_copy_from(struct dpu_set_t dpu_set, const char *symbol_name, uint32_t symbol_offset, void *dst,
                          size_t length);

dpu_error_t dpu_copy_to_symbol(struct dpu_set_t dpu_set, struct dpu_symbol_t symbol, uint32_t symbol_offset,
                               const void *src, size_t length);

dpu_error_t dpu_copy_from_symbol(struct dpu_set_t dpu_set, struct dpu_symbol_t symbol, uint32_t symbol_offset,
                                 void *dst, size_t length);

/* Copies `src` to every DPU of the set; DPU_XFER_ASYNC is allowed. */
dpu_error_t dpu_broadcast_to(struct dpu_set_t dpu_set, const char *symbol_name, uint32_t symbol_offset,
                             const void *src, size_t length, dpu_xfer_flags_t flags);

dpu_error_t dpu_broadcast_to_symbol(struct dpu_set_t dpu_set, struct dpu_symbol_t symbol, uint32_t symbol_offset,
                                    const void *src, size_t length, dpu_xfer_flags_t flags);

/*
 * Sets `buffer` as the host buffer of every enabled DPU of the set for the next dpu_push_xfer (NULL clears it;
 * a second call overrides). The buffers are kept per rank. A disabled single DPU: DPU_ERR_DPU_DISABLED.
 */
dpu_error_t dpu_prepare_xfer(struct dpu_set_t dpu_set, void *buffer);

/*
 * Transfers `length` bytes between each DPU's prepared buffer and its `symbol_name + symbol_offset`; DPUs with
 * no prepared buffer are skipped. The prepared buffers are cleared afterwards unless flags == DPU_XFER_NO_RESET.
 * DPU_XFER_PARALLEL is for WRAM only (else DPU_ERR_INVALID_PARALLEL_MEMORY_TRANSFER).
 */
dpu_error_t dpu_push_xfer(struct dpu_set_t dpu_set, dpu_xfer_t xfer, const char *symbol_name, uint32_t symbol_offset,
                          size_t length, dpu_xfer_flags_t flags);

dpu_error_t dpu_push_xfer_symbol(struct dpu_set_t dpu_set, dpu_xfer_t xfer, struct dpu_symbol_t symbol,
                                 uint32_t symbol_offset, size_t length, dpu_xfer_flags_t flags);

/*
 * Scatter/gather between host blocks (asked from `get_block_info`, per DPU index in the set) and `length` bytes
 * of an MRAM symbol of each DPU. Rank sets only; needs the profile's sgXferEnable=true.
 * Errors: DPU_ERR_SG_NOT_MRAM_SYMBOL, DPU_ERR_SG_NOT_ACTIVATED, DPU_ERR_SG_TOO_MANY_BLOCKS,
 * DPU_ERR_SG_LENGTH_MISMATCH (unless DPU_SG_XFER_DISABLE_LENGTH_CHECK), DPU_ERR_INTERNAL for a single DPU.
 */
dpu_error_t dpu_push_sg_xfer(struct dpu_set_t dpu_set, dpu_xfer_t xfer, const char *symbol_name,
                             uint32_t symbol_offset, size_t length, get_block_t *get_block_info,
                             dpu_sg_xfer_flags_t flags);

dpu_error_t dpu_push_sg_xfer_symbol(struct dpu_set_t dpu_set, dpu_xfer_t xfer, struct dpu_symbol_t symbol,
                                    uint32_t symbol_offset, size_t length, get_block_t *get_block_info,
                                    dpu_sg_xfer_flags_t flags);

/* ---- Callbacks and logs --------------------------------------------------------------------------------- */

/*
 * Calls `callback(rank_set, rank_index, args)` once per rank of the set (or once with the whole set under
 * DPU_CALLBACK_SINGLE_CALL). DPU_CALLBACK_NONBLOCKING without DPU_CALLBACK_ASYNC:
 * DPU_ERR_NONBLOCKING_SYNC_CALLBACK.
 */
dpu_error_t dpu_callback(struct dpu_set_t dpu_set, dpu_error_t (*callback)(struct dpu_set_t, uint32_t, void *),
                         void *args, dpu_callback_flags_t flags);

/* Writes the DPU's printf output of its last launch to `stream`. Single DPU only. */
dpu_error_t dpu_log_read(struct dpu_set_t set, FILE *stream);

/* ---- Iteration (behind DPU_FOREACH and DPU_RANK_FOREACH) ------------------------------------------------ */

/*
 * The macros below read the iterators' fields directly, so these layouts are ABI (48 and 88 bytes on LP64).
 * `next` is the current element, valid while `has_next` is true; `count` is its index among the elements
 * yielded (ranks, or enabled DPUs); `next_idx` is the iterator's private position.
 */
struct dpu_set_rank_iterator_t {
    struct dpu_set_t *set;
    uint32_t count;
    uint32_t next_idx;
    bool has_next;
    struct dpu_set_t next;
};

struct dpu_set_dpu_iterator_t {
    struct dpu_set_rank_iterator_t rank_iterator;
    uint32_t count;
    uint32_t next_idx;
    bool has_next;
    struct dpu_set_t next;
};

/* An iterator whose `next` is the set's first rank (a DPU_SET_RANKS view of one rank of `*set`). */
struct dpu_set_rank_iterator_t dpu_set_rank_iterator_from(struct dpu_set_t *set);
/* Moves to the next rank, or clears `has_next`. */
void dpu_set_rank_iterator_next(struct dpu_set_rank_iterator_t *iterator);

/* An iterator whose `next` is the set's first enabled DPU (a DPU_SET_DPU set). */
struct dpu_set_dpu_iterator_t dpu_set_dpu_iterator_from(struct dpu_set_t *set);
/* Moves to the next enabled DPU, or clears `has_next`. */
void dpu_set_dpu_iterator_next(struct dpu_set_dpu_iterator_t *iterator);

/* ---- Macros --------------------------------------------------------------------------------------------- */

/*
 * DPU_FOREACH(set, dpu) / DPU_FOREACH(set, dpu, i): loops over the enabled DPUs of `set` (an lvalue), rank by
 * rank then by DPU index in the rank. `dpu` (a struct dpu_set_t lvalue) receives each DPU as a DPU_SET_DPU set;
 * `i` (an integer lvalue) receives its index 0, 1, ... among the enabled DPUs.
 */
#define DPU_FOREACH(set, ...)                                                                                        \
    _DPU_FOREACH_VARIANT(__VA_ARGS__, _DPU_FOREACH_WRONG_NR_OF_ARGUMENTS, _DPU_FOREACH_WRONG_NR_OF_ARGUMENTS,        \
        _DPU_FOREACH_WRONG_NR_OF_ARGUMENTS, _DPU_FOREACH_I, _DPU_FOREACH_X, _DPU_FOREACH_WRONG_NR_OF_ARGUMENTS)      \
    (set, __VA_ARGS__)

#define _DPU_FOREACH_X(set, dpu)                                                                                     \
    for (struct dpu_set_dpu_iterator_t __dpu_it = dpu_set_dpu_iterator_from(&(set));                                 \
         ((dpu) = __dpu_it.next), __dpu_it.has_next; dpu_set_dpu_iterator_next(&__dpu_it))

#define _DPU_FOREACH_I(set, dpu, i)                                                                                  \
    for (struct dpu_set_dpu_iterator_t __dpu_it = dpu_set_dpu_iterator_from(&(set));                                 \
         ((i) = __dpu_it.count), ((dpu) = __dpu_it.next), __dpu_it.has_next; dpu_set_dpu_iterator_next(&__dpu_it))

/*
 * DPU_RANK_FOREACH(set, rank) / DPU_RANK_FOREACH(set, rank, i): loops over the ranks of `set` (an lvalue).
 * `rank` receives each rank as a DPU_SET_RANKS set of one rank, a view into `set` (not to be freed); `i` its index.
 */
#define DPU_RANK_FOREACH(set, ...)                                                                                   \
    _DPU_FOREACH_VARIANT(__VA_ARGS__, _DPU_RANK_FOREACH_WRONG_NR_OF_ARGUMENTS,                                      \
        _DPU_RANK_FOREACH_WRONG_NR_OF_ARGUMENTS, _DPU_RANK_FOREACH_WRONG_NR_OF_ARGUMENTS, _DPU_RANK_FOREACH_I,       \
        _DPU_RANK_FOREACH_X, _DPU_RANK_FOREACH_WRONG_NR_OF_ARGUMENTS)                                                \
    (set, __VA_ARGS__)

#define _DPU_RANK_FOREACH_X(set, rank)                                                                               \
    for (struct dpu_set_rank_iterator_t __rank_it = dpu_set_rank_iterator_from(&(set));                             \
         ((rank) = __rank_it.next), __rank_it.has_next; dpu_set_rank_iterator_next(&__rank_it))

#define _DPU_RANK_FOREACH_I(set, rank, i)                                                                            \
    for (struct dpu_set_rank_iterator_t __rank_it = dpu_set_rank_iterator_from(&(set));                             \
         ((i) = __rank_it.count), ((rank) = __rank_it.next), __rank_it.has_next;                                    \
         dpu_set_rank_iterator_next(&__rank_it))

/*
 * DPU_CHECK(statement, on_error): evaluates `statement` (a dpu_error_t); if it is not DPU_OK, prints
 * "<file>:<line>(<function>): DPU Error (<description>)" on stderr and runs `on_error`.
 */
#define DPU_CHECK(statement, on_error)                                                                               \
    do {                                                                                                             \
        dpu_error_t __dpu_error = (statement);                                                                       \
        if (__dpu_error != DPU_OK) {                                                                                 \
            char *__dpu_error_string = dpu_error_to_string(__dpu_error);                                             \
            fprintf(stderr, "%s:%d(%s): DPU Error (%s)\n", __FILE__, __LINE__, __func__,                             \
                __dpu_error_string != NULL ? __dpu_error_string : "unknown error");                                  \
            free(__dpu_error_string);                                                                                \
            on_error;                                                                                                \
        }                                                                                                            \
    } while (0)

/* DPU_ASSERT(statement): DPU_CHECK that exits the program with EXIT_FAILURE. */
#define DPU_ASSERT(statement) DPU_CHECK(statement, exit(EXIT_FAILURE))

/*
 * DPU_INCBIN(name, file), at file scope: embeds the file `file` (a string literal; relative paths are resolved
 * by the assembler from the compiler's working directory) in section .rodata.dpu_incbin, and defines
 *   - `dpu_incbin_<name>`: the file's bytes;
 *   - `dpu_incbin_<name>_size`: a size_t holding their number;
 *   - `struct dpu_incbin_t name` = { dpu_incbin_<name>, its size, file }, for dpu_load_from_incbin.
 * All three are global symbols (C linkage in C++ too), defined by the assembler so that the size is a constant.
 * The expansion ends with a semicolon, as the SDK's does, so `DPU_INCBIN(name, file)` needs none after it.
 */
#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 4
#define _DPU_INCBIN_WORD ".long"
#else
#define _DPU_INCBIN_WORD ".quad"
#endif
#ifdef __cplusplus
#define _DPU_INCBIN_EXTERN extern "C"
#else
#define _DPU_INCBIN_EXTERN extern
#endif

#define DPU_INCBIN(name, file)                                                                                       \
    __asm__(".pushsection .rodata.dpu_incbin, \"a\"\n"                                                               \
            ".balign 16\n"                                                                                           \
            ".globl dpu_incbin_" #name "\n"                                                                          \
            ".type dpu_incbin_" #name ", %object\n"                                                                  \
            "dpu_incbin_" #name ":\n"                                                                                \
            ".incbin \"" file "\"\n"                                                                                 \
            ".Ldpu_incbin_end_" #name ":\n"                                                                          \
            ".size dpu_incbin_" #name ", .Ldpu_incbin_end_" #name " - dpu_incbin_" #name "\n"                        \
            ".Ldpu_incbin_path_" #name ":\n"                                                                         \
            ".asciz \"" file "\"\n"                                                                                  \
            ".balign 8\n"                                                                                            \
            ".globl dpu_incbin_" #name "_size\n"                                                                     \
            ".type dpu_incbin_" #name "_size, %object\n"                                                             \
            "dpu_incbin_" #name "_size:\n"                                                                           \
            "\t" _DPU_INCBIN_WORD " .Ldpu_incbin_end_" #name " - dpu_incbin_" #name "\n"                             \
            ".size dpu_incbin_" #name "_size, . - dpu_incbin_" #name "_size\n"                                       \
            ".popsection\n"                                                                                          \
            ".pushsection .data, \"aw\"\n"                                                                           \
            ".balign 8\n"                                                                                            \
            ".globl " #name "\n"                                                                                     \
            ".type " #name ", %object\n" #name ":\n"                                                                 \
            "\t" _DPU_INCBIN_WORD " dpu_incbin_" #name "\n"                                                          \
            "\t" _DPU_INCBIN_WORD " .Ldpu_incbin_end_" #name " - dpu_incbin_" #name "\n"                             \
            "\t" _DPU_INCBIN_WORD " .Ldpu_incbin_path_" #name "\n"                                                   \
            ".size " #name ", . - " #name "\n"                                                                       \
            ".popsection\n");                                                                                        \
    _DPU_INCBIN_EXTERN const uint8_t dpu_incbin_##name[];                                                            \
    _DPU_INCBIN_EXTERN const size_t dpu_incbin_##name##_size;                                                        \
    _DPU_INCBIN_EXTERN struct dpu_incbin_t name;

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_H */
