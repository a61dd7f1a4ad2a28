/*
 * fault_unaligned_write.c: mram_write_unaligned with WRAM and MRAM addresses that differ modulo 8 (runtime
 * fault 8, Wrong Alignment); tasklet 0 only.
 *
 *  mode 0: WRAM buffer + 3 -> MRAM target + 11 (equal mod 8), LENGTH bytes  -> no fault, done = 1,
 *          target[11 + i] = PATTERN_BASE + i for i < LENGTH
 *  mode 1: WRAM buffer + 1 -> MRAM target + 2                               -> DPUSIM_FAULT_WRONG_ALIGNMENT
 * Any NR_TASKLETS, either strict setting.
 */
#include <stdint.h>

#include <defs.h>
#include <mram_unaligned.h>

#define LENGTH 10
#define TARGET_BYTES 64
#define BUFFER_BYTES 32
#define PATTERN_BASE 0x50
#define GOOD_WRAM_OFFSET 3
#define GOOD_MRAM_OFFSET 11
#define BAD_WRAM_OFFSET 1
#define BAD_MRAM_OFFSET 2

__host uint32_t mode;
__host uint32_t done;

__mram_noinit uint8_t target[TARGET_BYTES];
__dma_aligned uint8_t buffer[BUFFER_BYTES];

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    done = 0;
    for (uint32_t i = 0; i < BUFFER_BYTES; i++) {
        buffer[i] = (uint8_t)(PATTERN_BASE + i);
    }
    if (mode == 1) {
        mram_write_unaligned(&buffer[BAD_WRAM_OFFSET], &target[BAD_MRAM_OFFSET], LENGTH);
    } else {
        for (uint32_t i = 0; i < LENGTH; i++) {
            buffer[GOOD_WRAM_OFFSET + i] = (uint8_t)(PATTERN_BASE + i);
        }
        mram_write_unaligned(&buffer[GOOD_WRAM_OFFSET], &target[GOOD_MRAM_OFFSET], LENGTH);
    }
    done = 1;
    return 0;
}
