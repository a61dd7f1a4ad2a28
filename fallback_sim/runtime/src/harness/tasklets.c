/*
 * Tasklets as coroutines, and the synchronisation primitives of the DPU runtime.
 *
 * A DPU runs NR_TASKLETS hardware threads that all start at main. Here each tasklet is a coroutine with its own
 * native stack; a scheduler loop on the worker's stack runs them in turn, tasklet 0 first. A tasklet runs until
 * it finishes, blocks (barrier, mutex, semaphore, handshake), gives way (clock.c), or faults; then the
 * scheduler picks the next one: by modelled time, or in the fast schedule round robin. When no tasklet can run
 * but some have not finished, the DPU is in deadlock, which on hardware would be a hang: it is reported as a
 * fault naming what each tasklet waits for.
 *
 * Each synchronisation routine charges what the SDK's routine executes (sdk_costs.h) and sets the time at which
 * a tasklet it releases resumes: the releaser's time when it resumes that tasklet, plus what the released
 * tasklet still executes in the routine.
 *
 * Blocking state lives here, in the worker, not in WRAM: the DPU clears its atomic bits at every boot, so locks,
 * waiters and handshakes never outlive a launch. Barrier and semaphore counters do live in their WRAM objects,
 * as on hardware.
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

/* Held mutexes, keyed by pointer value. A DPU has 256 atomic bits; a run never holds more locks than that. */
#define MAX_HELD_LOCKS 256
struct held_lock {
    const void *key;
    uint32_t owner;
};
static struct held_lock held_locks[MAX_HELD_LOCKS];
static uint32_t nr_held_locks;
static uint64_t next_ticket;
static bool in_tasklet;

/* The SDK's 4-byte barrier_t and sem_t share this layout. */
struct wait_object {
    uint8_t wait_queue;
    uint8_t count;
    uint8_t initial_count;
    uint8_t lock;
};

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
    *--sp = (uint64_t)mxcsr | ((uint64_t)fpu_control << 32);
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
    clock_settle(); /* the pick reads this tasklet's time */
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
    dpusim_switch(&self->saved_sp, next->saved_sp);
}

static void tasklet_entry(void) {
    __dpusim_kernel_main();
    __dpusim_tasklet_exit();
}

void __dpusim_tasklet_exit(void) {
    current()->state = TASKLET_DONE;
    switch_to_scheduler();
    abort(); /* a finished tasklet is never resumed */
}

/* Blocks the running tasklet after it executed `instructions` more of its routine. */
static void block(enum wait_kind wait, const void *key, uint32_t instructions) {
    struct tasklet *self = current();
    clock_charge(instructions);
    self->state = TASKLET_BLOCKED;
    self->wait = wait;
    self->wait_key = key;
    self->wait_ticket = next_ticket++;
    run.record->tasklets[__dpusim_tasklet_id].sync_waits++;
    switch_to_scheduler();
}

/* The running tasklet resumes `tasklet` after executing `instructions` more of its own routine; the resumed
 * one runs `resumed_tail` more instructions of its routine before it returns. */
static void wake(uint32_t tasklet, uint32_t instructions, uint32_t resumed_tail) {
    struct tasklet *self = current(), *woken = &run.tasklets[tasklet];
    clock_charge(instructions);
    clock_settle(); /* the woken tasklet resumes at this one's time */
    woken->state = TASKLET_RUNNABLE;
    woken->wait = WAIT_NONE;
    woken->instructions += resumed_tail;
    clock_woken(woken, self->time + (uint64_t)(COST_RESUME_LATENCY + resumed_tail) * run.cycles_per_instruction);
}

/* The tasklet that has waited longest for (wait, key), or DPUSIM_NO_TASKLET. */
static uint32_t first_waiter(enum wait_kind wait, const void *key) {
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

/* ---- Mutexes -------------------------------------------------------------------------------------------- */

static struct held_lock *find_lock(const void *key) {
    for (uint32_t i = 0; i < nr_held_locks; i++)
        if (held_locks[i].key == key)
            return &held_locks[i];
    return NULL;
}

static void take_free_lock(const void *key) {
    if (nr_held_locks == MAX_HELD_LOCKS)
        __dpusim_fault(DPUSIM_FAULT_SYNC_MISUSE, (uintptr_t)key, MAX_HELD_LOCKS,
                       "more than %u mutexes held at once (a DPU has 256 atomic bits)", MAX_HELD_LOCKS);
    held_locks[nr_held_locks++] = (struct held_lock){.key = key, .owner = __dpusim_tasklet_id};
}

void __dpusim_mutex_lock(const void *key) {
    clock_wait_turn();
    if (find_lock(key) == NULL) {
        take_free_lock(key);
        clock_charge(COST_MUTEX_LOCK);
        clock_wait_turn();
    } else {
        block(WAIT_MUTEX, key, COST_MUTEX_LOCK); /* the unlocking tasklet hands the lock over before waking us */
    }
}

bool __dpusim_mutex_trylock(const void *key) {
    clock_charge(COST_MUTEX_TRYLOCK);
    clock_wait_turn();
    bool free = find_lock(key) == NULL;
    if (free)
        take_free_lock(key);
    clock_wait_turn();
    return free;
}

void __dpusim_mutex_unlock(const void *key) {
    clock_charge(COST_MUTEX_UNLOCK);
    clock_wait_turn(); /* before looking the lock up: other tasklets may take and free locks meanwhile */
    struct held_lock *lock = find_lock(key);
    if (lock == NULL) {
        if (__dpusim_strict())
            __dpusim_fault(DPUSIM_FAULT_SYNC_MISUSE, (uintptr_t)key, 0, "unlock of mutex %p, which is not locked",
                           key);
        return;
    }
    uint32_t waiter = first_waiter(WAIT_MUTEX, key);
    if (waiter != DPUSIM_NO_TASKLET) {
        lock->owner = waiter;
        wake(waiter, 0, COST_MUTEX_RESUMED_TAIL);
    } else {
        *lock = held_locks[--nr_held_locks];
    }
    clock_wait_turn();
}

/* ---- Barriers and semaphores ----------------------------------------------------------------------------- */

void __dpusim_barrier_wait(void *barrier) {
    struct wait_object *object = barrier;
    clock_charge(COST_BARRIER_ARRIVE);
    clock_wait_turn();
    if (object->count > 1) {
        object->count--;
        block(WAIT_BARRIER, barrier, COST_BARRIER_ENQUEUE);
        return;
    }
    object->count = object->initial_count;
    /* The SDK resumes the waiters in arrival order. */
    for (uint32_t waiter; (waiter = first_waiter(WAIT_BARRIER, barrier)) != DPUSIM_NO_TASKLET;)
        wake(waiter, COST_BARRIER_PER_RESUME, COST_BARRIER_RESUMED_TAIL);
    clock_charge(COST_BARRIER_RELEASER_TAIL);
    clock_wait_turn();
}

void __dpusim_sem_take(void *semaphore) {
    struct wait_object *object = semaphore;
    clock_charge(COST_SEM_TAKE_ARRIVE);
    clock_wait_turn();
    int8_t count = (int8_t)(object->count - 1);
    object->count = (uint8_t)count;
    if (count < 0) {
        block(WAIT_SEMAPHORE, semaphore, COST_SEM_TAKE_ENQUEUE);
        return;
    }
    clock_charge(COST_SEM_TAKE_TAIL);
    clock_wait_turn();
}

void __dpusim_sem_give(void *semaphore) {
    struct wait_object *object = semaphore;
    clock_charge(COST_SEM_GIVE_ARRIVE);
    clock_wait_turn();
    int8_t count = (int8_t)(object->count + 1);
    object->count = (uint8_t)count;
    if (count <= 0) {
        uint32_t waiter = first_waiter(WAIT_SEMAPHORE, semaphore);
        if (waiter != DPUSIM_NO_TASKLET)
            wake(waiter, COST_SEM_GIVE_RESUME, COST_SEM_RESUMED_TAIL);
    }
    clock_charge(COST_SEM_GIVE_TAIL);
    clock_wait_turn();
}

/* ---- Handshakes ---------------------------------------------------------------------------------------- */

static const void *tasklet_key(uint32_t tasklet) { return (const void *)(uintptr_t)(tasklet + 1); }

void __dpusim_handshake_notify(void) {
    clock_charge(COST_NOTIFY_ARRIVE);
    clock_wait_turn();
    uint32_t waiter = first_waiter(WAIT_HANDSHAKE_WAIT, tasklet_key(__dpusim_tasklet_id));
    if (waiter == DPUSIM_NO_TASKLET) {
        block(WAIT_HANDSHAKE_NOTIFY, tasklet_key(__dpusim_tasklet_id), COST_NOTIFY_ENQUEUE);
        return;
    }
    wake(waiter, COST_NOTIFY_RESUME, COST_WAIT_RESUMED_TAIL);
    clock_charge(COST_NOTIFY_TAIL);
    clock_wait_turn();
}

int __dpusim_handshake_wait_for(uint32_t notifier) {
    if (notifier >= run.nr_tasklets || notifier == __dpusim_tasklet_id) {
        if (__dpusim_strict())
            __dpusim_fault(DPUSIM_FAULT_SYNC_MISUSE, 0, notifier,
                           "handshake_wait_for(%u) with %u tasklets from tasklet %u", notifier, run.nr_tasklets,
                           __dpusim_tasklet_id);
        return DPUSIM_DPU_EINVAL;
    }
    clock_charge(COST_WAIT_ARRIVE);
    clock_wait_turn();
    if (first_waiter(WAIT_HANDSHAKE_WAIT, tasklet_key(notifier)) != DPUSIM_NO_TASKLET)
        return DPUSIM_DPU_EALREADY;
    struct tasklet *other = &run.tasklets[notifier];
    if (other->state == TASKLET_BLOCKED && other->wait == WAIT_HANDSHAKE_NOTIFY) {
        wake(notifier, COST_WAIT_RESUME, COST_NOTIFY_RESUMED_TAIL);
        clock_charge(COST_WAIT_TAIL);
        clock_wait_turn();
    } else {
        block(WAIT_HANDSHAKE_WAIT, tasklet_key(notifier), COST_WAIT_ENQUEUE);
    }
    return 0;
}

/* ---- Performance counter --------------------------------------------------------------------------------- */

enum { COUNT_SAME = 0, COUNT_CYCLES = 1, COUNT_INSTRUCTIONS = 2, COUNT_NOTHING = 3 };

/* The DPU's cycle counter is its clock, which the running tasklet reads at its own time; the instruction
 * counter counts every tasklet's instructions. */
static uint64_t counter_source(uint32_t mode) {
    clock_settle();
    return mode == COUNT_INSTRUCTIONS ? clock_dpu_instructions() : current()->time;
}

static uint64_t perfcounter_read(void) {
    if (run.perfcounter_mode == COUNT_NOTHING)
        return run.perfcounter_frozen;
    return counter_source(run.perfcounter_mode) - run.perfcounter_base;
}

uint64_t __dpusim_perfcounter_get(void) {
    clock_charge(COST_PERFCOUNTER_GET);
    return perfcounter_read();
}

uint64_t __dpusim_perfcounter_config(uint32_t config, bool reset) {
    clock_charge(COST_PERFCOUNTER_CONFIG);
    uint64_t value = perfcounter_read();
    uint64_t kept = reset ? 0 : value;
    if (config == COUNT_SAME)
        config = run.perfcounter_mode;
    if (config == COUNT_CYCLES || config == COUNT_INSTRUCTIONS) {
        run.perfcounter_mode = config;
        run.perfcounter_base = counter_source(config) - kept;
    } else {
        run.perfcounter_mode = COUNT_NOTHING;
        run.perfcounter_frozen = kept;
    }
    return value;
}

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

static void report_deadlock(void) {
    char message[DPUSIM_MESSAGE_SIZE];
    size_t used = (size_t)snprintf(message, sizeof message, "deadlock: every live tasklet is blocked:");
    for (uint32_t t = 0; t < run.nr_tasklets && used < sizeof message; t++) {
        struct tasklet *blocked = &run.tasklets[t];
        if (blocked->state != TASKLET_BLOCKED)
            continue;
        if (blocked->wait == WAIT_HANDSHAKE_WAIT)
            used += (size_t)snprintf(message + used, sizeof message - used, " %u waits for tasklet %u;", t,
                                     (uint32_t)((uintptr_t)blocked->wait_key - 1));
        else if (blocked->wait == WAIT_HANDSHAKE_NOTIFY)
            used += (size_t)snprintf(message + used, sizeof message - used, " %u %s;", t, wait_name(blocked->wait));
        else
            used += (size_t)snprintf(message + used, sizeof message - used, " %u %s %#lx;", t,
                                     wait_name(blocked->wait), (unsigned long)(uintptr_t)blocked->wait_key);
    }
    fault_record(DPUSIM_FAULT_DEADLOCK, 0, 0, 0, 0, message);
    run.faulted = true;
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
    clock_reset(dpu);
    run.perfcounter_base = 0;
    run.perfcounter_mode = COUNT_CYCLES;
    run.log = log;
    run.log_capacity = log_capacity;
    nr_held_locks = 0;
    next_ticket = 0;
    for (uint32_t t = 0; t < DPUSIM_MAX_TASKLETS; t++)
        run.tasklets[t].state = TASKLET_UNSTARTED;

    uint64_t started_ns = monotonic_ns();
    uint32_t next = 0;
    while (!run.faulted) {
        uint32_t chosen = clock_pick(next);
        if (chosen == DPUSIM_NO_TASKLET) {
            for (uint32_t t = 0; t < run.nr_tasklets; t++)
                if (run.tasklets[t].state != TASKLET_DONE) {
                    report_deadlock();
                    break;
                }
            break;
        }
        if (run.tasklets[chosen].state == TASKLET_UNSTARTED)
            start(chosen);
        __dpusim_tasklet_id = chosen;
        run.running = &run.tasklets[chosen];
        clock_arm();
        in_tasklet = true;
        dpusim_switch(&run.scheduler_sp, run.tasklets[chosen].saved_sp);
        next = (chosen + 1) % run.nr_tasklets;
    }
    stack_measure();
    for (uint32_t t = 0; t < run.nr_tasklets; t++) {
        record->tasklets[t].instructions = run.tasklets[t].instructions;
        record->tasklets[t].cycles = run.tasklets[t].time;
    }
    record->native_ns = monotonic_ns() - started_ns;
    record->cycles = clock_dpu_cycles();
    record->dma_cycles = run.dma_cycles;
    record->instructions = clock_dpu_instructions();
    clock_classes(record->class_instructions);
}
