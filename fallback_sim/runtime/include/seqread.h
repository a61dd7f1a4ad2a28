/*
 * seqread.h: sequential readers of MRAM through a WRAM cache.
 *
 *   seqreader_buffer_t cache = seqread_alloc();              // a WRAM cache, from mem_alloc
 *   seqreader_t sr;
 *   T *p = seqread_init(cache, mram_address, &sr);           // p points at the element at mram_address
 *   p = seqread_get(p, sizeof(T), &sr);                      // the next element, refilling the cache as needed
 *
 * SEQREAD_CACHE_SIZE (32, 64, 128, 256, 512 or 1024) is 256 when the program does not define it before the
 * include, as in the SDK, and is then usable as a number (`uint8_t cache[SEQREAD_CACHE_SIZE]`). The seqread_*
 * macros name the real functions seqread<SIZE>_{alloc,init,get,seek,tell}; any other size fails to compile.
 * An element read at the returned pointer may be up to SEQREAD_CACHE_SIZE bytes long; the increment passed to
 * seqread_get must be smaller than SEQREAD_CACHE_SIZE. MRAM addresses need not be aligned, but the cache must be
 * aligned to SEQREAD_CACHE_SIZE, as seqread_alloc's is: the SDK's readers decide when to refill from the low
 * bits of the pointer's WRAM address, so a misaligned cache gives wrong elements on a DPU (the simulator does the
 * same and warns, or faults in strict mode). A cache of one's own: `__attribute__((aligned(SEQREAD_CACHE_SIZE)))
 * uint8_t cache[2 * SEQREAD_CACHE_SIZE]`.
 */
#ifndef DPUSIM_SEQREAD_H
#define DPUSIM_SEQREAD_H

#include <stdint.h>

#include <attributes.h>
#include <macro_utils.h>
#include <mram.h>

typedef uintptr_t seqreader_buffer_t;

typedef struct {
    seqreader_buffer_t wram_cache; /* the cache (2 * SEQREAD_CACHE_SIZE bytes) */
    uintptr_t mram_addr;           /* the SEQREAD_CACHE_SIZE-aligned MRAM address the cache holds */
} seqreader_t;

#ifndef SEQREAD_CACHE_SIZE
#define SEQREAD_CACHE_SIZE 256
#endif

_Static_assert(SEQREAD_CACHE_SIZE == 32 || SEQREAD_CACHE_SIZE == 64 || SEQREAD_CACHE_SIZE == 128 ||
                   SEQREAD_CACHE_SIZE == 256 || SEQREAD_CACHE_SIZE == 512 || SEQREAD_CACHE_SIZE == 1024,
               "SEQREAD_CACHE_SIZE must be 32, 64, 128, 256, 512 or 1024");

#define __dpusim_seqread_size_32 32
#define __dpusim_seqread_size_64 64
#define __dpusim_seqread_size_128 128
#define __dpusim_seqread_size_256 256
#define __dpusim_seqread_size_512 512
#define __dpusim_seqread_size_1024 1024

#define __DPUSIM_SEQREAD_SIZE __DPUSIM_CONCAT(__dpusim_seqread_size_, SEQREAD_CACHE_SIZE)
#define __DPUSIM_SEQREAD_FN(fn) __DPUSIM_CONCAT3(seqread, __DPUSIM_SEQREAD_SIZE, fn)

#define seqread_alloc __DPUSIM_SEQREAD_FN(_alloc)
#define seqread_init __DPUSIM_SEQREAD_FN(_init)
#define seqread_get __DPUSIM_SEQREAD_FN(_get)
#define seqread_seek __DPUSIM_SEQREAD_FN(_seek)
#define seqread_tell __DPUSIM_SEQREAD_FN(_tell)

#define __DPUSIM_SEQREAD_DECLARE(size)                                                                                \
    seqreader_buffer_t seqread##size##_alloc(void);                                                                   \
    void *seqread##size##_init(seqreader_buffer_t cache, __mram_ptr void *mram_addr, seqreader_t *reader);            \
    void *seqread##size##_get(void *ptr, uint32_t inc, seqreader_t *reader);                                          \
    void *seqread##size##_seek(__mram_ptr void *mram_addr, seqreader_t *reader);                                      \
    __mram_ptr void *seqread##size##_tell(void *ptr, seqreader_t *reader);

__DPUSIM_SEQREAD_DECLARE(32)
__DPUSIM_SEQREAD_DECLARE(64)
__DPUSIM_SEQREAD_DECLARE(128)
__DPUSIM_SEQREAD_DECLARE(256)
__DPUSIM_SEQREAD_DECLARE(512)
__DPUSIM_SEQREAD_DECLARE(1024)

#endif /* DPUSIM_SEQREAD_H */
