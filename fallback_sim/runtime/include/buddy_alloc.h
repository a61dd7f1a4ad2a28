/*
 * buddy_alloc.h: a buddy allocator over a WRAM heap taken from mem_alloc, shared by the DPU's tasklets.
 * Blocks are powers of two, 16 bytes at least. A request that cannot be met returns NULL and sets errno to
 * ENOMEM.
 */
#ifndef DPUSIM_BUDDY_ALLOC_H
#define DPUSIM_BUDDY_ALLOC_H

#include <stddef.h>

/* Takes the heap (size_of_heap bytes, rounded down to a power of two, 2 KiB to 32 KiB are the usual sizes). */
void buddy_init(size_t size_of_heap);
void *buddy_alloc(size_t size);
void buddy_free(void *pointer);
/* Like realloc: NULL allocates, size 0 frees; on failure the old block is kept and NULL returned. */
void *buddy_realloc(void *pointer, size_t size);
/* Frees every block. */
void buddy_reset(void);

#endif /* DPUSIM_BUDDY_ALLOC_H */
