/*
 * sdk_libc_alloc.c: mem_alloc, the buddy allocator and the fixed-size-block allocator as the SDK's compiled
 * runtime has them. Tasklet 0 runs one mode per load (buddy_init acts once per program load); offsets[] are
 * WRAM offsets from base, the heap pointer when the mode starts (mem_reset(), then mem_alloc(0)).
 *
 *   mode 0, mem_alloc:  0 mem_alloc(3)  1 mem_alloc(0) (the pointer as it is: 3)  2 mem_alloc(8) (rounded: 8)
 *                       then mem_alloc(to_end), which ends exactly at the end of WRAM: runtime fault 1
 *   mode 1, buddy on a BUDDY_HEAP_BYTES heap (its bitmap, BITMAP_BYTES, comes first):
 *                       0 buddy_alloc(16)  1 buddy_alloc(16)  2 buddy_alloc(64)
 *                       3 after buddy_free(block 2 + 8) (a pointer inside it), buddy_alloc(64) again
 *                       4 buddy_realloc(block 0, 0) (the pointer itself)
 *                       5 mem_alloc(0) after a second buddy_init (which does nothing)
 *                       errors[0..1] = errno after buddy_alloc(0) and buddy_alloc(BUDDY_HEAP_BYTES + 1) (NULL)
 *                       errors[2] = errno after buddy_alloc(BUDDY_HEAP_BYTES) with blocks in use (NULL)
 *   mode 2, buddy on an ODD_HEAP_BYTES heap (not a power of two; a 2048-byte tree):
 *                       errors[0] = errno after buddy_alloc(2500), which passes the size test (NULL)
 *                       0 buddy_alloc(2048)
 *   mode 3, fsb_alloc(FSB_BLOCK_BYTES, FSB_BLOCKS): 0 the allocator  1..FSB_BLOCKS the blocks fsb_get returns
 *                       errors[0] = whether the next fsb_get is NULL and *allocator is NULL
 *                       6 after fsb_free(block 2) and fsb_free(block 4), fsb_get (block 4)
 *                       7 mem_alloc(0) after the allocator (its 4-byte head is the last thing allocated)
 * Missing results are 0xFFFFFFFF. NR_TASKLETS = 1.
 */
#include <errno.h>
#include <stdint.h>

#include <alloc.h>
#include <defs.h>

#define BUDDY_HEAP_BYTES 2048
#define ODD_HEAP_BYTES 3000
#define FSB_BLOCK_BYTES 12
#define FSB_BLOCKS 5
#define OFFSETS 8
#define ERRORS 3

__host uint32_t mode;
__host uint32_t to_end;
__host uint32_t offsets[OFFSETS];
__host int32_t errors[ERRORS];

static uint8_t *base;

static uint32_t offset_of(const void *pointer)
{
    return pointer == NULL ? 0xFFFFFFFFu : (uint32_t)((const uint8_t *)pointer - base);
}

static void heap_mode(void)
{
    offsets[0] = offset_of(mem_alloc(3));
    offsets[1] = offset_of(mem_alloc(0));
    offsets[2] = offset_of(mem_alloc(8));
    (void)mem_alloc(to_end);
}

static int32_t errno_of_failed_alloc(size_t size)
{
    errno = 0;
    return buddy_alloc(size) == NULL ? errno : -1;
}

static void buddy_mode(void)
{
    buddy_init(BUDDY_HEAP_BYTES);
    uint8_t *first = buddy_alloc(16);
    offsets[0] = offset_of(first);
    offsets[1] = offset_of(buddy_alloc(16));
    uint8_t *third = buddy_alloc(64);
    offsets[2] = offset_of(third);
    buddy_free(third + 8);
    offsets[3] = offset_of(buddy_alloc(64));
    offsets[4] = offset_of(buddy_realloc(first, 0));
    buddy_init(BUDDY_HEAP_BYTES);
    offsets[5] = offset_of(mem_alloc(0));
    errors[0] = errno_of_failed_alloc(0);
    errors[1] = errno_of_failed_alloc(BUDDY_HEAP_BYTES + 1);
    errors[2] = errno_of_failed_alloc(BUDDY_HEAP_BYTES);
}

static void odd_buddy_mode(void)
{
    buddy_init(ODD_HEAP_BYTES);
    errors[0] = errno_of_failed_alloc(2500);
    offsets[0] = offset_of(buddy_alloc(2048));
}

static void fsb_mode(void)
{
    fsb_allocator_t allocator = fsb_alloc(FSB_BLOCK_BYTES, FSB_BLOCKS);
    offsets[0] = offset_of(allocator);
    uint8_t *blocks[FSB_BLOCKS];
    for (uint32_t i = 0; i < FSB_BLOCKS; i++) {
        blocks[i] = fsb_get(allocator);
        offsets[1 + i] = offset_of(blocks[i]);
    }
    errors[0] = fsb_get(allocator) == NULL && *allocator == NULL;
    fsb_free(allocator, blocks[2]);
    fsb_free(allocator, blocks[4]);
    offsets[6] = offset_of(fsb_get(allocator));
    offsets[7] = offset_of(mem_alloc(0));
}

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    for (uint32_t i = 0; i < OFFSETS; i++) {
        offsets[i] = 0xFFFFFFFFu;
    }
    mem_reset();
    base = mem_alloc(0);
    switch (mode) {
    case 0:
        heap_mode();
        break;
    case 1:
        buddy_mode();
        break;
    case 2:
        odd_buddy_mode();
        break;
    default:
        fsb_mode();
        break;
    }
    return 0;
}
