/*
 * buddy_allocator.c: the buddy allocator (buddy_init, buddy_alloc, buddy_free, buddy_realloc, buddy_reset).
 *
 * Tasklet 0 runs the single-tasklet checks below on a BUDDY_HEAP_BYTES heap (the SDK's semantics); then every tasklet allocates a
 * SHARED_BLOCK_BYTES block, fills it with its id, waits at a barrier and checks its block is intact.
 *
 * DPU outputs:  checks_passed (tasklet 0's checks that held), checks_failed (must be 0),
 *               first_failed_line (source line of the first failed check, 0 if none),
 *               block_errors[t] (bytes of tasklet t's shared block overwritten by others; must be 0)
 * Expected: checks_failed = 0, checks_passed = EXPECTED_CHECKS, block_errors all 0.
 * Any NR_TASKLETS (NR_TASKLETS * SHARED_BLOCK_BYTES <= BUDDY_HEAP_BYTES).
 */
#include <errno.h>
#include <stdint.h>

#include <alloc.h>
#include <barrier.h>
#include <defs.h>

#define BUDDY_HEAP_BYTES 4096
#define MIN_BLOCK_BYTES 16
#define SHARED_BLOCK_BYTES 64
#define COPY_BYTES 128
#define EXPECTED_CHECKS 17

__host uint32_t checks_passed;
__host uint32_t checks_failed;
__host uint32_t first_failed_line;
__host uint32_t block_errors[NR_TASKLETS];

BARRIER_INIT(setup_barrier, NR_TASKLETS);
BARRIER_INIT(filled_barrier, NR_TASKLETS);

static void check(int condition, uint32_t line)
{
    if (condition) {
        checks_passed++;
    } else {
        if (checks_failed == 0) {
            first_failed_line = line;
        }
        checks_failed++;
    }
}

#define CHECK(condition) check((condition) != 0, __LINE__)

static int disjoint(const uint8_t *a, uint32_t a_bytes, const uint8_t *b, uint32_t b_bytes)
{
    return a + a_bytes <= b || b + b_bytes <= a;
}

static void single_tasklet_checks(void)
{
    buddy_init(BUDDY_HEAP_BYTES);

    uint8_t *a = buddy_alloc(100); /* a 128-byte block */
    CHECK(a != NULL && (uint32_t)a % 8 == 0);
    uint8_t *b = buddy_alloc(MIN_BLOCK_BYTES);
    CHECK(b != NULL && disjoint(a, 128, b, MIN_BLOCK_BYTES));

    errno = 0;
    CHECK(buddy_alloc(BUDDY_HEAP_BYTES + 1) == NULL);
    CHECK(errno == EINVAL); /* a request over the heap's size; ENOMEM is for a heap with no block left */

    buddy_free(a);
    uint8_t *c = buddy_alloc(128);
    CHECK(c == a); /* the freed block is found again */

    for (uint32_t i = 0; i < COPY_BYTES; i++) {
        c[i] = (uint8_t)i;
    }
    uint8_t *d = buddy_realloc(c, 300);
    CHECK(d != NULL && d != c && disjoint(d, 512, b, MIN_BLOCK_BYTES));
    uint32_t copy_errors = 0;
    for (uint32_t i = 0; d != NULL && i < COPY_BYTES; i++) {
        copy_errors += d[i] != (uint8_t)i;
    }
    CHECK(copy_errors == 0);
    /* The SDK's realloc takes the old size as 1 << (12 - the block's index in its level), 2048 here, so a
     * smaller size frees the block and copies into a new one. */
    uint8_t *shrunk = buddy_realloc(d, 200);
    copy_errors = 0;
    for (uint32_t i = 0; shrunk != NULL && i < COPY_BYTES; i++) {
        copy_errors += shrunk[i] != (uint8_t)i;
    }
    CHECK(shrunk != NULL && shrunk != d && copy_errors == 0);

    buddy_reset();
    uint8_t *whole = buddy_alloc(BUDDY_HEAP_BYTES);
    CHECK(whole != NULL);
    errno = 0;
    CHECK(buddy_alloc(MIN_BLOCK_BYTES) == NULL && errno == ENOMEM);
    buddy_free(whole);

    /* The heap holds exactly BUDDY_HEAP_BYTES / MIN_BLOCK_BYTES minimum blocks, and frees coalesce. */
    static uint8_t *small_blocks[BUDDY_HEAP_BYTES / MIN_BLOCK_BYTES];
    uint32_t count = 0;
    for (uint8_t *p; (p = buddy_alloc(1)) != NULL && count < BUDDY_HEAP_BYTES / MIN_BLOCK_BYTES;) {
        small_blocks[count++] = p;
    }
    CHECK(count == BUDDY_HEAP_BYTES / MIN_BLOCK_BYTES);
    CHECK(buddy_alloc(1) == NULL);
    for (uint32_t i = 0; i < count; i++) {
        buddy_free(small_blocks[i]);
    }
    whole = buddy_alloc(BUDDY_HEAP_BYTES);
    CHECK(whole != NULL);
    buddy_free(whole);

    uint8_t *e = buddy_realloc(NULL, 32);
    CHECK(e != NULL);
    CHECK(buddy_realloc(e, 0) == e); /* frees e and returns it */
    whole = buddy_alloc(BUDDY_HEAP_BYTES);
    CHECK(whole != NULL); /* e was freed by the realloc to 0 */
    buddy_reset();

    buddy_free(NULL); /* no effect */
    CHECK(buddy_alloc(BUDDY_HEAP_BYTES) != NULL);
    buddy_reset();
}

int main(void)
{
    if (me() == 0) {
        mem_reset();
        checks_passed = 0;
        checks_failed = 0;
        first_failed_line = 0;
        single_tasklet_checks();
    }
    barrier_wait(&setup_barrier);

    uint8_t *block = buddy_alloc(SHARED_BLOCK_BYTES);
    uint32_t errors = 0;
    if (block == NULL) {
        errors = SHARED_BLOCK_BYTES;
    } else {
        for (uint32_t i = 0; i < SHARED_BLOCK_BYTES; i++) {
            block[i] = (uint8_t)me();
        }
    }
    barrier_wait(&filled_barrier);
    for (uint32_t i = 0; block != NULL && i < SHARED_BLOCK_BYTES; i++) {
        errors += block[i] != (uint8_t)me();
    }
    block_errors[me()] = errors;
    return 0;
}
