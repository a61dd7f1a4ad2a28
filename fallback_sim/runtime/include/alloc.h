/*
 * alloc.h: the WRAM heap. mem_alloc is the SDK's 8-byte-aligned bump allocator shared by the DPU's tasklets; the
 * heap pointer is an ordinary WRAM global, so it persists across launches until mem_reset(). A block must end
 * below the end of WRAM, else runtime fault 1 (Heap Full); mem_alloc(0) returns the pointer as it is. There is
 * no free; the buddy and fixed-size-block allocators below carve their memory out of this heap.
 */
#ifndef DPUSIM_ALLOC_H
#define DPUSIM_ALLOC_H

#include <stddef.h>

#include <attributes.h>

/* Returns size bytes of WRAM, 8-byte aligned (size 0: the heap pointer, unmoved). */
void *mem_alloc(size_t size);

/* Frees everything mem_alloc returned; returns the start of the heap. */
void *mem_reset(void);

#include <buddy_alloc.h>
#include <fsb_allocator.h>

#endif /* DPUSIM_ALLOC_H */
