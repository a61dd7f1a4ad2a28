/*
 * fsb_allocator.c: fixed-size-block allocators (fsb_alloc, fsb_get, fsb_free).
 *
 * Tasklet 0 makes an allocator of NR_BLOCKS blocks of BLOCK_BYTES (rounded up to BLOCK_STRIDE) and checks it;
 * then every tasklet takes a block, fills it with its id, waits at a barrier, checks its block and gives it back.
 *
 * DPU outputs:  checks_passed, checks_failed (must be 0), first_failed_line (0 if none),
 *               block_errors[t] (bytes of tasklet t's block overwritten by others; must be 0)
 * Expected: checks_failed = 0, checks_passed = EXPECTED_CHECKS, block_errors all 0.
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <alloc.h>
#include <barrier.h>
#include <defs.h>

#define BLOCK_BYTES 20
#define BLOCK_STRIDE 24
#define NR_BLOCKS (NR_TASKLETS + 2)
#define EXPECTED_CHECKS 6

__host uint32_t checks_passed;
__host uint32_t checks_failed;
__host uint32_t first_failed_line;
__host uint32_t block_errors[NR_TASKLETS];

BARRIER_INIT(setup_barrier, NR_TASKLETS);
BARRIER_INIT(filled_barrier, NR_TASKLETS);

fsb_allocator_t allocator;

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

static void single_tasklet_checks(void)
{
    allocator = fsb_alloc(BLOCK_BYTES, NR_BLOCKS);
    uint8_t *blocks[NR_BLOCKS];
    uint32_t null_blocks = 0, misaligned = 0, overlapping = 0;
    for (uint32_t i = 0; i < NR_BLOCKS; i++) {
        blocks[i] = fsb_get(allocator);
        null_blocks += blocks[i] == NULL;
        misaligned += (uint32_t)blocks[i] % 8 != 0;
        for (uint32_t j = 0; j < i; j++) {
            uint8_t *low = blocks[i] < blocks[j] ? blocks[i] : blocks[j];
            uint8_t *high = blocks[i] < blocks[j] ? blocks[j] : blocks[i];
            overlapping += low + BLOCK_STRIDE > high;
        }
    }
    CHECK(null_blocks == 0);
    CHECK(misaligned == 0);
    CHECK(overlapping == 0);
    CHECK(fsb_get(allocator) == NULL); /* all blocks taken */

    fsb_free(allocator, blocks[1]);
    CHECK(fsb_get(allocator) == blocks[1]);
    for (uint32_t i = 0; i < NR_BLOCKS; i++) {
        fsb_free(allocator, blocks[i]);
    }
    uint32_t again = 0;
    for (uint32_t i = 0; i < NR_BLOCKS; i++) {
        blocks[i] = fsb_get(allocator);
        again += blocks[i] != NULL;
    }
    CHECK(again == NR_BLOCKS);
    for (uint32_t i = 0; i < NR_BLOCKS; i++) {
        fsb_free(allocator, blocks[i]);
    }
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

    uint8_t *block = fsb_get(allocator);
    uint32_t errors = 0;
    if (block == NULL) {
        errors = BLOCK_BYTES;
    } else {
        for (uint32_t i = 0; i < BLOCK_BYTES; i++) {
            block[i] = (uint8_t)me();
        }
    }
    barrier_wait(&filled_barrier);
    for (uint32_t i = 0; block != NULL && i < BLOCK_BYTES; i++) {
        errors += block[i] != (uint8_t)me();
    }
    block_errors[me()] = errors;
    fsb_free(allocator, block);
    return 0;
}
