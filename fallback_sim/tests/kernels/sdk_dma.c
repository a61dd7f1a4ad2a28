/*
 * sdk_dma.c: mram_read, mram_write, mram_read_unaligned and mram_write_unaligned with sizes and addresses given
 * at run time, one operation per `mode`, so that the host can compare the bytes moved with what the SDK's
 * compiled routines and the DMA engine move (tests/sdk_seqread.rs models them).
 *
 * Host inputs: mode, offset (a byte of source/target), length, wram_skew (bytes past buffer's or pattern's start,
 *              below 16), source[] and target[] (MRAM, MRAM_BYTES each), counters[] (MRAM, zeroed by the host).
 * Every mode first fills buffer with GUARD_BYTE and pattern with PATTERN(i) = (i * 13 + 5) mod 256; then tasklet 0
 * (every tasklet in MODE_SHARED_WORDS) does:
 *   MODE_NONE             nothing (the baseline of the instruction counts)
 *   MODE_READ             mram_read(&source[offset], buffer + wram_skew, length)
 *   MODE_WRITE            mram_write(pattern + wram_skew, &target[offset], length)
 *   MODE_READ_UNALIGNED   returned = mram_read_unaligned(&source[offset], buffer + wram_skew, length) - buffer
 *   MODE_WRITE_UNALIGNED  mram_write_unaligned(pattern + wram_skew, &target[offset], length)
 *   MODE_SHARED_WORDS     tasklet t, for each round r < ROUNDS: mram_write_unaligned of pattern's byte p to target's
 *                         byte p, p = r * NR_TASKLETS + t (so a word's bytes belong to different tasklets),
 *                         mram_update_int_atomic(&counters[r % 4], increment) and mram_write_byte_atomic(&flags[t])
 *                         with t + 1
 *   MODE_SEQREAD_AT_END   a reader at 8 bytes before the end of MRAM: seq_values[] = its two 4-byte elements
 *   MODE_SEQREAD_SENTINEL a reader at the plain MRAM offset `1 << 26` plus 8 (the SDK's "no page" sentinel plus 8),
 *                         its cache filled with GUARD_BYTE first: returned = the pointer minus the cache,
 *                         seq_values[0] = the 4 bytes there
 */
#include <stdint.h>
#include <string.h>

#include <alloc.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <mram_unaligned.h>
#include <seqread.h>

#define MRAM_BYTES 8192
#define MRAM_END (0x08000000u + (64u << 20))
#define BUFFER_BYTES (2048 + 16 + 16)
#define GUARD_BYTE 0xEE
#define ROUNDS 16
#define NR_COUNTERS 4

enum dma_mode {
    MODE_NONE = 0,
    MODE_READ = 1,
    MODE_WRITE = 2,
    MODE_READ_UNALIGNED = 3,
    MODE_WRITE_UNALIGNED = 4,
    MODE_SHARED_WORDS = 5,
    MODE_SEQREAD_AT_END = 6,
    MODE_SEQREAD_SENTINEL = 7,
};

__host uint32_t mode;
__host uint32_t offset;
__host uint32_t length;
__host uint32_t wram_skew;
__host int32_t returned;
__host uint32_t seq_values[2];

__mram_noinit uint8_t source[MRAM_BYTES];
__mram_noinit uint8_t target[MRAM_BYTES];
__mram_noinit int32_t counters[NR_COUNTERS];
__mram_noinit uint8_t flags[NR_TASKLETS];

__dma_aligned uint8_t buffer[BUFFER_BYTES];
__dma_aligned uint8_t pattern[BUFFER_BYTES];

BARRIER_INIT(filled, NR_TASKLETS);

static void increment(int *value, void *unused)
{
    (void)unused;
    *value += 1;
}

static void share_words(uint32_t tasklet)
{
    for (uint32_t round = 0; round < ROUNDS; round++) {
        uint32_t at = round * NR_TASKLETS + tasklet;
        mram_write_unaligned(&pattern[at], &target[at], 1);
        mram_update_int_atomic(&counters[round % NR_COUNTERS], increment, NULL);
        mram_write_byte_atomic(&flags[tasklet], (uint8_t)(tasklet + 1));
    }
}

static void read_at_mram_end(void)
{
    seqreader_t reader;
    const uint8_t *element = seqread_init(seqread_alloc(), (__mram_ptr void *)(MRAM_END - 8), &reader);
    memcpy(&seq_values[0], element, sizeof(uint32_t));
    element = seqread_get((void *)element, sizeof(uint32_t), &reader);
    memcpy(&seq_values[1], element, sizeof(uint32_t));
}

static void read_at_the_sentinel(void)
{
    seqreader_t reader;
    uint8_t *cache = (uint8_t *)seqread_alloc();
    memset(cache, GUARD_BYTE, 2 * SEQREAD_CACHE_SIZE);
    const uint8_t *element = seqread_init((seqreader_buffer_t)cache, (__mram_ptr void *)((1u << 26) + 8), &reader);
    returned = (int32_t)(element - cache);
    memcpy(&seq_values[0], element, sizeof(uint32_t));
}

int main(void)
{
    uint32_t tasklet = me();
    if (tasklet == 0) {
        mem_reset();
        memset(buffer, GUARD_BYTE, sizeof(buffer));
        for (uint32_t i = 0; i < BUFFER_BYTES; i++) {
            pattern[i] = (uint8_t)(i * 13 + 5);
        }
    }
    barrier_wait(&filled);
    if (mode == MODE_SHARED_WORDS) {
        share_words(tasklet);
        return 0;
    }
    if (tasklet != 0) {
        return 0;
    }
    switch (mode) {
    case MODE_READ:
        mram_read(&source[offset], buffer + wram_skew, length);
        break;
    case MODE_WRITE:
        mram_write(pattern + wram_skew, &target[offset], length);
        break;
    case MODE_READ_UNALIGNED:
        returned = (int32_t)((uint8_t *)mram_read_unaligned(&source[offset], buffer + wram_skew, length) - buffer);
        break;
    case MODE_WRITE_UNALIGNED:
        mram_write_unaligned(pattern + wram_skew, &target[offset], length);
        break;
    case MODE_SEQREAD_AT_END:
        read_at_mram_end();
        break;
    case MODE_SEQREAD_SENTINEL:
        read_at_the_sentinel();
        break;
    default:
        break;
    }
    return 0;
}
