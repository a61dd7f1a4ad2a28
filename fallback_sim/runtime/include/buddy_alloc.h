/*
 * buddy_alloc.h: the SDK's buddy allocator over a WRAM heap taken from mem_alloc, shared by the DPU's tasklets
 * (see src/dpurt/buddy.c for how it behaves). Blocks are powers of two, 16 bytes at least.
 */
#ifndef DPUSIM_BUDDY_ALLOC_H
#define DPUSIM_BUDDY_ALLOC_H

#include <stddef.h>

/* Takes size_of_heap bytes (plus the allocator's bitmap) with mem_alloc; only the first call after dpu_load acts.
 * The tested sizes are powers of two, 2 KiB to 32 KiB. */
void buddy_init(size_t size_of_heap);
/* NULL with errno EINVAL for 0 or more than the heap's size, NULL with errno ENOMEM when no block is free. */
void *buddy_alloc(size_t size);
/* Frees the block that contains pointer; errno EINVAL when there is none. */
void buddy_free(void *pointer);
/* NULL allocates; size 0 frees and returns pointer; otherwise as the SDK's routine (buddy.c). */
void *buddy_realloc(void *pointer, size_t size);
/* Frees every block. */
void buddy_reset(void);

#endif /* DPUSIM_BUDDY_ALLOC_H */
