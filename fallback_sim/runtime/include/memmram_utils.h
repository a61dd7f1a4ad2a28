/*
 * memmram_utils.h: small helpers for code that moves data between WRAM and MRAM.
 */
#ifndef DPUSIM_MEMMRAM_UTILS_H
#define DPUSIM_MEMMRAM_UTILS_H

/* x rounded up to a multiple of the power of two a. */
#ifndef ALIGN
#define ALIGN(x, a) (((x) + ((a) - 1)) & ~((a) - 1))
#endif
/* x rounded up to the DMA granularity (8 bytes). */
#ifndef DMA_ALIGNED
#define DMA_ALIGNED(x) ALIGN(x, 8)
#endif
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

#endif /* DPUSIM_MEMMRAM_UTILS_H */
