/*
 * dpufault.h: the DPU runtime's fault codes ("runtime fault N" in the UPMEM documentation), with the names of
 * syslib/dpufault.h of the SDK 2025.1.
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
#define __FAULT_MRAM_UNALIGNED__ 8
#define __FAULT_WRONG_ALIGNMENT__ __FAULT_MRAM_UNALIGNED__ /* the simulator's older name */
#define __FAULT_PFM_COUNTER_INCOMPATIBILITY__ 9 /* perfcounter_config: a v1B-only configuration on v1A */

#endif /* DPUSIM_DPUFAULT_H */
