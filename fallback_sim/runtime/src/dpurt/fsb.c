/*
 * fsb.c: fixed-size-block allocators (fsb_allocator.h), as the SDK 2025.1's compiled runtime has them
 * (librt_v1A.a, fsb_allocator.c.obj, disassembled):
 *
 *   - fsb_alloc rounds the block size up to 8 (0 becomes 8; a size that cannot be rounded in 32 bits is runtime
 *     fault 1), takes size * count + 4 bytes with one mem_alloc, links the blocks in address order, and puts the
 *     allocator (the list head) in the 4 bytes after the last block;
 *   - fsb_get pops the head, fsb_free pushes the block it is given, under the allocators' atomic bit, with no
 *     check: freeing NULL, a foreign pointer or a block twice corrupts the list as on a DPU.
 *
 * Tasklets switch only at synchronisation points, so the list updates need no lock here.
 */
#include <stddef.h>
#include <stdint.h>

#include <dpusim/abi.h>

#include <alloc.h>

#define BLOCK_ALIGNMENT 8u
#define HEAD_BYTES 4u /* the list head, a 32-bit WRAM pointer on a DPU */
/* The largest block size that rounds up to a multiple of 8 in 32 bits (`jgeu size, -7` faults). */
#define LARGEST_BLOCK_SIZE 0xFFFFFFF8u

/* fsb_alloc's blocks: entry (4) and the size test (2), the rounding (2) or the default (1); the multiply's
 * call (3), the or (1), mem_alloc's call (1) and the result's move (1) and count test (1); per link after the
 * first, 5; the loop's setup (2) and exit (1); then the last link, the head, the return (7). */
#define FSB_ALLOC_ENTRY 6u
#define FSB_ALLOC_ROUND 2u
#define FSB_ALLOC_DEFAULT_SIZE 1u
#define FSB_ALLOC_SIZE_CALLS 7u
#define FSB_ALLOC_LOOP_SETUP 3u
#define FSB_ALLOC_PER_LINK 5u
#define FSB_ALLOC_TAIL 7u
/* __mulsi3 (mul32.c.obj): a swap test (3), a move, one mul_step per bit of the smaller operand (at least one),
 * the result's move and the return. */
#define MULSI3_FIXED 6u
#define FSB_GET_TAKEN 8u
#define FSB_GET_EMPTY 7u
#define FSB_FREE_INSTRUCTIONS 6u

static uint32_t mulsi3_cost(uint32_t a, uint32_t b)
{
    uint32_t smaller = a < b ? a : b;
    uint32_t bits = smaller == 0 ? 1 : 32 - (uint32_t)__builtin_clz(smaller);
    return MULSI3_FIXED + bits;
}

fsb_allocator_t fsb_alloc(unsigned int block_size, unsigned int nb_of_blocks)
{
    if (block_size > LARGEST_BLOCK_SIZE) {
        __dpusim_fault(DPUSIM_FAULT_HEAP_FULL, 0, block_size,
                       "heap full: fsb_alloc(%u, %u): the block size does not round to 8 bytes (runtime fault 1)",
                       block_size, nb_of_blocks);
    }
    uint32_t cost = FSB_ALLOC_ENTRY;
    uint32_t size;
    if (block_size == 0) {
        size = BLOCK_ALIGNMENT;
        cost += FSB_ALLOC_DEFAULT_SIZE;
    } else {
        size = (block_size + BLOCK_ALIGNMENT - 1) & ~(BLOCK_ALIGNMENT - 1);
        cost += FSB_ALLOC_ROUND;
    }
    uint32_t blocks_bytes = size * nb_of_blocks; /* 32 bits, as __mulsi3 */
    cost += mulsi3_cost(size, nb_of_blocks) + FSB_ALLOC_SIZE_CALLS;
    __dpusim_charge(cost);
    uint8_t *blocks = mem_alloc(blocks_bytes | HEAD_BYTES);
    /* A 32-bit count of links, as the DPU's: 0 blocks wraps to 2^32 - 1 links, which run off WRAM. */
    uint32_t links = nb_of_blocks - 1;
    uint8_t *last = blocks;
    cost = FSB_ALLOC_TAIL;
    if (links != 0) {
        cost += FSB_ALLOC_LOOP_SETUP + FSB_ALLOC_PER_LINK * links;
        for (uint32_t i = 0; i < links; i++) {
            *(void **)(blocks + (size_t)size * i) = blocks + (size_t)size * (i + 1);
        }
        last = blocks + (size_t)size * links;
    }
    *(void **)last = NULL;
    fsb_allocator_t allocator = (fsb_allocator_t)(last + size);
    *allocator = blocks;
    __dpusim_charge(cost);
    return allocator;
}

void *fsb_get(fsb_allocator_t allocator)
{
    void *block = *allocator;
    if (block == NULL) {
        __dpusim_charge(FSB_GET_EMPTY);
        return NULL;
    }
    *allocator = *(void **)block;
    __dpusim_charge(FSB_GET_TAKEN);
    return block;
}

void fsb_free(fsb_allocator_t allocator, void *ptr)
{
    __dpusim_charge(FSB_FREE_INSTRUCTIONS);
    *(void **)ptr = *allocator;
    *allocator = ptr;
}
