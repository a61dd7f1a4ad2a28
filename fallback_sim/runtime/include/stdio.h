/*
 * stdio.h: the C library's <stdio.h>, plus the DPU runtime's STDOUT_BUFFER_INIT. printf, vprintf, puts and
 * putchar keep their libc prototypes; the simulator's runtime defines them so that they append to the DPU's
 * log (what dpu_log_read prints), which is cleared at every launch. A single message larger than the buffer
 * (1 MiB unless STDOUT_BUFFER_INIT says otherwise) is runtime fault 5 (Printf Overflow).
 *
 * glibc, when optimising, defines putchar and vprintf as inline functions writing to the process's stdout
 * (<bits/stdio.h>), and with _FORTIFY_SOURCE it redirects printf to __printf_chk (<bits/stdio2.h>). Either
 * would bypass the DPU log, so both are switched off while the C library's header is read.
 */
#if defined(__has_include)
#if __has_include(<features.h>)
#include <features.h>
#endif
#endif
#pragma push_macro("__USE_EXTERN_INLINES")
#pragma push_macro("__USE_FORTIFY_LEVEL")
#undef __USE_EXTERN_INLINES
#undef __USE_FORTIFY_LEVEL
#define __USE_FORTIFY_LEVEL 0
#include_next <stdio.h>
#pragma pop_macro("__USE_FORTIFY_LEVEL")
#pragma pop_macro("__USE_EXTERN_INLINES")

#ifndef DPUSIM_STDIO_H
#define DPUSIM_STDIO_H

#include <stddef.h>
#include <stdint.h>

#include <attributes.h>

/* The log capacity in bytes: 1 MiB by default (a weak definition in the runtime). */
extern const uint32_t __dpusim_stdout_capacity;

/* Sets the log capacity (bytes, a positive multiple of 8). Use once, at file scope. */
#define STDOUT_BUFFER_INIT(_size)                                                                                     \
    _Static_assert((_size) > 0 && (_size) % 8 == 0, "the stdout buffer size must be a positive multiple of 8");    \
    __attribute__((used)) const uint32_t __dpusim_stdout_capacity = (_size)

#endif /* DPUSIM_STDIO_H */
