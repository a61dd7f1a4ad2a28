/*
 * unequal_work.c: unequal work after a barrier (the pattern of work-list kernels such as BFS frontiers).
 *
 * All tasklets loop while a shared stack is not empty. Each iteration starts at a barrier; then tasklet 0 does
 * extra work on the top item, and every tasklet checks the stack's size; tasklet 0 pops the item after its own
 * check. On a DPU tasklet 0 falls behind during its extra work, so every tasklet sees the same size in an
 * iteration. If tasklet 0 popped before the others checked, they would leave the loop one iteration early
 * and the tasklets still in it would wait at the barrier forever.
 *
 * Host input:   stack_size (u32, <= MAX_ITEMS), items[] (u32 x MAX_ITEMS)
 * DPU outputs:  iterations[t] = the initial stack_size for every tasklet; checksum = the sum over the items of
 *               the extra work's result, work(item) = sum of (item * k) % 1021 for k < EXTRA_WORK
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <barrier.h>
#include <defs.h>

#define MAX_ITEMS 16
#define EXTRA_WORK 200

__host uint32_t stack_size;
__host uint32_t items[MAX_ITEMS];
__host uint32_t iterations[NR_TASKLETS];
__host uint32_t checksum;

BARRIER_INIT(iteration_barrier, NR_TASKLETS);

static uint32_t extra_work(uint32_t item)
{
    uint32_t sum = 0;
    for (uint32_t k = 0; k < EXTRA_WORK; k++) {
        sum += (item * k) % 1021;
    }
    return sum;
}

int main(void)
{
    uint32_t id = me();
    uint32_t done = 0;
    if (id == 0) {
        checksum = 0;
    }
    for (;;) {
        barrier_wait(&iteration_barrier);
        if (id == 0 && stack_size > 0) {
            checksum += extra_work(items[stack_size - 1]);
        }
        if (stack_size == 0) {
            break;
        }
        done++;
        if (id == 0) {
            stack_size--;
        }
    }
    iterations[id] = done;
    return 0;
}
