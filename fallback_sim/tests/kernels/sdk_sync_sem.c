/*
 * sdk_sync_sem.c: sem_give resumes a queued waiter whatever the count, as the SDK 2025.1's compiled runtime does.
 *
 * Tasklet 1 takes a semaphore of count 0 and waits (count -1, wait_queue 1). Tasklet 0, later, records
 * wait_queue, sets the count to 5 by hand and gives: the SDK looks at wait_queue only, so tasklet 1 is resumed,
 * the queue empties and the count becomes 6.
 *
 * DPU outputs:  taken (1 once tasklet 1's sem_take returned), seen_wait_queue, seen_count (before the hand edit)
 * Host reads:   semaphore (4 bytes)
 * NR_TASKLETS = 2.
 */
#include <stdint.h>

#include <defs.h>
#include <mram.h>
#include <sem.h>

#if NR_TASKLETS != 2
#error "sdk_sync_sem.c is built with NR_TASKLETS = 2"
#endif

#define DELAY_BLOCKS 16
#define DELAY_BYTES 2048
#define HAND_COUNT 5

__host uint32_t taken;
__host uint32_t seen_wait_queue;
__host int32_t seen_count;

SEMAPHORE_INIT(semaphore, 0);

__dma_aligned uint8_t delay_buffer[DELAY_BYTES];

int main(void)
{
    if (me() == 1) {
        taken = 0;
        sem_take(&semaphore);
        taken = 1;
        return 0;
    }
    for (uint32_t b = 0; b < DELAY_BLOCKS; b++) {
        mram_read(DPU_MRAM_HEAP_POINTER, delay_buffer, DELAY_BYTES);
    }
    seen_wait_queue = semaphore.wait_queue;
    seen_count = (int8_t)semaphore.count;
    semaphore.count = HAND_COUNT;
    sem_give(&semaphore);
    return 0;
}
