/*
 * sdk_sync_handshake.c: handshake edge cases, as the SDK 2025.1's compiled runtime handles them, by `mode`.
 *
 *  mode 1: tasklet 1 waits for itself (its entry now names it, as a notifier's does); tasklet 0, later, waits for
 *          tasklet 1, which resumes it: both calls return 0
 *  mode 2: tasklet 0 waits for tasklet 5, past NR_TASKLETS: it waits for ever and the DPU ends (strict mode
 *          faults)
 *  mode 3: tasklet 0 waits for tasklet 24, past the SDK's 24 entries: a fault
 *  mode 4: tasklet 1 waits for tasklet 0; tasklet 0, later, waits for itself and finds tasklet 1 there: EALREADY,
 *          with errno set; it then notifies, which resumes tasklet 1 (0)
 *  mode 5: tasklet 1 notifies and nobody waits: it stops for ever, its entry left naming it in WRAM
 *  mode 6 (after mode 5): tasklet 0, later, waits for tasklet 1, which has finished: the stale entry resumes the
 *          finished tasklet (a no-op) and the wait returns 0 at once
 *
 * DPU outputs:  results[t] (what handshake_wait_for returned, or NOT_CALLED), returned[t] (1 once main's work
 *               returned), errno_seen (mode 4)
 * Host reads:   __handshake_array (24 bytes)
 * NR_TASKLETS = 2.
 */
#include <errno.h>
#include <stdint.h>

#include <defs.h>
#include <handshake.h>
#include <mram.h>

#if NR_TASKLETS != 2
#error "sdk_sync_handshake.c is built with NR_TASKLETS = 2"
#endif

#define DELAY_BLOCKS 16
#define DELAY_BYTES 2048
#define NOT_CALLED 0xFFFFu
#define PAST_NR_TASKLETS 5
#define PAST_THE_ENTRIES 24

__host uint32_t mode;
__host uint32_t results[NR_TASKLETS];
__host uint32_t returned[NR_TASKLETS];
__host int32_t errno_seen;

__dma_aligned uint8_t delay_buffer[DELAY_BYTES];

static void delay(void)
{
    for (uint32_t b = 0; b < DELAY_BLOCKS; b++) {
        mram_read(DPU_MRAM_HEAP_POINTER, delay_buffer, DELAY_BYTES);
    }
}

int main(void)
{
    uint32_t id = me();
    results[id] = NOT_CALLED;
    returned[id] = 0;
    switch (mode) {
    case 1:
        if (id == 0) {
            delay();
        }
        results[id] = (uint32_t)handshake_wait_for(1);
        break;
    case 2:
        if (id == 0) {
            results[id] = (uint32_t)handshake_wait_for(PAST_NR_TASKLETS);
        }
        break;
    case 3:
        if (id == 0) {
            results[id] = (uint32_t)handshake_wait_for(PAST_THE_ENTRIES);
        }
        break;
    case 4:
        if (id == 1) {
            results[id] = (uint32_t)handshake_wait_for(0);
        } else {
            delay();
            errno = 0;
            results[id] = (uint32_t)handshake_wait_for(0);
            errno_seen = errno;
            handshake_notify();
        }
        break;
    case 5:
        if (id == 1) {
            handshake_notify();
        }
        break;
    case 6:
        if (id == 0) {
            delay();
            results[id] = (uint32_t)handshake_wait_for(1);
        }
        break;
    default:
        break;
    }
    returned[id] = 1;
    return 0;
}
