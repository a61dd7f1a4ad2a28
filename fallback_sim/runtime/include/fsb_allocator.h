/*
 * fsb_allocator.h: fixed-size-block allocators over WRAM taken from mem_alloc, shared by the DPU's tasklets.
 */
#ifndef DPUSIM_FSB_ALLOCATOR_H
#define DPUSIM_FSB_ALLOCATOR_H

typedef struct _fsb_allocator_t *fsb_allocator_t;

/* Reserves nb_of_blocks blocks of block_size bytes (rounded up to a multiple of 8) with mem_alloc. */
fsb_allocator_t fsb_alloc(unsigned int block_size, unsigned int nb_of_blocks);
/* A free block (8-byte aligned), or NULL when every block is in use. */
void *fsb_get(fsb_allocator_t allocator);
/* Gives a block back. */
void fsb_free(fsb_allocator_t allocator, void *ptr);

#endif /* DPUSIM_FSB_ALLOCATOR_H */
