/*
 * sdk_sync_barrier.c: barrier_wait's edge cases, as the SDK 2025.1's compiled runtime handles them, by `mode`.
 *
 *  mode 1: tasklet 0 waits twice at a hand-filled barrier {0xFF, count 1, initial_count 3}: a count of 1 with
 *          nobody queued passes and stores nothing, so both waits pass and count stays 1 (no re-arm to 3)
 *  mode 2: tasklet 0 waits at a barrier of count 0: any count but 1 queues, so it waits for ever; the barrier
 *          keeps count 255 (0 - 1 as a byte) and wait_queue 0, and the DPU ends (a stopped tasklet counts as
 *          finished)
 *  mode 3: tasklet 1 waits at a 2-tasklet barrier; tasklet 0, later, reads wait_queue (1: the last to queue) and
 *          count (1) before releasing it, which empties the queue (0xFF) and re-arms count (2)
 *
 * DPU outputs:  passes[t] (waits that returned), seen_wait_queue, seen_count (mode 3)
 * Host reads:   lone_barrier, zero_barrier, pair_barrier (4 bytes each)
 * NR_TASKLETS = 2.
 */
#include <stdint.h>

#include <barrier.h>
#include <defs.h>
#include <mram.h>

#if NR_TASKLETS != 2
#error "sdk_sync_barrier.c is built with NR_TASKLETS = 2"
#endif

#define DELAY_BLOCKS 16
#define DELAY_BYTES 2048

__host uint32_t mode;
__host uint32_t passes[NR_TASKLETS];
__host uint32_t seen_wait_queue;
__host uint32_t seen_count;

ATOMIC_BIT_INIT(lone_lock);
barrier_t lone_barrier;
BARRIER_INIT(zero_barrier, 0);
BARRIER_INIT(pair_barrier, 2);

__dma_aligned uint8_t delay_buffer[DELAY_BYTES];

/* Lets the other tasklet get ahead: a few thousand cycles of DMA. */
static void delay(void)
{
    for (uint32_t b = 0; b < DELAY_BLOCKS; b++) {
        mram_read(DPU_MRAM_HEAP_POINTER, delay_buffer, DELAY_BYTES);
    }
}

int main(void)
{
    uint32_t id = me();
    passes[id] = 0;
    if (mode == 1 && id == 0) {
        lone_barrier = (barrier_t){.wait_queue = 0xFF, .count = 1, .initial_count = 3,
                                   .lock = (uint8_t)(uintptr_t)&ATOMIC_BIT_GET(lone_lock)};
        barrier_wait(&lone_barrier);
        passes[id]++;
        barrier_wait(&lone_barrier);
        passes[id]++;
    } else if (mode == 2 && id == 0) {
        barrier_wait(&zero_barrier);
        passes[id]++;
    } else if (mode == 3) {
        if (id == 0) {
            delay();
            seen_wait_queue = pair_barrier.wait_queue;
            seen_count = pair_barrier.count;
        }
        barrier_wait(&pair_barrier);
        passes[id]++;
    }
    return 0;
}
