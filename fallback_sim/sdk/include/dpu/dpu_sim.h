/*
 * dpu_sim.h: upmem-sim's extensions to the host API. Not part of the UPMEM SDK, and not included by dpu.h.
 *
 * Test for DPU_SIM to use them in code that also builds against the SDK:
 *     #if __has_include(<dpu_sim.h>)   (or a build flag)
 *     #include <dpu_sim.h>
 *     #endif
 *     #ifdef DPU_SIM ... #endif
 */
#ifndef UPMEM_SIM_DPU_SIM_H
#define UPMEM_SIM_DPU_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <dpu.h>

#define DPU_SIM 1

#ifdef __cplusplus
extern "C" {
#endif

/* What one DPU did during its last launch, summed over its tasklets (all zero before the first launch). */
struct dpu_sim_stats {
    /* Modelled DPU cycles of the launch (see dpu_sim_timing). */
    uint64_t cycles;
    /* Cycles the DMA engine was busy: the sum of alpha + bytes / 2 over every transfer. */
    uint64_t dma_cycles;
    /* Bytes read from MRAM (mram_read) and written to MRAM (mram_write). */
    uint64_t dma_read_bytes;
    uint64_t dma_write_bytes;
    /* mram_read and mram_write calls. */
    uint64_t dma_read_ops;
    uint64_t dma_write_ops;
    /* Times a tasklet blocked at a barrier, mutex, semaphore or handshake. */
    uint64_t sync_waits;
    /* Tasklets of the last launch. */
    uint32_t nr_tasklets;
    /* Zero. */
    uint32_t reserved;
};

/*
 * Writes to `buffer` (at most `size` bytes, NUL included, truncated like snprintf) the simulator's explanation
 * of why the single DPU `dpu` is in fault: DPU id, tasklet, kind, message. An empty string when it is not in
 * fault. DPU_ERR_INVALID_DPU_SET unless `dpu` is a DPU_SET_DPU set.
 */
dpu_error_t dpu_sim_fault_reason(struct dpu_set_t dpu, char *buffer, size_t size);

/* Fills `*stats` for the single DPU `dpu`. DPU_ERR_INVALID_DPU_SET unless `dpu` is a DPU_SET_DPU set. */
dpu_error_t dpu_sim_stats(struct dpu_set_t dpu, struct dpu_sim_stats *stats);

#define DPU_SIM_MAX_TASKLETS 24

/*
 * The timing model's figures for one DPU's last launch: tasklets run on modelled time, from instruction counts
 * fixed when the kernel is built, so these are the same on every run (all zero before the first launch).
 */
struct dpu_sim_timing {
    /* Modelled DPU cycles: when the last tasklet finished. */
    uint64_t cycles;
    /* DPU instructions executed by all tasklets. */
    uint64_t instructions;
    /* Cycles the DMA engine was busy. */
    uint64_t dma_cycles;
    /* Tasklets of the last launch; the arrays below are valid up to it. */
    uint32_t nr_tasklets;
    /* Zero. */
    uint32_t reserved;
    /* Per tasklet: instructions executed (the launch's balance) and the cycle at which it finished. */
    uint64_t tasklet_instructions[DPU_SIM_MAX_TASKLETS];
    uint64_t tasklet_cycles[DPU_SIM_MAX_TASKLETS];
};

/* Fills `*timing` for the single DPU `dpu`. DPU_ERR_INVALID_DPU_SET unless `dpu` is a DPU_SET_DPU set. */
dpu_error_t dpu_sim_timing(struct dpu_set_t dpu, struct dpu_sim_timing *timing);

/* Classes of DPU instructions, by the operation they serve (upmem_sim::InstructionClass, same order). */
enum dpu_sim_instruction_class {
    DPU_SIM_CLASS_ALU = 0,            /* integer ALU operations and moves */
    DPU_SIM_CLASS_COMPARE_BRANCH = 1, /* compares, branches, calls, returns */
    DPU_SIM_CLASS_LOAD_STORE = 2,     /* WRAM loads and stores */
    DPU_SIM_CLASS_MUL8 = 3,           /* multiplies of extended 8-bit values: one byte multiply */
    DPU_SIM_CLASS_MUL16 = 4,          /* multiplies of extended 16-bit values: byte multiplies */
    DPU_SIM_CLASS_MUL32 = 5,          /* 32-bit multiply sequences */
    DPU_SIM_CLASS_MUL64 = 6,
    DPU_SIM_CLASS_DIV32 = 7,          /* 32-bit divide sequences */
    DPU_SIM_CLASS_DIV64 = 8,
    DPU_SIM_CLASS_FLOAT_ADD = 9,      /* software float and double routines */
    DPU_SIM_CLASS_FLOAT_MUL = 10,
    DPU_SIM_CLASS_FLOAT_DIV = 11,
    DPU_SIM_CLASS_FLOAT_COMPARE = 12,
    DPU_SIM_CLASS_DOUBLE_ADD = 13,
    DPU_SIM_CLASS_DOUBLE_MUL = 14,
    DPU_SIM_CLASS_DOUBLE_DIV = 15,
    DPU_SIM_CLASS_DOUBLE_COMPARE = 16,
    DPU_SIM_CLASS_FLOAT_CONVERT = 17, /* int <-> float, float <-> double */
    DPU_SIM_CLASS_DOUBLE_CONVERT = 18, /* int <-> double */
    DPU_SIM_CLASS_SDK_ROUTINE = 19,   /* the SDK runtime's routines: boot, synchronisation, DMA issue, ... */
    DPU_SIM_CLASS_STACK_LOAD_STORE = 20, /* stack loads and stores, most of them the host compiler's spills */
    DPU_SIM_INSTRUCTION_CLASSES = 21,
};

/* One DPU's last launch: DPU instructions of all its tasklets by class (they add up to the total). */
struct dpu_sim_instructions {
    uint64_t total;
    uint64_t by_class[DPU_SIM_INSTRUCTION_CLASSES];
};

/* Fills `*instructions` for the single DPU `dpu`. DPU_ERR_INVALID_DPU_SET unless `dpu` is a DPU_SET_DPU set. */
dpu_error_t dpu_sim_instructions(struct dpu_set_t dpu, struct dpu_sim_instructions *instructions);

/* A class's short name ("alu", "float mul", ...); NULL for a value out of range. */
const char *dpu_sim_instruction_class_name(enum dpu_sim_instruction_class instruction_class);

/* What a timeline event did. */
enum dpu_sim_operation {
    DPU_SIM_OP_PUSH = 0,      /* dpu_push_xfer to the DPUs */
    DPU_SIM_OP_BROADCAST = 1, /* dpu_broadcast_to, dpu_copy_to on several DPUs */
    DPU_SIM_OP_GATHER = 2,    /* dpu_push_xfer from the DPUs */
    DPU_SIM_OP_COPY_TO = 3,   /* dpu_copy_to on one DPU */
    DPU_SIM_OP_COPY_FROM = 4, /* dpu_copy_from */
    DPU_SIM_OP_LAUNCH = 5,    /* dpu_launch, to completion */
};

/* predicted_ns of an event with no prediction: an asynchronous launch not yet synchronised by dpu_sync (it is
 * predicted then, or when one of its DPUs is launched again, from its own DPUs' modelled cycles), or any launch
 * under the fast schedule (UPMEM_SIM_SCHEDULE=fast), whose cycle counts are not the hardware's. */
#define DPU_SIM_NOT_PREDICTED 0xFFFFFFFFFFFFFFFFull

/*
 * One transfer or launch of the program: its wall time on the simulator and its predicted time on a UPMEM
 * server (a full server's aggregate transfer bandwidth over the ranks a transfer spans, measured on SDK 2025.1,
 * a broadcast counted in bytes delivered; a launch's overhead plus its slowest DPU's modelled cycles at 350 MHz). Run one after the other, the events' predicted times add up to the run's.
 */
struct dpu_sim_event {
    uint32_t operation; /* enum dpu_sim_operation */
    uint32_t nr_dpus;
    uint64_t bytes_per_dpu;
    uint64_t wall_ns;
    uint64_t predicted_ns;
};

/* Copies up to `capacity` events of the program's timeline, oldest first, into `events` and sets `*nr_events`
 * to how many there are (possibly more than `capacity`). The timeline starts anew at dpu_sim_timeline_clear
 * and at each dpu_alloc (or dpu_alloc_ranks) made while no set is allocated, so a process that allocates and
 * frees DPUs over and over holds only its current allocations' events; it keeps the most recent 65,536 of
 * them. */
dpu_error_t dpu_sim_timeline(struct dpu_sim_event *events, size_t capacity, size_t *nr_events);

/* Starts a new timeline. */
dpu_error_t dpu_sim_timeline_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_SIM_H */
