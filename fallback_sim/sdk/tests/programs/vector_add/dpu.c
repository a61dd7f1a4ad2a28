/* Vector addition, PrIM VA style: C = A + B over the DPU's slice, blocks of BLOCK_SIZE bytes per tasklet. */
#include <stdint.h>
#include <stdio.h>
#include <defs.h>
#include <mram.h>
#include <alloc.h>
#include <barrier.h>

#include "common.h"

__host dpu_arguments_t DPU_INPUT_ARGUMENTS;

BARRIER_INIT(my_barrier, NR_TASKLETS);

static void vector_addition(T *bufferB, T *bufferA, unsigned int l_size) {
    for (unsigned int i = 0; i < l_size; i++) {
        bufferB[i] += bufferA[i];
    }
}

int main(void) {
    unsigned int tasklet_id = me();
    if (tasklet_id == 0) {
        mem_reset();
    }
    barrier_wait(&my_barrier);

    /* The DPU's slice in bytes, rounded up to the 8-byte DMA granularity (the host zero-pads). */
    uint32_t input_size_dpu_bytes = (DPU_INPUT_ARGUMENTS.size * sizeof(T) + 7) & ~7u;
    uint32_t input_size_dpu_bytes_transfer = DPU_INPUT_ARGUMENTS.transfer_size;

    uint32_t base_tasklet = tasklet_id << BLOCK_SIZE_LOG2;
    uint32_t mram_base_addr_A = (uint32_t)DPU_MRAM_HEAP_POINTER;
    uint32_t mram_base_addr_B = (uint32_t)(DPU_MRAM_HEAP_POINTER + input_size_dpu_bytes_transfer);
    uint32_t mram_base_addr_C = (uint32_t)(DPU_MRAM_HEAP_POINTER + 2 * input_size_dpu_bytes_transfer);

    T *cache_A = (T *)mem_alloc(BLOCK_SIZE);
    T *cache_B = (T *)mem_alloc(BLOCK_SIZE);

    for (unsigned int byte_index = base_tasklet; byte_index < input_size_dpu_bytes;
         byte_index += BLOCK_SIZE * NR_TASKLETS) {
        uint32_t l_size_bytes =
            (byte_index + BLOCK_SIZE >= input_size_dpu_bytes) ? (input_size_dpu_bytes - byte_index) : BLOCK_SIZE;
        mram_read((__mram_ptr void const *)(mram_base_addr_A + byte_index), cache_A, l_size_bytes);
        mram_read((__mram_ptr void const *)(mram_base_addr_B + byte_index), cache_B, l_size_bytes);
        vector_addition(cache_B, cache_A, l_size_bytes / sizeof(T));
        mram_write(cache_B, (__mram_ptr void *)(mram_base_addr_C + byte_index), l_size_bytes);
    }

    barrier_wait(&my_barrier);
    if (tasklet_id == 0) {
        printf("va: %u elements, %u tasklets\n", DPU_INPUT_ARGUMENTS.size, NR_TASKLETS);
    }
    return 0;
}
