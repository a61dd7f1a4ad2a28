/*
 * Warnings: what a kernel does that a DPU tolerates but that is most likely a bug (a DMA size that is not a
 * multiple of 8, a tasklet stack overflow). They go to the worker's standard error, which is the host program's,
 * once per worker process for each kind of event, so that thousands of DPUs doing the same thing give one line
 * per worker. Strict mode turns each of them into a fault instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define MAX_WARNED 64

struct warned {
    const char *kind;
    uint64_t key;
};

static struct warned warned[MAX_WARNED];
static uint32_t nr_warned;

/* Records (kind, key); false when it was already there or the table is full (then nothing more is said). */
static bool first_time(const char *kind, uint64_t key) {
    for (uint32_t i = 0; i < nr_warned; i++)
        if (warned[i].kind == kind && warned[i].key == key)
            return false;
    if (nr_warned == MAX_WARNED)
        return false;
    warned[nr_warned++] = (struct warned){.kind = kind, .key = key};
    return true;
}

struct warning {
    uint32_t tasklet;
    const char *format;
    va_list arguments;
};

static void print_warning(void *argument) {
    struct warning *warning = argument;
    char message[DPUSIM_MESSAGE_SIZE];
    vsnprintf(message, sizeof message, warning->format, warning->arguments);
    /* program_invocation_short_name: the simulated DPU binary's file name. */
    fprintf(stderr, "upmem-sim: warning: kernel %s, DPU %u, tasklet %u: %s\n", program_invocation_short_name,
            run.dpu, warning->tasklet, message);
}

static void warn(const char *kind, uint64_t key, uint32_t tasklet, const char *format, va_list arguments) {
    if (!first_time(kind, key))
        return;
    struct warning warning = {.tasklet = tasklet, .format = format};
    va_copy(warning.arguments, arguments);
    /* Not on the tasklet's stack, whose use is being measured. */
    __dpusim_on_service_stack(print_warning, &warning);
    va_end(warning.arguments);
}

void warning_once(const char *kind, uint64_t key, uint32_t tasklet, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    warn(kind, key, tasklet, format, arguments);
    va_end(arguments);
}

void __dpusim_warn_once(const char *kind, uint64_t key, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    warn(kind, key, __dpusim_tasklet_id, format, arguments);
    va_end(arguments);
}
