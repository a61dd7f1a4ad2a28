/*
 * string.c: the SDK's DPU libc string functions (<string.h>), with the SDK's semantics and costs.
 *
 * Each function follows the routine of the SDK 2025.1's compiled runtime (librt_v1A.a, <name>.c.obj,
 * disassembled): the same loops in the same order, so that overlapping or odd arguments give the DPU's result,
 * and the instructions of each basic block it runs are charged (the cost constants name the blocks). Where the
 * DPU's routine differs from the C standard or from the host's C library, the comment says so. The SDK links
 * these from an archive, so a kernel may define its own: they are weak here.
 *
 * A DPU program reaches memcpy for every copy the DPU's compiler does not inline: it inlines constant-size
 * copies of at most four stores and calls memcpy (or its word loop __memcpy_wram_4align, which gives the same
 * bytes) for the rest. Kernels are compiled with -fno-builtin-memcpy so that the host compiler, which inlines
 * constant-size copies of hundreds of bytes with memmove's semantics, calls this memcpy too.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <libc/errno.h>

/* The host compiler must not turn the byte and word loops below into calls of the functions they implement. */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((no_builtin)), apply_to = function)
#elif defined(__GNUC__)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif

#define WEAK __attribute__((weak))
#define WORD 4u

static uintptr_t align_up(uintptr_t address) { return (address + WORD - 1) & ~(uintptr_t)(WORD - 1); }
static uintptr_t align_down(uintptr_t address) { return address & ~(uintptr_t)(WORD - 1); }

/* ---- memcpy.c.obj, memcpy: bytes up to the destination's next word, words while both are word-aligned, then
 * bytes; when source and destination differ modulo 4 every byte is copied singly. Always forward, so a copy
 * onto an overlapping range above its source repeats the source's first bytes (an LZ back-reference). */
#define MEMCPY_ENTRY 11u     /* end, alignments, the head's end: 10 or 11 instructions, see below */
#define MEMCPY_HEAD_SETUP 3u /* before the head loop */
#define MEMCPY_PER_BYTE 5u   /* lbs, sb, two increments, count-and-branch */
#define MEMCPY_WORDS_COUNT 2u
#define MEMCPY_WORDS_LENGTH 2u
#define MEMCPY_WORDS_SETUP 3u
#define MEMCPY_WORD_LOOP_SETUP 2u
#define MEMCPY_PER_WORD 5u /* lw, sw, two increments, count-and-branch */
#define MEMCPY_TAIL_SETUP 2u
#define MEMCPY_TAIL_LOOP_SETUP 2u
#define MEMCPY_PER_TAIL_BYTE 6u
#define MEMCPY_RETURN 1u

static uint32_t memcpy_cost(void *destination, const void *source, size_t size, void **result)
{
    uint8_t *to = destination;
    const uint8_t *from = source;
    uintptr_t end = (uintptr_t)to + (uint32_t)size;
    uintptr_t head_end = align_up((uintptr_t)to);
    uint32_t cost = MEMCPY_ENTRY - 1;
    if (head_end <= end) {
        cost++;
    } else {
        head_end = end;
    }
    if ((((uintptr_t)from ^ (uintptr_t)to) & (WORD - 1)) != 0) {
        cost++;
        head_end = end;
    }
    uint32_t head = (uint32_t)(head_end - (uintptr_t)to);
    if (head != 0) {
        cost += MEMCPY_HEAD_SETUP + MEMCPY_PER_BYTE * head;
        for (uint32_t i = 0; i < head; i++) {
            to[i] = from[i];
        }
    }
    cost += MEMCPY_WORDS_COUNT;
    uint32_t words = 0;
    if (align_down(end) >= head_end) {
        cost += MEMCPY_WORDS_LENGTH;
        words = (uint32_t)(align_down(end) - head_end) / WORD;
    }
    cost += MEMCPY_WORDS_SETUP;
    uint8_t *word_to = to + head;
    const uint8_t *word_from = from + head;
    if (words != 0) {
        cost += MEMCPY_WORD_LOOP_SETUP + MEMCPY_PER_WORD * words;
        for (uint32_t i = 0; i < words; i++) {
            uint32_t word;
            __builtin_memcpy(&word, word_from + WORD * i, WORD);
            __builtin_memcpy(word_to + WORD * i, &word, WORD);
        }
    }
    cost += MEMCPY_TAIL_SETUP;
    uint8_t *tail_to = word_to + WORD * words;
    const uint8_t *tail_from = word_from + WORD * words;
    uint32_t tail = (uint32_t)(end - (uintptr_t)tail_to);
    if (tail != 0) {
        cost += MEMCPY_TAIL_LOOP_SETUP + MEMCPY_PER_TAIL_BYTE * tail;
        for (uint32_t i = 0; i < tail; i++) {
            tail_to[i] = tail_from[i];
        }
    }
    *result = destination;
    return cost + MEMCPY_RETURN;
}

WEAK void *memcpy(void *destination, const void *source, size_t size)
{
    void *result;
    __dpusim_charge(memcpy_cost(destination, source, size, &result));
    return result;
}

/* ---- memmove.c.obj, memmove: memcpy when the destination is below the source or the ranges are disjoint;
 * otherwise backward: bytes down to the last word boundary, words, then bytes (all bytes when source and
 * destination differ modulo 4). */
#define MEMMOVE_ENTRY 5u
#define MEMMOVE_DISJOINT_CHECK 2u
#define MEMMOVE_FORWARD 2u
#define MEMMOVE_BACKWARD_SETUP 6u
#define MEMMOVE_TAIL_START 1u
#define MEMMOVE_ALIGNMENT 2u
#define MEMMOVE_MISALIGNED 1u
#define MEMMOVE_TAIL_COUNT 3u
#define MEMMOVE_TAIL_LOOP_SETUP 4u
#define MEMMOVE_PER_BYTE 6u
#define MEMMOVE_WORDS_COUNT 3u
#define MEMMOVE_WORDS_LENGTH 2u
#define MEMMOVE_WORDS_CHECK 1u
#define MEMMOVE_WORD_LOOP_SETUP 4u
#define MEMMOVE_PER_WORD 6u
#define MEMMOVE_HEAD_COUNT 3u
#define MEMMOVE_HEAD_LOOP_EXIT 1u
#define MEMMOVE_RETURN 4u

static uint32_t memmove_backward(uint8_t *to, const uint8_t *from, uint32_t size)
{
    uintptr_t end = (uintptr_t)to + size;
    uint32_t cost = MEMMOVE_BACKWARD_SETUP;
    uintptr_t tail_start = (uintptr_t)to;
    if (align_down(end) >= (uintptr_t)to) {
        cost += MEMMOVE_TAIL_START;
        tail_start = align_down(end);
    }
    cost += MEMMOVE_ALIGNMENT;
    if ((((uintptr_t)from ^ (uintptr_t)to) & (WORD - 1)) != 0) {
        cost += MEMMOVE_MISALIGNED;
        tail_start = (uintptr_t)to;
    }
    cost += MEMMOVE_TAIL_COUNT;
    uint32_t tail = (uint32_t)(end - tail_start);
    if (tail != 0) {
        cost += MEMMOVE_TAIL_LOOP_SETUP + MEMMOVE_PER_BYTE * tail;
        for (uint32_t i = size; i > size - tail; i--) {
            to[i - 1] = from[i - 1];
        }
    }
    cost += MEMMOVE_WORDS_COUNT;
    uint32_t words = 0;
    if (tail_start >= align_up((uintptr_t)to)) {
        cost += MEMMOVE_WORDS_LENGTH;
        words = (uint32_t)(tail_start - align_up((uintptr_t)to)) / WORD;
    }
    cost += MEMMOVE_WORDS_CHECK;
    uint32_t words_start = (uint32_t)(tail_start - (uintptr_t)to) - WORD * words;
    if (words != 0) {
        cost += MEMMOVE_WORD_LOOP_SETUP + MEMMOVE_PER_WORD * words;
        for (uint32_t i = words; i > 0; i--) {
            uint32_t word;
            __builtin_memcpy(&word, from + words_start + WORD * (i - 1), WORD);
            __builtin_memcpy(to + words_start + WORD * (i - 1), &word, WORD);
        }
    }
    cost += MEMMOVE_HEAD_COUNT;
    if (words_start != 0) {
        cost += MEMMOVE_PER_BYTE * words_start + MEMMOVE_HEAD_LOOP_EXIT;
        for (uint32_t i = words_start; i > 0; i--) {
            to[i - 1] = from[i - 1];
        }
    }
    return cost;
}

WEAK void *memmove(void *destination, const void *source, size_t size)
{
    uint8_t *to = destination;
    const uint8_t *from = source;
    uint32_t cost = MEMMOVE_ENTRY;
    if ((uintptr_t)to > (uintptr_t)from) {
        cost += MEMMOVE_DISJOINT_CHECK;
        if ((uintptr_t)from + (uint32_t)size > (uintptr_t)to) {
            __dpusim_charge(cost + memmove_backward(to, from, (uint32_t)size) + MEMMOVE_RETURN);
            return destination;
        }
    }
    void *ignored;
    cost += MEMMOVE_FORWARD + memcpy_cost(destination, source, size, &ignored);
    __dpusim_charge(cost + MEMMOVE_RETURN);
    return destination;
}

/* ---- memset.c.obj, memset: bytes up to a word boundary, words, bytes. */
#define MEMSET_ENTRY 1u
#define MEMSET_HEAD_LENGTH 3u
#define MEMSET_HEAD_CLAMP 1u
#define MEMSET_HEAD_CHECK 1u
#define MEMSET_HEAD_LOOP_SETUP 2u
#define MEMSET_PER_BYTE 3u /* sb, increment, count-and-branch */
#define MEMSET_AFTER_HEAD 3u
#define MEMSET_ALIGNED_START 2u
#define MEMSET_WORDS_SETUP 7u
#define MEMSET_PER_WORD 3u
#define MEMSET_AFTER_WORDS 3u
#define MEMSET_TAIL_CHECK 1u
#define MEMSET_NO_TAIL_JUMP 1u
#define MEMSET_RETURN 1u

static uint32_t memset_words_and_tail(uint8_t *at, uint8_t value, uint32_t size)
{
    uint32_t cost = MEMSET_WORDS_SETUP + MEMSET_PER_WORD * (size / WORD) + MEMSET_AFTER_WORDS;
    uint32_t pattern = value * 0x01010101u;
    for (uint32_t i = 0; i < size / WORD; i++) {
        __builtin_memcpy(at + WORD * i, &pattern, WORD);
    }
    uint32_t tail = size % WORD;
    if (tail == 0) {
        return cost + MEMSET_NO_TAIL_JUMP;
    }
    for (uint32_t i = 0; i < tail; i++) {
        at[size - tail + i] = value;
    }
    return cost + MEMSET_PER_BYTE * tail;
}

static uint32_t memset_bytes(uint8_t *at, uint8_t value, uint32_t size)
{
    for (uint32_t i = 0; i < size; i++) {
        at[i] = value;
    }
    return MEMSET_TAIL_CHECK + MEMSET_PER_BYTE * size;
}

static uint32_t memset_cost(void *area, int value, size_t size)
{
    uint8_t *at = area;
    uint8_t byte = (uint8_t)value;
    uint32_t left = (uint32_t)size;
    uint32_t cost = MEMSET_ENTRY;
    uint32_t misalignment = (uintptr_t)at & (WORD - 1);
    if (misalignment != 0) {
        uint32_t head = WORD - misalignment;
        cost += MEMSET_HEAD_LENGTH;
        if (head > left) {
            head = left;
        } else {
            cost += MEMSET_HEAD_CLAMP;
        }
        cost += MEMSET_HEAD_CHECK;
        if (head != 0) {
            cost += MEMSET_HEAD_LOOP_SETUP + memset_bytes(at, byte, head) - MEMSET_TAIL_CHECK;
        }
        cost += MEMSET_AFTER_HEAD;
        at += head;
        left -= head;
    } else {
        cost += MEMSET_ALIGNED_START;
    }
    if (left >= WORD) {
        cost += memset_words_and_tail(at, byte, left);
    } else {
        cost += memset_bytes(at, byte, left);
    }
    return cost + MEMSET_RETURN;
}

WEAK void *memset(void *area, int value, size_t size)
{
    __dpusim_charge(memset_cost(area, value, size));
    return area;
}

/* ---- memcmp.c.obj: the difference of the first unequal bytes as unsigned chars, 0 if none. */
#define MEMCMP_ENTRY 2u
#define MEMCMP_PER_BYTE 6u
#define MEMCMP_DIFFERENT 3u
#define MEMCMP_RETURN 2u

WEAK int memcmp(const void *area1, const void *area2, size_t size)
{
    const uint8_t *a = area1, *b = area2;
    uint32_t cost = MEMCMP_ENTRY;
    int result = 0;
    for (uint32_t i = 0; i < (uint32_t)size; i++) {
        if (a[i] != b[i]) {
            cost += MEMCMP_DIFFERENT;
            result = a[i] - b[i];
            break;
        }
        cost += MEMCMP_PER_BYTE;
    }
    if (result == 0) {
        cost++; /* the move of the 0 result */
    }
    __dpusim_charge(cost + MEMCMP_RETURN);
    return result;
}

/* ---- memchr.c.obj: compares each byte, read as a signed char, with the int argument as it is (the C standard
 * converts it to unsigned char): memchr(p, 0xFF, n) never finds a 0xFF byte and memchr(p, -1, n) does. */
#define MEMCHR_ENTRY 3u
#define MEMCHR_PER_BYTE 4u
#define MEMCHR_FOUND 4u
#define MEMCHR_RETURN 1u

WEAK void *memchr(const void *area, int character, size_t size)
{
    const int8_t *at = area;
    uint32_t cost = MEMCHR_ENTRY;
    for (uint32_t i = 0; i < (uint32_t)size; i++) {
        if (at[i] == character) {
            __dpusim_charge(cost + MEMCHR_FOUND);
            return (void *)(uintptr_t)(at + i);
        }
        cost += MEMCHR_PER_BYTE;
    }
    __dpusim_charge(cost + MEMCHR_RETURN);
    return NULL;
}

/* ---- strlen.c.obj, strnlen.c.obj */
#define STRLEN_FIXED 3u
#define STRLEN_PER_BYTE 4u

static uint32_t strlen_cost(const char *string, size_t *length)
{
    size_t n = 0;
    while (string[n] != '\0') {
        n++;
    }
    *length = n;
    return STRLEN_FIXED + STRLEN_PER_BYTE * ((uint32_t)n + 1);
}

WEAK size_t strlen(const char *string)
{
    size_t length;
    __dpusim_charge(strlen_cost(string, &length));
    return length;
}

#define STRNLEN_FIXED 3u
#define STRNLEN_PER_BYTE 7u
#define STRNLEN_AT_MAXIMUM 2u

WEAK size_t strnlen(const char *string, size_t max_len)
{
    uint32_t cost = STRNLEN_FIXED;
    size_t n = 0;
    for (;; n++) {
        if (n >= max_len) {
            cost += STRNLEN_AT_MAXIMUM;
            break;
        }
        cost += STRNLEN_PER_BYTE;
        if (string[n] == '\0') {
            break;
        }
    }
    __dpusim_charge(cost);
    return n;
}

/* ---- strcmp.c.obj, strncmp.c.obj: the difference of the first unequal bytes as unsigned chars. */
#define STRCMP_EMPTY 6u
#define STRCMP_ENTRY 5u
#define STRCMP_PER_BYTE 8u
#define STRCMP_DIFFERENT 4u
#define STRCMP_END 3u

WEAK int strcmp(const char *string1, const char *string2)
{
    const uint8_t *a = (const uint8_t *)string1, *b = (const uint8_t *)string2;
    if (a[0] == '\0') {
        __dpusim_charge(STRCMP_EMPTY);
        return -b[0];
    }
    uint32_t cost = STRCMP_ENTRY;
    for (uint32_t i = 0;; i++) {
        if (a[i] != b[i]) {
            __dpusim_charge(cost + STRCMP_DIFFERENT);
            return a[i] - b[i];
        }
        cost += STRCMP_PER_BYTE;
        if (a[i + 1] == '\0') {
            __dpusim_charge(cost + STRCMP_END);
            return -b[i + 1];
        }
    }
}

#define STRNCMP_ENTRY 2u
#define STRNCMP_PER_BYTE 7u
#define STRNCMP_END_OF_FIRST 5u
#define STRNCMP_DIFFERENT 6u
#define STRNCMP_EQUAL 3u

WEAK int strncmp(const char *string1, const char *string2, size_t size)
{
    const uint8_t *a = (const uint8_t *)string1, *b = (const uint8_t *)string2;
    uint32_t cost = STRNCMP_ENTRY;
    for (uint32_t i = 0; i < (uint32_t)size; i++) {
        if (a[i] == '\0') {
            __dpusim_charge(cost + STRNCMP_END_OF_FIRST);
            return a[i] - b[i];
        }
        if (a[i] != b[i]) {
            __dpusim_charge(cost + STRNCMP_DIFFERENT);
            return a[i] - b[i];
        }
        cost += STRNCMP_PER_BYTE;
    }
    __dpusim_charge(cost + STRNCMP_EQUAL);
    return 0;
}

/* ---- strchr.c.obj, strrchr.c.obj: each byte, read as an unsigned char, is compared with the int argument as
 * it is (the C standard converts it to char): strchr(s, -1) never finds a 0xFF byte, strchr(s, 0x141) no 'A'.
 * The terminating NUL is part of the string, so strchr(s, 0) finds it. */
#define STRCHR_FIRST 2u
#define STRCHR_RETURN_FIRST 1u
#define STRCHR_PER_BYTE 6u
#define STRCHR_FOUND 2u
#define STRCHR_NOT_FOUND 5u

WEAK char *strchr(const char *string, int character)
{
    const uint8_t *at = (const uint8_t *)string;
    uint32_t cost = STRCHR_FIRST;
    if (at[0] == character) {
        __dpusim_charge(cost + STRCHR_RETURN_FIRST);
        return (char *)(uintptr_t)at;
    }
    for (uint32_t i = 0;; i++) {
        if (at[i] == '\0') {
            __dpusim_charge(cost + STRCHR_NOT_FOUND);
            return NULL;
        }
        cost += STRCHR_PER_BYTE;
        if (at[i + 1] == character) {
            __dpusim_charge(cost + STRCHR_FOUND);
            return (char *)(uintptr_t)(at + i + 1);
        }
    }
}

#define STRRCHR_ENTRY 1u
#define STRRCHR_MATCH 6u
#define STRRCHR_OTHER 7u
#define STRRCHR_RETURN 2u

WEAK char *strrchr(const char *string, int character)
{
    const uint8_t *at = (const uint8_t *)string;
    const uint8_t *last = NULL;
    uint32_t cost = STRRCHR_ENTRY;
    for (uint32_t i = 0;; i++) {
        if (at[i] == character) {
            last = at + i;
            cost += STRRCHR_MATCH;
        } else {
            cost += STRRCHR_OTHER;
        }
        if (at[i] == '\0') {
            break;
        }
    }
    __dpusim_charge(cost + STRRCHR_RETURN);
    return (char *)(uintptr_t)last;
}

/* ---- strcpy.c.obj, stpcpy.c.obj, strncpy.c.obj, stpncpy.c.obj (the last two fill with memset) */
#define COPY_PER_BYTE 5u

static uint32_t copy_string(char *destination, const char *source, size_t *length)
{
    size_t n = 0;
    for (; source[n] != '\0'; n++) {
        destination[n] = source[n];
    }
    destination[n] = '\0';
    *length = n;
    return COPY_PER_BYTE * (uint32_t)n;
}

#define STRCPY_EMPTY 5u
#define STRCPY_FIXED 7u

WEAK char *strcpy(char *destination, const char *source)
{
    size_t length;
    uint32_t cost = copy_string(destination, source, &length);
    __dpusim_charge(cost + (length == 0 ? STRCPY_EMPTY : STRCPY_FIXED));
    return destination;
}

#define STPCPY_EMPTY 4u
#define STPCPY_FIXED 5u

WEAK char *stpcpy(char *destination, const char *source)
{
    size_t length;
    uint32_t cost = copy_string(destination, source, &length);
    __dpusim_charge(cost + (length == 0 ? STPCPY_EMPTY : STPCPY_FIXED));
    return destination + length;
}

#define NCPY_SIZE_ZERO 9u
#define NCPY_ENTRY 6u
#define NCPY_PER_BYTE 7u
#define NCPY_FULL 1u
#define NCPY_SHORT 3u
#define NCPY_RETURN 4u
#define STRNCPY_FILL 5u
#define STPNCPY_FILL 6u

/* Copies at most size bytes; returns the bytes copied and adds the cost of the copy loop to *cost. */
static size_t copy_bounded(char *destination, const char *source, size_t size, uint32_t *cost)
{
    size_t n = 0;
    for (; n < size && source[n] != '\0'; n++) {
        destination[n] = source[n];
    }
    *cost += NCPY_PER_BYTE * (uint32_t)n + (n == size ? NCPY_FULL : NCPY_SHORT);
    return n;
}

WEAK char *strncpy(char *destination, const char *source, size_t size)
{
    if (size == 0) {
        __dpusim_charge(NCPY_SIZE_ZERO);
        return destination;
    }
    uint32_t cost = NCPY_ENTRY;
    size_t copied = copy_bounded(destination, source, size, &cost);
    if (copied < size) {
        cost += STRNCPY_FILL + memset_cost(destination + copied, 0, size - copied);
    }
    __dpusim_charge(cost + NCPY_RETURN);
    return destination;
}

WEAK char *stpncpy(char *destination, const char *source, size_t size)
{
    if (size == 0) {
        __dpusim_charge(NCPY_SIZE_ZERO);
        return destination;
    }
    uint32_t cost = NCPY_ENTRY;
    size_t copied = copy_bounded(destination, source, size, &cost);
    if (copied < size) {
        cost += STPNCPY_FILL + memset_cost(destination + copied, 0, size - copied);
    }
    __dpusim_charge(cost + NCPY_RETURN);
    return destination + copied;
}

/* ---- strcat.c.obj, strncat.c.obj: strlen of the destination, then the copy. */
#define STRCAT_ENTRY 8u
#define STRCAT_EMPTY 8u
#define STRCAT_COPY_FIXED 10u
#define STRCAT_PER_BYTE 7u

WEAK char *strcat(char *destination, const char *source)
{
    size_t start;
    uint32_t cost = STRCAT_ENTRY + strlen_cost(destination, &start);
    size_t n = 0;
    for (; source[n] != '\0'; n++) {
        destination[start + n] = source[n];
    }
    destination[start + n] = '\0';
    cost += n == 0 ? STRCAT_EMPTY : STRCAT_COPY_FIXED + STRCAT_PER_BYTE * (uint32_t)n;
    __dpusim_charge(cost);
    return destination;
}

#define STRNCAT_ENTRY 9u
#define STRNCAT_SIZE_ZERO 9u
#define STRNCAT_COPY_ENTRY 2u
#define STRNCAT_PER_BYTE 7u
#define STRNCAT_SHORT 11u
#define STRNCAT_FULL 9u

WEAK char *strncat(char *destination, const char *source, size_t size)
{
    size_t start;
    uint32_t cost = STRNCAT_ENTRY + strlen_cost(destination, &start);
    size_t n = 0;
    for (; n < size && source[n] != '\0'; n++) {
        destination[start + n] = source[n];
    }
    destination[start + n] = '\0';
    if (size == 0) {
        cost += STRNCAT_SIZE_ZERO;
    } else {
        cost += STRNCAT_COPY_ENTRY + STRNCAT_PER_BYTE * (uint32_t)n + (n < size ? STRNCAT_SHORT : STRNCAT_FULL);
    }
    __dpusim_charge(cost);
    return destination;
}

/* ---- strlwr.c.obj, strupr.c.obj (ASCII letters only), strrev.c.obj */
#define CASE_FIXED 4u
#define CASE_PER_BYTE 7u
#define CASE_CHANGED 1u

static char *change_case(char *string, char first, int delta)
{
    uint32_t cost = CASE_FIXED;
    for (char *c = string; *c != '\0'; c++) {
        cost += CASE_PER_BYTE;
        if ((uint32_t)(int32_t)(*c - first) <= 'Z' - 'A') {
            *c = (char)(*c + delta);
            cost += CASE_CHANGED;
        }
    }
    if (*string == '\0') {
        cost--; /* the empty string returns from its first test */
    }
    __dpusim_charge(cost);
    return string;
}

WEAK char *strlwr(char *string) { return change_case(string, 'A', 'a' - 'A'); }

WEAK char *strupr(char *string) { return change_case(string, 'a', 'A' - 'a'); }

#define STRREV_FIXED 10u
#define STRREV_LOOP_SETUP 3u
#define STRREV_PER_SWAP 7u

WEAK char *strrev(char *string)
{
    size_t length;
    uint32_t cost = STRREV_FIXED + strlen_cost(string, &length);
    size_t half = length / 2;
    if (half != 0) {
        cost += STRREV_LOOP_SETUP + STRREV_PER_SWAP * (uint32_t)half;
    }
    for (size_t i = 0; i < half; i++) {
        char swapped = string[i];
        string[i] = string[length - 1 - i];
        string[length - 1 - i] = swapped;
    }
    __dpusim_charge(cost);
    return string;
}

/* ---- strerror.c.obj: the messages of the DPU's errno numbers; a number past the table sets errno to EINVAL
 * and gives "Unknown error". On a DPU the table is in WRAM only when a program calls strerror; here the runtime
 * is always linked, so it lives outside the WRAM window (the kernel reads it through the returned pointer). */
#define STRERROR_KNOWN 4u
#define STRERROR_UNKNOWN 5u

#define LONGEST_MESSAGE 56

static const char error_messages[][LONGEST_MESSAGE] __attribute__((section(".dpusim.host.rodata"))) = {
    "Success",
    "Argument list too long",
    "Permission denied",
    "Address in use",
    "Address not available",
    "Address family not supported",
    "Resource unavailable, try again",
    "Connection already in progress",
    "Bad file descriptor",
    "Bad message",
    "Device or resource busy",
    "Operation canceled",
    "No child processes",
    "Connection aborted",
    "Connection refused",
    "Connection reset",
    "Resource deadlock would occur",
    "Destination address required",
    "Mathematics argument out of domain of function",
    "Disk quota exceeded",
    "File exists",
    "Bad address",
    "File too big",
    "Host unreachable",
    "Identifier removed",
    "Illegal byte sequence",
    "Operation in progress",
    "Interrupted function",
    "Invalid argument",
    "I/O error",
    "Socket is connected",
    "File is a directory",
    "Too many levels of symbolic links",
    "File descriptor value too large",
    "Too many links",
    "Message too large",
    "EMULTIHOP",
    "Filename too long",
    "Network is down",
    "Connection aborted by network",
    "Network unreachable",
    "Too many files open in system",
    "No buffer space available",
    "No message is available on the STREAM head read queue",
    "No such device",
    "No such file or directory",
    "Executable file format error",
    "No locks available",
    "ENOLINK",
    "Not enough space",
    "No message of the desired type",
    "Protocol unavailable",
    "No space left on device",
    "No STREAM resources",
    "Not a STREAM",
    "Function not supported",
    "The socket is not connected",
    "Not a directory or a symbolic link to a directory",
    "Directory not empty",
    "State not recoverable",
    "Not a socket",
    "Not supported",
    "Inappropriate I/O control operation",
    "No such device or address",
    "Operation not supported on socket",
    "Value too large to be stored in data type",
    "Previous owner died",
    "Operation not permitted",
    "Broken pipe",
    "Protocol error",
    "Protocol not supported",
    "Protocol wrong type for socket",
    "Result too large",
    "Read-only file system",
    "Invalid seek",
    "No such process",
    "ESTALE",
    "Stream ioctl() timeout",
    "Connection timed out",
    "Text file busy",
    "Operation would block",
    "Cross-device link",
    "Unknown error",
};

#define KNOWN_ERRORS (sizeof(error_messages) / sizeof(error_messages[0]) - 1)

WEAK char *strerror(int errnum)
{
    if ((uint32_t)errnum < KNOWN_ERRORS) {
        __dpusim_charge(STRERROR_KNOWN);
        return (char *)(uintptr_t)error_messages[errnum];
    }
    __dpusim_charge(STRERROR_UNKNOWN);
    errno = EINVAL;
    return (char *)(uintptr_t)error_messages[KNOWN_ERRORS];
}

/* ---- strspn.c.obj, strcspn.c.obj, strpbrk.c.obj */
#define SPAN_EMPTY 5u
#define SPAN_ENTRY 6u
#define SPAN_NEXT 4u
#define SPAN_END 1u

/* The accept set's index of c (0 is its first character), or -1 when c is not in it. */
static int32_t index_in_set(uint8_t c, const uint8_t *set)
{
    for (int32_t j = 0; set[j] != '\0'; j++) {
        if (set[j] == c) {
            return j;
        }
    }
    return -1;
}

static uint32_t set_length(const uint8_t *set)
{
    uint32_t n = 0;
    while (set[n] != '\0') {
        n++;
    }
    return n;
}

#define STRSPN_TEST_FIRST 5u
#define STRSPN_PER_SET_BYTE 6u
#define STRSPN_MATCH_JUMP 1u
#define STRSPN_NOT_IN_SET 3u

/* Returns the length of string's prefix of bytes in accept, and its cost. */
static uint32_t strspn_cost(const char *string, const char *accept, size_t *length)
{
    const uint8_t *s = (const uint8_t *)string, *set = (const uint8_t *)accept;
    if (s[0] == '\0') {
        *length = 0;
        return SPAN_EMPTY;
    }
    uint32_t cost = SPAN_ENTRY;
    size_t n = 0;
    for (;; n++) {
        if (s[n] == '\0') {
            cost += SPAN_END;
            break;
        }
        cost += STRSPN_TEST_FIRST;
        int32_t j = index_in_set(s[n], set);
        if (j < 0) {
            cost += STRSPN_PER_SET_BYTE * set_length(set) + STRSPN_NOT_IN_SET;
            break;
        }
        if (j > 0) {
            cost += STRSPN_PER_SET_BYTE * (uint32_t)j + STRSPN_MATCH_JUMP;
        }
        cost += SPAN_NEXT;
    }
    *length = n;
    return cost;
}

WEAK size_t strspn(const char *string, const char *accept)
{
    size_t length;
    __dpusim_charge(strspn_cost(string, accept, &length));
    return length;
}

#define STRCSPN_TEST_EMPTY_SET 4u
#define STRCSPN_PER_SET_BYTE 6u
#define STRCSPN_FOUND 1u
#define STRCSPN_NOT_IN_SET 1u

/* Returns the length of string's prefix of bytes not in reject, and its cost. */
static uint32_t strcspn_cost(const char *string, const char *reject, size_t *length)
{
    const uint8_t *s = (const uint8_t *)string, *set = (const uint8_t *)reject;
    if (s[0] == '\0') {
        *length = 0;
        return SPAN_EMPTY;
    }
    uint32_t cost = SPAN_ENTRY;
    size_t n = 0;
    for (;; n++) {
        if (s[n] == '\0') {
            cost += SPAN_END;
            break;
        }
        cost += STRCSPN_TEST_EMPTY_SET;
        if (set[0] != '\0') {
            int32_t j = index_in_set(s[n], set);
            if (j >= 0) {
                cost += STRCSPN_PER_SET_BYTE * (uint32_t)j + 3u + STRCSPN_FOUND;
                break;
            }
            cost += STRCSPN_PER_SET_BYTE * set_length(set) + STRCSPN_NOT_IN_SET;
        }
        cost += SPAN_NEXT;
    }
    *length = n;
    return cost;
}

WEAK size_t strcspn(const char *string, const char *reject)
{
    size_t length;
    __dpusim_charge(strcspn_cost(string, reject, &length));
    return length;
}

#define STRPBRK_FIXED 12u
#define STRPBRK_NOT_FOUND 1u

static char *strpbrk_charged(const char *string, const char *accept, uint32_t *cost)
{
    size_t length;
    *cost += STRPBRK_FIXED + strcspn_cost(string, accept, &length);
    if (string[length] == '\0') {
        *cost += STRPBRK_NOT_FOUND;
        return NULL;
    }
    return (char *)(uintptr_t)(string + length);
}

WEAK char *strpbrk(const char *string, const char *accept)
{
    uint32_t cost = 0;
    char *found = strpbrk_charged(string, accept, &cost);
    __dpusim_charge(cost);
    return found;
}

/* ---- strstr.c.obj: the naive search, restarting one byte after each candidate. */
#define STRSTR_EMPTY_NEEDLE 5u
#define STRSTR_ENTRY 5u
#define STRSTR_MATCHED_BYTE 7u
#define STRSTR_FOUND 1u
#define STRSTR_NEXT_CANDIDATE 9u
#define STRSTR_NOT_FOUND 6u

WEAK char *strstr(const char *haystack, const char *needle)
{
    const uint8_t *h = (const uint8_t *)haystack, *n = (const uint8_t *)needle;
    if (n[0] == '\0') {
        __dpusim_charge(STRSTR_EMPTY_NEEDLE);
        return (char *)(uintptr_t)haystack;
    }
    uint32_t cost = STRSTR_ENTRY;
    for (const uint8_t *candidate = h;; candidate++) {
        uint32_t i = 0;
        while (candidate[i] == n[i]) {
            cost += STRSTR_MATCHED_BYTE;
            i++;
            if (n[i] == '\0') {
                __dpusim_charge(cost + STRSTR_FOUND);
                return (char *)(uintptr_t)candidate;
            }
        }
        if (candidate[i] == '\0') {
            __dpusim_charge(cost + STRSTR_NOT_FOUND);
            return NULL;
        }
        cost += STRSTR_NEXT_CANDIDATE;
    }
}

/* ---- strtok_r.c.obj (strspn, then strcspn), strsep.c.obj (strpbrk) */
#define STRTOK_ENTRY 11u
#define STRTOK_FROM_SAVED 1u
#define STRTOK_CALL 3u
#define STRTOK_TEST 3u
#define STRTOK_NO_TOKEN 2u
#define STRTOK_AT_END 1u
#define STRTOK_CUT 2u
#define STRTOK_RETURN 7u

WEAK char *strtok_r(char *str, const char *delim, char **saveptr)
{
    uint32_t cost = STRTOK_ENTRY;
    char *at = str;
    if (at == NULL) {
        at = *saveptr;
        cost += STRTOK_FROM_SAVED;
    }
    char *token = NULL;
    if (*at == '\0') {
        cost += STRTOK_AT_END;
    } else {
        size_t skipped, length;
        cost += STRTOK_CALL + strspn_cost(at, delim, &skipped) + STRTOK_TEST;
        at += skipped;
        if (*at == '\0') {
            cost += STRTOK_NO_TOKEN;
        } else {
            cost += STRTOK_CALL + strcspn_cost(at, delim, &length) + STRTOK_TEST;
            token = at;
            at += length;
            if (*at != '\0') {
                *at++ = '\0';
                cost += STRTOK_CUT;
            }
        }
    }
    *saveptr = at;
    __dpusim_charge(cost + STRTOK_RETURN);
    return token;
}

#define STRSEP_ENTRY 6u
#define STRSEP_CALL 2u
#define STRSEP_FOUND 2u
#define STRSEP_NOT_FOUND 1u
#define STRSEP_STORE 2u
#define STRSEP_RETURN 4u

WEAK char *strsep(char **stringp, const char *delim)
{
    char *string = *stringp;
    uint32_t cost = STRSEP_ENTRY;
    if (string != NULL) {
        cost += STRSEP_CALL;
        char *found = strpbrk_charged(string, delim, &cost);
        if (found != NULL) {
            *found = '\0';
            *stringp = found + 1;
            cost += STRSEP_FOUND;
        } else {
            *stringp = NULL;
            cost += STRSEP_NOT_FOUND;
        }
        cost += STRSEP_STORE;
    }
    __dpusim_charge(cost + STRSEP_RETURN);
    return string;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
