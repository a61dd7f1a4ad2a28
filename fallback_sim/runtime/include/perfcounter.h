/*
 * perfcounter.h: the DPU's performance counter, one per DPU and shared by its tasklets, as the SDK 2025.1's
 * compiled v1A runtime drives it (perfcounter.c.obj, disassembled). The simulator counts modelled cycles (the
 * timing model: instructions, pipeline and DMA) or the DPU's executed instructions. Values are read as the
 * `time` instruction reads them: multiples of 16, wrapping at 2^36; they are monotone while the counter is not
 * reset and has not wrapped. perfcounter_config returns the value before it, and faults (runtime fault 9) on the
 * v1B-only COUNT_DISABLE_BOTH and COUNT_ENABLE_BOTH; perfcounter_get_both, v1B only, does not compile, and with
 * -pg (DPU_PROFILING) perfcounter_config does not either, as in the SDK.
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

#ifndef DPU_PROFILING
/* Configures the counter (and zeroes it when reset is true); returns its value before the call. */
static inline perfcounter_t perfcounter_config(perfcounter_config_t config, bool reset)
{
#ifdef __dpu_v1B__
    return __dpusim_perfcounter_config((uint32_t)config, reset, true);
#else
    return __dpusim_perfcounter_config((uint32_t)config, reset, false);
#endif
}
#else
#define perfcounter_config(config, reset_value)                                                                       \
    do {                                                                                                              \
        _Static_assert(0, "[DPU_ERROR]: call to perfcounter_config is incompatible with -pg option.");                \
    } while (0)
#endif

#ifdef __dpu_v1B__
/* Both of a v1B DPU's counters. */
typedef struct {
    perfcounter_t cycles;
    perfcounter_t instr;
} perfcounter_pair_t;

/* Reads the cycle and the instruction counter (and zeroes both when should_reset is true). */
static inline perfcounter_pair_t perfcounter_get_both(bool should_reset)
{
    perfcounter_pair_t both;
    __dpusim_perfcounter_get_both(should_reset, &both.cycles, &both.instr);
    return both;
}
#else
/* As in the SDK: only a v1B build (-mcpu=v1B, __dpu_v1B__) has it. */
#define perfcounter_get_both(should_reset)                                                                            \
    do {                                                                                                              \
        _Static_assert(0, "[DPU_ERROR]: call to perfcounter_get_both is only available on v1B.");                     \
    } while (0)
#endif

static inline perfcounter_t perfcounter_get(void)
{
    return __dpusim_perfcounter_get();
}

#endif /* DPUSIM_PERFCOUNTER_H */
