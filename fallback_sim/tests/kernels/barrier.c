/*
 * barrier.c: BARRIER_INIT barriers and barrier_t objects filled field by field (as PrIM's HST-L does), used by a
 * subset of the tasklets.
 *
 * Part 1, all tasklets, PHASES times: each tasklet writes the phase number into its slot, waits at the barrier,
 * checks that every tasklet's slot holds the phase, and waits again before the next phase. This only passes if
 * the barrier holds every tasklet until all have arrived.
 * Part 2, two groups (tasklet t is in group t % NR_GROUPS), HAND_PHASES times: the same with one hand-filled
 * barrier_t per group, whose count is the group's size and whose lock is an ATOMIC_BIT_INIT array element.
 *
 * DPU outputs:  errors[t], group_errors[t] (slots tasklet t found with the wrong phase; must be 0)
 *               phases_done[t] = PHASES, group_phases_done[t] = HAND_PHASES
 * Any NR_TASKLETS (with 1, group 1 is empty). Relaunching must give the same results (barriers re-arm).
 */
#include <stdint.h>

#include <atomic_bit.h>
#include <barrier.h>
#include <defs.h>

#define PHASES 5
#define HAND_PHASES 4
#define NR_GROUPS 2
#define NO_WAITER 0xFF

__host uint32_t errors[NR_TASKLETS];
__host uint32_t group_errors[NR_TASKLETS];
__host uint32_t phases_done[NR_TASKLETS];
__host uint32_t group_phases_done[NR_TASKLETS];

BARRIER_INIT(all_barrier, NR_TASKLETS);
barrier_t group_barriers[NR_GROUPS];
ATOMIC_BIT_INIT(group_locks)[NR_GROUPS];

uint32_t slots[NR_TASKLETS];
uint32_t group_slots[NR_TASKLETS];

static uint32_t group_size(uint32_t group)
{
    return (NR_TASKLETS - group + NR_GROUPS - 1) / NR_GROUPS;
}

int main(void)
{
    uint32_t id = me();
    if (id == 0) {
        for (uint32_t g = 0; g < NR_GROUPS; g++) {
            group_barriers[g].wait_queue = NO_WAITER;
            group_barriers[g].count = (uint8_t)group_size(g);
            group_barriers[g].initial_count = (uint8_t)group_size(g);
            group_barriers[g].lock = (uint8_t)(uintptr_t)&ATOMIC_BIT_GET(group_locks)[g];
        }
    }
    errors[id] = 0;
    group_errors[id] = 0;
    phases_done[id] = 0;
    group_phases_done[id] = 0;

    for (uint32_t phase = 1; phase <= PHASES; phase++) {
        slots[id] = phase;
        barrier_wait(&all_barrier);
        for (uint32_t t = 0; t < NR_TASKLETS; t++) {
            errors[id] += slots[t] != phase;
        }
        barrier_wait(&all_barrier);
        phases_done[id]++;
    }

    uint32_t group = id % NR_GROUPS;
    for (uint32_t phase = 1; phase <= HAND_PHASES; phase++) {
        group_slots[id] = phase;
        barrier_wait(&group_barriers[group]);
        for (uint32_t t = group; t < NR_TASKLETS; t += NR_GROUPS) {
            group_errors[id] += group_slots[t] != phase;
        }
        barrier_wait(&group_barriers[group]);
        group_phases_done[id]++;
    }
    return 0;
}
