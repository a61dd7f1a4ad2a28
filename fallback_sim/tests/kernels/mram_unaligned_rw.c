/*
 * mram_unaligned_rw.c: mram_read_unaligned and mram_write_unaligned at any byte offset. Only tasklet 0 works.
 *
 * Host inputs:  source[] (MRAM, SOURCE_BYTES bytes), target[] (MRAM, TARGET_BYTES, pre-filled by the host, e.g.
 *               with 0x11), offset (0 .. TARGET_BYTES - MAX_LENGTH), length (0 .. MAX_LENGTH)
 * DPU outputs:  read_back[i] = source[offset + i] for i < length
 *               read_offset = (returned pointer - buffer), which must be offset % 8
 *               target[offset + i] = (uint8_t)(PATTERN_BASE + i) for i < length; every other byte of target
 *               unchanged (the partial 8-byte words at the edges are read-modified-written)
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>
#include <mram_unaligned.h>

#define SOURCE_BYTES 1024
#define TARGET_BYTES 1024
#define MAX_LENGTH 256
#define ALIGNMENT 8
#define PATTERN_BASE 0xA0
/* mram_read_unaligned may read up to 16 bytes more than asked. */
#define BUFFER_BYTES (MAX_LENGTH + 16)

__host uint32_t offset;
__host uint32_t length;
__host uint8_t read_back[MAX_LENGTH];
__host uint32_t read_offset;

__mram_noinit uint8_t source[SOURCE_BYTES];
__mram_noinit uint8_t target[TARGET_BYTES];

__dma_aligned uint8_t read_buffer[BUFFER_BYTES];
__dma_aligned uint8_t write_buffer[BUFFER_BYTES];

int main(void)
{
    if (me() != 0 || length > MAX_LENGTH || offset + length > TARGET_BYTES) {
        return 0;
    }

    uint8_t *bytes = mram_read_unaligned(&source[offset], read_buffer, length);
    read_offset = (uint32_t)(bytes - read_buffer);
    for (uint32_t i = 0; i < length; i++) {
        read_back[i] = bytes[i];
    }

    uint8_t *from = &write_buffer[offset % ALIGNMENT];
    for (uint32_t i = 0; i < length; i++) {
        from[i] = (uint8_t)(PATTERN_BASE + i);
    }
    mram_write_unaligned(from, &target[offset], length);
    return 0;
}
