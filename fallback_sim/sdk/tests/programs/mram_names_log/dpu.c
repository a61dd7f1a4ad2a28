/*
 * Named MRAM arrays and DPU printf. The host writes `table` (an __mram_noinit array) by name with a broadcast
 * and each DPU's parameters by name; the DPU writes `output[i] = table[i] * factor + dpu_id` into another named
 * array, keeps an initialised __mram array, and prints a few lines (one per tasklet, then a summary).
 */
#include <stdint.h>
#include <stdio.h>
#include <defs.h>
#include <mram.h>
#include <barrier.h>
#include <handshake.h>

#include "common.h"

__mram_noinit uint64_t table[TABLE_LEN];
__mram_noinit uint64_t output[TABLE_LEN];
__mram uint64_t initialised[INIT_LEN] = {11, 22, 33, 44};
__host dpu_params_t params;
__host uint32_t host_init = 0x12345678;
__host uint64_t checksum;

BARRIER_INIT(my_barrier, NR_TASKLETS);

int main(void) {
    unsigned int tasklet_id = me();
    __dma_aligned uint64_t cache[CHUNK];
    uint64_t local = 0;
    for (unsigned int i = tasklet_id * CHUNK; i < TABLE_LEN; i += CHUNK * NR_TASKLETS) {
        mram_read(&table[i], cache, sizeof(cache));
        for (unsigned int k = 0; k < CHUNK; k++) {
            cache[k] = cache[k] * params.factor + params.dpu_id;
            local += cache[k];
        }
        mram_write(cache, &output[i], sizeof(cache));
    }
    /* Tasklets print in order, along a handshake chain. */
    if (tasklet_id != 0) {
        handshake_wait_for(tasklet_id - 1);
    } else {
        checksum = 0;
    }
    checksum += local;
    printf("tasklet %u: %llu\n", tasklet_id, (unsigned long long)local);
    if (tasklet_id < NR_TASKLETS - 1) {
        handshake_notify();
    }
    barrier_wait(&my_barrier);
    if (tasklet_id == 0) {
        uint64_t first;
        mram_read(&initialised[0], &first, sizeof(first));
        printf("dpu %u launch %u: checksum=%llu hex=%x str=%s char=%c neg=%d init=%llu\n", params.dpu_id,
               params.launch, (unsigned long long)checksum, 0xBEEFu, "named", 'Z', -42, (unsigned long long)first);
        puts("puts line");
        putchar('!');
        putchar('\n');
    }
    return 0;
}
