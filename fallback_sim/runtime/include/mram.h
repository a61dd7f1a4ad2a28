/*
 * mram.h: DMA between MRAM and WRAM (mram_read, mram_write) and the start of the MRAM heap.
 *
 * Sizes must be 8..2048 and multiples of 8, and both addresses 8-byte aligned and in range; the simulator's
 * __dpusim_mram_read/__dpusim_mram_write check all of it at run time (the SDK checks constant sizes at compile
 * time with clang's diagnose_if, which gcc lacks) and charge the DMA to the cost model.
 */
#ifndef DPUSIM_MRAM_H
#define DPUSIM_MRAM_H

#include <dpusim/abi.h>

#include <attributes.h>

/* The first free byte of MRAM after the program's __mram/__mram_noinit variables (8-aligned). */
#define DPU_MRAM_HEAP_POINTER ((__mram_ptr void *)(&__sys_used_mram_end))

/* Copies nb_of_bytes from MRAM to WRAM. */
static inline void mram_read(const __mram_ptr void *from, void *to, unsigned int nb_of_bytes)
{
    __dpusim_mram_read(from, to, nb_of_bytes);
}

/* Copies nb_of_bytes from WRAM to MRAM. */
static inline void mram_write(const void *from, __mram_ptr void *to, unsigned int nb_of_bytes)
{
    __dpusim_mram_write(from, to, nb_of_bytes);
}

#endif /* DPUSIM_MRAM_H */
