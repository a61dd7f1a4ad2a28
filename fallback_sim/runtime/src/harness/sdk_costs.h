/*
 * What the SDK's runtime routines execute on a DPU, in instructions. The simulator replaces these routines with
 * calls into the harness, so their kernel-side code is not instrumented; the harness charges these counts
 * instead. Each count follows the routine's source in the UPMEM SDK's DPU runtime (dpu-rt/src/syslib/), one
 * instruction per load, store, compare-and-branch, atomic acquire/release, resume and stop, plus call and
 * return. A routine that can block is split where it stops or resumes another tasklet: what runs before
 * (ARRIVE), what the releaser runs per tasklet it resumes (PER_RESUME), what it runs after (TAIL, REARM) and
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

/* The synchronisation routines below follow the SDK 2025.1's compiled runtime (librt_v1A.a: barrier.c.obj,
 * sem.c.obj, handshake.c.obj, disassembled), instruction by instruction and per path; each count includes the
 * caller's `call` in its first part. A tasklet that stops runs `stop` as the last instruction of its part, and
 * after a `resume` the instructions that follow it in its own routine. */

/* barrier_wait: call; lbs lock; acquire; lbu count; lbu wait_queue; jeq count, 1. */
#define COST_BARRIER_ARRIVE 6u
/* count != 1, an empty queue: move id; jeq; sb wq[me] = me; jump; sb wait_queue; add; sb count; release; stop. */
#define COST_BARRIER_ENQUEUE_FIRST 9u
/* count != 1, a queue: move id; jeq; lbs first; sb wq[me]; sb wq[last]; sb wait_queue; add; sb count; release;
 * stop. */
#define COST_BARRIER_ENQUEUE 10u
/* count == 1 and wait_queue 0xFF: jeq; release; jump r23 (nothing is stored: no re-arm). */
#define COST_BARRIER_ALONE 3u
/* count == 1 with waiters: jeq; lbu first; jeq; then per waiter a `resume` (PER_RESUME), between two waiters
 * and; lbu next; jneq (NEXT_WAITER), and after the last sb wait_queue; lbs initial_count; sb count; release;
 * jump r23 (REARM). */
#define COST_BARRIER_RELEASE 3u
#define COST_BARRIER_PER_RESUME 1u
#define COST_BARRIER_NEXT_WAITER 3u
#define COST_BARRIER_REARM 5u
/* A resumed waiter returns: jump r23. */
#define COST_BARRIER_RESUMED_TAIL 1u

/* mutex.h (inline assembly): mutex_lock is one `acquire` that retries itself while the bit is taken,
 * mutex_unlock one `release`; mutex_trylock sets its result to true, then `acquire ..., z, .+2` jumps over the
 * `move result, 0` when it took the bit: 2 instructions when taken, 3 when busy. A spinning waiter takes the
 * lock at its first issue slot after the release. */
#define COST_MUTEX_LOCK 1u
#define COST_MUTEX_TRYLOCK_TAKEN 2u
#define COST_MUTEX_TRYLOCK_BUSY 3u
#define COST_MUTEX_UNLOCK 1u
#define COST_MUTEX_RESUMED_TAIL 1u

/* vmutex.h (inline assembly): vmutex_lock computes the byte, mask and guard (lsr_add; and; lsl; lsr; and; add),
 * then per attempt acquire; lbu; or; sb; release; jeq. vmutex_unlock: lsr_add; and; lsl; xor; lsr; and; add;
 * acquire; lbu; and; sb; release. */
#define COST_VMUTEX_SETUP 6u
#define COST_VMUTEX_ATTEMPT 6u
#define COST_VMUTEX_UNLOCK 12u

/* sem_take: call; lbs lock; acquire; lbs count; add; extsb; jles. */
#define COST_SEM_TAKE_ARRIVE 7u
/* count stays >= 0: sb count; release; jump r23. */
#define COST_SEM_TAKE_TAIL 3u
/* Blocking, an empty queue: lbu wait_queue; move id; jeq; sb wq[me]; sb wait_queue; sb count; release; stop. */
#define COST_SEM_TAKE_ENQUEUE_FIRST 8u
/* Blocking, a queue: lbu; move; jeq; lbs first; sb wq[me]; sb wq[last]; jump; sb; sb; release; stop. */
#define COST_SEM_TAKE_ENQUEUE 11u
/* sem_give: call; lbs lock; acquire; lbu wait_queue; lbs count; jeq wait_queue, 0xFF. With a waiter: lbu first;
 * jneq; then sb wait_queue and jump (one waiter) or lbs second and sb wq[last] (several); resume. Then add;
 * sb count; release; jump r23. */
#define COST_SEM_GIVE_ARRIVE 6u
#define COST_SEM_GIVE_RESUME 5u
#define COST_SEM_GIVE_TAIL 4u
/* A resumed taker returns: jump r23. */
#define COST_SEM_RESUMED_TAIL 1u

/* handshake_notify: call; move; move; sub; add (the notifier's atomic bit); acquire; lbu its slot; move id;
 * jeq slot, 0xFF. */
#define COST_NOTIFY_ARRIVE 9u
/* No waiter yet: sb slot = me; release; stop. Once resumed: jump r23. */
#define COST_NOTIFY_ENQUEUE 3u
#define COST_NOTIFY_RESUMED_TAIL 1u
/* A waiter is there: resume it; then move; sb slot = 0xFF; release; jump r23. */
#define COST_NOTIFY_RESUME 1u
#define COST_NOTIFY_TAIL 4u
/* handshake_wait_for: call; and 0xff; move; move; sub; add; acquire; lbu slot; move id; jeq slot, 0xFF. */
#define COST_WAIT_ARRIVE 10u
/* An empty slot: sb slot = me; release; stop; once resumed: move 0; jump r23. */
#define COST_WAIT_ENQUEUE 3u
#define COST_WAIT_RESUMED_TAIL 2u
/* The slot names the notifier itself (it waits): jneq; resume; then move; sb slot = 0xFF; release; move 0;
 * jump r23. */
#define COST_WAIT_RESUME 2u
#define COST_WAIT_TAIL 5u
/* The slot names another waiter: jneq; lsl; move 7; sw errno; release; jump r23. */
#define COST_WAIT_ALREADY 6u

/* mram.h: mram_read/mram_write are an `ldma`/`sdma` and the address computation before it. */
#define COST_DMA_ISSUE 2u

/* perfcounter.c (v1A): perfcounter_get is call; time; move.u; lslx; lsl_add; lsl; jump r23. perfcounter_config
 * is call; and; jeq (the v1B-only configurations), then lsl_add; time_cfg; move.u; lslx; lsl_add; lsl; jump r23. */
#define COST_PERFCOUNTER_GET 7u
#define COST_PERFCOUNTER_CONFIG_CHECK 3u
#define COST_PERFCOUNTER_CONFIG_TAIL 7u
/* perfcounter.c (v1B): perfcounter_config is call then the v1A tail, with no check; perfcounter_get_both is call
 * and 20 instructions (or; two moves; time_cfg x3 around two `time`s; two move.u/lslx/lsl_add/lsl conversions;
 * two sd; time_cfg; jump r23). */
#define COST_PERFCOUNTER_CALL 1u
#define COST_PERFCOUNTER_GET_BOTH 21u

#endif
