/*
 * fault_stack_overflow.c: recursion that runs off the tasklet's native stack (DPUSIM_FAULT_STACK_OVERFLOW);
 * tasklet 0 only. Each level keeps a FRAME_BYTES volatile array, so the recursion cannot be turned into a loop.
 *
 * Host input:   max_depth. Small (e.g. 16) -> no fault, done = 1, result = sum of (d % 256) for d = 0..max_depth
 *               (120 + 16 = 136 for 16). 0xFFFFFFFF -> STACK_OVERFLOW.
 * DPU outputs:  done = 1 when the recursion returned; stack_left = check_stack() in main (informational).
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>

#define FRAME_BYTES 256

__host uint32_t max_depth;
__host uint32_t result;
__host uint32_t done;
__host int32_t stack_left;

static __attribute__((noinline)) uint32_t recurse(uint32_t depth)
{
    volatile uint8_t frame[FRAME_BYTES];
    frame[depth % FRAME_BYTES] = (uint8_t)depth;
    if (depth >= max_depth) {
        return frame[depth % FRAME_BYTES];
    }
    return recurse(depth + 1) + frame[depth % FRAME_BYTES];
}

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    done = 0;
    stack_left = check_stack();
    result = recurse(0);
    done = 1;
    return 0;
}
