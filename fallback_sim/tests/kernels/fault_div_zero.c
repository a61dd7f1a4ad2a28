/*
 * fault_div_zero.c: integer division by zero; tasklet 0 only. The divisor is read through a volatile so the
 * compiler cannot see it.
 *
 *  mode 0: no division                      -> no fault
 *  mode 1: int32 numerator / divisor        -> with divisor = 0: DPUSIM_FAULT_DIVISION_BY_ZERO (x86-64 traps;
 *  mode 2: int64 numerator / divisor           aarch64 does not trap, giving quotient 0 and no fault)
 *  mode 3: uint32 numerator % divisor
 * Host inputs: mode, numerator (default 1000), divisor (default 0). With a non-zero divisor there is no fault and
 * quotient is the result (1000 / 7 = 142, 1000 % 7 = 6).
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>

__host uint32_t mode;
__host int32_t numerator = 1000;
__host int32_t divisor;
__host int64_t quotient;
__host uint32_t done;

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    done = 0;
    volatile int32_t hidden_divisor = divisor;
    switch (mode) {
    case 1:
        quotient = numerator / hidden_divisor;
        break;
    case 2:
        quotient = (int64_t)numerator / (int64_t)hidden_divisor;
        break;
    case 3:
        quotient = (uint32_t)numerator % (uint32_t)hidden_divisor;
        break;
    default:
        break;
    }
    done = 1;
    return 0;
}
