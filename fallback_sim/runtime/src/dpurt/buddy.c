/*
 * buddy.c: the buddy allocator (buddy_alloc.h) as the SDK 2025.1's compiled runtime has it (librt_v1A.a,
 * buddy_alloc.c.obj and buddy_realloc.c.obj, disassembled), so that a kernel gets the same blocks in the same
 * order, the same errors and the same costs as on a DPU.
 *
 * The SDK's allocator keeps no headers: one bit per block of every level, in a bitmap that mem_alloc places
 * before the heap. Level 0 is the whole heap (2^max_power bytes, max_power = floor(log2(size))), the last level
 * (max_power - 4) holds 16-byte blocks. Levels 0 to 4 share the bitmap's first word (level L in bits
 * [32 - 2^(L+1), 32 - 2^L)), level L >= 5 has the 2^(L-5) words from word 2^(L-5). A set bit means "not in
 * use"; a block can be handed out when its bit is set and its buddy's is not (the parent was split). The
 * search goes from the requested level up to the root, and in a level from its last word down, taking the
 * first such pair from a word's top bit; the found block is marked, and split down to the requested level.
 *
 * What follows from it, all as on a DPU:
 *   - buddy_init(size) takes size + bitmap bytes with mem_alloc, whatever the size; only its first call does
 *     anything. A size that is not a power of two makes a tree of the power of two below it, but requests up to
 *     the size itself pass the size check and fail with ENOMEM.
 *   - buddy_alloc(0) and requests over the size fail with errno EINVAL (28), a request no free block can hold
 *     with ENOMEM (49); both return NULL. Blocks are 16 bytes at least.
 *   - buddy_free finds the allocated block that contains the pointer (any address inside it frees it); a NULL,
 *     unaligned or foreign pointer sets errno to EINVAL.
 *   - buddy_realloc(NULL, n) allocates, buddy_realloc(p, 0) frees p and returns p. Otherwise it takes the old
 *     size as 1 << (12 - i), where i is the block's index in its level (what the SDK's routine computes), frees
 *     the block, allocates the new size and copies min(old, new) bytes forward with memcpy -- unless the new
 *     size lies between half the old and the old, where p is returned unchanged.
 *   - buddy_reset frees every block; before buddy_init it writes through a NULL bitmap, as the DPU does.
 *
 * Each function charges the instructions of the SDK routine's blocks it runs. Tasklets switch only at
 * synchronisation points, so the allocator's atomic bit needs no counterpart here.
 */
#include <stddef.h>
#include <stdint.h>

#include <dpusim/abi.h>

#include <libc/errno.h>

#include <alloc.h>
#include <buddy_alloc.h>

void *memset(void *area, int value, size_t size);
void *memcpy(void *destination, const void *source, size_t size);

#define MIN_BLOCK_SHIFT 4u   /* 16-byte blocks: an address's index in the last level */
#define LEVELS_BELOW_POWER 3u /* levels = max_power - 3 */
#define SHARED_WORD_LEVELS 5u /* levels 0 to 4 share the first word */
#define ROOT_FREE 0x7FFFFFFFu /* the first word after init: every bit but the unused top one */
#define PAIRS 0xAAAAAAAAu     /* the upper bit of each pair of buddies */
#define REALLOC_SIZE_SHIFT 12u

/* The allocator's state, under the SDK's names (host code can read them by name, as on a DPU). */
static uint8_t __buddy_init_done;
static uint32_t *__buddy_blocks;
static uint8_t *__buddy_heap_start;
static uint32_t __BUDDY_SIZE_OF_HEAP__;
static uint8_t __BUDDY_MAX_POWER__;
static uint8_t __BUDDY_NUMBER_OF_LEVELS__;
#define init_done __buddy_init_done
#define blocks __buddy_blocks
#define heap_start __buddy_heap_start
#define size_of_heap __BUDDY_SIZE_OF_HEAP__
#define max_power __BUDDY_MAX_POWER__
#define number_of_levels __BUDDY_NUMBER_OF_LEVELS__

/* The DPU's shifts use the low five bits of the amount. */
static uint32_t shift_left(uint32_t value, uint32_t amount) { return value << (amount & 31u); }

static uint32_t count_leading_zeros(uint32_t value) { return value == 0 ? 32 : (uint32_t)__builtin_clz(value); }

/* Where level's bits sit in the shared first word (0 for levels from 4). */
static uint32_t shared_word_offset(int32_t level) { return level < 4 ? 32u - shift_left(2, (uint32_t)level) : 0; }

/* The bits of a level under 5 in the shared first word: 2^level bits from shared_word_offset (the SDK's switch
 * table: 0x40000000, 0x30000000, 0x0F000000, 0x00FF0000, 0x0000FFFF). */
static uint32_t shared_word_mask(int32_t level)
{
    uint32_t bits = shift_left(1, (uint32_t)level);
    return (bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1u) << shared_word_offset(level);
}

/* The bitmap word of block index in level. */
static uint32_t word_of(int32_t level, uint32_t index)
{
    return level < (int32_t)SHARED_WORD_LEVELS ? 0 : shift_left(1, (uint32_t)(level - 5)) + (index >> 5);
}

/* ---- buddy_init, buddy_reset ------------------------------------------------------------------------------- */

/* buddy_init's blocks: entry and the done test (5) and the return (3); the set-up up to mem_alloc's call (13),
 * from its result to memset's call (9), and the done flag (2). */
#define INIT_ENTRY 5u
#define INIT_RETURN 3u
#define INIT_BEFORE_ALLOC 13u
#define INIT_BEFORE_MEMSET 9u
#define INIT_DONE_FLAG 2u
/* buddy_reset: up to memset's call (14), then release and return (3). */
#define RESET_BEFORE_MEMSET 14u
#define RESET_AFTER_MEMSET 3u

static uint32_t bitmap_bytes(void) { return shift_left(4, (uint32_t)number_of_levels - 5u); }

/* Every bit but the first word's top one, through memset as the SDK does. */
static void clear_bitmap(void)
{
    blocks[0] = ROOT_FREE;
    memset(&blocks[1], 0xFF, bitmap_bytes() - 4u);
}

void buddy_init(size_t size)
{
    if (init_done != 0) {
        __dpusim_charge(INIT_ENTRY + INIT_RETURN);
        return;
    }
    __dpusim_charge(INIT_ENTRY + INIT_BEFORE_ALLOC);
    size_of_heap = (uint32_t)size;
    max_power = (uint8_t)(31u - count_leading_zeros(size_of_heap));
    number_of_levels = (uint8_t)(max_power - LEVELS_BELOW_POWER);
    uint32_t *bitmap = mem_alloc(size_of_heap + bitmap_bytes());
    __dpusim_charge(INIT_BEFORE_MEMSET);
    blocks = bitmap;
    heap_start = (uint8_t *)bitmap + bitmap_bytes();
    clear_bitmap();
    init_done = 1;
    __dpusim_charge(INIT_DONE_FLAG + INIT_RETURN);
}

void buddy_reset(void)
{
    __dpusim_charge(RESET_BEFORE_MEMSET);
    clear_bitmap();
    __dpusim_charge(RESET_AFTER_MEMSET);
}

/* ---- safe_buddy_alloc ------------------------------------------------------------------------------------ */

#define ALLOC_SIZE_TEST 4u
#define ALLOC_POWER 4u
#define ALLOC_NOT_A_POWER 1u
#define ALLOC_LEVEL 4u
#define ALLOC_LEVEL_CLAMP 1u
#define ALLOC_LEVEL_TEST 1u
#define ALLOC_SEARCH_SETUP 5u
#define ALLOC_NEXT_LEVEL 3u
#define ALLOC_LEVEL_ENTRY 2u
#define ALLOC_SHARED_WORD 3u
#define ALLOC_OWN_WORDS_TEST 1u
#define ALLOC_OWN_WORDS 3u
#define ALLOC_WORDS_SETUP 3u
#define ALLOC_WORD 8u
#define ALLOC_NEXT_WORD 3u
#define ALLOC_LEVEL_EXHAUSTED 1u
#define ALLOC_FOUND 6u
#define ALLOC_FOUND_OWN_WORD 1u
#define ALLOC_SHIFTED 3u
#define ALLOC_UNSHIFTED 1u
#define ALLOC_MARK 13u
#define ALLOC_AT_LEVEL 4u
#define ALLOC_DESCEND 2u
#define ALLOC_SPLIT_ENTRY 1u
#define ALLOC_SPLIT_SHIFTED 4u
#define ALLOC_SPLIT_UNSHIFTED 1u
#define ALLOC_SPLIT_MASK 4u
#define ALLOC_SPLIT_OWN_WORD 5u
#define ALLOC_SPLIT_STORE 8u
#define ALLOC_SPLIT_DONE 3u
#define ALLOC_RETURN 4u
#define ALLOC_ERROR 5u

/* Marks the block of level found at index (the buddies' pair found in word) as in use, then splits it down to
 * level, marking the first half at each level. Returns the block's index in level. */
static uint32_t take_and_split(int32_t found, uint32_t index, int32_t level, uint32_t *cost)
{
    int32_t current = found;
    while (current < level) {
        *cost += ALLOC_SPLIT_ENTRY;
        *cost += current < 3 ? ALLOC_SPLIT_SHIFTED : ALLOC_SPLIT_UNSHIFTED;
        *cost += ALLOC_SPLIT_MASK;
        if (current >= 4) {
            *cost += ALLOC_SPLIT_OWN_WORD;
        }
        current++;
        index <<= 1;
        uint32_t bit = shift_left(shift_left(1, index), shared_word_offset(current));
        blocks[word_of(current, index)] -= bit;
        *cost += ALLOC_SPLIT_STORE;
    }
    return index;
}

/* Looks for a pair with one free block in the word at address; on success marks it and returns true with the
 * free block's index in level current (first_index is the index past the word's last block, less one). */
static bool take_in_word(uint32_t *word, uint32_t mask, int32_t current, uint32_t last_index, uint32_t *index,
                         uint32_t *cost)
{
    *cost += ALLOC_WORD;
    uint32_t loaded = *word & mask;
    uint32_t pairs = ((loaded << 1) ^ loaded) & PAIRS;
    if (pairs == 0) {
        return false;
    }
    *cost += ALLOC_FOUND;
    uint32_t found = last_index - count_leading_zeros(pairs);
    if (current < (int32_t)SHARED_WORD_LEVELS) {
        found += shift_left(1, (uint32_t)current);
    } else {
        *cost += ALLOC_FOUND_OWN_WORD;
    }
    *cost += current < 4 ? ALLOC_SHIFTED : ALLOC_UNSHIFTED;
    uint32_t bit = shift_left(shift_left(1, found), shared_word_offset(current));
    if ((loaded & bit) == 0) {
        bit >>= 1;
        found--;
    }
    *word -= bit;
    *cost += ALLOC_MARK;
    *index = found;
    return true;
}

/* Searches level current for a free block; true and its index when found. */
static bool take_in_level(int32_t current, uint32_t *index, uint32_t *cost)
{
    *cost += ALLOC_LEVEL_ENTRY;
    uint32_t level_blocks = shift_left(1, (uint32_t)current);
    int32_t word;
    uint32_t mask;
    if (current < (int32_t)SHARED_WORD_LEVELS) {
        *cost += ALLOC_SHARED_WORD;
        word = 0;
        mask = shared_word_mask(current);
    } else {
        *cost += ALLOC_OWN_WORDS_TEST;
        if ((int32_t)level_blocks <= 31) {
            return false;
        }
        *cost += ALLOC_OWN_WORDS;
        word = (int32_t)(level_blocks >> 5) - 1;
        mask = 0xFFFFFFFFu;
    }
    *cost += ALLOC_WORDS_SETUP;
    uint32_t *level_words = blocks + ((int32_t)level_blocks >> 5);
    uint32_t last_index = level_blocks - 1;
    for (; word >= 0; word--, last_index -= 32) {
        if (take_in_word(level_words + word, mask, current, last_index, index, cost)) {
            return true;
        }
        *cost += ALLOC_NEXT_WORD;
    }
    *cost += ALLOC_LEVEL_EXHAUSTED;
    return false;
}

/* The level of the blocks that size needs (max_power - ceil(log2(size)), clamped to the last level). */
static int32_t level_for(uint32_t size, uint32_t *cost)
{
    *cost += ALLOC_POWER;
    int32_t power = 31 - (int32_t)count_leading_zeros(size);
    if (__builtin_popcount(size) != 1) {
        power++;
        *cost += ALLOC_NOT_A_POWER;
    }
    *cost += ALLOC_LEVEL;
    int32_t level = (int32_t)max_power - power;
    if (level >= (int32_t)number_of_levels) {
        level = (int32_t)number_of_levels - 1;
        *cost += ALLOC_LEVEL_CLAMP;
    }
    *cost += ALLOC_LEVEL_TEST;
    return level;
}

static void *safe_buddy_alloc(uint32_t size, uint32_t *cost)
{
    *cost += ALLOC_SIZE_TEST;
    if (size - 1u >= size_of_heap) {
        *cost += ALLOC_ERROR;
        errno = EINVAL;
        return NULL;
    }
    int32_t level = level_for(size, cost);
    if (level >= 0) {
        *cost += ALLOC_SEARCH_SETUP;
        for (int32_t current = level; current >= 0; current--) {
            if (current != level) {
                *cost += ALLOC_NEXT_LEVEL;
            }
            uint32_t index;
            if (take_in_level(current, &index, cost)) {
                if (current == level) {
                    *cost += ALLOC_AT_LEVEL;
                } else {
                    *cost += ALLOC_DESCEND;
                    index = take_and_split(current, index, level, cost);
                    *cost += ALLOC_SPLIT_DONE;
                }
                *cost += ALLOC_RETURN;
                return heap_start + shift_left(index, (uint32_t)(max_power - level));
            }
        }
        *cost += ALLOC_NEXT_LEVEL;
    }
    *cost += ALLOC_ERROR;
    errno = ENOMEM;
    return NULL;
}

/* ---- buddy_search_for_pointer and safe_buddy_free --------------------------------------------------------- */

struct block_position {
    int32_t level;
    uint32_t word;
    uint32_t bit;
    uint32_t buddy_bit;
};

/* The bits of index's block and its buddy in level (a block's buddy is the other one of its pair of bits). */
static struct block_position position_of(int32_t level, uint32_t index)
{
    uint32_t bit = shift_left(1, index);
    uint32_t buddy = (count_leading_zeros(bit) & 1u) == 0 ? bit >> 1 : bit << 1;
    uint32_t offset = shared_word_offset(level);
    struct block_position position = {level, word_of(level, index), shift_left(bit, offset),
                                      shift_left(buddy, offset)};
    return position;
}

/* The search's costs per level: the bits (3), the buddy (2), the shared word's offset and the word's index (5
 * under level 4, 3 for level 4, 4 above), the masks (3), the load and tests (3 or 4), going up (2). */
#define SEARCH_BITS 5u
#define SEARCH_OFFSETS_LOW 5u
#define SEARCH_OFFSETS_FOUR 3u
#define SEARCH_OFFSETS_HIGH 4u
#define SEARCH_MASKS 3u
#define SEARCH_FOUND 3u
#define SEARCH_NOT_ALLOCATED 4u
#define SEARCH_UP 6u
#define SEARCH_ENTRY 5u
#define SEARCH_MISALIGNED 1u
#define SEARCH_BELOW 3u
#define SEARCH_ABOVE 7u
#define SEARCH_ACCEPTED 12u

static uint32_t search_offsets_cost(int32_t level)
{
    return level < 4 ? SEARCH_OFFSETS_LOW : level == 4 ? SEARCH_OFFSETS_FOUR : SEARCH_OFFSETS_HIGH;
}

/* Checks the pointer (an aligned address inside the heap); the cost of the checks that ran. */
static bool pointer_in_heap(const void *pointer, uint32_t *cost)
{
    const uint8_t *at = pointer;
    if (((uintptr_t)at & 7u) != 0) {
        *cost += SEARCH_MISALIGNED;
        return false;
    }
    if (heap_start > at) {
        *cost += SEARCH_BELOW;
        return false;
    }
    if ((uintptr_t)(heap_start + size_of_heap - 1) < (uintptr_t)at) {
        *cost += SEARCH_ABOVE;
        return false;
    }
    *cost += SEARCH_ACCEPTED;
    return true;
}

/* What differs between buddy_search_for_pointer (called by buddy_realloc) and its copy inlined in
 * safe_buddy_free: the error path, and the inlined loop's extra instruction under level 4 and two more at the
 * root. */
#define SEARCH_ERROR_CALLED 4u
#define SEARCH_ERROR_IN_FREE 3u
#define SEARCH_IN_FREE_LOW_LEVEL 1u
#define SEARCH_IN_FREE_ROOT 2u

/* Finds the allocated block holding pointer, from the last level up: the first level whose bit is clear.
 * Returns its index in that level, or -1 (errno EINVAL) when the pointer is not in an allocated block. */
static int32_t search_for_pointer(const void *pointer, struct block_position *found, uint32_t *cost, bool in_free)
{
    uint32_t error_cost = in_free ? SEARCH_ERROR_IN_FREE : SEARCH_ERROR_CALLED;
    if (!pointer_in_heap(pointer, cost)) {
        *cost += error_cost;
        errno = EINVAL;
        return -1;
    }
    uint32_t index = (uint32_t)((int32_t)((const uint8_t *)pointer - heap_start) >> MIN_BLOCK_SHIFT);
    for (int32_t level = (int32_t)number_of_levels - 1;; level--) {
        *cost += SEARCH_BITS + search_offsets_cost(level) + SEARCH_MASKS;
        if (level < 4 && in_free) {
            *cost += SEARCH_IN_FREE_LOW_LEVEL;
        }
        *found = position_of(level, index);
        if (level == 0) {
            *cost += in_free ? SEARCH_IN_FREE_ROOT : 0;
            return (int32_t)index;
        }
        uint32_t loaded = blocks[found->word];
        if ((loaded & found->bit) == 0) {
            *cost += SEARCH_FOUND;
            return (int32_t)index;
        }
        if ((loaded & found->buddy_bit) == 0) {
            *cost += SEARCH_NOT_ALLOCATED + error_cost;
            errno = EINVAL;
            return -1;
        }
        *cost += SEARCH_UP;
        index >>= 1;
    }
}

/* safe_buddy_free's fusion: while the block and its buddy are both free, mark their parent free. A merge is 22
 * instructions whichever way its blocks branch (the tests, the parent's bits, offsets and word, the store). */
#define FUSE_BUDDY_BUSY 2u
#define FUSE_BLOCK_BUSY 3u
#define FUSE_MERGE 22u
#define FUSE_TOP 1u

static void fuse(struct block_position block, uint32_t index, uint32_t *cost)
{
    uint32_t loaded = blocks[block.word];
    for (int32_t level = block.level; level > 0;) {
        if ((loaded & block.buddy_bit) == 0) {
            *cost += FUSE_BUDDY_BUSY;
            return;
        }
        if ((loaded & block.bit) == 0) {
            *cost += FUSE_BLOCK_BUSY;
            return;
        }
        index >>= 1;
        level--;
        block = position_of(level, index);
        loaded = blocks[block.word] | block.bit;
        blocks[block.word] = loaded;
        *cost += FUSE_MERGE;
    }
    *cost += FUSE_TOP;
}

#define FREE_MARK 5u
#define FREE_AT_ROOT 1u

static void safe_buddy_free(void *pointer, uint32_t *cost)
{
    struct block_position block;
    int32_t index = search_for_pointer(pointer, &block, cost, true);
    if (index < 0) {
        return;
    }
    blocks[block.word] |= block.bit;
    *cost += FREE_MARK;
    if (block.level == 0) {
        *cost += FREE_AT_ROOT;
        return;
    }
    fuse(block, (uint32_t)index, cost);
}

/* ---- the locked entry points ------------------------------------------------------------------------------ */

/* buddy_alloc/buddy_free: save the return address, acquire, call, release, restore, return. */
#define LOCKED_CALL 7u

void *buddy_alloc(size_t size)
{
    uint32_t cost = LOCKED_CALL;
    void *block = safe_buddy_alloc((uint32_t)size, &cost);
    __dpusim_charge(cost);
    return block;
}

void buddy_free(void *pointer)
{
    uint32_t cost = LOCKED_CALL;
    safe_buddy_free(pointer, &cost);
    __dpusim_charge(cost);
}

/* buddy_realloc.c.obj's blocks. */
#define REALLOC_ENTRY 7u
#define REALLOC_ALLOCATE 4u
#define REALLOC_FREE 4u
#define REALLOC_SEARCH 7u
#define REALLOC_NOT_FOUND 4u
#define REALLOC_SIZES 5u
#define REALLOC_NOT_HALF 2u
#define REALLOC_KEPT 1u
#define REALLOC_MOVE 10u
#define REALLOC_RETURN 5u
#define SEARCH_RETURN 5u

void *buddy_realloc(void *pointer, size_t size)
{
    uint32_t cost = REALLOC_ENTRY;
    void *result = pointer;
    if (pointer == NULL) {
        cost += REALLOC_ALLOCATE;
        result = safe_buddy_alloc((uint32_t)size, &cost);
    } else if (size == 0) {
        cost += REALLOC_FREE + 1u;
        safe_buddy_free(pointer, &cost);
    } else {
        struct block_position block;
        cost += REALLOC_SEARCH;
        int32_t index = search_for_pointer(pointer, &block, &cost, false);
        if (index < 0) {
            cost += REALLOC_NOT_FOUND;
            result = NULL;
        } else {
            cost += SEARCH_RETURN + REALLOC_SIZES;
            uint32_t old_size = shift_left(1, REALLOC_SIZE_SHIFT - (uint32_t)index);
            uint32_t new_size = (uint32_t)size;
            if (old_size >> 1 < new_size) {
                cost += REALLOC_NOT_HALF;
            }
            if (old_size >> 1 < new_size && old_size >= new_size) {
                cost += REALLOC_KEPT;
            } else {
                uint32_t copied = old_size >> 1 >= new_size ? new_size : old_size;
                cost += REALLOC_MOVE;
                safe_buddy_free(pointer, &cost);
                result = safe_buddy_alloc(new_size, &cost);
                __dpusim_charge(cost);
                cost = 0;
                memcpy(result, pointer, copied);
            }
        }
    }
    __dpusim_charge(cost + REALLOC_RETURN);
    return result;
}
