/*
 * The DPU runtime's synchronisation routines, as the SDK 2025.1 runs them: mutexes are the inline assembly of
 * syslib/mutex.h (an atomic bit taken by `acquire`, retried while busy); barriers, semaphores and handshakes
 * follow the compiled runtime (librt_v1A.a: barrier.c.obj, sem.c.obj, handshake.c.obj, disassembled).
 *
 * The SDK's routines keep their state in WRAM: a barrier_t or sem_t's count and wait_queue bytes (wait_queue
 * names the last tasklet to queue, 0xFF none), and a 24-entry __handshake_array whose entry n names the tasklet
 * waiting for n (or n itself, waiting in handshake_notify; 0xFF nobody). The simulator reads and writes those
 * bytes exactly as the SDK does and decides from them, so hand-filled objects and state left by an earlier
 * launch behave as on a DPU. Who waits, and in what order, the harness keeps (the SDK's __sys_wq_table links the
 * waiters of an object in arrival order, and the releaser resumes them in that order).
 *
 * A waiting tasklet runs `stop`; on a DPU a stopped tasklet is like a finished one (the DPU is done when every
 * tasklet has stopped). A mutex waiter instead spins on `acquire`, which never ends while nobody releases.
 */
#include <stdint.h>

#include "internal.h"
#include "sdk_costs.h"

#define NO_WAITER 0xFFu

/* ---- Mutexes -------------------------------------------------------------------------------------------- */

/* Held mutexes, keyed by pointer value. A DPU has 256 atomic bits; a run never holds more locks than that. */
#define MAX_HELD_LOCKS 256
struct held_lock {
    const void *key;
    uint32_t owner;
};
static struct held_lock held_locks[MAX_HELD_LOCKS];
static uint32_t nr_held_locks;

void sync_reset(void) { nr_held_locks = 0; }

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
        /* The unlocking tasklet hands the lock over before waking us. */
        tasklet_block(WAIT_MUTEX, key, COST_MUTEX_LOCK);
    }
}

bool __dpusim_mutex_trylock(const void *key) {
    clock_wait_turn();
    bool free = find_lock(key) == NULL;
    if (free)
        take_free_lock(key);
    clock_charge(free ? COST_MUTEX_TRYLOCK_TAKEN : COST_MUTEX_TRYLOCK_BUSY);
    clock_wait_turn();
    return free;
}

/* `release` clears the bit whoever holds it, and a free bit stays free. */
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
    uint32_t waiter = tasklet_first_waiter(WAIT_MUTEX, key);
    if (waiter != DPUSIM_NO_TASKLET) {
        lock->owner = waiter;
        tasklet_wake(waiter, 0, COST_MUTEX_RESUMED_TAIL);
    } else {
        *lock = held_locks[--nr_held_locks];
    }
    clock_wait_turn();
}

/* ---- Virtual mutexes ------------------------------------------------------------------------------------ */

/* The lock key of a virtual mutex: its byte and bit, with bit 62 set so that no real address is one. */
static const void *vmutex_key(const uint8_t *byte, uint32_t bit) {
    return (const void *)((uintptr_t)1 << 62 | (uintptr_t)byte << 3 | bit);
}

/* vmutex_lock takes the guard, reads the byte, stores it with the bit set, releases the guard, and starts again
 * while the bit was already set. A waiter spins like a mutex waiter; the unlocking tasklet hands the bit over. The
 * guard is held only inside these routines, which run at one modelled time, so it is never seen busy. */
void __dpusim_vmutex_lock(uint8_t *byte, uint32_t bit, const void *guard) {
    (void)guard;
    clock_charge(COST_VMUTEX_SETUP + COST_VMUTEX_ATTEMPT);
    clock_wait_turn();
    uint8_t mask = (uint8_t)(1u << bit);
    if ((*byte & mask) == 0) {
        *byte |= mask;
        clock_wait_turn();
        return;
    }
    tasklet_block(WAIT_MUTEX, vmutex_key(byte, bit), 0);
}

/* vmutex_unlock takes the guard, clears the bit whoever set it, and releases the guard. */
void __dpusim_vmutex_unlock(uint8_t *byte, uint32_t bit, const void *guard) {
    (void)guard;
    clock_charge(COST_VMUTEX_UNLOCK);
    clock_wait_turn();
    uint8_t mask = (uint8_t)(1u << bit);
    if ((*byte & mask) == 0 && __dpusim_strict())
        __dpusim_fault(DPUSIM_FAULT_SYNC_MISUSE, (uintptr_t)byte, bit,
                       "vmutex_unlock of bit %u of %p, which is not locked", bit, (void *)byte);
    *byte &= (uint8_t)~mask;
    uint32_t waiter = tasklet_first_waiter(WAIT_MUTEX, vmutex_key(byte, bit));
    if (waiter != DPUSIM_NO_TASKLET) {
        *byte |= mask;
        tasklet_wake(waiter, 0, COST_VMUTEX_ATTEMPT);
    }
    clock_wait_turn();
}

/* ---- Barriers and semaphores ----------------------------------------------------------------------------- */

/* The SDK's 4-byte barrier_t and sem_t share this layout. */
struct wait_object {
    uint8_t wait_queue;
    uint8_t count;
    uint8_t initial_count;
    uint8_t lock;
};

/* The object's wait_queue names a tasklet, but none waits on it: a barrier_t or sem_t filled by hand with
 * another wait_queue than 0xFF, or left so by a launch that ended with tasklets waiting on it. The SDK then
 * resumes the tasklets that its __sys_wq_table links from that one, which the simulator cannot know: it
 * resumes none (strict mode faults). */
static void stale_wait_queue(const char *routine, const struct wait_object *object) {
    if (__dpusim_strict())
        __dpusim_fault(DPUSIM_FAULT_SYNC_MISUSE, (uintptr_t)object, object->wait_queue,
                       "%s(%p): wait_queue names tasklet %u but no tasklet waits on it (a barrier_t or sem_t "
                       "filled by hand needs wait_queue 0xFF)",
                       routine, (const void *)object, object->wait_queue);
    warning_once(routine, (uintptr_t)object, __dpusim_tasklet_id,
                 "%s(%p): wait_queue names tasklet %u but no tasklet waits on it (a barrier_t or sem_t filled by "
                 "hand needs wait_queue 0xFF); a DPU would resume tasklets from a stale wait queue, the simulator "
                 "resumes none",
                 routine, (const void *)object, object->wait_queue);
}

/* The running tasklet queues on `object` as the SDK does (it becomes wait_queue), then stops. */
static void enqueue(struct wait_object *object, enum wait_kind wait, uint32_t cost_first, uint32_t cost_queued) {
    bool first = object->wait_queue == NO_WAITER;
    object->wait_queue = (uint8_t)__dpusim_tasklet_id;
    tasklet_block(wait, object, first ? cost_first : cost_queued);
}

/* barrier_wait: a count other than 1 (compared as an unsigned byte, so 0 too) queues the caller and
 * decrements the count (0 wraps to 255); a count of 1 releases: with waiters it resumes them in arrival order,
 * empties the queue and re-arms count from initial_count; with wait_queue 0xFF it returns and stores nothing. */
void __dpusim_barrier_wait(void *barrier) {
    struct wait_object *object = barrier;
    clock_charge(COST_BARRIER_ARRIVE);
    clock_wait_turn();
    if (object->count != 1) {
        object->count = (uint8_t)(object->count - 1);
        enqueue(object, WAIT_BARRIER, COST_BARRIER_ENQUEUE_FIRST, COST_BARRIER_ENQUEUE);
        return;
    }
    if (object->wait_queue == NO_WAITER) {
        clock_charge(COST_BARRIER_ALONE);
        clock_wait_turn();
        return;
    }
    clock_charge(COST_BARRIER_RELEASE);
    uint32_t waiter = tasklet_first_waiter(WAIT_BARRIER, barrier);
    if (waiter == DPUSIM_NO_TASKLET)
        stale_wait_queue("barrier_wait", object);
    while (waiter != DPUSIM_NO_TASKLET) {
        tasklet_wake(waiter, COST_BARRIER_PER_RESUME, COST_BARRIER_RESUMED_TAIL);
        waiter = tasklet_first_waiter(WAIT_BARRIER, barrier);
        if (waiter != DPUSIM_NO_TASKLET)
            clock_charge(COST_BARRIER_NEXT_WAITER);
    }
    object->wait_queue = NO_WAITER;
    object->count = object->initial_count;
    clock_charge(COST_BARRIER_REARM);
    clock_wait_turn();
}

/* sem_take: the count (a signed byte) is decremented; below 0 the caller queues and stops. */
void __dpusim_sem_take(void *semaphore) {
    struct wait_object *object = semaphore;
    clock_charge(COST_SEM_TAKE_ARRIVE);
    clock_wait_turn();
    int8_t count = (int8_t)(object->count - 1);
    object->count = (uint8_t)count;
    if (count < 0) {
        enqueue(object, WAIT_SEMAPHORE, COST_SEM_TAKE_ENQUEUE_FIRST, COST_SEM_TAKE_ENQUEUE);
        return;
    }
    clock_charge(COST_SEM_TAKE_TAIL);
    clock_wait_turn();
}

/* sem_give: the count is incremented whatever it was, and the first waiter is resumed whenever wait_queue is
 * not 0xFF, whatever the count (it is not consulted). */
void __dpusim_sem_give(void *semaphore) {
    struct wait_object *object = semaphore;
    clock_charge(COST_SEM_GIVE_ARRIVE);
    clock_wait_turn();
    if (object->wait_queue != NO_WAITER) {
        uint32_t waiter = tasklet_first_waiter(WAIT_SEMAPHORE, semaphore);
        if (waiter == DPUSIM_NO_TASKLET) {
            stale_wait_queue("sem_give", object);
            object->wait_queue = NO_WAITER;
        } else {
            if (waiter == object->wait_queue) /* the only waiter: the queue empties */
                object->wait_queue = NO_WAITER;
            tasklet_wake(waiter, COST_SEM_GIVE_RESUME, COST_SEM_RESUMED_TAIL);
        }
    }
    object->count = (uint8_t)(object->count + 1);
    clock_charge(COST_SEM_GIVE_TAIL);
    clock_wait_turn();
}

/* ---- Handshakes ---------------------------------------------------------------------------------------- */

/* The SDK's __handshake_array has one entry per hardware thread. */
#define HANDSHAKE_ENTRIES DPUSIM_MAX_TASKLETS

static const void *tasklet_key(uint32_t tasklet) { return (const void *)(uintptr_t)(tasklet + 1); }

/* What a stopped tasklet still runs of its routine after a `resume`. */
static uint32_t resumed_tail(enum wait_kind wait) {
    switch (wait) {
    case WAIT_BARRIER:
        return COST_BARRIER_RESUMED_TAIL;
    case WAIT_SEMAPHORE:
        return COST_SEM_RESUMED_TAIL;
    case WAIT_HANDSHAKE_NOTIFY:
        return COST_NOTIFY_RESUMED_TAIL;
    default:
        return COST_WAIT_RESUMED_TAIL;
    }
}

/* The SDK resumes the tasklet an entry names, which normally waits in a handshake. The `resume` instruction
 * continues a stopped tasklet wherever it stopped (a finished one stops again at once), but fails on a running
 * one, and the routine then jumps back to its start with the entry's atomic bit held and spins on it for ever, a
 * hang. An entry names a tasklet that does not wait there only when an earlier launch left it so or the kernel
 * wrote it. */
static void resume_from_entry(const char *routine, uint32_t entry, uint32_t named, uint32_t instructions) {
    const struct tasklet *target = &run.tasklets[named < run.nr_tasklets ? named : 0];
    if (named >= run.nr_tasklets)
        __dpusim_fault(DPUSIM_FAULT_SYNC_MISUSE, entry, named,
                       "%s: __handshake_array[%u] names tasklet %u, past NR_TASKLETS (a DPU would start that "
                       "thread)",
                       routine, entry, named);
    if (target->state == TASKLET_DONE) {
        clock_charge(instructions);
        return;
    }
    if (target->state != TASKLET_BLOCKED || target->wait == WAIT_MUTEX)
        __dpusim_fault(DPUSIM_FAULT_DEADLOCK, entry, named,
                       "%s: __handshake_array[%u] names tasklet %u, which is running (left by an earlier launch?): "
                       "on a DPU the resume fails and tasklet %u spins for ever",
                       routine, entry, named, __dpusim_tasklet_id);
    tasklet_wake(named, instructions, resumed_tail(target->wait));
}

void __dpusim_handshake_notify(uint8_t *entries) {
    clock_charge(COST_NOTIFY_ARRIVE);
    clock_wait_turn();
    uint32_t self = __dpusim_tasklet_id;
    if (entries[self] == NO_WAITER) {
        entries[self] = (uint8_t)self;
        tasklet_block(WAIT_HANDSHAKE_NOTIFY, tasklet_key(self), COST_NOTIFY_ENQUEUE);
        return;
    }
    resume_from_entry("handshake_notify", self, entries[self], COST_NOTIFY_RESUME);
    entries[self] = NO_WAITER;
    clock_charge(COST_NOTIFY_TAIL);
    clock_wait_turn();
}

/* A notifier that no tasklet can be: the SDK waits on it all the same (itself: until another tasklet waits for
 * it, which resumes it; a tasklet id past NR_TASKLETS: for ever). */
static void unusual_notifier(uint32_t notifier) {
    const char *what = notifier == __dpusim_tasklet_id ? "itself" : "a tasklet past NR_TASKLETS";
    if (__dpusim_strict())
        __dpusim_fault(DPUSIM_FAULT_SYNC_MISUSE, 0, notifier,
                       "handshake_wait_for(%u) from tasklet %u with %u tasklets: waiting for %s", notifier,
                       __dpusim_tasklet_id, run.nr_tasklets, what);
    warning_once("handshake_wait_for", notifier, __dpusim_tasklet_id,
                 "handshake_wait_for(%u) with %u tasklets waits for %s, as on a DPU (strict mode faults)", notifier,
                 run.nr_tasklets, what);
}

int __dpusim_handshake_wait_for(uint32_t notifier, uint8_t *entries) {
    clock_charge(COST_WAIT_ARRIVE);
    clock_wait_turn();
    uint32_t entry = notifier & 0xFFu; /* the SDK narrows the id to a byte first */
    if (entry >= HANDSHAKE_ENTRIES)
        __dpusim_fault(DPUSIM_FAULT_SYNC_MISUSE, 0, notifier,
                       "handshake_wait_for(%u): the SDK's runtime would use entry %u of its %u-entry "
                       "__handshake_array and an atomic bit past its own, corrupting WRAM",
                       notifier, entry, HANDSHAKE_ENTRIES);
    if (entry >= run.nr_tasklets || entry == __dpusim_tasklet_id)
        unusual_notifier(entry);
    uint32_t named = entries[entry];
    if (named == NO_WAITER) {
        entries[entry] = (uint8_t)__dpusim_tasklet_id;
        tasklet_block(WAIT_HANDSHAKE_WAIT, tasklet_key(entry), COST_WAIT_ENQUEUE);
        return 0;
    }
    if (named != entry) {
        /* Another tasklet already waits for this notifier: the SDK returns EALREADY and sets the tasklet's errno
         * (handshake.h does, as the DPU's errno is the kernel's). */
        clock_charge(COST_WAIT_ALREADY);
        clock_wait_turn();
        return DPUSIM_DPU_EALREADY;
    }
    resume_from_entry("handshake_wait_for", entry, named, COST_WAIT_RESUME);
    entries[entry] = NO_WAITER;
    clock_charge(COST_WAIT_TAIL);
    clock_wait_turn();
    return 0;
}
