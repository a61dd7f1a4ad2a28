/*
 * fault_deadlock.c: every live tasklet blocked (DPUSIM_FAULT_DEADLOCK), by `mode`. Mutex waiters spin, so modes
 * 1 and 4 fault in every mode; modes 2, 3 and 5 leave tasklets stopped, which ends a DPU as if they had finished,
 * so they fault in strict mode only.
 *
 *  mode 0: no synchronisation                                                 -> no fault
 *  mode 1: tasklet 0 locks first_mutex, tasklet 1 locks second_mutex; both meet at a 2-tasklet barrier, then
 *          each locks the other's mutex (opposite order)                      -> DEADLOCK (NR_TASKLETS >= 2)
 *  mode 2: every tasklet waits at a barrier for NR_TASKLETS + 1               -> DEADLOCK (strict)
 *  mode 3: tasklet 0 waits for a handshake from tasklet 1, which returns      -> DEADLOCK (strict)
 *  mode 4: tasklet 0 locks first_mutex twice (mutexes are not recursive)      -> DEADLOCK
 *  mode 5: tasklet 0 takes a semaphore whose count is 0                       -> DEADLOCK (strict)
 * Tasklets with no part in a mode return at once. Build with NR_TASKLETS >= 2 for modes 1 and 3.
 */
#include <stdint.h>

#include <barrier.h>
#include <defs.h>
#include <handshake.h>
#include <mutex.h>
#include <sem.h>

#define PAIR 2

__host uint32_t mode;

MUTEX_INIT(first_mutex);
MUTEX_INIT(second_mutex);
BARRIER_INIT(pair_barrier, PAIR);
BARRIER_INIT(too_many_barrier, NR_TASKLETS + 1);
SEMAPHORE_INIT(empty_semaphore, 0);

static void opposite_order(void)
{
    if (me() == 0) {
        mutex_lock(first_mutex);
        barrier_wait(&pair_barrier);
        mutex_lock(second_mutex);
        mutex_unlock(second_mutex);
        mutex_unlock(first_mutex);
    } else if (me() == 1) {
        mutex_lock(second_mutex);
        barrier_wait(&pair_barrier);
        mutex_lock(first_mutex);
        mutex_unlock(first_mutex);
        mutex_unlock(second_mutex);
    }
}

int main(void)
{
    switch (mode) {
    case 1:
        opposite_order();
        break;
    case 2:
        barrier_wait(&too_many_barrier);
        break;
    case 3:
        if (me() == 0) {
            handshake_wait_for(1);
        }
        break;
    case 4:
        if (me() == 0) {
            mutex_lock(first_mutex);
            mutex_lock(first_mutex);
        }
        break;
    case 5:
        if (me() == 0) {
            sem_take(&empty_semaphore);
        }
        break;
    default:
        break;
    }
    return 0;
}
