/*
 * defs.h: the tasklet's identity and life (me, halt, check_stack).
 */
#ifndef DPUSIM_DEFS_H
#define DPUSIM_DEFS_H

#include <dpusim/abi.h>

#include <attributes.h>
#include <dpufault.h>
#include <macro_utils.h>
#include <sysdef.h>

/* The running tasklet's id, 0..NR_TASKLETS-1. */
static inline sysname_t me(void)
{
    return __dpusim_tasklet_id;
}

/* Stops the DPU in fault (runtime fault 4, "Halt"). */
static inline __NO_RETURN void halt(void)
{
    __dpusim_fault(DPUSIM_FAULT_HALT, 0, __dpusim_tasklet_id, "halt() called by tasklet %u", __dpusim_tasklet_id);
}

/*
 * Bytes left on the calling tasklet's nominal stack (STACK_SIZE_DEFAULT / STACK_SIZE_TASKLET_<k>), negative when
 * it has overflowed. The simulator measures the native stack in use, so the figure is an approximation.
 */
int check_stack(void);

#endif /* DPUSIM_DEFS_H */
