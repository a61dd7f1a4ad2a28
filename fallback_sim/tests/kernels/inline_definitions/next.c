/*
 * next.c: the second source file of calls.c, with the same inline definition of scramble (its header), which it
 * calls.
 */
#include <stdint.h>

#include "scramble.h"

uint32_t scramble_next(uint32_t value)
{
    return scramble(value + 1);
}
