/*
 * What unchanged third-party kernels expect from the SDK's headers and compiler, one check per __host output
 * (the host compares each with its expected value):
 *
 *   - a kernel-defined `uint32_t rand(void)` next to <stdlib.h> and <string.h> (the DPU libc declares no rand);
 *   - definition macros written without a trailing semicolon, as the SDK's end with one;
 *   - built_ins.h wrappers; SEQREAD_CACHE_SIZE as a number; gcc-only warnings under -Werror;
 *     __dma_aligned on a parameter (with clang, which the test uses when installed);
 *   - MRAM addresses as the DMA engine reads them: a plain offset with no MRAM base, `64 MiB - 8`, and a
 *     pointer plus a wrapped 32-bit difference;
 *   - a 1-byte mram_write (2,048 bytes on a DPU) and a 12-byte one (8 bytes), their sizes known at run time only
 *     (as constants, the SDK's mram.h rejects them at compile time);
 *   - tasklet 3 putting 4 KiB of locals on its 1 KiB stack (a warning, as on hardware nothing stops it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <alloc.h>
#include <barrier.h>
#include <built_ins.h>
#include <defs.h>
#include <mram.h>
#include <mutex_pool.h>
#include <sem.h>
#include <seqread.h>
#include <vmutex.h>

#include "common.h"

static uint32_t seed = 1;

uint32_t rand(void)
{
    seed = seed * 1103515245u + 12345u;
    return seed >> 16;
}

BARRIER_INIT(start, NR_TASKLETS)
SEMAPHORE_INIT(tokens, 1)
MUTEX_POOL_INIT(pool, 4)
VMUTEX_INIT(virtual_mutexes, 16, 4)

/* clang accepts an alignment on a parameter, as the SDK's compiler does; gcc refuses it. */
#ifdef __clang__
#define ALIGNED_PARAMETER __dma_aligned
#else
#define ALIGNED_PARAMETER
#endif

static uint64_t first_word(ALIGNED_PARAMETER const uint64_t *words)
{
    return words[0];
}

/* Used as a statement, its value is discarded: gcc warns (-Wunused-value), clang does not. */
#define STORE(destination, value) ((destination) = (value), (destination))

__host uint32_t random_value;
__host uint32_t builtin_ones;
__host uint32_t builtin_shifted;
__host uint32_t builtin_product;
__host uint32_t seqread_cache_size;
__host uint32_t precedence;
__host uint64_t offset_word;
__host uint64_t end_word;
__host uint64_t wrapped_word;
__host uint64_t deep_stack_sum;
__host uint32_t odd_write_size;
__host uint32_t twelve_write_size;
/* Set by the host for the strict-mode run: only tasklet 3 (the stack overflow) does its part. */
__host uint32_t stack_only;

static void check_headers_and_builtins(void)
{
    random_value = rand();
    __builtin_nop_();
    uint32_t word = 0xF0F00001u;
    __builtin_cao_rr(builtin_ones, word);
    __builtin_lsl_rri(builtin_shifted, word, "4");
    __builtin_mul_sl_sl_rrr(builtin_product, 0xFEu, 3u);
    uint8_t cache[SEQREAD_CACHE_SIZE];
    memset(cache, 1, sizeof(cache));
    seqread_cache_size = (uint32_t)sizeof(cache) * cache[0];
    uint32_t a = 12, b = 5;
    STORE(precedence, a & b - 1);
    sem_take(&tokens);
    mutex_pool_lock(&pool, 1);
    vmutex_lock(&virtual_mutexes, 7);
    vmutex_unlock(&virtual_mutexes, 7);
    mutex_pool_unlock(&pool, 1);
    sem_give(&tokens);
}

static void check_mram_addresses(uint64_t *buffer)
{
    /* Plain offsets, as a kernel with no __mram variable computes them. */
    mram_read((__mram_ptr void *)(uintptr_t)OFFSET_WORD_AT, buffer, 8);
    offset_word = first_word(buffer);
    mram_read((__mram_ptr void *)(uintptr_t)(MRAM_BYTES - 8), buffer, 8);
    end_word = buffer[0];
    /* p + (uint32_t)(a - b) with a < b: 8 bytes below p on a DPU. */
    __mram_ptr uint8_t *p = (__mram_ptr uint8_t *)DPU_MRAM_HEAP_POINTER + WRAPPED_AT + 8;
    uint32_t a = 16, b = 24;
    mram_read(p + (uint32_t)(a - b), buffer, 8);
    wrapped_word = buffer[0];
}

static void check_odd_dma_sizes(uint64_t *buffer)
{
    for (uint32_t i = 0; i < ODD_WRITE_WORDS; i++)
        buffer[i] = ODD_WRITE_PATTERN + i;
    __mram_ptr uint8_t *heap = DPU_MRAM_HEAP_POINTER;
    /* 1 byte (from the host), as a real program's precedence bug computes it. */
    mram_write(buffer, heap + ODD_WRITE_AT, odd_write_size);
    mram_write(buffer, heap + TWELVE_WRITE_AT, twelve_write_size);
}

static uint64_t __attribute__((noinline)) deep_stack(uint32_t seed_value)
{
    volatile uint64_t locals[DEEP_STACK_WORDS];
    for (uint32_t i = 0; i < DEEP_STACK_WORDS; i++)
        locals[i] = seed_value + i;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < DEEP_STACK_WORDS; i++)
        sum += locals[i];
    return sum;
}

int main(void)
{
    barrier_wait(&start);
    uint64_t *buffer = mem_alloc(ODD_WRITE_WORDS * 8);
    switch (stack_only && me() != 3 ? NR_TASKLETS : me()) {
    case 0:
        check_headers_and_builtins();
        break;
    case 1:
        check_mram_addresses(buffer);
        break;
    case 2:
        check_odd_dma_sizes(buffer);
        break;
    case 3:
        deep_stack_sum = deep_stack(1);
        break;
    default:
        break;
    }
    return 0;
}
