/*
 * fault_abort.c: abort() and exit(); tasklet 0 acts, the others finish normally.
 *
 *  mode 0: return from main                 -> no fault; finished[t] = 1 for all t
 *  mode 1: abort()                          -> DPUSIM_FAULT_ABORT (value 0; runtime fault 4 on a DPU)
 *  mode 2: exit(EXIT_STATUS = 3)            -> no fault: the SDK's exit is a `stop` whatever the status
 *  mode 3: exit(0)                          -> no fault
 *  modes 2 and 3: tasklet 0 ends there, like a return from main;
 *                 before_exit = 1, finished[0] = 0, finished[t] = 1 for t > 0
 * Any NR_TASKLETS.
 */
#include <stdint.h>
#include <stdlib.h>

#include <defs.h>

#define EXIT_STATUS 3

__host uint32_t mode;
__host uint32_t before_exit;
__host uint32_t finished[NR_TASKLETS];

int main(void)
{
    finished[me()] = 0;
    if (me() == 0) {
        before_exit = 0;
        switch (mode) {
        case 1:
            abort();
        case 2:
            before_exit = 1;
            exit(EXIT_STATUS);
        case 3:
            before_exit = 1;
            exit(0);
        default:
            break;
        }
    }
    finished[me()] = 1;
    return 0;
}
