/*
 * handshake.c: handshake_notify / handshake_wait_for as a chain, and EALREADY.
 *
 * Part 1 (chain): tasklet t > 0 waits for t - 1, appends its id to chain_order, then notifies (except the last
 * tasklet); tasklet 0 appends and notifies first. The chain only comes out in order if each wait holds.
 * Part 2 (after a barrier): tasklets 1 and 2 both wait for tasklet 0. Whichever comes second finds the first
 * already waiting and gets EALREADY at once; it then gives a semaphore, on which tasklet 0 waits before
 * notifying, so the notify pairs with the one registered waiter.
 *
 * DPU outputs:  chain_order[i] = i for i < NR_TASKLETS; chain_errors = 0 (chain waits that did not return 0)
 *               success_count = 1, ealready_count = 1, other_count = 0
 * NR_TASKLETS >= 3.
 */
#include <errno.h>
#include <stdint.h>

#include <barrier.h>
#include <defs.h>
#include <handshake.h>
#include <sem.h>

#if NR_TASKLETS < 3
#error "handshake.c needs two waiters and a notifier: build it with NR_TASKLETS >= 3"
#endif

#define NOTIFIER 0
#define FIRST_WAITER 1
#define SECOND_WAITER 2

__host uint32_t chain_order[NR_TASKLETS];
__host uint32_t chain_errors;
__host uint32_t success_count;
__host uint32_t ealready_count;
__host uint32_t other_count;

uint32_t chain_position;

BARRIER_INIT(phase_barrier, NR_TASKLETS);
SEMAPHORE_INIT(second_waiter_done, 0);

int main(void)
{
    uint32_t id = me();
    if (id == 0) {
        chain_position = 0;
        chain_errors = 0;
        success_count = 0;
        ealready_count = 0;
        other_count = 0;
    }

    if (id > 0 && handshake_wait_for(id - 1) != 0) {
        chain_errors++;
    }
    chain_order[chain_position++] = id;
    if (id < NR_TASKLETS - 1) {
        handshake_notify();
    }
    barrier_wait(&phase_barrier);

    if (id == FIRST_WAITER || id == SECOND_WAITER) {
        int result = handshake_wait_for(NOTIFIER);
        if (result == 0) {
            success_count++;
        } else if (result == EALREADY) {
            ealready_count++;
            sem_give(&second_waiter_done);
        } else {
            other_count++;
        }
    } else if (id == NOTIFIER) {
        sem_take(&second_waiter_done);
        handshake_notify();
    }
    return 0;
}
