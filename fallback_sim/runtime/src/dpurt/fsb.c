/*
 * fsb.c: fixed-size-block allocators (fsb_allocator.h). The blocks come from mem_alloc; free blocks form a list
 * threaded through their first 8 bytes. Tasklets switch only at synchronisation points, so no lock is needed.
 */
#include <stddef.h>
#include <stdint.h>

#include <alloc.h>

#define BLOCK_ALIGNMENT 8u

struct _fsb_allocator_t {
    void *first_free;
    uint32_t block_size;
    uint32_t nb_of_blocks;
};

_Static_assert(sizeof(void *) <= BLOCK_ALIGNMENT, "a free block must hold a pointer");

fsb_allocator_t fsb_alloc(unsigned int block_size, unsigned int nb_of_blocks)
{
    uint32_t size = (block_size + BLOCK_ALIGNMENT - 1) & ~(BLOCK_ALIGNMENT - 1);
    if (size == 0) {
        size = BLOCK_ALIGNMENT;
    }
    fsb_allocator_t allocator = mem_alloc(sizeof(*allocator));
    uint8_t *blocks = mem_alloc((size_t)size * nb_of_blocks);
    allocator->block_size = size;
    allocator->nb_of_blocks = nb_of_blocks;
    allocator->first_free = NULL;
    for (unsigned int i = nb_of_blocks; i > 0; i--) {
        void *block = blocks + (size_t)(i - 1) * size;
        *(void **)block = allocator->first_free;
        allocator->first_free = block;
    }
    return allocator;
}

void *fsb_get(fsb_allocator_t allocator)
{
    void *block = allocator->first_free;
    if (block != NULL) {
        allocator->first_free = *(void **)block;
    }
    return block;
}

void fsb_free(fsb_allocator_t allocator, void *ptr)
{
    if (ptr == NULL) {
        return;
    }
    *(void **)ptr = allocator->first_free;
    allocator->first_free = ptr;
}
