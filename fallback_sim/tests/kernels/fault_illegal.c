/*
 * fault_illegal.c: an illegal instruction (__builtin_trap: ud2 on x86-64, brk on aarch64), reported as
 * DPUSIM_FAULT_SIGNAL with the signal number (SIGILL on x86-64, SIGTRAP on aarch64); tasklet 0 only.
 *
 *  mode 0: no trap -> no fault, done = 1
 *  mode 1: trap    -> DPUSIM_FAULT_SIGNAL
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>

__host uint32_t mode;
__host uint32_t done;

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    done = 0;
    if (mode == 1) {
        __builtin_trap();
    }
    done = 1;
    return 0;
}
