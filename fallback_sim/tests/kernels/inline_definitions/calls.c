/*
 * calls.c, with next.c or external.c: calls of the C99 inline function scramble (scramble.h) that the compiler
 * leaves as calls: a direct call, and a call through a volatile function pointer, which no compiler inlines.
 *
 * Host input:  input
 * DPU outputs: direct = scramble(input), through_pointer = scramble(input), next = scramble_next(input); with
 *              next.c these are the header's scramble, with external.c (whose scramble is ~value) the calls left
 *              are ~input and next is ~(input + 1).
 * NR_TASKLETS = 1.
 */
#include <stdint.h>

#include <defs.h>

#include "scramble.h"

__host uint32_t input;
__host uint32_t direct;
__host uint32_t through_pointer;
__host uint32_t next;

static uint32_t (*volatile scrambler)(uint32_t) = scramble;

int main(void)
{
    direct = scramble(input);
    through_pointer = scrambler(input);
    next = scramble_next(input);
    return 0;
}
