/*
 * fault_memory.c: loads and stores outside WRAM (a memory fault), by `mode`; tasklet 0 only.
 *
 *  mode  access                                                               expected
 *   0    none                                                                 no fault, done = 1
 *   1    32-bit store FAR_OFFSET (512 KiB) past a WRAM global: beyond the     DPUSIM_FAULT_MEMORY
 *        64 KiB of WRAM, inside the 1 MiB window reserved around it
 *   2    32-bit load from the same address                                    DPUSIM_FAULT_MEMORY
 *   3    32-bit store at FAR_ADDRESS (0x04000000), far past the WRAM window,  DPUSIM_FAULT_MEMORY (assuming
 *        between it and the MRAM window                                       nothing is mapped there)
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>

#define FAR_OFFSET (512u << 10)
#define FAR_ADDRESS 0x04000000u
#define STORED_VALUE 0xDEADBEEFu

__host uint32_t mode;
__host uint32_t done;
__host uint32_t loaded;

uint32_t wram_anchor;

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    done = 0;
    volatile uint32_t *past_wram = (volatile uint32_t *)((uintptr_t)&wram_anchor + FAR_OFFSET);
    volatile uint32_t *far_away = (volatile uint32_t *)(uintptr_t)FAR_ADDRESS;
    switch (mode) {
    case 1:
        *past_wram = STORED_VALUE;
        break;
    case 2:
        loaded = *past_wram;
        break;
    case 3:
        *far_away = STORED_VALUE;
        break;
    default:
        break;
    }
    done = 1;
    return 0;
}
