/*
 * fsb_allocator.h: fixed-size-block allocators over WRAM taken from mem_alloc, shared by the DPU's tasklets.
 * As in the SDK, an allocator is a pointer to the first free block, each free block holds a pointer to the
 * next, and fsb_get/fsb_free are thread-safe.
 */
#ifndef DPUSIM_FSB_ALLOCATOR_H
#define DPUSIM_FSB_ALLOCATOR_H

/* The SDK's type: the allocator is the address of the free list's head. */
typedef void **fsb_allocator_t;

/* Reserves nb_of_blocks blocks of block_size bytes (rounded up to a multiple of 8, 8 at least) with one
 * mem_alloc, blocks first and the list head after them; faults as mem_alloc does when they do not fit. */
fsb_allocator_t fsb_alloc(unsigned int block_size, unsigned int nb_of_blocks);
/* The free block at the lowest address first; NULL when every block is in use. */
void *fsb_get(fsb_allocator_t allocator);
/* Gives a block back: it is the next one fsb_get returns. Nothing is checked, as in the SDK. */
void fsb_free(fsb_allocator_t allocator, void *ptr);

#endif /* DPUSIM_FSB_ALLOCATOR_H */
