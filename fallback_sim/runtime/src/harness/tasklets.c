/*
 * Tasklets as coroutines.
 *
 * A DPU runs NR_TASKLETS hardware threads that all start at main. Here each tasklet is a coroutine with its own
 * native stack; a scheduler loop on the worker's stack runs them in turn, tasklet 0 first. A tasklet runs until
 * it finishes, blocks (barrier, mutex, semaphore, handshake: sync.c), gives way (clock.c), or faults; then the
 * scheduler picks the next one: by modelled time, or in the fast schedule round robin.
 *
 * When no tasklet can run but some have not finished, the run ends as the DPU's would. A tasklet waiting at a
 * barrier, a semaphore or a handshake has run `stop` there, and on a DPU a stopped tasklet is like a finished one
 * (crt0 ends main with `stop` too): the DPU is done, and the simulator says which tasklets never resumed (strict
 * mode faults). A tasklet waiting for a mutex spins on `acquire` and never stops, so the DPU would hang: that is
 * a deadlock fault naming what each tasklet waits for.
 *
 * A synchronisation routine charges what the SDK's routine executes (sdk_costs.h) and sets the time at which a
 * tasklet it releases resumes: the releaser's time when it resumes that tasklet, plus what the released tasklet
 * still executes in the routine. Who waits lives here, in the worker, not in WRAM: the DPU clears its atomic
 * bits at every boot, and a launch that ends leaves no tasklet running.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "sdk_costs.h"

struct run_state run;
uint32_t __dpusim_tasklet_id;

static uint64_t next_ticket;
static bool in_tasklet;

uint64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* How much lower each tasklet's stack starts than the previous one's: 2 KiB and one cache line. */
#define STACK_COLOUR 2112u

void tasklets_allocate_stacks(void) {
    const size_t per_tasklet = DPUSIM_STACK_GUARD + DPUSIM_NATIVE_STACK_SIZE;
    char *base = (char *)(uintptr_t)DPUSIM_STACK_BASE;
    void *mapped = mmap(base, per_tasklet * DPUSIM_MAX_TASKLETS, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (mapped != base) {
        fprintf(stderr, "dpusim worker: cannot map tasklet stacks at %p: %s\n", (void *)base, strerror(errno));
        exit(DPUSIM_EXIT_FAULT);
    }
    for (uint32_t t = 0; t < DPUSIM_MAX_TASKLETS; t++) {
        char *guard = base + t * per_tasklet;
        mprotect(guard, DPUSIM_STACK_GUARD, PROT_NONE);
        run.tasklets[t].stack_low = guard + DPUSIM_STACK_GUARD;
        /* Stacks DPUSIM_NATIVE_STACK_SIZE + DPUSIM_STACK_GUARD apart would put every tasklet's locals in the
         * same sets of the host's caches, whose set index repeats every 4 to 64 KiB: interleaved tasklets
         * then evict each other's buffers. Starting each stack a few cache lines lower avoids that. */
        run.tasklets[t].stack_high = guard + per_tasklet - t * STACK_COLOUR;
    }
}

/* MXCSR without its exception flags (bits 0-5), as dpusim_switch saves it. */
#define MXCSR_CONTROL_BITS 0xffc0u

void *dpusim_prepare_stack(char *stack_high, void (*entry)(void)) {
    uint64_t *sp = (uint64_t *)((uintptr_t)stack_high & ~(uintptr_t)15);
#if defined(__x86_64__)
    uint32_t mxcsr;
    uint16_t fpu_control;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpu_control));
    *--sp = 0;                         /* entry never returns: no return address */
    *--sp = (uint64_t)(uintptr_t)entry; /* popped by dpusim_switch's ret */
    for (int reg = 0; reg < 6; reg++) /* rbp rbx r12 r13 r14 r15 */
        *--sp = 0;
    *--sp = (uint64_t)(mxcsr & MXCSR_CONTROL_BITS) | ((uint64_t)fpu_control << 32);
#elif defined(__aarch64__)
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    sp -= 22; /* 176-byte frame: x19-x30, d8-d15, fpcr */
    memset(sp, 0, 176);
    sp[11] = (uint64_t)(uintptr_t)entry; /* x30 */
    sp[20] = fpcr;
#endif
    return sp;
}

static struct tasklet *current(void) { return run.running; }

void switch_to_scheduler(void) {
    struct tasklet *self = current();
    clock_settle();
    in_tasklet = false;
    run.switches++;
    dpusim_switch(&self->saved_sp, run.scheduler_sp);
}

static void start(uint32_t tasklet);

void tasklet_give_way(void) {
    struct tasklet *self = current();
    if (run.schedule == DPUSIM_SCHEDULE_FAST || run.faulted) {
        switch_to_scheduler();
        return;
    }
    /* Switch to the tasklet the model picks straight away, one context switch instead of two through the
     * scheduler's loop. */
    clock_settle(); /* the pick reads this tasklet's clock */
    uint32_t chosen = clock_pick_with_running();
    struct tasklet *next = &run.tasklets[chosen];
    if (next == self) {
        clock_arm(); /* the pick set its issue interval and yield_at anew */
        return;
    }
    if (next->state == TASKLET_UNSTARTED)
        start(chosen);
    __dpusim_tasklet_id = chosen;
    run.running = next;
    clock_arm();
    run.switches++;
    dpusim_switch(&self->saved_sp, next->saved_sp);
}

static void tasklet_entry(void) {
    __dpusim_kernel_main();
    __dpusim_tasklet_exit();
}

void __dpusim_tasklet_exit(void) {
    clock_stop();
    current()->state = TASKLET_DONE;
    switch_to_scheduler();
    abort(); /* a finished tasklet is never resumed */
}

void tasklet_block(enum wait_kind wait, const void *key, uint32_t instructions) {
    struct tasklet *self = current();
    clock_charge(instructions);
    clock_stop();
    self->state = TASKLET_BLOCKED;
    self->wait = wait;
    self->wait_key = key;
    self->wait_ticket = next_ticket++;
    run.record->tasklets[__dpusim_tasklet_id].sync_waits++;
    switch_to_scheduler();
}

void tasklet_wake(uint32_t tasklet, uint32_t instructions, uint32_t resumed_tail) {
    struct tasklet *woken = &run.tasklets[tasklet];
    clock_charge(instructions);
    clock_settle(); /* the woken tasklet resumes at this one's clock */
    woken->state = TASKLET_RUNNABLE;
    woken->wait = WAIT_NONE;
    woken->instructions += resumed_tail;
    clock_woken(woken, COST_RESUME_LATENCY + resumed_tail);
}

uint32_t tasklet_first_waiter(enum wait_kind wait, const void *key) {
    uint32_t found = DPUSIM_NO_TASKLET;
    for (uint32_t t = 0; t < run.nr_tasklets; t++) {
        struct tasklet *candidate = &run.tasklets[t];
        if (candidate->state == TASKLET_BLOCKED && candidate->wait == wait && candidate->wait_key == key &&
            (found == DPUSIM_NO_TASKLET || candidate->wait_ticket < run.tasklets[found].wait_ticket))
            found = t;
    }
    return found;
}

void fault_record(uint32_t kind, uint64_t address, uint64_t value, uint64_t pc, int signal, const char *message) {
    struct dpusim_fault *fault = &run.record->fault;
    fault->kind = kind;
    fault->tasklet = in_tasklet ? __dpusim_tasklet_id : DPUSIM_NO_TASKLET;
    fault->address = address;
    fault->value = value;
    fault->pc = pc;
    fault->signal = signal;
    size_t length = strlen(message);
    if (length >= sizeof fault->message)
        length = sizeof fault->message - 1;
    memcpy(fault->message, message, length);
    fault->message[length] = '\0';
}

void __dpusim_fault(uint32_t kind, uint64_t address, uint64_t value, const char *format, ...) {
    char message[DPUSIM_MESSAGE_SIZE];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, sizeof message, format, arguments);
    va_end(arguments);
    fault_record(kind, address, value, 0, 0, message);
    run.faulted = true;
    if (!in_tasklet)
        _exit(DPUSIM_EXIT_FAULT);
    switch_to_scheduler();
    abort(); /* a faulted DPU's tasklets are never resumed */
}

bool __dpusim_strict(void) { return (control->flags & DPUSIM_FLAG_STRICT) != 0; }

void *__dpusim_heap_start(void) {
    uintptr_t heap = ((uintptr_t)__dpusim_wram_static_end + 7) & ~(uintptr_t)7;
    for (uint32_t t = 0; t < DPUSIM_MAX_TASKLETS; t++)
        heap += __dpusim_kernel_info.stack_sizes[t];
    return (void *)heap;
}

/* ---- The scheduler ---------------------------------------------------------------------------------------- */

static const char *wait_name(enum wait_kind wait) {
    switch (wait) {
    case WAIT_BARRIER:
        return "at barrier";
    case WAIT_MUTEX:
        return "on mutex";
    case WAIT_SEMAPHORE:
        return "on semaphore";
    case WAIT_HANDSHAKE_NOTIFY:
        return "in handshake_notify";
    case WAIT_HANDSHAKE_WAIT:
        return "in handshake_wait_for";
    default:
        return "";
    }
}

/* Appends " t <what it waits for>;" for every blocked tasklet to message, which holds `used` bytes. */
static size_t describe_blocked(char *message, size_t used) {
    for (uint32_t t = 0; t < run.nr_tasklets && used < DPUSIM_MESSAGE_SIZE; t++) {
        struct tasklet *blocked = &run.tasklets[t];
        char *end = message + used;
        size_t left = DPUSIM_MESSAGE_SIZE - used;
        if (blocked->state != TASKLET_BLOCKED)
            continue;
        if (blocked->wait == WAIT_HANDSHAKE_WAIT)
            used += (size_t)snprintf(end, left, " %u waits for tasklet %u;", t,
                                     (uint32_t)((uintptr_t)blocked->wait_key - 1));
        else if (blocked->wait == WAIT_HANDSHAKE_NOTIFY)
            used += (size_t)snprintf(end, left, " %u %s;", t, wait_name(blocked->wait));
        else
            used += (size_t)snprintf(end, left, " %u %s %#lx;", t, wait_name(blocked->wait),
                                     (unsigned long)(uintptr_t)blocked->wait_key);
    }
    return used;
}

/* Does a blocked tasklet spin (mutex_lock's `acquire` retries itself) rather than stop? */
static bool any_spinning(void) {
    for (uint32_t t = 0; t < run.nr_tasklets; t++)
        if (run.tasklets[t].state == TASKLET_BLOCKED && run.tasklets[t].wait == WAIT_MUTEX)
            return true;
    return false;
}

static void report_deadlock(bool spinning) {
    char message[DPUSIM_MESSAGE_SIZE];
    size_t used = (size_t)snprintf(message, sizeof message, "deadlock: every live tasklet is blocked:");
    used = describe_blocked(message, used);
    if (used < sizeof message)
        snprintf(message + used, sizeof message - used, "%s",
                 spinning ? " a DPU would hang (a mutex waiter spins for ever)"
                          : " strict mode (a DPU would end: its stopped tasklets count as finished)");
    fault_record(DPUSIM_FAULT_DEADLOCK, 0, 0, 0, 0, message);
    run.faulted = true;
}

static uint32_t first_blocked(void) {
    for (uint32_t t = 0; t < run.nr_tasklets; t++)
        if (run.tasklets[t].state == TASKLET_BLOCKED)
            return t;
    return DPUSIM_NO_TASKLET;
}

/* No tasklet can run, and `first` (at least) has not finished. */
static void end_with_blocked_tasklets(uint32_t first) {
    bool spinning = any_spinning();
    if (spinning || __dpusim_strict()) {
        report_deadlock(spinning);
        return;
    }
    char blocked[DPUSIM_MESSAGE_SIZE];
    describe_blocked(blocked, 0);
    warning_once("stopped for ever", 0, first,
                 "the DPU ends, as a DPU does, with tasklets stopped for ever (a stopped tasklet counts as "
                 "finished; strict mode faults):%s",
                 blocked);
}

static void start(uint32_t tasklet) {
    struct tasklet *t = &run.tasklets[tasklet];
    t->state = TASKLET_RUNNABLE;
    t->wait = WAIT_NONE;
    stack_paint(tasklet);
    t->saved_sp = dpusim_prepare_stack(t->stack_high, tasklet_entry);
}

void tasklets_run(uint32_t dpu, struct dpusim_dpu_record *record, char *log, uint64_t log_capacity) {
    run.dpu = dpu;
    run.record = record;
    run.nr_tasklets = __dpusim_kernel_info.nr_tasklets;
    run.faulted = false;
    run.switches = 0;
    clock_reset(dpu);
    perfcounter_reset();
    run.log = log;
    run.log_capacity = log_capacity;
    sync_reset();
    next_ticket = 0;
    for (uint32_t t = 0; t < DPUSIM_MAX_TASKLETS; t++)
        run.tasklets[t].state = TASKLET_UNSTARTED;

    uint64_t started_ns = monotonic_ns();
    uint32_t next = 0;
    while (!run.faulted) {
        uint32_t chosen = clock_pick(next);
        if (chosen == DPUSIM_NO_TASKLET) {
            uint32_t blocked = first_blocked();
            if (blocked != DPUSIM_NO_TASKLET)
                end_with_blocked_tasklets(blocked);
            break;
        }
        if (run.tasklets[chosen].state == TASKLET_UNSTARTED)
            start(chosen);
        __dpusim_tasklet_id = chosen;
        run.running = &run.tasklets[chosen];
        clock_arm();
        in_tasklet = true;
        run.switches++;
        dpusim_switch(&run.scheduler_sp, run.tasklets[chosen].saved_sp);
        next = (chosen + 1) % run.nr_tasklets;
    }
    stack_measure();
    for (uint32_t t = 0; t < run.nr_tasklets; t++) {
        record->tasklets[t].instructions = run.tasklets[t].instructions;
        record->tasklets[t].cycles = clock_tasklet_cycles(t);
    }
    record->native_ns = monotonic_ns() - started_ns;
    record->switches = run.switches;
    record->cycles = clock_dpu_cycles();
    record->dma_cycles = run.dma_cycles;
    record->instructions = clock_dpu_instructions();
    clock_classes(record->class_instructions);
}
