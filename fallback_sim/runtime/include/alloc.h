/*
 * alloc.h: the WRAM heap. mem_alloc is an 8-byte-aligned bump allocator shared by the DPU's tasklets; the heap
 * pointer is an ordinary WRAM global, so it persists across launches until mem_reset(). Allocating past the end
 * of WRAM is runtime fault 1 (Heap Full). There is no free; the buddy and fixed-size-block allocators below
 * carve their memory out of this heap.
 */
#ifndef DPUSIM_ALLOC_H
#define DPUSIM_ALLOC_H

#include <stddef.h>

/* Returns size bytes of WRAM, 8-byte aligned. */
void *mem_alloc(size_t size);

/* Frees everything mem_alloc returned; returns the start of the heap. */
void *mem_reset(void);

#include <buddy_alloc.h>
#include <fsb_allocator.h>

#endif /* DPUSIM_ALLOC_H */
