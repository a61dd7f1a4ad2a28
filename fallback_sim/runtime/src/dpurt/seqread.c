/*
 * seqread.c: the sequential readers seqread<SIZE>_* for SIZE = 32..1024 (seqread.h picks one by
 * SEQREAD_CACHE_SIZE), exactly as the SDK 2025.1's compiled runtime does them (librt_v1A.a,
 * seqread<SIZE>.c.obj, disassembled; the six objects differ only in SIZE):
 *
 *  - alloc takes the heap lock, rounds the heap pointer up to SIZE and takes from the heap everything up to
 *    2 * SIZE bytes past the rounded pointer (one mem_alloc_nolock), which it returns: a SIZE-aligned cache.
 *  - init stores the cache, sets mram_addr to the sentinel 1 << 26 and goes on as seek.
 *  - seek keeps the loaded page when the new address is less than SIZE bytes past mram_addr (an unsigned
 *    32-bit difference) and returns cache + that difference; otherwise it reads 2 * SIZE bytes from the address
 *    aligned down to SIZE into the cache (one ldma), stores the aligned address and returns
 *    cache + (address mod SIZE).
 *  - get adds inc to ptr with `add rc, ptr, inc, ncN` (N = log2 SIZE), which returns at once unless the add
 *    carries out of the N low bits, that is unless (ptr mod SIZE) + (inc mod SIZE) >= SIZE. On a carry it
 *    advances mram_addr by SIZE, reads 2 * SIZE bytes from there into the cache and returns ptr + inc - SIZE.
 *    inc's bits above the N low ones never cause a refill: an increment of SIZE or more moves the pointer past
 *    the page without reloading it (the SDK documents increments below SIZE only).
 *  - tell is mram_addr + (ptr mod SIZE).
 *
 * The page rule works on the absolute WRAM address of the pointer, so it is right only when the cache is
 * SIZE-aligned: with a cache `m` bytes past a SIZE boundary, get refills when the pointer reaches the cache's
 * SIZE - m'th byte and returns a pointer up to `m` bytes before the cache, and tell is off by as much. The
 * simulated WRAM window starts at a multiple of 1 MiB, so the low bits of a WRAM address are those of the
 * DPU's WRAM offset, and a misaligned cache reads the same wrong bytes as on a DPU. The SDK does not check the
 * cache; the simulator warns (and faults in strict mode) when init is given a misaligned one.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <alloc.h>
#include <dpuruntime.h>
#include <seqread.h>

#include "../harness/sdk_costs.h"

/* The mram_addr init stores before its seek: no real MRAM address of the DPU's window is within SIZE of it
 * (seqread<SIZE>_init: `move r3, 0x4000000; sw r2, 4, r3`). */
#define NO_PAGE (1u << 26)

/* The instructions of each routine's path, from the disassembly, counting the routine's own instructions (the
 * caller's `call` is the caller's) and its return. The DMA model charges COST_DMA_ISSUE of them (the ldma and
 * the address computation before it) with the transfer. */
#define ALLOC_INSTRUCTIONS 15u       /* mem_alloc charges mem_alloc_nolock's */
#define SEEK_LOAD_INSTRUCTIONS 10u   /* seek, page reloaded */
#define SEEK_KEEP_INSTRUCTIONS 6u    /* seek, page kept */
#define INIT_EXTRA_INSTRUCTIONS 1u   /* init: seek's path with 2 stores, a move and an add for its 2 loads and sub */
#define GET_STAY_INSTRUCTIONS 2u     /* the add with its branch, the return */
#define GET_REFILL_INSTRUCTIONS 8u
#define TELL_INSTRUCTIONS 4u

/* Reads the page of 2 * size bytes at `page` into the cache. */
static void load_page(const char *routine, uint32_t page, seqreader_t *reader, uint32_t size)
{
    reader->mram_addr = page;
    __dpusim_dma(routine, DPUSIM_DMA_READ_AHEAD, (const void *)(uintptr_t)page, (void *)reader->wram_cache,
                 2 * size);
}

/* seek's body: keeps the loaded page when `mram` is in it, else loads the page holding `mram`. `extra` is what
 * the calling routine executes besides seek's path. */
static void *seek(const char *routine, uint32_t mram, seqreader_t *reader, uint32_t size, uint32_t extra)
{
    uint32_t into_page = mram - (uint32_t)reader->mram_addr;
    if (into_page < size) {
        __dpusim_charge(SEEK_KEEP_INSTRUCTIONS + extra);
        return (void *)(reader->wram_cache + into_page);
    }
    __dpusim_charge(SEEK_LOAD_INSTRUCTIONS + extra - COST_DMA_ISSUE);
    load_page(routine, mram & ~(size - 1), reader, size);
    return (void *)(reader->wram_cache + (mram & (size - 1)));
}

DPUSIM_MESSAGE(MISALIGNED_CACHE_FAULT,
               "%s: the cache at WRAM %#x is %u bytes past a %u-byte boundary: a DPU refills it at its byte %u and "
               "returns pointers before it (strict mode)");
DPUSIM_MESSAGE(MISALIGNED_CACHE_WARNING,
               "%s: the cache at WRAM %#x is %u bytes past a %u-byte boundary: a DPU refills it at its byte %u and "
               "returns pointers up to %u bytes before it (wrong elements), and so does the simulator");

/* What the SDK leaves unchecked: a cache that is not size-aligned breaks the page rule (see above). */
static void check_cache(const char *routine, seqreader_buffer_t cache, uint32_t size)
{
    uint32_t past_boundary = (uint32_t)cache & (size - 1);
    if (past_boundary == 0) {
        return;
    }
    if (__dpusim_strict()) {
        __dpusim_fault(DPUSIM_FAULT_DMA, cache, size, MISALIGNED_CACHE_FAULT, routine, (unsigned)cache,
                       (unsigned)past_boundary, (unsigned)size, (unsigned)(size - past_boundary));
    }
    __dpusim_warn_once(routine, 0, MISALIGNED_CACHE_WARNING, routine, (unsigned)cache, (unsigned)past_boundary,
                       (unsigned)size, (unsigned)(size - past_boundary), (unsigned)past_boundary);
}

static seqreader_buffer_t alloc(uint32_t size)
{
    __dpusim_charge(ALLOC_INSTRUCTIONS);
    if (__sys_heap_pointer == 0) {
        mem_reset(); /* nothing allocated since dpu_load: this only sets the heap pointer to the heap's start */
    }
    uint32_t heap = __sys_heap_pointer;
    uint32_t cache = (heap + size - 1) & ~(size - 1);
    mem_alloc(cache - heap + 2 * size);
    return cache;
}

static void *init(const char *routine, seqreader_buffer_t cache, uint32_t mram, seqreader_t *reader, uint32_t size)
{
    check_cache(routine, cache, size);
    reader->wram_cache = cache;
    reader->mram_addr = NO_PAGE;
    return seek(routine, mram, reader, size, INIT_EXTRA_INSTRUCTIONS);
}

static void *get(const char *routine, void *ptr, uint32_t inc, seqreader_t *reader, uint32_t size)
{
    uint32_t offset_mask = size - 1;
    uintptr_t next = (uintptr_t)ptr + inc;
    if (((uint32_t)(uintptr_t)ptr & offset_mask) + (inc & offset_mask) < size) {
        __dpusim_charge(GET_STAY_INSTRUCTIONS);
        return (void *)next;
    }
    __dpusim_charge(GET_REFILL_INSTRUCTIONS - COST_DMA_ISSUE);
    load_page(routine, (uint32_t)reader->mram_addr + size, reader, size);
    return (void *)(next - size);
}

static __mram_ptr void *tell(void *ptr, seqreader_t *reader, uint32_t size)
{
    __dpusim_charge(TELL_INSTRUCTIONS);
    return (__mram_ptr void *)(uintptr_t)((uint32_t)reader->mram_addr + ((uint32_t)(uintptr_t)ptr & (size - 1)));
}

#define DEFINE_SEQREAD(SIZE)                                                                                          \
    DPUSIM_MESSAGE(seqread##SIZE##_init_name, "seqread" #SIZE "_init");                                               \
    DPUSIM_MESSAGE(seqread##SIZE##_get_name, "seqread" #SIZE "_get");                                                 \
    DPUSIM_MESSAGE(seqread##SIZE##_seek_name, "seqread" #SIZE "_seek");                                               \
    seqreader_buffer_t seqread##SIZE##_alloc(void)                                                                    \
    {                                                                                                                 \
        return alloc(SIZE);                                                                                           \
    }                                                                                                                 \
    void *seqread##SIZE##_init(seqreader_buffer_t cache, __mram_ptr void *mram_addr, seqreader_t *reader)             \
    {                                                                                                                 \
        return init(seqread##SIZE##_init_name, cache, (uint32_t)(uintptr_t)mram_addr, reader, SIZE);                 \
    }                                                                                                                 \
    void *seqread##SIZE##_get(void *ptr, uint32_t inc, seqreader_t *reader)                                           \
    {                                                                                                                 \
        return get(seqread##SIZE##_get_name, ptr, inc, reader, SIZE);                                                 \
    }                                                                                                                 \
    void *seqread##SIZE##_seek(__mram_ptr void *mram_addr, seqreader_t *reader)                                       \
    {                                                                                                                 \
        return seek(seqread##SIZE##_seek_name, (uint32_t)(uintptr_t)mram_addr, reader, SIZE, 0);                     \
    }                                                                                                                 \
    __mram_ptr void *seqread##SIZE##_tell(void *ptr, seqreader_t *reader)                                             \
    {                                                                                                                 \
        return tell(ptr, reader, SIZE);                                                                               \
    }

DEFINE_SEQREAD(32)
DEFINE_SEQREAD(64)
DEFINE_SEQREAD(128)
DEFINE_SEQREAD(256)
DEFINE_SEQREAD(512)
DEFINE_SEQREAD(1024)
