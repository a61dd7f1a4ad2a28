/*
 * semaphore.c: SEMAPHORE_INIT, sem_take and sem_give in a bounded producer/consumer queue.
 *
 * Tasklet 0 produces NR_ITEMS items (ITEM_BASE + i, in order) into a QUEUE_SLOTS-slot ring: it takes a free slot
 * (free_slots starts at QUEUE_SLOTS), stores the item and gives a filled slot. Tasklets 1..NR_TASKLETS-1 each
 * consume ITEMS_PER_CONSUMER items: take a filled slot, pop the item at the shared head (under a mutex), give the
 * slot back. Items leave the queue in order, so each consumer must see strictly increasing items.
 *
 * DPU outputs:  consumed_sum[t], consumed_count[t] (t >= 1), order_errors[t]; produced (items tasklet 0 made)
 * Expected: produced = NR_ITEMS; consumed_count[t] = ITEMS_PER_CONSUMER for t >= 1 (0 for t = 0);
 *           sum of consumed_sum = sum of ITEM_BASE + i for i < NR_ITEMS; order_errors all 0.
 *           Both semaphores end where they started, so relaunching gives the same results.
 * NR_TASKLETS >= 2.
 */
#include <stdint.h>

#include <defs.h>
#include <mutex.h>
#include <sem.h>

#if NR_TASKLETS < 2
#error "semaphore.c needs a producer and at least one consumer: build it with NR_TASKLETS >= 2"
#endif

#define QUEUE_SLOTS 4
#define ITEMS_PER_CONSUMER 6
#define NR_CONSUMERS (NR_TASKLETS - 1)
#define NR_ITEMS (ITEMS_PER_CONSUMER * NR_CONSUMERS)
#define ITEM_BASE 100

__host uint64_t consumed_sum[NR_TASKLETS];
__host uint32_t consumed_count[NR_TASKLETS];
__host uint32_t order_errors[NR_TASKLETS];
__host uint32_t produced;

SEMAPHORE_INIT(filled_slots, 0);
SEMAPHORE_INIT(free_slots, QUEUE_SLOTS);
MUTEX_INIT(head_mutex);

uint32_t queue[QUEUE_SLOTS];
uint32_t head;

static void produce(void)
{
    for (uint32_t i = 0; i < NR_ITEMS; i++) {
        sem_take(&free_slots);
        queue[i % QUEUE_SLOTS] = ITEM_BASE + i;
        produced++;
        sem_give(&filled_slots);
    }
}

static void consume(uint32_t id)
{
    uint32_t last = 0;
    for (uint32_t k = 0; k < ITEMS_PER_CONSUMER; k++) {
        sem_take(&filled_slots);
        mutex_lock(head_mutex);
        uint32_t item = queue[head % QUEUE_SLOTS];
        head++;
        mutex_unlock(head_mutex);
        sem_give(&free_slots);

        order_errors[id] += item <= last;
        last = item;
        consumed_sum[id] += item;
        consumed_count[id]++;
    }
}

int main(void)
{
    uint32_t id = me();
    consumed_sum[id] = 0;
    consumed_count[id] = 0;
    order_errors[id] = 0;
    if (id == 0) {
        head = 0;
        produced = 0;
        produce();
    } else {
        consume(id);
    }
    return 0;
}
