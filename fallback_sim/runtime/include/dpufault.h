/*
 * dpufault.h: the DPU runtime's fault codes ("runtime fault N" in the UPMEM documentation).
 * In the simulator every fault is raised through __dpusim_fault() with the matching DPUSIM_FAULT_* kind.
 */
#ifndef DPUSIM_DPUFAULT_H
#define DPUSIM_DPUFAULT_H

#define __FAULT_ALLOC_HEAP_FULL__ 1
#define __FAULT_DIVISION_BY_ZERO__ 2
#define __FAULT_ASSERT_FAILED__ 3
#define __FAULT_HALT__ 4
#define __FAULT_PRINTF_OVERFLOW__ 5
#define __FAULT_ALREADY_PROFILING__ 6
#define __FAULT_NOT_PROFILING__ 7
#define __FAULT_WRONG_ALIGNMENT__ 8

#endif /* DPUSIM_DPUFAULT_H */
