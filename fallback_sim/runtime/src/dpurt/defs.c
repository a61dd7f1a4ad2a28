/*
 * defs.c: check_stack().
 *
 * The harness gives no stack bounds, so this assumes its layout: native stacks in consecutive slots of
 * DPUSIM_STACK_GUARD + DPUSIM_NATIVE_STACK_SIZE bytes from DPUSIM_STACK_BASE, each stack at the top of its slot
 * (guard below). The bytes in use are measured from the top of the slot holding the current frame; a frame
 * outside the slots (a harness running a tasklet on another stack) counts as an empty stack.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <defs.h>

#define STACK_SLOT ((uintptr_t)DPUSIM_STACK_GUARD + DPUSIM_NATIVE_STACK_SIZE)

int check_stack(void)
{
    int nominal = (int)__dpusim_kernel_info.stack_sizes[__dpusim_tasklet_id % DPUSIM_MAX_TASKLETS];
    uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
    if (frame < DPUSIM_STACK_BASE || frame >= DPUSIM_STACK_BASE + DPUSIM_MAX_TASKLETS * STACK_SLOT) {
        return nominal;
    }
    uintptr_t top = DPUSIM_STACK_BASE + ((frame - DPUSIM_STACK_BASE) / STACK_SLOT + 1) * STACK_SLOT;
    return nominal - (int)(top - frame);
}
