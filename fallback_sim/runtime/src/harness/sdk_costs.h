/*
 * What the SDK's runtime routines execute on a DPU, in instructions. The simulator replaces these routines with
 * calls into the harness, so their kernel-side code is not instrumented; the harness charges these counts
 * instead. Each count follows the routine's source in the UPMEM SDK's DPU runtime (dpu-rt/src/syslib/), one
 * instruction per load, store, compare-and-branch, atomic acquire/release, resume and stop, plus call and
 * return. A routine that can block is split where it stops or resumes another tasklet: what runs before
 * (ARRIVE), what the releaser runs per tasklet it resumes (PER_RESUME), what it runs after (RELEASER_TAIL) and
 * what a resumed tasklet still runs before it returns (RESUMED_TAIL).
 */
#ifndef DPUSIM_HARNESS_SDK_COSTS_H
#define DPUSIM_HARNESS_SDK_COSTS_H

/* A resumed tasklet issues its next instruction in its first pipeline slot after the `resume` took effect:
 * one slot after the resumer's next instruction. */
#define COST_RESUME_LATENCY 1u

/* misc/crt0.c, __bootstrap: tasklet 0 clears the stdout state and the 256 atomic bits (a 2-instruction loop)
 * and boots tasklet 1; each tasklet boots the next one with its third instruction; each then loads its stack
 * pointer and calls main. Tasklet 0 enters main after BOOT_FIRST instructions, tasklet k > 0 after
 * BOOT_OTHERS of its own, BOOT_FIRST + BOOT_STAGGER * k instruction slots after the launch (fewer than 11
 * tasklets are running during the boot, so a slot is 11 cycles). */
#define COST_BOOT_FIRST 520u
#define COST_BOOT_OTHERS 6u
#define COST_BOOT_STAGGER 3u

/* barrier.c, barrier_wait: call, load the lock id, acquire, load count and wait_queue, me(), count == 1? */
#define COST_BARRIER_ARRIVE 7u
/* Not last: link into the circular wait queue (2 loads, 2 stores), store wait_queue and count, release, stop. */
#define COST_BARRIER_ENQUEUE 8u
/* Last: per waiter, resume it, load the next one and compare with the last. */
#define COST_BARRIER_PER_RESUME 3u
/* Last, after the loop: store wait_queue and count, release, return. */
#define COST_BARRIER_RELEASER_TAIL 4u
/* A resumed waiter returns from __stop() and from barrier_wait. */
#define COST_BARRIER_RESUMED_TAIL 2u

/* mutex.h: mutex_lock is one `acquire` that retries itself while the bit is taken, mutex_unlock one
 * `release`, mutex_trylock an `acquire` and a move of the result. A spinning waiter takes the lock at its first
 * issue slot after the release. */
#define COST_MUTEX_LOCK 1u
#define COST_MUTEX_TRYLOCK 2u
#define COST_MUTEX_UNLOCK 1u
#define COST_MUTEX_RESUMED_TAIL 1u

/* sem.c, sem_take: call, load the lock id, acquire, load and decrement count, me(), count < 0? */
#define COST_SEM_TAKE_ARRIVE 7u
/* Not blocking: store count, release, return. */
#define COST_SEM_TAKE_TAIL 3u
/* Blocking: link into the wait queue (load, 2 stores), store wait_queue and count, release, stop. */
#define COST_SEM_TAKE_ENQUEUE 7u
/* sem_give: call, load the lock id, acquire, load and increment count, load wait_queue, compare; with a waiter,
 * load the first, compare, unlink (load, store), resume; then store count, release, return. */
#define COST_SEM_GIVE_ARRIVE 7u
#define COST_SEM_GIVE_RESUME 5u
#define COST_SEM_GIVE_TAIL 3u
#define COST_SEM_RESUMED_TAIL 2u

/* handshake.c, handshake_notify: call, me(), acquire the notifier's bit, load its slot, compare with empty. */
#define COST_NOTIFY_ARRIVE 5u
/* No waiter yet: store own id, release, stop. A waiter that arrives later resumes it: it returns. */
#define COST_NOTIFY_ENQUEUE 3u
#define COST_NOTIFY_RESUMED_TAIL 1u
/* A waiter is there: resume it, then clear the slot, release, return. */
#define COST_NOTIFY_RESUME 1u
#define COST_NOTIFY_TAIL 3u
/* handshake_wait_for: call, me(), narrow the id, acquire the notifier's bit, load its slot, compare. */
#define COST_WAIT_ARRIVE 6u
/* The notifier is not there yet: store own id, release, stop; once resumed, return 0. */
#define COST_WAIT_ENQUEUE 3u
#define COST_WAIT_RESUMED_TAIL 2u
/* The notifier waits: check the slot holds the notifier, resume it, clear the slot, release, return 0. */
#define COST_WAIT_RESUME 2u
#define COST_WAIT_TAIL 4u

/* mram.h: mram_read/mram_write are an `ldma`/`sdma` and the address computation before it. */
#define COST_DMA_ISSUE 2u

/* perfcounter.c: perfcounter_get reads the counter and returns; perfcounter_config also masks, shifts and
 * writes the configuration. */
#define COST_PERFCOUNTER_GET 3u
#define COST_PERFCOUNTER_CONFIG 10u

#endif
