/*
 * seqread.c: the sequential readers seqread<SIZE>_* for SIZE = 32..1024 (seqread.h picks one by
 * SEQREAD_CACHE_SIZE).
 *
 * A reader's cache holds 2 * SIZE bytes read from the 8-aligned MRAM address at or below the current element, so
 * an element of up to SIZE bytes starting in the first half is always whole. When the current pointer moves into
 * the second half, the cache is refilled from the (aligned-down) MRAM address of the new current element. Reads
 * are clamped at the end of MRAM.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <alloc.h>
#include <mram.h>
#include <seqread.h>

#define MRAM_ALIGNMENT 8u
/* What the SDK's seqread_get (dpu-rt/src/syslib/seqread.inc) executes: within the cache a call, an add, a
 * compare-and-branch and a return; a refill also computes the new MRAM address and cache position around its
 * mram_read (which the DMA model charges itself). */
#define GET_INSTRUCTIONS 5u
#define REFILL_INSTRUCTIONS 8u

static void *load(uintptr_t mram, seqreader_t *reader, uint32_t size)
{
    __dpusim_charge(REFILL_INSTRUCTIONS);
    uintptr_t aligned = mram & ~(uintptr_t)(MRAM_ALIGNMENT - 1);
    uintptr_t mram_end = (uintptr_t)DPUSIM_MRAM_BASE + DPUSIM_MRAM_SIZE;
    uint32_t length = 2 * size;
    if (aligned < mram_end && mram_end - aligned < length) {
        length = (uint32_t)(mram_end - aligned);
    }
    reader->mram_addr = aligned;
    mram_read((const __mram_ptr void *)aligned, (void *)reader->wram_cache, length);
    return (void *)(reader->wram_cache + (mram - aligned));
}

static void *get(void *ptr, uint32_t inc, seqreader_t *reader, uint32_t size)
{
    __dpusim_charge(GET_INSTRUCTIONS);
    uintptr_t next = (uintptr_t)ptr + inc;
    if (next >= reader->wram_cache + size) {
        return load(reader->mram_addr + (next - reader->wram_cache), reader, size);
    }
    return (void *)next;
}

#define DEFINE_SEQREAD(SIZE)                                                                                          \
    seqreader_buffer_t seqread##SIZE##_alloc(void)                                                                    \
    {                                                                                                                 \
        return (seqreader_buffer_t)mem_alloc(2 * (SIZE));                                                             \
    }                                                                                                                 \
    void *seqread##SIZE##_init(seqreader_buffer_t cache, __mram_ptr void *mram_addr, seqreader_t *reader)             \
    {                                                                                                                 \
        reader->wram_cache = cache;                                                                                   \
        return load((uintptr_t)mram_addr, reader, (SIZE));                                                            \
    }                                                                                                                 \
    void *seqread##SIZE##_get(void *ptr, uint32_t inc, seqreader_t *reader)                                           \
    {                                                                                                                 \
        return get(ptr, inc, reader, (SIZE));                                                                         \
    }                                                                                                                 \
    void *seqread##SIZE##_seek(__mram_ptr void *mram_addr, seqreader_t *reader)                                       \
    {                                                                                                                 \
        return load((uintptr_t)mram_addr, reader, (SIZE));                                                            \
    }                                                                                                                 \
    __mram_ptr void *seqread##SIZE##_tell(void *ptr, seqreader_t *reader)                                             \
    {                                                                                                                 \
        return (__mram_ptr void *)(reader->mram_addr + ((uintptr_t)ptr - reader->wram_cache));                        \
    }

DEFINE_SEQREAD(32)
DEFINE_SEQREAD(64)
DEFINE_SEQREAD(128)
DEFINE_SEQREAD(256)
DEFINE_SEQREAD(512)
DEFINE_SEQREAD(1024)
