/*
 * The contract between a simulated DPU kernel, the worker harness that runs it and the host.
 *
 * A simulated DPU binary is a native executable with the DPU's memory map:
 *   - WRAM: one 64 KiB window at DPUSIM_WRAM_BASE holding the kernel's rodata, data, __host variables and bss,
 *     then the nominal tasklet stacks, then the mem_alloc heap (exactly the SDK linker script's order);
 *   - MRAM: the DPU's own window at DPUSIM_MRAM_BASE (0x08000000) holding __mram and __mram_noinit variables,
 *     then the MRAM heap from __sys_used_mram_end;
 *   - native tasklet stacks below 4 GiB at DPUSIM_STACK_BASE, so that (uint32_t) casts of stack addresses work.
 * The worker maps DPU d's slice of the shared WRAM and MRAM files over the windows before running it.
 *
 * Everything named __dpusim_* is internal: kernels use the SDK headers beside this directory.
 * The host mirrors the shared-memory structures below in Rust (upmem-sim `layout` module); a test compares
 * their sizes and offsets with this header.
 */
#ifndef DPUSIM_ABI_H
#define DPUSIM_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Memory map --------------------------------------------------------------------------------------- */

#define DPUSIM_WRAM_BASE 0x00100000u
#define DPUSIM_WRAM_WINDOW (1u << 20)         /* reserved around WRAM so out-of-range accesses fault */
#define DPUSIM_MRAM_BASE 0x08000000u
#define DPUSIM_MRAM_WINDOW (64u << 20)
#define DPUSIM_STACK_BASE 0x0C000000u
#define DPUSIM_NATIVE_STACK_SIZE (1u << 20)   /* native stack per tasklet; the DPU's nominal stack is smaller */
#define DPUSIM_STACK_GUARD (64u << 10)        /* PROT_NONE below each native stack */
#define DPUSIM_MAX_TASKLETS 24
#define DPUSIM_WRAM_SIZE (64u << 10)
#define DPUSIM_MRAM_SIZE (64u << 20)
#define DPUSIM_DMA_MAX 2048u

/* The DPU's clock and timing model (see the crate docs, "Timing model"): a tasklet issues at most one instruction
 * every DPUSIM_PIPELINE_DEPTH cycles and the DPU at most one per cycle; the DMA engine serves one transfer at a
 * time in alpha + bytes / 2 cycles (the PrIM measurements) and its issuer waits until the transfer completes. */
#define DPUSIM_CLOCK_HZ 350000000u
#define DPUSIM_DMA_READ_ALPHA 77u
#define DPUSIM_DMA_WRITE_ALPHA 61u
#define DPUSIM_PIPELINE_DEPTH 11u

/* ---- What the kernel object tells the harness ---------------------------------------------------------- */

struct dpusim_kernel_info {
    uint32_t magic;                                 /* DPUSIM_KERNEL_MAGIC */
    uint32_t abi_version;                           /* DPUSIM_ABI_VERSION */
    uint32_t nr_tasklets;                           /* NR_TASKLETS the kernel was built with */
    uint32_t stdout_capacity;                       /* STDOUT_BUFFER_INIT, or the SDK's 1 MiB default */
    uint32_t stack_sizes[DPUSIM_MAX_TASKLETS];      /* nominal WRAM stack per tasklet (0 = inactive) */
};

#define DPUSIM_KERNEL_MAGIC 0x44505553u /* "DPUS" */
#define DPUSIM_ABI_VERSION 4u

/* Defined in the kernel object (the runtime's part); kept global when the kernel's other symbols are hidden. */
extern const struct dpusim_kernel_info __dpusim_kernel_info;
int __dpusim_kernel_main(void);

/* Defined by the linker script: the kernel's static WRAM (rodata, data, __host, bss) and the MRAM heap start. */
extern char __dpusim_wram_begin[], __dpusim_wram_static_end[];
extern char __sys_used_mram_end[];

/* ---- Services of the harness (defined in harness.c, called by the runtime headers) ---------------------- */

/* The running tasklet's id, 0..NR_TASKLETS-1. */
extern uint32_t __dpusim_tasklet_id;

enum dpusim_fault_kind {
    DPUSIM_FAULT_NONE = 0,
    DPUSIM_FAULT_DMA = 1,              /* mram_read/mram_write: size, alignment or range */
    DPUSIM_FAULT_MEMORY = 2,           /* a load or store outside WRAM/MRAM */
    DPUSIM_FAULT_HEAP_FULL = 3,        /* runtime fault 1 */
    DPUSIM_FAULT_DIVISION_BY_ZERO = 4, /* runtime fault 2 */
    DPUSIM_FAULT_ASSERT = 5,           /* runtime fault 3 */
    DPUSIM_FAULT_HALT = 6,             /* runtime fault 4 */
    DPUSIM_FAULT_PRINTF_OVERFLOW = 7,  /* runtime fault 5 */
    DPUSIM_FAULT_WRONG_ALIGNMENT = 8,  /* runtime fault 8 (mram_write_unaligned) */
    DPUSIM_FAULT_DEADLOCK = 9,         /* every live tasklet blocked */
    DPUSIM_FAULT_TIMEOUT = 10,         /* ran past the hang limit */
    DPUSIM_FAULT_STACK_OVERFLOW = 11,  /* a tasklet ran off its native stack */
    DPUSIM_FAULT_SIGNAL = 12,          /* any other signal (illegal instruction, trap, abort, ...) */
    DPUSIM_FAULT_SYNC_MISUSE = 13,     /* strict mode: unlocking a free mutex, ...; a handshake id past 23 */
    DPUSIM_FAULT_TOO_MANY_TASKLETS = 14,
    DPUSIM_FAULT_WRAM_OVERFLOW = 15,   /* globals + nominal stacks do not fit in WRAM */
    DPUSIM_FAULT_ABORT = 16,           /* the kernel called abort() or exit() with a non-zero status */
    DPUSIM_FAULT_WORKER_LOST = 17,     /* the worker process died without saying why (host-side) */
};

/* Puts the DPU in fault and never returns. address/value give what was wrong (an address, a size, ...). */
__attribute__((noreturn, format(printf, 4, 5))) void
__dpusim_fault(uint32_t kind, uint64_t address, uint64_t value, const char *format, ...);

/* The end of the nominal stacks of every tasklet, which follow the static WRAM. The mem_alloc heap starts 8 bytes
 * per tasklet later (the SDK's software-cache buffer, see alloc.c). */
void *__dpusim_heap_start(void);

/* The DPU's WRAM size in bytes, as configured (64 KiB unless the profile says otherwise). */
uint32_t __dpusim_wram_size(void);

/* Is strict mode on (fault on what the documentation forbids but the hardware tolerates)? */
bool __dpusim_strict(void);

/* DMA between MRAM and WRAM as mram_read/mram_write issue it, with the DPU's checks and the timing model: `size`
 * is the kernel's, which the ldma/sdma length field reads as __dpusim_dma_length says. */
void __dpusim_mram_read(const void *mram, void *wram, uint32_t size);
void __dpusim_mram_write(const void *wram, void *mram, uint32_t size);

/* The bytes one ldma/sdma moves when the SDK's compiler issues it for a run-time size: ((size >> 3) - 1) goes
 * into the instruction's 8-bit length field, which counts 8-byte blocks minus one, so the engine moves the size
 * rounded down to a multiple of 8, modulo 2,048, with 2,048 for 0 to 7 bytes (see dma.c). */
static inline uint32_t __dpusim_dma_length(uint32_t size)
{
    return ((((size >> 3) - 1u) & 0xFFu) + 1u) * 8u;
}

/* One ldma (or sdma, with DPUSIM_DMA_TO_MRAM) that a runtime routine issues itself, named `routine` in messages:
 * `length` is what its length field makes the engine move (8 to 2,048 bytes, a multiple of 8). The addresses
 * are checked and read as for mram_read/mram_write. DPUSIM_DMA_READ_AHEAD: the routine reads ahead of what the
 * kernel asked for (seqread's second page), so bytes past the end of MRAM are read as the engine reads them
 * (from offset 0) without a warning or, in strict mode, a fault. */
#define DPUSIM_DMA_TO_MRAM 1u
#define DPUSIM_DMA_READ_AHEAD 2u
void __dpusim_dma(const char *routine, uint32_t flags, const void *mram, void *wram, uint32_t length);

/* Defines `name`, a string constant of the runtime's C kept out of the DPU's WRAM window (where the runtime's other
 * read-only data goes, as on a DPU): the text of a message that the SDK's runtime does not have, such as a warning
 * or a fault's explanation, must not take WRAM from the kernel. */
#define DPUSIM_MESSAGE(name, text) static const char name[] __attribute__((section(".dpusim.messages"))) = text

/* Prints "kernel K, DPU d, tasklet t: <message>" to standard error once per worker process for each (kind, key),
 * kind being a string constant compared by address: what a DPU does with something that is most likely a bug. */
__attribute__((format(printf, 3, 4))) void __dpusim_warn_once(const char *kind, uint64_t key, const char *format,
                                                              ...);

/* Synchronisation. Keys are arbitrary pointer values: equal values are the same lock (NULL included). */
void __dpusim_mutex_lock(const void *key);
bool __dpusim_mutex_trylock(const void *key);
void __dpusim_mutex_unlock(const void *key);
/* vmutex: bit `bit` (0..7) of the bitfield byte `byte`, guarded by the atomic bit `guard`. */
void __dpusim_vmutex_lock(uint8_t *byte, uint32_t bit, const void *guard);
void __dpusim_vmutex_unlock(uint8_t *byte, uint32_t bit, const void *guard);
/* barrier: the SDK's 4-byte barrier_t {wait_queue, count, initial_count, lock}. */
void __dpusim_barrier_wait(void *barrier);
/* semaphore: the SDK's 4-byte sem_t, same layout; count is a signed byte. */
void __dpusim_sem_take(void *semaphore);
void __dpusim_sem_give(void *semaphore);
/* handshake: `entries` is the SDK's 24-byte __handshake_array in WRAM (entry n: who waits for tasklet n). */
void __dpusim_handshake_notify(uint8_t *entries);
int __dpusim_handshake_wait_for(uint32_t notifier, uint8_t *entries);
/* handshake_wait_for's results are the DPU libc's error numbers (errno.h of the SDK 2025.1), not the host's. */
#define DPUSIM_DPU_EALREADY 7
#define DPUSIM_DPU_EINVAL 28

/* The DPU's one performance counter: modelled cycles or the DPU's executed instructions since the last reset, read
 * as the v1A `time` instruction reads it (a multiple of 16 below 2^36). */
uint64_t __dpusim_perfcounter_config(uint32_t config, bool reset, bool v1b);
uint64_t __dpusim_perfcounter_get(void);
/* v1B's perfcounter_get_both: the cycle and instruction counts, as `time` reads them. */
void __dpusim_perfcounter_get_both(bool reset, uint64_t *cycles, uint64_t *instructions);

/* Calls function(argument) on a stack of the harness: runtime work that a DPU does not do on the tasklet's stack
 * (formatting printf messages) does not count as the tasklet's stack use. */
void __dpusim_on_service_stack(void (*function)(void *), void *argument);

/* Appends to the DPU's log (what the host reads with dpu_log_read). */
void __dpusim_log_write(const char *text, size_t length);

/* Ends the calling tasklet normally (what returning from main does). */
__attribute__((noreturn)) void __dpusim_tasklet_exit(void);

/* Charges the running tasklet `instructions` DPU instructions of an SDK runtime routine that is not instrumented
 * (the runtime's own C files); never switches tasklets. */
void __dpusim_charge(uint32_t instructions);

/* Instrumentation: the kernel's code calls this at the start of every basic block (-fsanitize-coverage=trace-pc).
 * Tables the kernel builder computes from the kernel object's disassembly, indexed by the call's return address
 * less __dpusim_kernel_text (its site): __dpusim_site_instructions, the block's DPU instructions, and
 * __dpusim_site_runs, its runs in the current launch; and by block (block 0 is no block: all zero)
 * __dpusim_block_sites, each block's site, and __dpusim_block_classes, its instructions by class (the order of
 * upmem_sim::InstructionClass). */
#define DPUSIM_INSTRUCTION_CLASSES 21
/* On x86-64 it preserves every register (harness/hook.S), which dpusim/coverage_hook.h tells clang-built kernels. */
void __sanitizer_cov_trace_pc(void);
extern const uint32_t __dpusim_site_instructions[];
extern uint64_t __dpusim_site_runs[];
extern const uint32_t __dpusim_block_sites[];
extern const uint32_t __dpusim_block_classes[][DPUSIM_INSTRUCTION_CLASSES];
/* The class of the SDK runtime's routines (upmem_sim::InstructionClass::SdkRoutine). */
#define DPUSIM_CLASS_SDK_ROUTINE 19
extern const uint32_t __dpusim_nr_blocks;
extern char __dpusim_kernel_text[];

/* ---- Shared memory between the host and the workers ------------------------------------------------------ */

enum dpusim_dpu_state {
    DPUSIM_DPU_IDLE = 0,
    DPUSIM_DPU_QUEUED = 1,
    DPUSIM_DPU_RUNNING = 2,
    DPUSIM_DPU_DONE = 3,
    DPUSIM_DPU_FAULT = 4,
};

#define DPUSIM_NO_TASKLET 0xFFFFFFFFu
#define DPUSIM_NO_DPU 0xFFFFFFFFu
#define DPUSIM_MESSAGE_SIZE 256

struct dpusim_fault {
    uint32_t kind;     /* enum dpusim_fault_kind */
    uint32_t tasklet;  /* DPUSIM_NO_TASKLET when no tasklet was running */
    uint64_t address;  /* the offending address, or 0 */
    uint64_t value;    /* the offending size/value, or 0 */
    uint64_t pc;       /* native program counter, when a signal gave one */
    int32_t signal;    /* the signal number, or 0 */
    uint32_t reserved;
    char message[DPUSIM_MESSAGE_SIZE];
};

struct dpusim_tasklet_stats {
    uint64_t dma_read_ops;
    uint64_t dma_read_bytes;
    uint64_t dma_write_ops;
    uint64_t dma_write_bytes;
    uint64_t sync_waits;   /* times the tasklet blocked at a barrier, mutex, semaphore or handshake */
    uint64_t instructions; /* DPU instructions the tasklet executed */
    uint64_t cycles;       /* modelled cycle at which the tasklet finished */
};

struct dpusim_dpu_record {
    uint32_t state;        /* enum dpusim_dpu_state */
    uint32_t nr_tasklets;  /* tasklets of the last launch */
    uint64_t launches;     /* completed launches since the machine was made */
    uint64_t cycles;       /* modelled cycles of the last launch */
    uint64_t dma_cycles;   /* cycles the DMA engine was busy */
    uint64_t instructions; /* DPU instructions executed by all tasklets */
    uint64_t native_ns;    /* wall time the worker spent running the launch */
    uint64_t switches;     /* context switches between tasklets and the scheduler in the last launch */
    uint64_t log_length;   /* bytes written to the log in the last launch (the log keeps the last capacity) */
    uint64_t log_capacity; /* the ring's size for the last launch */
    /* DPU instructions of all tasklets by class (upmem_sim::InstructionClass); they add up to `instructions` */
    uint64_t class_instructions[DPUSIM_INSTRUCTION_CLASSES];
    struct dpusim_fault fault;
    struct dpusim_tasklet_stats tasklets[DPUSIM_MAX_TASKLETS];
};

struct dpusim_worker_slot {
    int32_t pid;
    uint32_t current_dpu; /* DPUSIM_NO_DPU when idle */
    uint64_t dpus_run;
};

#define DPUSIM_CONTROL_MAGIC 0x444d4953554d4953ull /* "SIMUSIMD" */
#define DPUSIM_FLAG_STRICT 1u
/* How a worker interleaves a DPU's tasklets (struct dpusim_control.schedule). */
#define DPUSIM_SCHEDULE_FAST 0u     /* each tasklet runs until it blocks, round robin */
#define DPUSIM_SCHEDULE_MODELLED 1u /* by modelled time: the tasklet furthest behind runs */
#define DPUSIM_SCHEDULE_SHUFFLE 2u  /* modelled time perturbed by a seeded generator */
#define DPUSIM_MAX_WORKERS 256

/* The first page of the control file; the job list, worker slots and DPU records follow at the offsets given. */
struct dpusim_control {
    uint64_t magic;
    uint32_t abi_version;
    uint32_t nr_dpus;
    uint64_t wram_size;       /* per DPU, bytes */
    uint64_t mram_size;       /* per DPU, bytes */
    uint64_t log_size;        /* per DPU, bytes */
    uint32_t flags;           /* DPUSIM_FLAG_* */
    uint32_t hang_limit_ms;   /* 0: none */
    uint64_t job_list_offset; /* uint32_t dpu ids, nr_dpus of them */
    uint64_t workers_offset;  /* struct dpusim_worker_slot[DPUSIM_MAX_WORKERS] */
    uint64_t records_offset;  /* struct dpusim_dpu_record[nr_dpus] */
    uint64_t record_size;     /* sizeof(struct dpusim_dpu_record), checked by the worker */
    uint64_t job_generation;
    uint32_t job_count;
    uint32_t job_next;        /* claimed with an atomic fetch-and-add by the workers */
    uint32_t schedule;        /* DPUSIM_SCHEDULE_* */
    uint32_t reserved;
    uint64_t shuffle_seed;    /* DPUSIM_SCHEDULE_SHUFFLE: mixed with each DPU's index */
};

/*
 * Broadcasts without copies. Bytes sent to many DPUs are written once into the shared-pages file; each target
 * DPU's overlay lists the MRAM ranges backed by it. A worker maps those pages read-only over the DPU's MRAM
 * window, and a kernel write to one of them makes that page the DPU's own (copied into the DPU's MRAM, mapped
 * read-write, marked in `owned`): copy-on-write per page. The host reads and writes through the same overlay.
 */
#define DPUSIM_PAGE_SIZE 4096u
#define DPUSIM_OVERLAY_RANGES 4
#define DPUSIM_OVERLAY_STRIDE 4096u

struct dpusim_overlay_range {
    uint32_t mram_offset;   /* page-aligned offset in MRAM */
    uint32_t pages;
    uint64_t shared_offset; /* page-aligned offset in the shared-pages file */
};

struct dpusim_overlay {
    uint32_t nr_ranges;
    uint32_t reserved;
    struct dpusim_overlay_range ranges[DPUSIM_OVERLAY_RANGES];
    uint8_t owned[DPUSIM_MRAM_WINDOW / DPUSIM_PAGE_SIZE / 8]; /* bit p: MRAM page p is the DPU's own */
};

/* The worker's command line and file descriptors. */
#define DPUSIM_WORKER_FLAG "--dpusim-worker"
#define DPUSIM_FD_CONTROL 3
#define DPUSIM_FD_WRAM 4
#define DPUSIM_FD_MRAM 5
#define DPUSIM_FD_LOG 6
#define DPUSIM_FD_CHANNEL 7
#define DPUSIM_FD_SHARED 8  /* pages shared by several DPUs (broadcasts), see struct dpusim_overlay */
#define DPUSIM_FD_OVERLAY 9 /* struct dpusim_overlay per DPU, DPUSIM_OVERLAY_STRIDE bytes apart */
/* Bytes on the channel: the host sends RUN, the worker answers DONE when the job list is exhausted. */
#define DPUSIM_CMD_RUN 'R'
#define DPUSIM_REPLY_READY 'Y'
#define DPUSIM_REPLY_DONE 'D'
#define DPUSIM_EXIT_FAULT 70

#endif
