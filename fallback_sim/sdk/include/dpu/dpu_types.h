/*
 * dpu_types.h: types, enums and constants of the host API (upmem-sim's libdpu-compatible headers).
 *
 * Layouts and values are the UPMEM SDK 2025.1 ones (measured with gcc on x86-64 against the SDK's headers);
 * tests/abi/abi_check.c checks every one of them.
 */
#ifndef UPMEM_SIM_DPU_TYPES_H
#define UPMEM_SIM_DPU_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dpu_target.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Scalars -------------------------------------------------------------------------------------------- */

typedef uint16_t dpu_rank_id_t;
typedef uint32_t dpu_id_t;
typedef uint8_t dpu_slice_id_t;
typedef uint8_t dpu_member_id_t;
typedef uint8_t dpu_thread_t;

/* Addresses and sizes as dpu_symbol_t carries them (any memory, in its ELF window; see dpu_get_symbol). */
typedef uint32_t dpu_mem_max_addr_t;
typedef uint32_t dpu_mem_max_size_t;

/* IRAM is addressed in instructions, WRAM in bytes or 32-bit words (as each function says), MRAM in bytes. */
typedef uint16_t iram_addr_t;
typedef uint16_t iram_size_t;
typedef uint32_t wram_addr_t;
typedef uint32_t wram_size_t;
typedef uint32_t mram_addr_t;
typedef uint32_t mram_size_t;

typedef uint64_t dpuinstruction_t;
typedef uint32_t dpuword_t;

/* ---- Constants ------------------------------------------------------------------------------------------ */

/* The thread (tasklet) that dpu_launch boots; the DPU runtime boots the others. */
#define DPU_BOOT_THREAD 0
/* Control interfaces (CIs, "slices") per rank, and DPUs ("members") per CI, at most. */
#define DPU_MAX_NR_CIS 8
#define DPU_MAX_NR_DPUS_PER_CI 8

/* Symbol whose address is the start of the MRAM heap; its size is the rest of MRAM. */
#define DPU_MRAM_HEAP_POINTER_NAME "__sys_used_mram_end"

/* ---- Link configuration (members of dpu_hw_description_t) ----------------------------------------------- */

/* How the DIMM's wiring permutes data bits in each direction. */
struct dpu_bit_config {
    uint16_t cpu2dpu;
    uint16_t dpu2cpu;
    uint8_t nibble_swap;
    uint8_t stutter;
};

/* Timing of the commands between a control interface and its DPUs. */
struct dpu_carousel_config {
    uint8_t cmd_duration;
    uint8_t cmd_sampling;
    uint8_t res_duration;
    uint8_t res_sampling;
};

/* ---- Opaque handles ------------------------------------------------------------------------------------- */

/* A rank of DPUs and a DPU, owned by the library. */
struct dpu_rank_t;
struct dpu_t;
/* A loaded program, shared (reference-counted) by every DPU it was loaded into; see dpu_load. */
struct dpu_program_t;

/* ---- Sets ----------------------------------------------------------------------------------------------- */

enum dpu_set_kind_t {
    /* A list of ranks (what dpu_alloc returns, and each rank of DPU_RANK_FOREACH). */
    DPU_SET_RANKS = 0,
    /* A single DPU (each DPU of DPU_FOREACH). */
    DPU_SET_DPU = 1,
};
typedef enum dpu_set_kind_t dpu_set_kind_t;

/*
 * A set of DPUs, passed and returned by value (24 bytes on LP64). Programs read the union's members directly
 * (`dpulog_read_for_dpu(dpu.dpu, stdout)`), so it is anonymous.
 */
struct dpu_set_t {
    enum dpu_set_kind_t kind;
#ifdef __GNUC__
    __extension__ /* anonymous unions are C11 */
#endif
    union {
        /* kind == DPU_SET_RANKS */
        struct {
            uint32_t nr_ranks;
            struct dpu_rank_t **ranks;
        } list;
        /* kind == DPU_SET_DPU */
        struct dpu_t *dpu;
    };
};

/* ---- Program, symbols, embedded binaries ---------------------------------------------------------------- */

/*
 * A symbol of a loaded program: its address in the DPU's address windows (WRAM at 0x0, MRAM at 0x08000000,
 * IRAM at 0x80000000) and its size in bytes.
 */
struct dpu_symbol_t {
    dpu_mem_max_addr_t address;
    dpu_mem_max_size_t size;
};

/* A DPU binary embedded in the host program by DPU_INCBIN (dpu.h), loaded by dpu_load_from_incbin. */
struct dpu_incbin_t {
    uint8_t *buffer;
    size_t size;
    const char *path;
};

/* ---- Launch, transfers, callbacks ----------------------------------------------------------------------- */

/* How dpu_launch waits. Note the order: asynchronous is 0. */
typedef enum _dpu_launch_policy_t {
    DPU_ASYNCHRONOUS = 0,
    DPU_SYNCHRONOUS = 1,
} dpu_launch_policy_t;

/* Direction of dpu_push_xfer / dpu_push_sg_xfer. */
typedef enum _dpu_xfer_t {
    DPU_XFER_TO_DPU = 0,
    DPU_XFER_FROM_DPU = 1,
} dpu_xfer_t;

typedef enum _dpu_xfer_flags_t {
    /* Synchronous; the prepared buffers are cleared afterwards. */
    DPU_XFER_DEFAULT = 0,
    /* Keep the prepared buffers after the transfer (dpu_push_xfer compares flags == DPU_XFER_NO_RESET). */
    DPU_XFER_NO_RESET = 1,
    /* Return once the transfer is queued; buffers must live until dpu_sync. */
    DPU_XFER_ASYNC = 2,
    /* WRAM only: may run while the DPUs run. */
    DPU_XFER_PARALLEL = 4,
} dpu_xfer_flags_t;

typedef enum _dpu_sg_xfer_flags_t {
    DPU_SG_XFER_DEFAULT = 0,
    DPU_SG_XFER_ASYNC = 2,
    /* The blocks of a DPU may add up to less than the transfer's length. */
    DPU_SG_XFER_DISABLE_LENGTH_CHECK = 4,
} dpu_sg_xfer_flags_t;

typedef enum _dpu_callback_flags_t {
    /* Once per rank, in parallel; the call waits. */
    DPU_CALLBACK_DEFAULT = 0,
    DPU_CALLBACK_ASYNC = 1,
    /* Requires DPU_CALLBACK_ASYNC: does not block other API calls on the ranks. */
    DPU_CALLBACK_NONBLOCKING = 2,
    /* One call with the whole set instead of one per rank. */
    DPU_CALLBACK_SINGLE_CALL = 4,
    /* May overlap the DPUs' execution. */
    DPU_CALLBACK_PARALLEL = 8,
} dpu_callback_flags_t;

/* ---- Scatter/gather ------------------------------------------------------------------------------------- */

/* One host block of a scatter/gather transfer. */
struct sg_block_info {
    uint8_t *addr;
    uint32_t length;
};

/*
 * Fills `out` with block `block_index` of DPU `dpu_index` (the DPU's index in the whole set) and returns true,
 * or returns false when that DPU has no more blocks.
 */
typedef bool (*get_block_func_t)(struct sg_block_info *out, uint32_t dpu_index, uint32_t block_index, void *args);

/* The block callback of dpu_push_sg_xfer; `args_size` bytes of `args` are copied before an async call. */
typedef struct get_block_t {
    get_block_func_t f;
    void *args;
    size_t args_size;
} get_block_t;

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_TYPES_H */
