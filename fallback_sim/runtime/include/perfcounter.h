/*
 * perfcounter.h: the DPU's performance counter, one per DPU and shared by its tasklets. The simulator counts
 * modelled cycles (DMA cost model plus an estimate of the instructions executed, see dpusim/abi.h); the values are
 * monotone while the counter is not reset.
 *
 * CLOCKS_PER_SEC is the DPU's clock frequency (cycles per second), a variable as in the SDK. glibc's <time.h>
 * defines a CLOCKS_PER_SEC macro: this header includes <time.h> first, so that a later include cannot redefine it,
 * and removes the macro.
 */
#ifndef DPUSIM_PERFCOUNTER_H
#define DPUSIM_PERFCOUNTER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <dpusim/abi.h>

#undef CLOCKS_PER_SEC
extern const volatile uint32_t CLOCKS_PER_SEC;

typedef uint64_t perfcounter_t;

typedef enum _perfcounter_config_t {
    COUNT_SAME = 0,         /* keep the current configuration */
    COUNT_CYCLES = 1,       /* count clock cycles */
    COUNT_INSTRUCTIONS = 2, /* count executed instructions */
    COUNT_NOTHING = 3,      /* stop counting */
    COUNT_DISABLE_BOTH = 6, /* v1B only */
    COUNT_ENABLE_BOTH = 7,  /* v1B only */
} perfcounter_config_t;

/* Configures the counter (and zeroes it when reset is true); returns its value before the call. */
static inline perfcounter_t perfcounter_config(perfcounter_config_t config, bool reset)
{
    return __dpusim_perfcounter_config((uint32_t)config, reset);
}

static inline perfcounter_t perfcounter_get(void)
{
    return __dpusim_perfcounter_get();
}

#endif /* DPUSIM_PERFCOUNTER_H */
