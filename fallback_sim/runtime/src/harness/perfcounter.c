/*
 * The DPU's performance counter, as the SDK 2025.1's compiled v1A runtime drives it (perfcounter.c.obj,
 * disassembled).
 *
 * perfcounter_get is `time`, which reads bits 4..35 of the counter, shifted back left by 4: every value is a
 * multiple of 16 and the counter wraps at 2^36. perfcounter_config(config, reset) first faults (runtime fault 9,
 * __FAULT_PFM_COUNTER_INCOMPATIBILITY__) on COUNT_DISABLE_BOTH and COUNT_ENABLE_BOTH, which only v1B has; it then
 * runs `time_cfg` with (config << 1 | reset): the counter takes the mode config & 3 (COUNT_SAME keeps the mode,
 * COUNT_NOTHING stops counting) and is zeroed when reset is set, and the value before the change is returned,
 * read as `time` reads it.
 *
 * The cycle counter is the DPU's clock, which the running tasklet reads at its own time; the instruction counter
 * counts every tasklet's instructions. Each launch starts it counting cycles from 0.
 *
 * A v1B build (__dpu_v1B__) runs the v1B runtime's routines (librt_v1B.a, perfcounter.c.obj): perfcounter_config
 * has no fault 9 and passes every configuration to `time_cfg`, COUNT_DISABLE_BOTH (6) stopping the counter and
 * COUNT_ENABLE_BOTH (7) counting cycles; perfcounter_get_both reads the cycle and the instruction counter (each
 * as `time` reads it) through two `time_cfg` selections and zeroes both when asked. The simulator keeps the
 * instruction count beside the cycle count rather than modelling v1B's second counter register.
 */
#include "internal.h"
#include "sdk_costs.h"

enum { COUNT_SAME = 0, COUNT_CYCLES = 1, COUNT_INSTRUCTIONS = 2, COUNT_NOTHING = 3 };

/* What `time` reads of the counter's value. */
static uint64_t as_time_reads(uint64_t counter) { return (counter >> 4 & 0xFFFFFFFFu) << 4; }

/* The cycle counter is read at the reader's turn: the modelled schedule knows a cycle for sure only once no
 * tasklet is behind it (pipeline.c), and a tasklet's reads must never go backwards. */
static uint64_t counter_source(uint32_t mode) {
    if (mode == COUNT_INSTRUCTIONS) {
        clock_settle();
        return clock_dpu_instructions();
    }
    clock_wait_turn();
    return clock_running_cycles();
}

static uint64_t counter_value(void) {
    if (run.perfcounter_mode == COUNT_NOTHING)
        return run.perfcounter_frozen;
    return counter_source(run.perfcounter_mode) - run.perfcounter_base;
}

void perfcounter_reset(void) {
    run.perfcounter_base = 0;
    run.perfcounter_instructions_base = 0;
    run.perfcounter_mode = COUNT_CYCLES;
}

uint64_t __dpusim_perfcounter_get(void) {
    clock_charge(COST_PERFCOUNTER_GET);
    return as_time_reads(counter_value());
}

/* The v1A runtime's check: configurations 6 and 7 (the v1B-only COUNT_DISABLE_BOTH, COUNT_ENABLE_BOTH). */
static bool only_on_v1b(uint32_t config) { return (config & ~1u) == 6; }

uint64_t __dpusim_perfcounter_config(uint32_t config, bool reset, bool v1b) {
    clock_charge(v1b ? COST_PERFCOUNTER_CALL : COST_PERFCOUNTER_CONFIG_CHECK);
    if (!v1b && only_on_v1b(config))
        __dpusim_fault(DPUSIM_FAULT_ABORT, 0, config,
                       "runtime fault 9 (perfcounter counter incompatibility): perfcounter_config(%u) asks for a "
                       "v1B-only configuration (COUNT_DISABLE_BOTH or COUNT_ENABLE_BOTH) on a v1A DPU",
                       config);
    clock_charge(COST_PERFCOUNTER_CONFIG_TAIL);
    uint64_t value = counter_value();
    uint64_t kept = reset ? 0 : value;
    uint32_t mode = config & 3u;
    if (v1b && only_on_v1b(config))
        mode = config == 6 ? COUNT_NOTHING : COUNT_CYCLES;
    if (mode == COUNT_SAME)
        mode = run.perfcounter_mode;
    if (mode == COUNT_NOTHING) {
        run.perfcounter_frozen = kept;
    } else {
        run.perfcounter_base = counter_source(mode) - kept;
    }
    run.perfcounter_mode = mode;
    return as_time_reads(value);
}

void __dpusim_perfcounter_get_both(bool reset, uint64_t *cycles, uint64_t *instructions) {
    clock_charge(COST_PERFCOUNTER_GET_BOTH);
    clock_wait_turn();
    uint64_t now_cycles = clock_running_cycles(), now_instructions = clock_dpu_instructions();
    *cycles = as_time_reads(now_cycles - run.perfcounter_base);
    *instructions = as_time_reads(now_instructions - run.perfcounter_instructions_base);
    if (reset) {
        run.perfcounter_base = now_cycles;
        run.perfcounter_instructions_base = now_instructions;
    }
}
