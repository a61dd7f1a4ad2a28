/*
 * fault_abort.c: abort() and exit(); tasklet 0 acts, the others finish normally.
 *
 *  mode 0: return from main                 -> no fault; finished[t] = 1 for all t
 *  mode 1: abort()                          -> DPUSIM_FAULT_ABORT (value 0)
 *  mode 2: exit(EXIT_STATUS = 3)            -> DPUSIM_FAULT_ABORT (value 3)
 *  mode 3: exit(0)                          -> no fault: tasklet 0 ends there, like a return from main;
 *                                              before_exit = 1, finished[0] = 0, finished[t] = 1 for t > 0
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
