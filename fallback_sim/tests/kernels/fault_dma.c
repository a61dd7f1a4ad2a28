/*
 * fault_dma.c: DMA misuse, one case per `mode` (a __host input); tasklet 0 performs it, other tasklets return.
 * Sizes outside the rules are passed as run-time values: as constants, the SDK's mram.h (and ours) rejects them at
 * compile time.
 *
 *  mode  operation                                           default mode                     strict mode
 *   0    mram_read 8 B at the heap (valid)                   no fault                         no fault
 *   1    mram_read 12 B (not a multiple of 8)                moves 8 B                        DMA fault
 *   2    mram_read 4096 B (more than 2048)                   moves 2048 B                     DMA fault
 *   3    mram_read 8 B just past the end of MRAM             reads MRAM offset 0              DMA fault
 *   4    mram_read 16 B straddling the end of MRAM           the last 8 B, then offset 0      DMA fault
 *   5    mram_write 12 B                                     moves 8 B                        DMA fault
 *   6    mram_write 4096 B                                   moves 2048 B                     DMA fault
 *   7    mram_write 8 B just past the end of MRAM            writes MRAM offset 0             DMA fault
 *   8    mram_read 8 B at heap + 4 (MRAM not 8-aligned)      no fault: aligned down           DMA fault
 *   9    mram_write 8 B at heap + 4                          no fault: aligned down           DMA fault
 *  10    mram_read into a WRAM buffer at +4 (not 8-aligned)  no fault: aligned down           DMA fault
 *  11    mram_read into WRAM 64 KiB past a WRAM global       DMA fault                        DMA fault
 *  12    mram_read of 0 bytes                                moves 2048 B                     DMA fault
 *
 * Outputs when there is no fault: done = 1; result = the word at the start of the buffer (modes 0, 1, 2, 8, 10,
 * 12: the host's word at heap + 0, as both addresses are aligned down; mode 4: the last word of MRAM), second =
 * the buffer's second word (mode 4: MRAM's first word); mode 9 writes WRITE_PATTERN at heap + 0 (aligned down).
 * The host writes a pattern at the start of the MRAM heap first. Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>
#include <mram.h>

#define MRAM_WINDOW_BASE 0x08000000u /* the MRAM addresses of the DPU's ELF, as in the SDK */
#define MRAM_BYTES (64u << 20)
#define WRAM_BYTES (64u << 10)
#define WORD 8
#define BAD_SIZE 12
#define TOO_BIG 4096
#define MISALIGNMENT 4
#define WRITE_PATTERN 0x1122334455667788ull

enum dma_mode {
    MODE_VALID = 0,
    MODE_READ_BAD_SIZE = 1,
    MODE_READ_TOO_BIG = 2,
    MODE_READ_PAST_END = 3,
    MODE_READ_STRADDLING_END = 4,
    MODE_WRITE_BAD_SIZE = 5,
    MODE_WRITE_TOO_BIG = 6,
    MODE_WRITE_PAST_END = 7,
    MODE_READ_UNALIGNED_MRAM = 8,
    MODE_WRITE_UNALIGNED_MRAM = 9,
    MODE_READ_UNALIGNED_WRAM = 10,
    MODE_READ_OUTSIDE_WRAM = 11,
    MODE_READ_ZERO_BYTES = 12,
};

__host uint32_t mode;
__host uint32_t done;
__host uint64_t result;
__host uint64_t second;

__dma_aligned uint8_t buffer[TOO_BIG];

/* `size` as a value the compiler cannot see. */
static uint32_t at_run_time(uint32_t size)
{
    volatile uint32_t hidden = size;
    return hidden;
}

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    done = 0;
    uint32_t heap = (uint32_t)DPU_MRAM_HEAP_POINTER;
    __mram_ptr uint8_t *heap_bytes = (__mram_ptr uint8_t *)heap;
    __mram_ptr uint8_t *mram_end = (__mram_ptr uint8_t *)(MRAM_WINDOW_BASE + MRAM_BYTES);
    uint64_t *word = (uint64_t *)buffer;

    switch (mode) {
    case MODE_VALID:
        mram_read(heap_bytes, buffer, WORD);
        break;
    case MODE_READ_BAD_SIZE:
        mram_read(heap_bytes, buffer, at_run_time(BAD_SIZE));
        break;
    case MODE_READ_TOO_BIG:
        mram_read(heap_bytes, buffer, at_run_time(TOO_BIG));
        break;
    case MODE_READ_PAST_END:
        mram_read(mram_end, buffer, WORD);
        break;
    case MODE_READ_STRADDLING_END:
        mram_read(mram_end - WORD, buffer, 2 * WORD);
        break;
    case MODE_WRITE_BAD_SIZE:
        mram_write(buffer, heap_bytes, at_run_time(BAD_SIZE));
        break;
    case MODE_WRITE_TOO_BIG:
        mram_write(buffer, heap_bytes, at_run_time(TOO_BIG));
        break;
    case MODE_WRITE_PAST_END:
        mram_write(buffer, mram_end, WORD);
        break;
    case MODE_READ_UNALIGNED_MRAM:
        mram_read(heap_bytes + MISALIGNMENT, buffer, WORD);
        break;
    case MODE_WRITE_UNALIGNED_MRAM:
        *word = WRITE_PATTERN;
        mram_write(buffer, heap_bytes + MISALIGNMENT, WORD);
        break;
    case MODE_READ_UNALIGNED_WRAM:
        mram_read(heap_bytes, buffer + MISALIGNMENT, WORD);
        break;
    case MODE_READ_OUTSIDE_WRAM:
        mram_read(heap_bytes, (void *)((uintptr_t)buffer + WRAM_BYTES), WORD);
        break;
    case MODE_READ_ZERO_BYTES:
        mram_read(heap_bytes, buffer, at_run_time(0));
        break;
    default:
        return 0;
    }
    result = word[0];
    second = word[1];
    done = 1;
    return 0;
}
