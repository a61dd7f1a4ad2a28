/*
 * fault_wram_overflow.c: static WRAM plus nominal stacks larger than the 64 KiB of WRAM.
 *
 * A WRAM_HOG_BYTES (48 KiB) global array plus NR_TASKLETS stacks of STACK_SIZE_DEFAULT:
 *   built with NR_TASKLETS=24 STACK_SIZE_DEFAULT=1024 (72 KiB) -> refused (the builder's WRAM check), or
 *                                                                 DPUSIM_FAULT_WRAM_OVERFLOW if it gets to run
 *   built with NR_TASKLETS=1 STACK_SIZE_DEFAULT=1024 (49 KiB)  -> fits: no fault, touched = 1
 */
#include <stdint.h>

#include <defs.h>

#define WRAM_HOG_BYTES (48u << 10)

__host uint32_t touched;

uint8_t wram_hog[WRAM_HOG_BYTES];

int main(void)
{
    wram_hog[me()] = 1;
    if (me() == 0) {
        touched = wram_hog[0];
    }
    return 0;
}
