/*
 * Scan (prefix sum), PrIM SCAN-SSA style: one binary, two kernels selected by the host through
 * DPU_INPUT_ARGUMENTS.kernel. kernel1 reduces the DPU's slice (each tasklet its contiguous chunk, then tasklet 0
 * after a barrier); kernel2 scans it, starting from the host's t_count: chunk sums, then a handshake chain hands
 * each tasklet the sum of the chunks before it, then each tasklet scans its chunk into the output.
 */
#include <stdint.h>
#include <defs.h>
#include <mram.h>
#include <alloc.h>
#include <barrier.h>
#include <handshake.h>

#include "common.h"

__host dpu_arguments_t DPU_INPUT_ARGUMENTS;
__host dpu_results_t DPU_RESULTS;

T message[NR_TASKLETS];   /* chunk sums */
T prefix[NR_TASKLETS];    /* sum before each chunk */

BARRIER_INIT(my_barrier, NR_TASKLETS);

static void chunk_of(unsigned int tasklet_id, uint32_t *first, uint32_t *last) {
    uint32_t size = DPU_INPUT_ARGUMENTS.size;
    uint32_t per_tasklet = divceil(size, NR_TASKLETS);
    *first = tasklet_id * per_tasklet > size ? size : tasklet_id * per_tasklet;
    *last = *first + per_tasklet > size ? size : *first + per_tasklet;
}

static T chunk_sum(T *cache, uint32_t first, uint32_t last) {
    uint32_t mram_base_addr_A = (uint32_t)DPU_MRAM_HEAP_POINTER;
    T sum = 0;
    for (uint32_t e = first; e < last; e += BLOCK_SIZE / sizeof(T)) {
        uint32_t n = last - e < BLOCK_SIZE / sizeof(T) ? last - e : BLOCK_SIZE / sizeof(T);
        mram_read((__mram_ptr void const *)(mram_base_addr_A + e * sizeof(T)), cache, n * sizeof(T));
        for (uint32_t k = 0; k < n; k++) {
            sum += cache[k];
        }
    }
    return sum;
}

static int main_kernel1(void) {
    unsigned int tasklet_id = me();
    if (tasklet_id == 0) {
        mem_reset();
    }
    barrier_wait(&my_barrier);
    T *cache = (T *)mem_alloc(BLOCK_SIZE);
    uint32_t first, last;
    chunk_of(tasklet_id, &first, &last);
    message[tasklet_id] = chunk_sum(cache, first, last);
    barrier_wait(&my_barrier);
    if (tasklet_id == 0) {
        T total = 0;
        for (unsigned int t = 0; t < NR_TASKLETS; t++) {
            total += message[t];
        }
        DPU_RESULTS.t_count = total;
        DPU_RESULTS.kernel_ran = 1;
    }
    return 0;
}

static int main_kernel2(void) {
    unsigned int tasklet_id = me();
    if (tasklet_id == 0) {
        mem_reset();
    }
    barrier_wait(&my_barrier);
    T *cache = (T *)mem_alloc(BLOCK_SIZE);
    uint32_t first, last;
    chunk_of(tasklet_id, &first, &last);
    message[tasklet_id] = chunk_sum(cache, first, last);

    /* Chain: tasklet t learns the sum of everything before its chunk from tasklet t - 1. */
    if (tasklet_id == 0) {
        prefix[0] = DPU_INPUT_ARGUMENTS.t_count;
    } else {
        handshake_wait_for(tasklet_id - 1);
        prefix[tasklet_id] = prefix[tasklet_id - 1] + message[tasklet_id - 1];
    }
    if (tasklet_id < NR_TASKLETS - 1) {
        handshake_notify();
    }

    uint32_t mram_base_addr_A = (uint32_t)DPU_MRAM_HEAP_POINTER;
    uint32_t mram_base_addr_B = (uint32_t)(DPU_MRAM_HEAP_POINTER + DPU_INPUT_ARGUMENTS.transfer_size);
    T running = prefix[tasklet_id];
    for (uint32_t e = first; e < last; e += BLOCK_SIZE / sizeof(T)) {
        uint32_t n = last - e < BLOCK_SIZE / sizeof(T) ? last - e : BLOCK_SIZE / sizeof(T);
        mram_read((__mram_ptr void const *)(mram_base_addr_A + e * sizeof(T)), cache, n * sizeof(T));
        for (uint32_t k = 0; k < n; k++) {
            running += cache[k];
            cache[k] = running;
        }
        mram_write(cache, (__mram_ptr void *)(mram_base_addr_B + e * sizeof(T)), n * sizeof(T));
    }
    barrier_wait(&my_barrier);
    if (tasklet_id == 0) {
        DPU_RESULTS.kernel_ran = 2;
    }
    return 0;
}

int (*kernels[nr_kernels])(void) = {main_kernel1, main_kernel2};

int main(void) {
    /* Kernel */
    return kernels[DPU_INPUT_ARGUMENTS.kernel]();
}
