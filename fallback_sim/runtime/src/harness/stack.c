/*
 * Tasklet stack use, measured against each tasklet's DPU stack budget, and a service stack for the runtime.
 *
 * On a DPU a tasklet's stack is STACK_SIZE_DEFAULT (or STACK_SIZE_TASKLET_<n>) bytes of WRAM, and running past
 * it silently overwrites whatever follows. Here tasklets run on large native stacks, so the harness measures
 * instead: before a tasklet starts, the part of its native stack that a kernel can reach within a few times its
 * budget is filled with a pattern; when the DPU's run ends, the lowest byte that no longer holds the pattern
 * gives the stack's peak use. Use over the budget is a warning naming tasklet, use and budget, and a fault in
 * strict mode. Native frames are those of the host's C compiler (8-byte pointers, its own register saving), so
 * the figure approximates what the DPU compiler's frames would use.
 *
 * The runtime's own work that a DPU does not do on the tasklet's stack (formatting printf messages, which the
 * SDK leaves to the host) runs on a separate service stack, so that it does not count.
 *
 * Only what a run dirtied is painted again before the next one: below the last measured peak the pattern is
 * still intact.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define PATTERN 0xA5u
/* How far below the top of a native stack the pattern reaches: MEASURED_BUDGETS budgets, at least MIN_WINDOW. */
#define MEASURED_BUDGETS 4u
#define MIN_WINDOW (16u << 10)
#define SERVICE_STACK_SIZE (256u << 10)
/* What the harness itself may push below a kernel's deepest frame, which a DPU does not: the call of a DMA or
 * of the basic-block hook, the timing model's bookkeeping, and the registers a tasklet switch saves. Use up to
 * this much over the budget is not reported, so that only the kernel's own frames count. The block hook's slow
 * path is the deepest: it saves every register, the 16 SSE ones among them (352 bytes with its return address),
 * and calls the timing model down to the tasklet switch; a kernel of a few bytes of frames measured 592 bytes
 * with it, built by clang and by gcc alike (tests/kernels/stack_shallow.c). */
#define HARNESS_STACK_ALLOWANCE 640u

/* Below this address (down to the window's bottom) tasklet t's window holds the pattern. */
static char *pattern_below[DPUSIM_MAX_TASKLETS];

static uint32_t budget(uint32_t tasklet) { return __dpusim_kernel_info.stack_sizes[tasklet]; }

static uint32_t window(uint32_t tasklet) {
    uint64_t bytes = (uint64_t)budget(tasklet) * MEASURED_BUDGETS;
    if (bytes < MIN_WINDOW)
        bytes = MIN_WINDOW;
    if (bytes > DPUSIM_NATIVE_STACK_SIZE)
        bytes = DPUSIM_NATIVE_STACK_SIZE;
    return (uint32_t)bytes;
}

void stack_paint(uint32_t tasklet) {
    struct tasklet *t = &run.tasklets[tasklet];
    char *bottom = t->stack_high - window(tasklet);
    if (pattern_below[tasklet] == NULL || pattern_below[tasklet] < bottom)
        pattern_below[tasklet] = bottom;
    memset(pattern_below[tasklet], PATTERN, (size_t)(t->stack_high - pattern_below[tasklet]));
    pattern_below[tasklet] = t->stack_high;
}

/* The pattern in a block that memcmp compares windows against: a byte loop over every tasklet's window after
 * every DPU's run cost more than the kernel itself on small DPUs (16 x 16 KiB per DPU). */
#define PATTERN_BLOCK 256u
static unsigned char pattern_block[PATTERN_BLOCK];

/* The lowest byte of tasklet's window that lost the pattern (its stack's peak), or stack_high if none did. */
static char *low_water(uint32_t tasklet) {
    struct tasklet *t = &run.tasklets[tasklet];
    char *byte = t->stack_high - window(tasklet);
    if (pattern_block[0] != PATTERN)
        memset(pattern_block, PATTERN, sizeof pattern_block);
    while ((size_t)(t->stack_high - byte) >= PATTERN_BLOCK && memcmp(byte, pattern_block, PATTERN_BLOCK) == 0)
        byte += PATTERN_BLOCK;
    while (byte < t->stack_high && (unsigned char)*byte == PATTERN)
        byte++;
    return byte;
}

static void report_overflow(uint32_t tasklet, uint32_t used, bool window_exceeded) {
    const char *at_least = window_exceeded ? "at least " : "";
    if (__dpusim_strict()) {
        char message[DPUSIM_MESSAGE_SIZE];
        snprintf(message, sizeof message,
                 "tasklet %u used %s%u bytes of stack, more than its %u-byte budget (STACK_SIZE_DEFAULT or "
                 "STACK_SIZE_TASKLET_%u; strict mode)",
                 tasklet, at_least, used, budget(tasklet), tasklet);
        fault_record(DPUSIM_FAULT_STACK_OVERFLOW, (uintptr_t)(run.tasklets[tasklet].stack_high - used), used, 0, 0,
                     message);
        run.record->fault.tasklet = tasklet;
        run.faulted = true;
        return;
    }
    warning_once("stack", tasklet, tasklet,
                 "used %s%u bytes of stack, more than its %u-byte budget (STACK_SIZE_DEFAULT or "
                 "STACK_SIZE_TASKLET_%u): on a DPU this overwrites the WRAM that follows the stack",
                 at_least, used, budget(tasklet), tasklet);
}

void stack_measure(void) {
    bool report = !run.faulted;
    for (uint32_t tasklet = 0; tasklet < run.nr_tasklets; tasklet++) {
        if (run.tasklets[tasklet].state == TASKLET_UNSTARTED)
            continue;
        char *peak = low_water(tasklet);
        pattern_below[tasklet] = peak;
        uint32_t used = (uint32_t)(run.tasklets[tasklet].stack_high - peak);
        if (report && !run.faulted && used > budget(tasklet) + HARNESS_STACK_ALLOWANCE)
            report_overflow(tasklet, used, peak == run.tasklets[tasklet].stack_high - window(tasklet));
    }
}

/* ---- The service stack -------------------------------------------------------------------------------------- */

static char *service_stack_high;
static void *service_sp;
static void *caller_sp;
static void (*service_function)(void *);
static void *service_argument;

static void service_entry(void) {
    service_function(service_argument);
    dpusim_switch(&service_sp, caller_sp);
}

void __dpusim_on_service_stack(void (*function)(void *), void *argument) {
    if (service_stack_high == NULL) {
        char *stack = mmap(NULL, SERVICE_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (stack == MAP_FAILED) {
            function(argument); /* no memory for a second stack: use the tasklet's, which only skews the figure */
            return;
        }
        service_stack_high = stack + SERVICE_STACK_SIZE;
    }
    service_function = function;
    service_argument = argument;
    /* A fresh frame every time: a call that faulted never came back, and its frame is abandoned. */
    dpusim_switch(&caller_sp, dpusim_prepare_stack(service_stack_high, service_entry));
}
