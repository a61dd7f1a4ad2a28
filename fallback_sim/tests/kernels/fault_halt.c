/*
 * fault_halt.c: halt() raises runtime fault 4 (Halt) in the tasklet that calls it.
 *
 * Host inputs:  mode (0: nobody halts; 1: tasklet halting_tasklet halts), halting_tasklet (< NR_TASKLETS)
 * Expected:     mode 0 -> no fault, finished[t] = 1 for every t
 *               mode 1 -> DPUSIM_FAULT_HALT, fault tasklet = halting_tasklet, finished[halting_tasklet] = 0
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>

__host uint32_t mode;
__host uint32_t halting_tasklet;
__host uint32_t finished[NR_TASKLETS];

int main(void)
{
    finished[me()] = 0;
    if (mode == 1 && me() == halting_tasklet) {
        halt();
    }
    finished[me()] = 1;
    return 0;
}
