/*
 * sdk_sync_vmutex.c: virtual mutexes are bits of a WRAM bitfield, as in syslib/vmutex.h of the SDK 2025.1, by
 * `mode`. Only tasklet 0 works.
 *
 *  mode 1: locks virtual mutex HELD and returns without unlocking it: bit HELD % 8 of byte HELD / 8 of the
 *          bitfield stays set in WRAM
 *  mode 2 (after mode 1): locks HELD again: it is still taken, so the tasklet spins for ever (a hang)
 *  mode 3: locks and unlocks every virtual mutex: the bitfield is all clear afterwards
 *
 * Host reads:   __vmutex_bits_vmutexes (NB_VMUTEXES / 8 bytes)
 * Any NR_TASKLETS (the others return at once).
 */
#include <stdint.h>

#include <defs.h>
#include <vmutex.h>

#define NB_VMUTEXES 32
#define NB_MUTEXES 4
#define HELD 11

__host uint32_t mode;

VMUTEX_INIT(vmutexes, NB_VMUTEXES, NB_MUTEXES);

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    switch (mode) {
    case 1:
    case 2:
        vmutex_lock(&vmutexes, HELD);
        break;
    case 3:
        for (uint16_t id = 0; id < NB_VMUTEXES; id++) {
            vmutex_lock(&vmutexes, id);
            vmutex_unlock(&vmutexes, id);
        }
        break;
    default:
        break;
    }
    return 0;
}
