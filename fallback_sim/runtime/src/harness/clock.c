/*
 * The timing model: each tasklet has a clock, advanced by the instructions it executes and by its DMA transfers;
 * the scheduler runs the tasklet furthest behind.
 *
 * The DPU's pipeline issues at most one instruction per cycle, and from a given tasklet at most one every
 * DPUSIM_PIPELINE_DEPTH (11) cycles. The modelled schedule shares it among the tasklets that can issue, as a DPU
 * does (pipeline.c): a tasklet waiting for its DMA issues nothing, and the others issue faster meanwhile. The
 * fast and shuffle schedules, which run tasklets out of modelled order, count every runnable tasklet instead:
 * while n can run, each issues one instruction every max(11, n) cycles of its clock. The DMA engine serves one
 * transfer at a time, in issue order, in alpha + bytes / 2 cycles; the issuing tasklet waits until its own
 * transfer completes. Before and after a DMA or a synchronisation, and before it reads the cycle counter, a tasklet
 * waits until no runnable tasklet is behind it, so that these happen in modelled-time order (DMA data moves in
 * that order); in its own code it gives way when its clock gets more than a quantum ahead of another runnable
 * tasklet. Everything here depends only on what the kernel executes, so the same kernel and input give the same
 * interleaving, counts and cycles on every run, host and worker count.
 */
#include "internal.h"
#include "sdk_costs.h"

#include <stddef.h>

/*
 * How far a tasklet may run ahead of another runnable one in its own code before it gives way, in cycles (the
 * modelled schedule counts it in instructions: pipeline.c's QUANTUM_POSITIONS, these cycles at 16 tasklets). DMA
 * and synchronisation are ordered exactly (clock_wait_turn); the quantum only bounds how far plain WRAM reads
 * and writes of different tasklets can be out of modelled order, and it changes no modelled cycle count. With
 * blocks costed as the DPU's software arithmetic, one float multiply is about 180 instructions (2,900 cycles
 * with 16 tasklets), so a small quantum switches tasklets at nearly every block of float code: on `pimgnn
 * infer`'s f32 SpMM (2,048 DPUs x 16 tasklets, 256 features) the aggregation kernel took about 60 s per layer at
 * 2,048 cycles and 9 s at 16,384; `pimgnn bench spmm` at 16 features switched about six times per nonzero at
 * 16,384 for every switch a DMA forces. The patterns of tests/schedules.rs hold at 131,072 too (unequal_work's
 * extra work is about 10,000 instructions, over 110,000 cycles); 65,536 keeps half that as a margin.
 *
 * The shuffle schedule perturbs within its own, smaller window: it exists to expose races, not for speed, and
 * its planted race needs tasklets that stay close.
 */
#define QUANTUM_CYCLES 65536u
#define SHUFFLE_QUANTUM_CYCLES 16384u

/* The running tasklet spent its budget: it gives way if its clock has passed yield_at, else (its budget was set
 * short, as after a DMA) it gets its exact budget. */
__attribute__((cold)) void clock_budget_spent(void) {
    clock_settle();
    if (run.running->clock > run.yield_at)
        tasklet_give_way();
    else
        clock_arm();
}

/*
 * The block hook, __sanitizer_cov_trace_pc, runs at every basic block of the kernel, so it does as little as it
 * can: one increment of the block's run count, kept by its call site, and one subtraction from the running
 * tasklet's budget. Counting runs per block, not instructions per class, leaves clock_classes to multiply them
 * out once per launch; the budget, the instructions the tasklet may execute before its time passes yield_at,
 * leaves its time and instruction count to clock_settle, at the next switch, DMA or synchronisation, and turns
 * "time > yield_at" into a sign test. The rest is out of line (clock_budget_spent). Counting by site rather than
 * by block index saves the hook a dependent load (a few percent of the fast schedule's time).
 *
 * On x86-64 the hook is hook.S: it preserves every register, so that kernels compiled by clang keep their values
 * in registers across blocks as a DPU's 24 registers would (dpusim/coverage_hook.h). Elsewhere it is this.
 */
_Static_assert(offsetof(struct run_state, budget) == 0, "hook.S reaches the budget at `run`");
#if !defined(__x86_64__)
void __sanitizer_cov_trace_pc(void) {
    uintptr_t site = (uintptr_t)__builtin_return_address(0) - (uintptr_t)__dpusim_kernel_text;
    __dpusim_site_runs[site]++;
    int64_t budget = run.budget - __dpusim_site_instructions[site];
    run.budget = budget;
    if (__builtin_expect(budget < 0, 0))
        clock_budget_spent();
}
#endif

uint64_t issue_reciprocals[DPUSIM_MAX_TASKLETS + 1];
_Static_assert(DPUSIM_PIPELINE_DEPTH > 1, "an issue interval of 1 has no 64-bit reciprocal");

/* Its clock passes yield_at exactly when it has executed more than (yield_at - clock) / clock_step more
 * instructions: clock + k * c > y if and only if k > floor((y - clock) / c). */
void clock_arm(void) {
    clock_settle();
    uint64_t clock = run.running->clock;
    int64_t budget;
    if (run.yield_at == UINT64_MAX) {
        budget = INT64_MAX; /* it never gives way in its own code */
    } else if (run.yield_at < clock) {
        budget = -1; /* it gives way at its next block */
    } else if (run.schedule == DPUSIM_SCHEDULE_MODELLED) {
        budget = (int64_t)((run.yield_at - clock) >> POSITION_SHIFT);
    } else {
        budget = (int64_t)divide_by_interval(run.yield_at - clock, run.clock_step);
    }
    run.budget = run.budget_armed = budget;
}

void clock_init(void) {
    for (uint32_t interval = DPUSIM_PIPELINE_DEPTH; interval <= DPUSIM_MAX_TASKLETS; interval++)
        issue_reciprocals[interval] = UINT64_MAX / interval + 1;
}

void __dpusim_charge(uint32_t instructions) { clock_charge(instructions); }

/* splitmix64: small, fast, and a good generator for a perturbation. */
static uint64_t shuffle_next(void) {
    uint64_t z = (run.shuffle_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void clock_reset(uint32_t dpu) {
    for (uint32_t b = 1; b < __dpusim_nr_blocks; b++)
        __dpusim_site_runs[__dpusim_block_sites[b]] = 0;
    run.schedule = control->schedule;
    run.dma_free_at = 0;
    run.dma_cycles = 0;
    run.yield_at = UINT64_MAX;
    run.clock_step = run.schedule == DPUSIM_SCHEDULE_MODELLED ? POSITION_ONE : DPUSIM_PIPELINE_DEPTH;
    run.budget = run.budget_armed = 0;
    /* Mixing in the DPU's index makes each DPU's interleaving its own, whichever worker runs it. */
    run.shuffle_state = control->shuffle_seed ^ ((uint64_t)dpu * 0xD1B54A32D192ED03ull);
    uint64_t boot_times[DPUSIM_MAX_TASKLETS];
    for (uint32_t t = 0; t < DPUSIM_MAX_TASKLETS; t++) {
        boot_times[t] = (uint64_t)(COST_BOOT_FIRST + COST_BOOT_STAGGER * t) * DPUSIM_PIPELINE_DEPTH;
        run.tasklets[t].clock = run.tasklets[t].time = boot_times[t];
        run.tasklets[t].instructions = t == 0 ? COST_BOOT_FIRST : COST_BOOT_OTHERS;
        run.tasklets[t].transfer_waiting = false;
    }
    if (run.schedule == DPUSIM_SCHEDULE_MODELLED)
        pipeline_reset(run.nr_tasklets, boot_times);
}

static bool can_run(const struct tasklet *tasklet) {
    return tasklet->state == TASKLET_UNSTARTED || tasklet->state == TASKLET_RUNNABLE;
}

static uint32_t pick_round_robin(uint32_t start) {
    for (uint32_t k = 0; k < run.nr_tasklets; k++) {
        uint32_t t = (start + k) % run.nr_tasklets;
        if (can_run(&run.tasklets[t]))
            return t;
    }
    return DPUSIM_NO_TASKLET;
}

/* A random runnable tasklet among those at most a quantum ahead of the one furthest behind. */
static uint32_t pick_shuffled(uint64_t earliest_time) {
    uint32_t candidates[DPUSIM_MAX_TASKLETS];
    uint32_t count = 0;
    for (uint32_t t = 0; t < run.nr_tasklets; t++)
        if (can_run(&run.tasklets[t]) && run.tasklets[t].clock <= earliest_time + SHUFFLE_QUANTUM_CYCLES)
            candidates[count++] = t;
    return candidates[shuffle_next() % count];
}

uint32_t clock_pick(uint32_t round_robin_start) {
    if (run.schedule == DPUSIM_SCHEDULE_MODELLED)
        return pipeline_pick(false);
    /* One pass: how many can run, and the two earliest (ties to the lower id). */
    uint32_t runnable = 0, earliest = DPUSIM_NO_TASKLET;
    uint64_t earliest_time = UINT64_MAX, second_time = UINT64_MAX;
    for (uint32_t t = 0; t < run.nr_tasklets; t++) {
        const struct tasklet *tasklet = &run.tasklets[t];
        if (!can_run(tasklet))
            continue;
        runnable++;
        if (tasklet->clock < earliest_time) {
            second_time = earliest_time;
            earliest = t;
            earliest_time = tasklet->clock;
        } else if (tasklet->clock < second_time) {
            second_time = tasklet->clock;
        }
    }
    if (runnable == 0)
        return DPUSIM_NO_TASKLET;
    run.clock_step = runnable > DPUSIM_PIPELINE_DEPTH ? runnable : DPUSIM_PIPELINE_DEPTH;
    if (run.schedule == DPUSIM_SCHEDULE_FAST) {
        run.yield_at = UINT64_MAX;
        run.others_earliest = UINT64_MAX;
        return pick_round_robin(round_robin_start);
    }
    uint32_t chosen = earliest;
    uint64_t ahead = QUANTUM_CYCLES;
    if (run.schedule == DPUSIM_SCHEDULE_SHUFFLE) {
        chosen = pick_shuffled(earliest_time);
        ahead = shuffle_next() % (2 * SHUFFLE_QUANTUM_CYCLES + 1);
    }
    uint64_t others = chosen == earliest ? second_time : earliest_time;
    uint64_t own = run.tasklets[chosen].clock;
    run.others_earliest = others;
    run.yield_at = others == UINT64_MAX ? UINT64_MAX : (others > own ? others : own) + ahead;
    return chosen;
}

uint32_t clock_pick_with_running(void) {
    if (run.schedule == DPUSIM_SCHEDULE_MODELLED)
        return pipeline_pick(run.running->state == TASKLET_RUNNABLE);
    return clock_pick(0); /* the scan sees the running tasklet, which is runnable */
}

void clock_woken(struct tasklet *tasklet, uint32_t delay_instructions) {
    if (run.schedule == DPUSIM_SCHEDULE_MODELLED) {
        pipeline_resume(tasklet, delay_instructions);
    } else {
        uint64_t at = run.running->clock + (uint64_t)delay_instructions * run.clock_step;
        if (tasklet->clock < at)
            tasklet->clock = at;
        if (run.schedule == DPUSIM_SCHEDULE_SHUFFLE) {
            if (tasklet->clock < run.others_earliest)
                run.others_earliest = tasklet->clock;
            if (tasklet->clock + SHUFFLE_QUANTUM_CYCLES < run.yield_at)
                run.yield_at = tasklet->clock + SHUFFLE_QUANTUM_CYCLES;
        }
    }
    clock_arm(); /* yield_at may have come closer */
}

void clock_stop(void) {
    clock_settle();
    if (run.schedule == DPUSIM_SCHEDULE_MODELLED)
        pipeline_stop();
}

void clock_dma(uint32_t alpha) {
    clock_charge(COST_DMA_ISSUE);
    clock_settle();
    struct tasklet *self = run.running;
    const struct dma_move *move = &self->transfer;
    uint64_t cycles = alpha + move->length / 2;
    if (run.schedule != DPUSIM_SCHEDULE_MODELLED) {
        clock_wait_turn();
        self->clock = dma_engine_take(self->clock, cycles);
        dma_copy(move);
    } else if (self->clock > run.others_earliest) {
        /* Tasklets are behind it: the pick that reaches it issues the transfer, and it resumes after, at its
         * turn, its budget set by the switch. */
        self->transfer_cycles = cycles;
        self->transfer_waiting = true;
        tasklet_give_way();
        return;
    } else {
        pipeline_transfer(self, cycles);
        dma_copy(move);
    }
    /* Its clock jumped, or it now waits for its transfer, so its budget is stale; but then it waits its turn and
     * usually gives way, which sets the next tasklet's. So the budget is only made spent, and the next block
     * checks the clock exactly (clock_budget_spent). */
    run.budget = run.budget_armed = -1;
    clock_wait_turn();
}

uint64_t clock_running_cycles(void) {
    clock_settle();
    if (run.schedule != DPUSIM_SCHEDULE_MODELLED)
        return run.running->clock;
    return pipeline_time(run.running->clock);
}

uint64_t clock_tasklet_cycles(uint32_t t) {
    const struct tasklet *tasklet = &run.tasklets[t];
    if (run.schedule != DPUSIM_SCHEDULE_MODELLED)
        return tasklet->clock;
    /* One that still issues (the launch faulted) has gone as far as its clock. */
    return tasklet->state == TASKLET_RUNNABLE ? pipeline_time(tasklet->clock) : tasklet->time;
}

uint64_t clock_dpu_cycles(void) {
    uint64_t latest = run.dma_free_at;
    for (uint32_t t = 0; t < run.nr_tasklets; t++)
        if (clock_tasklet_cycles(t) > latest)
            latest = clock_tasklet_cycles(t);
    return latest;
}

uint64_t clock_dpu_instructions(void) {
    uint64_t total = 0;
    for (uint32_t t = 0; t < run.nr_tasklets; t++)
        total += run.tasklets[t].instructions;
    return total;
}

void clock_classes(uint64_t class_instructions[DPUSIM_INSTRUCTION_CLASSES]) {
    uint64_t in_blocks = 0;
    for (uint32_t c = 0; c < DPUSIM_INSTRUCTION_CLASSES; c++)
        class_instructions[c] = 0;
    for (uint32_t b = 1; b < __dpusim_nr_blocks; b++) {
        uint64_t runs = __dpusim_site_runs[__dpusim_block_sites[b]];
        if (runs == 0)
            continue;
        for (uint32_t c = 0; c < DPUSIM_INSTRUCTION_CLASSES; c++) {
            uint64_t instructions = runs * __dpusim_block_classes[b][c];
            class_instructions[c] += instructions;
            in_blocks += instructions;
        }
    }
    /* Whatever the tasklets executed outside the kernel's blocks was charged for the SDK's routines. */
    uint64_t total = clock_dpu_instructions();
    class_instructions[DPUSIM_CLASS_SDK_ROUTINE] = total > in_blocks ? total - in_blocks : 0;
}
