/*
 * buddy.c: the buddy allocator (buddy_alloc.h).
 *
 * The heap and a one-byte-per-16-byte-unit block table come from mem_alloc. The table's byte for the first unit
 * of each block holds its order and whether it is free or in use; free blocks of each order form a doubly linked
 * list threaded through the blocks themselves (offsets + 1, 0 ending the list). Tasklets switch only at
 * synchronisation points, so no lock is needed.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <alloc.h>

#define MIN_ORDER 4u  /* 16-byte blocks */
#define MAX_ORDER 16u /* a 64 KiB heap, the whole of WRAM */
#define UNIT (1u << MIN_ORDER)
#define BLOCK_FREE 0x40u
#define BLOCK_USED 0x80u
#define ORDER_MASK 0x1Fu
#define NO_BLOCK 0u

struct free_links {
    uint32_t prev; /* offset + 1 of the previous free block of the same order, or NO_BLOCK */
    uint32_t next;
};

static uint8_t *heap;
static uint32_t heap_order; /* log2 of the heap size; 0 before buddy_init */
static uint8_t *block_table;
static uint32_t free_lists[MAX_ORDER + 1];

static struct free_links *links_at(uint32_t offset)
{
    return (struct free_links *)(heap + offset);
}

static void push_free(uint32_t offset, uint32_t order)
{
    struct free_links *links = links_at(offset);
    links->prev = NO_BLOCK;
    links->next = free_lists[order];
    if (free_lists[order] != NO_BLOCK) {
        links_at(free_lists[order] - 1)->prev = offset + 1;
    }
    free_lists[order] = offset + 1;
    block_table[offset / UNIT] = (uint8_t)(BLOCK_FREE | order);
}

static void unlink_free(uint32_t offset, uint32_t order)
{
    struct free_links *links = links_at(offset);
    if (links->prev != NO_BLOCK) {
        links_at(links->prev - 1)->next = links->next;
    } else {
        free_lists[order] = links->next;
    }
    if (links->next != NO_BLOCK) {
        links_at(links->next - 1)->prev = links->prev;
    }
    block_table[offset / UNIT] = 0;
}

static uint32_t order_of_size(size_t size)
{
    uint32_t order = MIN_ORDER;
    while (order <= MAX_ORDER && ((size_t)1 << order) < size) {
        order++;
    }
    return order;
}

void buddy_init(size_t size_of_heap)
{
    uint32_t order = MIN_ORDER;
    while (order < MAX_ORDER && ((size_t)1 << (order + 1)) <= size_of_heap) {
        order++;
    }
    heap_order = order;
    heap = mem_alloc((size_t)1 << order);
    block_table = mem_alloc(((size_t)1 << order) / UNIT);
    buddy_reset();
}

void buddy_reset(void)
{
    if (heap_order == 0) {
        return;
    }
    memset(block_table, 0, ((size_t)1 << heap_order) / UNIT);
    memset(free_lists, 0, sizeof(free_lists));
    push_free(0, heap_order);
}

void *buddy_alloc(size_t size)
{
    uint32_t order = order_of_size(size);
    if (heap_order == 0 || order > heap_order) {
        errno = ENOMEM;
        return NULL;
    }
    uint32_t found = order;
    while (found <= heap_order && free_lists[found] == NO_BLOCK) {
        found++;
    }
    if (found > heap_order) {
        errno = ENOMEM;
        return NULL;
    }
    uint32_t offset = free_lists[found] - 1;
    unlink_free(offset, found);
    while (found > order) {
        found--;
        push_free(offset + (1u << found), found);
    }
    block_table[offset / UNIT] = (uint8_t)(BLOCK_USED | order);
    return heap + offset;
}

/* The order of the block in use at pointer, or 0 when pointer is not one. */
static uint32_t used_order(const void *pointer)
{
    if (heap_order == 0 || (const uint8_t *)pointer < heap || (const uint8_t *)pointer >= heap + (1u << heap_order)) {
        return 0;
    }
    uint32_t offset = (uint32_t)((const uint8_t *)pointer - heap);
    if (offset % UNIT != 0 || (block_table[offset / UNIT] & BLOCK_USED) == 0) {
        return 0;
    }
    return block_table[offset / UNIT] & ORDER_MASK;
}

void buddy_free(void *pointer)
{
    uint32_t order = used_order(pointer);
    if (order == 0) {
        return; /* NULL, or not a block in use */
    }
    uint32_t offset = (uint32_t)((uint8_t *)pointer - heap);
    block_table[offset / UNIT] = 0;
    while (order < heap_order) {
        uint32_t buddy = offset ^ (1u << order);
        if (block_table[buddy / UNIT] != (BLOCK_FREE | order)) {
            break;
        }
        unlink_free(buddy, order);
        offset &= ~(1u << order);
        order++;
    }
    push_free(offset, order);
}

void *buddy_realloc(void *pointer, size_t size)
{
    if (pointer == NULL) {
        return buddy_alloc(size);
    }
    if (size == 0) {
        buddy_free(pointer);
        return NULL;
    }
    uint32_t order = used_order(pointer);
    if (order == 0) {
        errno = EINVAL;
        return NULL;
    }
    if (order_of_size(size) <= order) {
        return pointer;
    }
    void *moved = buddy_alloc(size);
    if (moved == NULL) {
        return NULL;
    }
    memcpy(moved, pointer, (size_t)1 << order);
    buddy_free(pointer);
    return moved;
}
