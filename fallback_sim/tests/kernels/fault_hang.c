/*
 * fault_hang.c: a tasklet that never stops (DPUSIM_FAULT_TIMEOUT once the hang limit passes); tasklet 0 only.
 *
 *  mode 0: no loop -> no fault
 *  mode 1: spin forever on a volatile flag -> TIMEOUT (needs a hang limit, DPUSIM control hang_limit_ms)
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>

__host uint32_t mode;

volatile uint32_t keep_spinning = 1;
volatile uint64_t spins;

int main(void)
{
    if (me() != 0 || mode != 1) {
        return 0;
    }
    while (keep_spinning) {
        spins++;
    }
    return 0;
}
