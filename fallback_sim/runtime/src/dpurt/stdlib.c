/*
 * stdlib.c: abort and exit for DPU kernels. abort() and exit(status != 0) put the DPU in fault; exit(0) ends
 * the calling tasklet as returning from main does.
 */
#include <stdlib.h>

#include <dpusim/abi.h>

void abort(void)
{
    __dpusim_fault(DPUSIM_FAULT_ABORT, 0, 0, "abort() called by tasklet %u", __dpusim_tasklet_id);
}

void exit(int status)
{
    if (status == 0) {
        __dpusim_tasklet_exit();
    }
    __dpusim_fault(DPUSIM_FAULT_ABORT, 0, (uint64_t)(int64_t)status, "exit(%d) called by tasklet %u", status,
                   __dpusim_tasklet_id);
}
