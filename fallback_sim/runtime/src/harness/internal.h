/*
 * State shared by the pieces of the worker harness. One worker process runs one DPU at a time; these globals
 * describe the DPU being run and live in the worker's private memory (never in the DPU's WRAM window).
 */
#ifndef DPUSIM_HARNESS_INTERNAL_H
#define DPUSIM_HARNESS_INTERNAL_H

#include <dpusim/abi.h>

enum tasklet_state {
    TASKLET_UNSTARTED,
    TASKLET_RUNNABLE,
    TASKLET_BLOCKED,
    TASKLET_TRANSFERRING, /* the modelled schedule's: waiting for its DMA transfer, it issues nothing */
    TASKLET_DONE,
};

/* What a blocked tasklet waits for; the key identifies the object (barrier, mutex, semaphore, notifier). */
enum wait_kind {
    WAIT_NONE,
    WAIT_BARRIER,
    WAIT_MUTEX,
    WAIT_SEMAPHORE,
    WAIT_HANDSHAKE_NOTIFY,
    WAIT_HANDSHAKE_WAIT,
};

/* A DMA transfer's data: `length` bytes from `from` to `to`, the first `before_end` of them before the end of MRAM
 * (the rest wrap to MRAM offset 0). */
struct dma_move {
    char *to;
    const char *from;
    uint32_t length;
    uint32_t before_end;
    bool to_mram;
};
struct tasklet {
    void *saved_sp;
    enum tasklet_state state;
    enum wait_kind wait;
    const void *wait_key;
    uint64_t wait_ticket; /* arrival order, for FIFO hand-over of mutexes and semaphores */
    /* How far the tasklet has run: its modelled cycle in the fast and shuffle schedules, its position on the
     * issue clock in the modelled one (pipeline.c), where `time` holds the cycle at which it last stopped
     * issuing (a DMA, a block, its end). clock_tasklet_cycles reads the cycle in every schedule. */
    uint64_t clock;
    uint64_t time;
    uint64_t instructions;
    /* Its DMA transfer, and in the modelled schedule whether it waits for the tasklet's turn to issue, and its
     * engine cycles: the pick that reaches the tasklet issues it then (pipeline_pick), so the tasklet is not
     * resumed only to issue it and give way again. */
    bool transfer_waiting;
    uint64_t transfer_cycles;
    struct dma_move transfer;
    char *stack_low;      /* lowest usable byte of the native stack */
    char *stack_high;     /* one past the highest */
};

struct run_state {
    /* First, where hook.S reaches it (at `run`): the running tasklet's instructions left before its clock passes
     * yield_at; charges only subtract from it, and the instructions charged since its time and count were last
     * brought up to date are budget_armed - budget (see clock_settle). Negative: it may be due to give way, which
     * the next block checks. */
    int64_t budget;
    uint32_t dpu;
    uint32_t nr_tasklets;
    struct dpusim_dpu_record *record;
    struct tasklet tasklets[DPUSIM_MAX_TASKLETS];
    void *scheduler_sp;
    bool faulted;
    struct tasklet *running;  /* the tasklet being run, while in a tasklet */
    uint64_t switches;        /* context switches of this launch (DpuStats::switches) */
    /* The timing model (clock.c). */
    uint32_t schedule;               /* DPUSIM_SCHEDULE_* */
    uint32_t clock_step;     /* what an instruction adds to the running tasklet's clock */
    uint64_t yield_at;        /* the running tasklet gives way once its clock passes this */
    uint64_t others_earliest; /* the earliest clock of the other runnable tasklets */
    uint64_t dma_free_at;            /* when the DMA engine finishes its last queued transfer */
    uint64_t dma_cycles;             /* cycles the DMA engine was busy */
    uint64_t shuffle_state;          /* DPUSIM_SCHEDULE_SHUFFLE's generator */
    int64_t budget_armed;
    uint64_t perfcounter_base;
    uint64_t perfcounter_instructions_base; /* v1B's instruction counter (perfcounter_get_both) */
    uint32_t perfcounter_mode;
    uint64_t perfcounter_frozen;
    char *log;                /* this DPU's log ring */
    uint64_t log_capacity;
};

extern struct run_state run;
extern struct dpusim_control *control;

/* tasklets.c */
void tasklets_run(uint32_t dpu, struct dpusim_dpu_record *record, char *log, uint64_t log_capacity);
void tasklets_allocate_stacks(void);
uint64_t monotonic_ns(void);
/* Records a fault in the DPU's record; does not switch. Safe to call from a signal handler. */
void fault_record(uint32_t kind, uint64_t address, uint64_t value, uint64_t pc, int signal, const char *message);

/* Blocking and resuming, for the synchronisation routines (sync.c). tasklet_block blocks the running tasklet
 * after it executed `instructions` more of its routine; tasklet_wake: the running tasklet resumes `tasklet` after
 * executing `instructions` more of its own routine, and the resumed one runs `resumed_tail` more instructions of
 * its routine before it returns; tasklet_first_waiter: the tasklet that has waited longest for (wait, key), or
 * DPUSIM_NO_TASKLET. */
void tasklet_block(enum wait_kind wait, const void *key, uint32_t instructions);
void tasklet_wake(uint32_t tasklet, uint32_t instructions, uint32_t resumed_tail);
uint32_t tasklet_first_waiter(enum wait_kind wait, const void *key);
/* sync.c: forgets the locks of the last launch (a DPU clears its atomic bits at boot). */
void sync_reset(void);
/* perfcounter.c: the counter counts cycles from 0 at each launch. */
void perfcounter_reset(void);

/* The scheduler's side of a tasklet switch: the running tasklet stops until the scheduler picks it again. */
void switch_to_scheduler(void);
/* The running tasklet, still runnable, lets the tasklet that the timing model picks run (itself, if the model
 * picks it again). */
void tasklet_give_way(void);

/* clock.c: the timing model. Costs are in DPU instructions; a tasklet's clock advances by clock_step per
 * instruction: in the fast and shuffle schedules its issue interval in cycles, max(11, runnable tasklets), in the
 * modelled one POSITION_ONE (pipeline.c). The running tasklet's clock and instruction count lag behind what it
 * was charged until clock_settle(): read them only after it. */
#define POSITION_SHIFT 16
#define POSITION_ONE (1ull << POSITION_SHIFT) /* an instruction on the modelled schedule's issue clock */
/* Charges the running tasklet `instructions` more DPU instructions. */
static inline void clock_charge(uint32_t instructions) {
    run.budget -= instructions;
}
/* Brings the running tasklet's time and instruction count up to what it was charged. Every switch away from a
 * tasklet settles it, so a tasklet that is not running is always up to date. */
static inline void clock_settle(void) {
    uint64_t pending = (uint64_t)(run.budget_armed - run.budget);
    run.running->instructions += pending;
    run.running->clock += pending * run.clock_step;
    run.budget_armed = run.budget;
}
/* Settles, then sets the budget from the running tasklet's clock, clock_step and yield_at: after any
 * of them changed, and whenever a tasklet starts running. */
void clock_arm(void);
/* Around what other tasklets can observe or what moves the running tasklet's clock forward at once (DMA,
 * synchronisation), the running tasklet lets every tasklet that is behind it catch up first, so that these
 * happen in modelled-time order; when shuffling, only those more than a (random) quantum behind. */
static inline void clock_wait_turn(void) {
    clock_settle();
    uint64_t limit = run.schedule == DPUSIM_SCHEDULE_MODELLED ? run.others_earliest : run.yield_at;
    if (run.running->clock > limit)
        tasklet_give_way();
}
/* issue_reciprocals[c] = ceil(2^64 / c) for each issue interval c (DPUSIM_PIPELINE_DEPTH to DPUSIM_MAX_TASKLETS),
 * set once per worker (clock_init), so that divide_by_interval divides by a multiply: floor(n *
 * issue_reciprocals[c] / 2^64) = floor(n / c) for n < 2^64 / c, since the product exceeds n / c by less than
 * n / 2^64 < 1 / c and the fraction of n / c is at most 1 - 1 / c. Larger n, which clocks never reach, divide. */
extern uint64_t issue_reciprocals[DPUSIM_MAX_TASKLETS + 1];
static inline uint64_t divide_by_interval(uint64_t n, uint32_t interval) {
    if (n >= UINT64_MAX / DPUSIM_MAX_TASKLETS)
        return n / interval;
    return (uint64_t)(((unsigned __int128)n * issue_reciprocals[interval]) >> 64);
}
/* The DMA engine takes a transfer of `cycles` issued at cycle `issued`, after those before it: when it completes. */
static inline uint64_t dma_engine_take(uint64_t issued, uint64_t cycles) {
    uint64_t start = issued > run.dma_free_at ? issued : run.dma_free_at;
    run.dma_free_at = start + cycles;
    run.dma_cycles += cycles;
    return run.dma_free_at;
}
/* The running tasklet issues the DMA transfer in its `transfer`, whose engine cost is alpha + length / 2 cycles:
 * once it is its turn, the data moves (dma_copy) and the tasklet waits for the engine, then for its own transfer;
 * it returns at its turn after the transfer. */
void clock_dma(uint32_t alpha);
/* dma.c: moves a transfer's data, as it issues. */
void dma_copy(const struct dma_move *move);
/* The scheduler's next pick when no tasklet is running (the last one blocked, finished or, in the fast schedule,
 * gave way); sets cycles_per_instruction and yield_at for it. DPUSIM_NO_TASKLET if none can run. */
uint32_t clock_pick(uint32_t round_robin_start);
/* The next pick when the running tasklet, still runnable, gives way (outside the fast schedule): itself or another. */
uint32_t clock_pick_with_running(void);
/* The running tasklet spent its budget at a block (the block hook's slow path). */
void clock_budget_spent(void);
/* Sets up the model, once per worker. */
void clock_init(void);
/* Starts the model for a launch of `dpu`. */
void clock_reset(uint32_t dpu);
/* The launch's DPU instructions by class (upmem_sim::InstructionClass), from the blocks' run counts; the SDK
 * routines' class (DPUSIM_CLASS_SDK_ROUTINE) gets what the tasklets executed outside the kernel's blocks. */
void clock_classes(uint64_t class_instructions[DPUSIM_INSTRUCTION_CLASSES]);
/* The running tasklet made `tasklet` runnable, to resume after `delay_instructions` of the running one's. */
void clock_woken(struct tasklet *tasklet, uint32_t delay_instructions);
/* The running tasklet blocks or finishes: it stops issuing. */
void clock_stop(void);
/* The modelled cycle the running tasklet has reached (settled). */
uint64_t clock_running_cycles(void);
/* The modelled cycle tasklet t reached: where it ended, once the launch is over. */
uint64_t clock_tasklet_cycles(uint32_t t);
/* The DPU's modelled cycles and executed instructions so far. */
uint64_t clock_dpu_cycles(void);
uint64_t clock_dpu_instructions(void);

/* pipeline.c: the modelled schedule's clock. pipeline_reset starts a launch whose tasklets boot at the given
 * cycles. pipeline_pick: the tasklet to run next, itself if the running one stays runnable and is earliest
 * (DPUSIM_NO_TASKLET if none can run again), issuing on their behalf the waiting transfers of the tasklets it
 * reaches first; sets others_earliest and yield_at. pipeline_time: the cycle at which the issue clock reaches a
 * position, as the events known now make it. A tasklet at its turn issues a DMA transfer of `cycles` and waits
 * for it (pipeline_transfer); the running tasklet, at its turn, blocks or finishes (pipeline_stop), or resumes a
 * tasklet that waited (pipeline_resume). */
void pipeline_reset(uint32_t nr_tasklets, const uint64_t boot_times[]);
uint32_t pipeline_pick(bool running_stays);
uint64_t pipeline_time(uint64_t position);
void pipeline_transfer(struct tasklet *tasklet, uint64_t cycles);
void pipeline_stop(void);
void pipeline_resume(struct tasklet *tasklet, uint32_t delay_instructions);

/* warning.c: prints "kernel K, DPU d, tasklet t: message" to standard error, once per worker for each
 * (kind, key); kind is a string constant compared by address. */
__attribute__((format(printf, 4, 5))) void warning_once(const char *kind, uint64_t key, uint32_t tasklet,
                                                        const char *format, ...);

/* stack.c: paints a tasklet's stack before it starts; measures every started tasklet's stack when the run ends
 * and reports use over the budget (a warning, or a fault in strict mode). */
void stack_paint(uint32_t tasklet);
void stack_measure(void);

/* overlay.c: broadcast pages shared copy-on-write. overlay_map_mram maps dpu's MRAM over the window: its own
 * pages, and its shared ranges over them (kept from the last DPU when they are the same); overlay_needs_mapping
 * says whether the window differs from dpu's own MRAM; overlay_take_page, from the SIGSEGV handler, makes the
 * shared page at address dpu's own (false: not one). */
void overlay_map_records(void);
bool overlay_needs_mapping(uint32_t dpu);
void overlay_map_mram(uint32_t dpu);
bool overlay_take_page(uint32_t dpu, uintptr_t address);

/* Context switch (switch_*.S or the ucontext fallback). */
void dpusim_switch(void **save_sp, void *load_sp);
void *dpusim_prepare_stack(char *stack_high, void (*entry)(void));

#endif
