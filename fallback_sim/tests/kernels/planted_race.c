/*
 * planted_race.c: a race for the shuffle schedule to find. Every tasklet increments a shared counter
 * INCREMENTS times without a lock; between reading and writing the counter it branches on the value read, so
 * that a tasklet switch can fall in between. The fast schedule never switches there; on a DPU the update is
 * lost now and then.
 *
 * DPU outputs:  counter (u32): NR_TASKLETS * INCREMENTS when no update is lost; odd_seen (u32)
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <barrier.h>
#include <defs.h>

#define INCREMENTS 8

__host uint32_t counter;
__host uint32_t odd_seen;

BARRIER_INIT(start_barrier, NR_TASKLETS);

int main(void)
{
    if (me() == 0) {
        counter = 0;
        odd_seen = 0;
    }
    barrier_wait(&start_barrier);
    for (uint32_t i = 0; i < INCREMENTS; i++) {
        uint32_t seen = counter;
        if (seen % 2 == 1) {
            odd_seen++;
        }
        counter = seen + 1;
    }
    return 0;
}
