/*
 * mram_rw.c: mram_read/mram_write round trips, through named __mram_noinit arrays, the MRAM heap, an
 * initialised __mram array and a buffer on the tasklet's stack.
 *
 * Work split: the data is cut into BLOCK_BYTES blocks; block b goes to tasklet b % NR_TASKLETS, which reads it
 * into its own WRAM buffer (mem_alloc), transforms it in place and writes it to the output.
 *
 * Host inputs:  input[0 .. nr_words)            (MRAM, uint64_t) and nr_words (<= ARRAY_WORDS), addend
 *               heap bytes [0, heap_bytes)      (at DPU_MRAM_HEAP_POINTER; heap_bytes a multiple of 8, <= 1 MiB)
 * DPU outputs:  output[i] = input[i] * INPUT_MULTIPLIER + addend, for i < nr_words
 *               heap word at HEAP_OUTPUT_OFFSET + 8 i = ~(heap word i), for i < heap_bytes / 8
 *               table_copy[i] = mram_table[i] = TABLE_BASE + i (the __mram array's initial values)
 *               stack_sums[t] = input[0] + input[1] + input[2] + input[3], read by tasklet t into a stack array
 *               heap_pointer = (uint32_t)DPU_MRAM_HEAP_POINTER (the address of __sys_used_mram_end)
 * Any NR_TASKLETS 1..24 (at most NR_TASKLETS * 1 KiB of heap).
 */
#include <stdint.h>

#include <alloc.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>

#define ARRAY_WORDS 4096
#define BLOCK_BYTES 1024
#define WORD_BYTES 8
#define INPUT_MULTIPLIER 3
#define HEAP_OUTPUT_OFFSET (1u << 20)
#define TABLE_WORDS 8
#define TABLE_BASE 1000
#define STACK_WORDS 4

__host uint32_t nr_words;
__host uint64_t addend;
__host uint32_t heap_bytes;
__host uint64_t table_copy[TABLE_WORDS];
__host uint64_t stack_sums[NR_TASKLETS];
__host uint32_t heap_pointer;

__mram_noinit uint64_t input[ARRAY_WORDS];
__mram_noinit uint64_t output[ARRAY_WORDS];
__mram uint64_t mram_table[TABLE_WORDS] = {
    TABLE_BASE + 0, TABLE_BASE + 1, TABLE_BASE + 2, TABLE_BASE + 3,
    TABLE_BASE + 4, TABLE_BASE + 5, TABLE_BASE + 6, TABLE_BASE + 7,
};

BARRIER_INIT(start_barrier, NR_TASKLETS);

static uint32_t block_size(uint32_t total_bytes, uint32_t block)
{
    uint32_t left = total_bytes - block * BLOCK_BYTES;
    return left < BLOCK_BYTES ? left : BLOCK_BYTES;
}

int main(void)
{
    if (me() == 0) {
        mem_reset();
        heap_pointer = (uint32_t)DPU_MRAM_HEAP_POINTER;
        mram_read(mram_table, table_copy, sizeof(table_copy));
    }
    barrier_wait(&start_barrier);

    uint64_t *buffer = mem_alloc(BLOCK_BYTES);

    uint32_t array_bytes = (nr_words <= ARRAY_WORDS ? nr_words : ARRAY_WORDS) * WORD_BYTES;
    uint32_t array_blocks = (array_bytes + BLOCK_BYTES - 1) / BLOCK_BYTES;
    for (uint32_t block = me(); block < array_blocks; block += NR_TASKLETS) {
        uint32_t bytes = block_size(array_bytes, block);
        uint32_t first_word = block * (BLOCK_BYTES / WORD_BYTES);
        mram_read(&input[first_word], buffer, bytes);
        for (uint32_t i = 0; i < bytes / WORD_BYTES; i++) {
            buffer[i] = buffer[i] * INPUT_MULTIPLIER + addend;
        }
        mram_write(buffer, &output[first_word], bytes);
    }

    uint32_t heap_base = (uint32_t)DPU_MRAM_HEAP_POINTER;
    uint32_t total_heap_bytes = heap_bytes & ~(uint32_t)(WORD_BYTES - 1);
    uint32_t heap_blocks = (total_heap_bytes + BLOCK_BYTES - 1) / BLOCK_BYTES;
    for (uint32_t block = me(); block < heap_blocks; block += NR_TASKLETS) {
        uint32_t bytes = block_size(total_heap_bytes, block);
        uint32_t offset = block * BLOCK_BYTES;
        mram_read((__mram_ptr void *)(heap_base + offset), buffer, bytes);
        for (uint32_t i = 0; i < bytes / WORD_BYTES; i++) {
            buffer[i] = ~buffer[i];
        }
        mram_write(buffer, (__mram_ptr void *)(heap_base + HEAP_OUTPUT_OFFSET + offset), bytes);
    }

    uint64_t on_stack[STACK_WORDS];
    mram_read(input, on_stack, sizeof(on_stack));
    stack_sums[me()] = on_stack[0] + on_stack[1] + on_stack[2] + on_stack[3];
    return 0;
}
