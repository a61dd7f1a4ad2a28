/*
 * profiling.h: cycle counts of code sections, over the performance counter. PROFILING_INIT(name) defines a
 * dpu_profiling_t the host reads by name; profiling_start/profiling_stop bracket a section in one tasklet and add
 * its cycles to `count`. Starting twice is runtime fault 6 (Already Profiling), stopping without a start runtime
 * fault 7 (Not Profiling).
 */
#ifndef DPUSIM_PROFILING_H
#define DPUSIM_PROFILING_H

#include <stdint.h>

#include <attributes.h>
#include <dpu_characteristics.h>
#include <limits.h>

#ifndef NR_TASKLETS
#define NR_TASKLETS 1
#endif

/* A tasklet's start value when it is not profiling. */
#define PROFILING_RESET_VALUE 0xFFFFFFFFu

typedef struct dpu_profiling_t {
    uint32_t start[NR_TASKLETS]; /* counter value at profiling_start, per tasklet */
    uint32_t count;              /* cycles accumulated by every tasklet */
} dpu_profiling_t;

#define PROFILING_INIT(_name)                                                                                         \
    __used __dma_aligned dpu_profiling_t _name = {                                                                    \
        .start = {[0 ... NR_TASKLETS - 1] = PROFILING_RESET_VALUE}, .count = 0}

void profiling_start(dpu_profiling_t *context);
void profiling_stop(dpu_profiling_t *context);

#endif /* DPUSIM_PROFILING_H */
