/*
 * Reduction, PrIM RED style: every tasklet sums its blocks of the DPU's slice, then
 *   - a tree of handshakes adds the partial sums up into tasklet 0 (round s: tasklet t waits for t + s when
 *     t % 2s == 0, tasklet t notifies when t % 2s == s),
 *   - a chain of handshakes computes the inclusive prefix of the partial sums (SCAN-SSA style),
 *   - tasklet 0 also adds them after a barrier, and the barrier is re-used several times per launch.
 */
#include <stdint.h>
#include <defs.h>
#include <mram.h>
#include <alloc.h>
#include <barrier.h>
#include <handshake.h>
#include <perfcounter.h>

#include "common.h"

__host dpu_arguments_t DPU_INPUT_ARGUMENTS;
__host dpu_results_t DPU_RESULTS;

/* Per-tasklet values in WRAM, shared by the tasklets. */
T message[NR_TASKLETS];
T message_partial_count;
uint32_t launches; /* .bss: counts launches since dpu_load */

BARRIER_INIT(my_barrier, NR_TASKLETS);

static T reduction(T *input, unsigned int l_size) {
    T output = 0;
    for (unsigned int j = 0; j < l_size; j++) {
        output += input[j];
    }
    return output;
}

int main(void) {
    unsigned int tasklet_id = me();
    if (tasklet_id == 0) {
        mem_reset();
        perfcounter_config(COUNT_CYCLES, true);
        launches++;
    }
    barrier_wait(&my_barrier);

    uint32_t input_size_dpu_bytes = DPU_INPUT_ARGUMENTS.size * sizeof(T);
    uint32_t base_tasklet = tasklet_id << BLOCK_SIZE_LOG2;
    uint32_t mram_base_addr_A = (uint32_t)DPU_MRAM_HEAP_POINTER;
    T *cache_A = (T *)mem_alloc(BLOCK_SIZE);

    T l_count = 0;
    for (unsigned int byte_index = base_tasklet; byte_index < input_size_dpu_bytes;
         byte_index += BLOCK_SIZE * NR_TASKLETS) {
        uint32_t l_size_bytes =
            (byte_index + BLOCK_SIZE >= input_size_dpu_bytes) ? (input_size_dpu_bytes - byte_index) : BLOCK_SIZE;
        mram_read((__mram_ptr void const *)(mram_base_addr_A + byte_index), cache_A, l_size_bytes);
        l_count += reduction(cache_A, l_size_bytes / sizeof(T));
    }
    message[tasklet_id] = l_count;
    DPU_RESULTS.partial[tasklet_id] = l_count;

    /* Tree of handshakes: partial sums flow to tasklet 0. */
    T tree = l_count;
    for (unsigned int step = 1; step < NR_TASKLETS; step <<= 1) {
        if (tasklet_id % (2 * step) == 0) {
            if (tasklet_id + step < NR_TASKLETS) {
                handshake_wait_for(tasklet_id + step);
                tree += message[tasklet_id + step];
            }
        } else {
            message[tasklet_id] = tree;
            handshake_notify();
            break;
        }
    }
    if (tasklet_id == 0) {
        DPU_RESULTS.sum = tree;
    }
    barrier_wait(&my_barrier);

    /* Chain of handshakes: each tasklet adds its predecessor's prefix. */
    if (tasklet_id != 0) {
        handshake_wait_for(tasklet_id - 1);
        DPU_RESULTS.prefix[tasklet_id] = DPU_RESULTS.prefix[tasklet_id - 1] + DPU_RESULTS.partial[tasklet_id];
    } else {
        DPU_RESULTS.prefix[0] = DPU_RESULTS.partial[0];
    }
    if (tasklet_id < NR_TASKLETS - 1) {
        handshake_notify();
    }
    barrier_wait(&my_barrier);

    /* Single-tasklet reduction after the barrier. */
    if (tasklet_id == 0) {
        T total = 0;
        for (unsigned int t = 0; t < NR_TASKLETS; t++) {
            total += DPU_RESULTS.partial[t];
        }
        DPU_RESULTS.barrier_sum = total;
        DPU_RESULTS.launches = launches;
        DPU_RESULTS.cycles = perfcounter_get();
    }
    barrier_wait(&my_barrier);
    return 0;
}
