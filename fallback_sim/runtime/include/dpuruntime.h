/*
 * dpuruntime.h: the DPU runtime's internal symbols that kernels sometimes name directly.
 */
#ifndef DPUSIM_DPURUNTIME_H
#define DPUSIM_DPURUNTIME_H

#include <stdint.h>

#include <dpusim/abi.h>

#include <attributes.h>
#include <built_ins.h>
#include <defs.h>
#include <dpuconst.h>

/* The mem_alloc heap pointer (a WRAM address; 0 until the first mem_alloc or mem_reset after dpu_load). */
extern uint32_t __sys_heap_pointer;

/* __sys_used_mram_end, the start of the MRAM heap, is declared by dpusim/abi.h. */

#endif /* DPUSIM_DPURUNTIME_H */
