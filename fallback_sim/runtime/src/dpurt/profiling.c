/*
 * profiling.c: profiling_start/profiling_stop (profiling.h) over the performance counter.
 *
 * abi.h has no fault kind for runtime faults 6 and 7 (Already/Not Profiling): they are reported as
 * DPUSIM_FAULT_ABORT with the runtime fault number as the value and in the message.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <dpufault.h>
#include <perfcounter.h>
#include <profiling.h>

void profiling_start(dpu_profiling_t *context)
{
    uint32_t tasklet = __dpusim_tasklet_id;
    if (context->start[tasklet] != PROFILING_RESET_VALUE) {
        __dpusim_fault(DPUSIM_FAULT_ABORT, (uint64_t)(uintptr_t)context, __FAULT_ALREADY_PROFILING__,
                       "runtime fault %d: already profiling (tasklet %u)", __FAULT_ALREADY_PROFILING__, tasklet);
    }
    context->start[tasklet] = (uint32_t)perfcounter_get();
}

void profiling_stop(dpu_profiling_t *context)
{
    uint32_t tasklet = __dpusim_tasklet_id;
    if (context->start[tasklet] == PROFILING_RESET_VALUE) {
        __dpusim_fault(DPUSIM_FAULT_ABORT, (uint64_t)(uintptr_t)context, __FAULT_NOT_PROFILING__,
                       "runtime fault %d: not profiling (tasklet %u)", __FAULT_NOT_PROFILING__, tasklet);
    }
    context->count += (uint32_t)perfcounter_get() - context->start[tasklet];
    context->start[tasklet] = PROFILING_RESET_VALUE;
}
