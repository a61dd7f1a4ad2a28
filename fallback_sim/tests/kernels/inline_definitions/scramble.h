/*
 * scramble.h: a C99 inline definition in a header, as libraries write them: every file that includes it has the
 * definition, and no file an external one. scramble is large enough that clang 14 leaves its direct calls at -O2
 * (compilers and their versions decide differently; the DPU's clang may inline them).
 */
#ifndef SCRAMBLE_H
#define SCRAMBLE_H

#include <stdint.h>

/* One round of scramble: a few dozen instructions. */
#define SCRAMBLE_ROUND(round)                                                                                         \
    state ^= state >> 15;                                                                                             \
    state *= 0x85EBCA77u;                                                                                             \
    state ^= state >> 13;                                                                                             \
    state *= 0xC2B2AE3Du;                                                                                             \
    state += (round) * 0x27D4EB2Fu;                                                                                   \
    state = (state << 7) | (state >> 25);                                                                             \
    state ^= value + (round);                                                                                         \
    state *= 0x165667B1u;                                                                                             \
    state = (state << 13) | (state >> 19);                                                                            \
    state += 0x61C88647u;

inline uint32_t scramble(uint32_t value)
{
    uint32_t state = value * 0x9E3779B1u;
    SCRAMBLE_ROUND(0)
    SCRAMBLE_ROUND(1)
    SCRAMBLE_ROUND(2)
    SCRAMBLE_ROUND(3)
    SCRAMBLE_ROUND(4)
    SCRAMBLE_ROUND(5)
    SCRAMBLE_ROUND(6)
    SCRAMBLE_ROUND(7)
    return state ^ (state >> 16);
}

/* scramble(value + 1), from the other source file. */
uint32_t scramble_next(uint32_t value);

#endif /* SCRAMBLE_H */
