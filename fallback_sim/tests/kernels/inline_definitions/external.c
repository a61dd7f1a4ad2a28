/*
 * external.c: the second source file of calls.c in a program that provides the external definition of scramble,
 * another function than the header's inline definition (C99 leaves unspecified which of the two a call uses; a
 * call the compiler leaves, as through a pointer, uses this one).
 */
#include <stdint.h>

uint32_t scramble(uint32_t value);
uint32_t scramble_next(uint32_t value);

uint32_t scramble(uint32_t value)
{
    return ~value;
}

uint32_t scramble_next(uint32_t value)
{
    return scramble(value + 1);
}
