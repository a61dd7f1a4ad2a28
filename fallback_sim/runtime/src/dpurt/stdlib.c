/*
 * stdlib.c: the SDK's DPU libc <stdlib.h> functions that are not inline (atoi, atol, abort, exit) and errno.
 *
 * Each follows the SDK 2025.1's compiled runtime (librt_v1A.a, atoi.c.obj, atol.c.obj, abort.c.obj,
 * exit.c.obj, errno.c.obj, disassembled) and charges the instructions it executes.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <libc/errno.h>
#include <libc/stdlib.h>

#define WEAK __attribute__((weak))

/* errno.c.obj: one errno per tasklet, indexed by me(). */
int __errno[DPUSIM_MAX_TASKLETS];

/* atoi.c.obj and atol.c.obj: NULL gives 0 (the host's atoi crashes); spaces and \t \n \v \f \r are skipped,
 * one sign is taken, then decimal digits accumulate with no overflow check, wrapping at the width of the result
 * (the host's atoi and atol saturate through strtol). The costs are the routines' blocks. */
#define ATO_NULL 4u
#define ATO_ENTRY 1u
#define ATO_SPACE 4u
#define ATO_OTHER_WHITE_SPACE 6u
#define ATO_PLUS 9u
#define ATO_MINUS 10u
#define ATO_NO_SIGN 11u
#define ATO_END 3u
#define ATOI_PER_DIGIT 8u
#define ATOI_NEGATE 1u
#define ATOL_PER_DIGIT 16u
#define ATOL_NEGATE 3u

struct parsed_number {
    uint64_t magnitude; /* modulo 2^64; atoi keeps its low 32 bits */
    int negative;
    uint32_t digits;
    uint32_t prefix_cost; /* the white space and the sign */
};

static int is_skipped_space(int8_t c)
{
    return c == ' ' || (uint32_t)(c - '\t') < 5u;
}

static struct parsed_number parse_decimal(const char *text)
{
    struct parsed_number parsed = {0, 0, 0, ATO_ENTRY};
    const int8_t *at = (const int8_t *)text;
    for (; is_skipped_space(*at); at++) {
        parsed.prefix_cost += *at == ' ' ? ATO_SPACE : ATO_OTHER_WHITE_SPACE;
    }
    if (*at == '+') {
        parsed.prefix_cost += ATO_PLUS;
        at++;
    } else if (*at == '-') {
        parsed.prefix_cost += ATO_MINUS;
        parsed.negative = 1;
        at++;
    } else {
        parsed.prefix_cost += ATO_NO_SIGN;
    }
    for (; (uint32_t)(*at - '0') < 10u; at++) {
        parsed.magnitude = parsed.magnitude * 10u + (uint32_t)(*at - '0');
        parsed.digits++;
    }
    return parsed;
}

WEAK int atoi(const char *nptr)
{
    if (nptr == NULL) {
        __dpusim_charge(ATO_NULL);
        return 0;
    }
    struct parsed_number parsed = parse_decimal(nptr);
    uint32_t value = (uint32_t)parsed.magnitude;
    uint32_t cost = parsed.prefix_cost + ATOI_PER_DIGIT * (parsed.digits + 1) + ATO_END;
    if (parsed.negative) {
        value = 0u - value;
        cost += ATOI_NEGATE;
    }
    __dpusim_charge(cost);
    return (int)value;
}

WEAK long atol(const char *nptr)
{
    if (nptr == NULL) {
        __dpusim_charge(ATO_NULL);
        return 0;
    }
    struct parsed_number parsed = parse_decimal(nptr);
    uint64_t value = parsed.magnitude;
    uint32_t cost = parsed.prefix_cost + ATOL_PER_DIGIT * (parsed.digits + 1) + ATO_END;
    if (parsed.negative) {
        value = 0u - value;
        cost += ATOL_NEGATE;
    }
    __dpusim_charge(cost);
    return (long)value;
}

/* abort.c.obj: `fault 4`, the fault halt() raises. */
WEAK void abort(void)
{
    __dpusim_fault(DPUSIM_FAULT_ABORT, 0, 0, "abort() called by tasklet %u (runtime fault 4)", __dpusim_tasklet_id);
}

/* exit.c.obj: one `stop`, so the calling tasklet ends as a return from main does, whatever the status: a DPU
 * reports no exit status, and exit(1) is no fault. */
#define EXIT_INSTRUCTIONS 1u

WEAK void exit(int status)
{
    (void)status;
    __dpusim_charge(EXIT_INSTRUCTIONS);
    __dpusim_tasklet_exit();
}
