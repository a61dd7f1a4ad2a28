/*
 * stdlib.h for DPU kernels: what the SDK's DPU libc declares (dpu-rt/src/stdlib/stdlib.h) and nothing else, so
 * that a kernel may define names the host's <stdlib.h> would claim (its own `uint32_t rand()`, `malloc`, ...).
 * abort() puts the DPU in fault (runtime fault 4); exit(status) ends the calling tasklet whatever the status.
 * This directory is on the include path of kernel sources only; the runtime and the harness get the host's.
 */
#ifndef DPUSIM_LIBC_STDLIB_H
#define DPUSIM_LIBC_STDLIB_H

#include <stddef.h>

#include <attributes.h>

#define EXIT_FAILURE 1
#define EXIT_SUCCESS 0

__attribute__((noreturn)) void abort(void);
__attribute__((noreturn)) void exit(int status);

/* A DPU has no environment. */
static inline char *getenv(const char *name)
{
    (void)name;
    return NULL;
}

/* Inline, as the SDK's header has them: a kernel's own code, with the DPU's division. */
static inline int abs(int x)
{
    return (x < 0) ? -x : x;
}

static inline long int labs(long int x)
{
    return (x < 0) ? -x : x;
}

static inline long long int llabs(long long int x)
{
    return (x < 0) ? -x : x;
}

typedef struct {
    int quot;
    int rem;
} div_t;

typedef struct {
    long int quot;
    long int rem;
} ldiv_t;

typedef struct {
    long long int quot;
    long long int rem;
} lldiv_t;

static inline div_t div(int numer, int denom)
{
    div_t result = {numer / denom, numer % denom};
    return result;
}

static inline ldiv_t ldiv(long int numer, long int denom)
{
    ldiv_t result = {numer / denom, numer % denom};
    return result;
}

static inline lldiv_t lldiv(long long int numer, long long int denom)
{
    lldiv_t result = {numer / denom, numer % denom};
    return result;
}

int atoi(const char *nptr);
long atol(const char *nptr);

#endif /* DPUSIM_LIBC_STDLIB_H */
