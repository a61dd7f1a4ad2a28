/*
 * stream.c: a streaming benchmark. stream_bytes of MRAM from DPU_MRAM_HEAP_POINTER are cut into BLOCK_BYTES
 * blocks; block b is read by tasklet b % NR_TASKLETS into its WRAM buffer (mem_alloc) with one 2,048-byte
 * mram_read, and its 64-bit words are added (wrapping) into the tasklet's checksum.
 *
 * Host input:   stream_bytes (a multiple of BLOCK_BYTES; a remainder is ignored), the data at the MRAM heap
 * DPU outputs:  checksums[t]; their wrapping sum = the wrapping sum of the 64-bit little-endian words in
 *               [heap, heap + (stream_bytes / BLOCK_BYTES) * BLOCK_BYTES)
 * WRAM: NR_TASKLETS * (BLOCK_BYTES + stack): NR_TASKLETS = 16 fits with STACK_SIZE_DEFAULT up to 1024;
 *       NR_TASKLETS = 24 needs STACK_SIZE_DEFAULT <= 512.
 */
#include <stdint.h>

#include <alloc.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>

#define BLOCK_BYTES 2048
#define BLOCK_WORDS (BLOCK_BYTES / sizeof(uint64_t))

__host uint32_t stream_bytes;
__host uint64_t checksums[NR_TASKLETS];

BARRIER_INIT(start_barrier, NR_TASKLETS);

int main(void)
{
    if (me() == 0) {
        mem_reset();
    }
    barrier_wait(&start_barrier);

    uint64_t *buffer = mem_alloc(BLOCK_BYTES);
    uint32_t heap = (uint32_t)DPU_MRAM_HEAP_POINTER;
    uint32_t nr_blocks = stream_bytes / BLOCK_BYTES;
    uint64_t checksum = 0;
    for (uint32_t block = me(); block < nr_blocks; block += NR_TASKLETS) {
        mram_read((__mram_ptr void *)(heap + block * BLOCK_BYTES), buffer, BLOCK_BYTES);
        for (uint32_t i = 0; i < BLOCK_WORDS; i++) {
            checksum += buffer[i];
        }
    }
    checksums[me()] = checksum;
    return 0;
}
