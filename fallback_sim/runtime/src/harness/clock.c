/*
 * The timing model: each tasklet has a clock in modelled DPU cycles, advanced by the instructions it executes
 * and by its DMA transfers; the scheduler runs the tasklet furthest behind.
 *
 * The DPU's pipeline issues at most one instruction per cycle, and from a given tasklet at most one every
 * DPUSIM_PIPELINE_DEPTH (11) cycles. While n tasklets can run, each therefore issues one instruction every
 * max(11, n) cycles. The DMA engine serves one transfer at a time, in issue order, in alpha + bytes / 2
 * cycles; the issuing tasklet waits until its own transfer completes. Before and after a DMA or a
 * synchronisation a tasklet waits until no runnable tasklet is behind it, so that these happen in modelled-time
 * order (DMA data moves in that order); in its own code it gives way when its clock gets more than
 * QUANTUM_CYCLES ahead of another runnable tasklet. Everything here depends only on what the kernel executes, so the same kernel and input give the
 * same interleaving, counts and cycles on every run, host and worker count.
 */
#include "internal.h"
#include "sdk_costs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * How far a tasklet may run ahead of another runnable one in its own code before it gives way, in cycles. DMA
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

static uint64_t quantum(void) {
    return run.schedule == DPUSIM_SCHEDULE_SHUFFLE ? SHUFFLE_QUANTUM_CYCLES : QUANTUM_CYCLES;
}

/* The running tasklet spent its budget: it gives way if its time has passed yield_at, else (its budget was set
 * short, as after a DMA) it gets its exact budget. */
__attribute__((noinline, cold)) static void budget_spent(void) {
    clock_settle();
    if (run.running->time > run.yield_at)
        tasklet_give_way();
    else
        clock_arm();
}

/*
 * Runs at every basic block of the kernel, so it does as little as it can: one increment of the block's run
 * count and one subtraction from the running tasklet's budget. Counting runs per block, not instructions per
 * class, leaves clock_classes to multiply them out once per launch; the budget, the instructions the tasklet may
 * execute before its time passes yield_at, leaves its time and instruction count to clock_settle, at the next
 * switch, DMA or synchronisation, and turns "time > yield_at" into a sign test. The rest is out of line.
 */
void __sanitizer_cov_trace_pc(void) {
    uintptr_t site = (uintptr_t)__builtin_return_address(0) - (uintptr_t)__dpusim_kernel_text;
    const struct dpusim_block_cost *block = &__dpusim_block_costs[site];
    run.block_runs[block->block]++;
    int64_t budget = run.budget - block->instructions;
    run.budget = budget;
    if (__builtin_expect(budget < 0, 0))
        budget_spent();
}

/*
 * reciprocals[c] = ceil(2^64 / c) for each issue interval c (DPUSIM_PIPELINE_DEPTH to DPUSIM_MAX_TASKLETS), so
 * that clock_arm divides by a multiply: for n < 2^32, floor(n * reciprocals[c] / 2^64) = floor(n / c), since
 * the product exceeds n / c by less than n / 2^64 < 2^-32 and the fraction of n / c is at most 1 - 1 / c.
 */
static uint64_t reciprocals[DPUSIM_MAX_TASKLETS + 1];
_Static_assert(DPUSIM_PIPELINE_DEPTH > 1, "an issue interval of 1 has no 64-bit reciprocal");

/* Its time passes yield_at exactly when it has executed more than (yield_at - time) / cycles_per_instruction
 * more instructions: time + k * c > y if and only if k > floor((y - time) / c). */
void clock_arm(void) {
    clock_settle();
    uint64_t time = run.running->time;
    int64_t budget;
    if (run.yield_at == UINT64_MAX) {
        budget = INT64_MAX; /* it never gives way in its own code */
    } else if (run.yield_at < time) {
        budget = -1; /* it gives way at its next block */
    } else {
        uint64_t room = run.yield_at - time;
        uint32_t interval = run.cycles_per_instruction;
        budget = room >> 32 == 0 ? (int64_t)(((unsigned __int128)room * reciprocals[interval]) >> 64)
                                 : (int64_t)(room / interval);
    }
    run.budget = run.budget_armed = budget;
}

void clock_allocate(void) {
    for (uint32_t interval = DPUSIM_PIPELINE_DEPTH; interval <= DPUSIM_MAX_TASKLETS; interval++)
        reciprocals[interval] = UINT64_MAX / interval + 1;
    run.block_runs = calloc(__dpusim_nr_blocks, sizeof *run.block_runs);
    if (run.block_runs == NULL) {
        fprintf(stderr, "dpusim worker: cannot allocate the run counts of %u blocks\n", __dpusim_nr_blocks);
        exit(DPUSIM_EXIT_FAULT);
    }
}

void __dpusim_charge(uint32_t instructions) { clock_charge(instructions); }

/* splitmix64: small, fast, and a good generator for a perturbation. */
static uint64_t shuffle_next(void) {
    uint64_t z = (run.shuffle_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/*
 * The modelled schedule picks at nearly every DMA (before and after it), so instead of scanning every tasklet
 * it keeps the runnable tasklets other than the running one in order, in a ring of their order keys: the
 * earliest at `ready_head`, the latest `nr_ready - 1` places on. An order key is a tasklet's time above its id:
 * one unsigned comparison orders tasklets by time and breaks ties to the lower id, as the scan does. Modelled
 * times stay far below the 2^59 cycles this leaves them (about 50 years of a DPU at 350 MHz). A tasklet's time
 * changes only while it runs or waits, when it is not in the ring, so the ring stays in order.
 */
#define ORDER_ID_BITS 5
#define ORDER_ID_MASK ((1u << ORDER_ID_BITS) - 1)
_Static_assert(DPUSIM_MAX_TASKLETS <= ORDER_ID_MASK + 1, "tasklet ids must fit below the time in an order key");
#define READY_SLOTS 32u /* a power of two, at least DPUSIM_MAX_TASKLETS */
_Static_assert(DPUSIM_MAX_TASKLETS <= READY_SLOTS, "the ready ring must hold every tasklet");

static uint64_t ready[READY_SLOTS];
static uint32_t ready_head, nr_ready;

static uint64_t order_key(uint32_t t) { return run.tasklets[t].time << ORDER_ID_BITS | t; }

static uint64_t *ready_slot(uint32_t place) { return &ready[(ready_head + place) % READY_SLOTS]; }

/* Inserts t in order, moving the ring's entries on the side of its place that has fewer: after a DMA a tasklet
 * usually enters as the latest, but one that gives way before its DMA or synchronisation is usually only just
 * behind the earliest, and moving the entries after it would move nearly the whole ring. */
static void ready_insert(uint32_t t) {
    uint64_t key = order_key(t);
    if (nr_ready > 0 && key < *ready_slot(nr_ready / 2)) {
        uint32_t place = 0; /* the entries before it move one slot towards the front */
        ready_head = (ready_head + READY_SLOTS - 1) % READY_SLOTS;
        for (; *ready_slot(place + 1) < key; place++)
            *ready_slot(place) = *ready_slot(place + 1);
        *ready_slot(place) = key;
    } else {
        uint32_t place = nr_ready;
        for (; place > 0 && *ready_slot(place - 1) > key; place--)
            *ready_slot(place) = *ready_slot(place - 1);
        *ready_slot(place) = key;
    }
    nr_ready++;
}

static uint32_t ready_take_earliest(void) {
    uint64_t key = *ready_slot(0);
    ready_head = (ready_head + 1) % READY_SLOTS;
    nr_ready--;
    return (uint32_t)(key & ORDER_ID_MASK);
}

/* The modelled schedule's pick: `chosen` runs next while `runnable` tasklets can run. Sets its issue interval,
 * and when it gives way from the earliest of the others, which is the ring's first. */
static uint32_t run_modelled(uint32_t chosen, uint32_t runnable) {
    run.cycles_per_instruction = runnable > DPUSIM_PIPELINE_DEPTH ? runnable : DPUSIM_PIPELINE_DEPTH;
    uint64_t others = nr_ready == 0 ? UINT64_MAX : *ready_slot(0) >> ORDER_ID_BITS;
    uint64_t own = run.tasklets[chosen].time;
    run.others_earliest = others;
    run.yield_at = others == UINT64_MAX ? UINT64_MAX : (others > own ? others : own) + QUANTUM_CYCLES;
    return chosen;
}

void clock_reset(uint32_t dpu) {
    memset(run.block_runs, 0, __dpusim_nr_blocks * sizeof *run.block_runs);
    run.schedule = control->schedule;
    run.dma_free_at = 0;
    run.dma_cycles = 0;
    run.yield_at = UINT64_MAX;
    run.cycles_per_instruction = DPUSIM_PIPELINE_DEPTH;
    run.budget = run.budget_armed = 0;
    /* Mixing in the DPU's index makes each DPU's interleaving its own, whichever worker runs it. */
    run.shuffle_state = control->shuffle_seed ^ ((uint64_t)dpu * 0xD1B54A32D192ED03ull);
    for (uint32_t t = 0; t < DPUSIM_MAX_TASKLETS; t++) {
        run.tasklets[t].time = (uint64_t)(COST_BOOT_FIRST + COST_BOOT_STAGGER * t) * DPUSIM_PIPELINE_DEPTH;
        run.tasklets[t].instructions = t == 0 ? COST_BOOT_FIRST : COST_BOOT_OTHERS;
    }
    ready_head = nr_ready = 0;
    if (run.schedule == DPUSIM_SCHEDULE_MODELLED)
        for (uint32_t t = 0; t < run.nr_tasklets; t++)
            ready_insert(t);
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
        if (can_run(&run.tasklets[t]) && run.tasklets[t].time <= earliest_time + SHUFFLE_QUANTUM_CYCLES)
            candidates[count++] = t;
    return candidates[shuffle_next() % count];
}

uint32_t clock_pick(uint32_t round_robin_start) {
    if (run.schedule == DPUSIM_SCHEDULE_MODELLED) {
        if (nr_ready == 0)
            return DPUSIM_NO_TASKLET;
        uint32_t runnable = nr_ready;
        return run_modelled(ready_take_earliest(), runnable);
    }
    /* One pass: how many can run, and the two earliest (ties to the lower id). */
    uint32_t runnable = 0, earliest = DPUSIM_NO_TASKLET;
    uint64_t earliest_time = UINT64_MAX, second_time = UINT64_MAX;
    for (uint32_t t = 0; t < run.nr_tasklets; t++) {
        const struct tasklet *tasklet = &run.tasklets[t];
        if (!can_run(tasklet))
            continue;
        runnable++;
        if (tasklet->time < earliest_time) {
            second_time = earliest_time;
            earliest = t;
            earliest_time = tasklet->time;
        } else if (tasklet->time < second_time) {
            second_time = tasklet->time;
        }
    }
    if (runnable == 0)
        return DPUSIM_NO_TASKLET;
    run.cycles_per_instruction = runnable > DPUSIM_PIPELINE_DEPTH ? runnable : DPUSIM_PIPELINE_DEPTH;
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
    uint64_t own = run.tasklets[chosen].time;
    run.others_earliest = others;
    run.yield_at = others == UINT64_MAX ? UINT64_MAX : (others > own ? others : own) + ahead;
    return chosen;
}

uint32_t clock_pick_with_running(void) {
    if (run.schedule != DPUSIM_SCHEDULE_MODELLED)
        return clock_pick(0); /* the scan sees the running tasklet, which is runnable */
    uint32_t self = (uint32_t)(run.running - run.tasklets);
    uint32_t runnable = nr_ready + 1;
    if (nr_ready == 0 || order_key(self) < *ready_slot(0))
        return run_modelled(self, runnable);
    uint32_t chosen = ready_take_earliest();
    ready_insert(self);
    return run_modelled(chosen, runnable);
}

void clock_woken(struct tasklet *tasklet, uint64_t at) {
    if (tasklet->time < at)
        tasklet->time = at;
    if (run.schedule != DPUSIM_SCHEDULE_FAST && tasklet->time < run.others_earliest)
        run.others_earliest = tasklet->time;
    if (run.schedule != DPUSIM_SCHEDULE_FAST && tasklet->time + quantum() < run.yield_at)
        run.yield_at = tasklet->time + quantum();
    if (run.schedule == DPUSIM_SCHEDULE_MODELLED)
        ready_insert((uint32_t)(tasklet - run.tasklets));
    clock_arm(); /* yield_at may have come closer */
}

void clock_dma_issue(uint32_t alpha, uint32_t size) {
    clock_charge(COST_DMA_ISSUE);
    clock_wait_turn();
    struct tasklet *self = run.running;
    uint64_t cycles = alpha + size / 2;
    uint64_t start = self->time > run.dma_free_at ? self->time : run.dma_free_at;
    run.dma_free_at = start + cycles;
    run.dma_cycles += cycles;
    self->time = run.dma_free_at;
    /* Its time jumped, so its budget is stale; but after the transfer it waits its turn (clock_wait_turn) and
     * usually gives way, which sets the next tasklet's. So the budget is only made spent, and the next block
     * checks the time exactly (budget_spent). */
    run.budget = run.budget_armed = -1;
}

uint64_t clock_dpu_cycles(void) {
    uint64_t latest = run.dma_free_at;
    for (uint32_t t = 0; t < run.nr_tasklets; t++)
        if (run.tasklets[t].time > latest)
            latest = run.tasklets[t].time;
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
        if (run.block_runs[b] == 0)
            continue;
        for (uint32_t c = 0; c < DPUSIM_INSTRUCTION_CLASSES; c++) {
            uint64_t instructions = run.block_runs[b] * __dpusim_block_classes[b][c];
            class_instructions[c] += instructions;
            in_blocks += instructions;
        }
    }
    /* Whatever the tasklets executed outside the kernel's blocks was charged for the SDK's routines. */
    uint64_t total = clock_dpu_instructions();
    class_instructions[DPUSIM_CLASS_SDK_ROUTINE] = total > in_blocks ? total - in_blocks : 0;
}
