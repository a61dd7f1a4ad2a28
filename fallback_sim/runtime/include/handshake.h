/*
 * handshake.h: pairwise rendezvous between tasklets, as the SDK 2025.1's compiled runtime does it (handshake.c.obj,
 * disassembled). handshake_notify blocks the caller until a tasklet waits for it; handshake_wait_for(notifier)
 * blocks until `notifier` notifies. Each notify pairs with exactly one wait. handshake_wait_for returns 0, or
 * EALREADY (and sets errno) when another tasklet already waits for that notifier. A tasklet waiting for itself
 * or for an id past NR_TASKLETS waits as on a DPU (for itself: until another tasklet waits for it, which resumes
 * it), with a warning; strict mode faults. An id whose low byte is past 23 faults.
 */
#ifndef DPUSIM_HANDSHAKE_H
#define DPUSIM_HANDSHAKE_H

#include <stdint.h>

#include <libc/errno.h>

#include <dpusim/abi.h>

#include <sysdef.h>

/* Entry n names the tasklet waiting for tasklet n, or n itself while it waits in handshake_notify; 0xFF: none.
 * It lives in WRAM, so it outlives a launch, as the SDK's. */
extern uint8_t __handshake_array[];

static inline void handshake_notify(void)
{
    __dpusim_handshake_notify(__handshake_array);
}

static inline int handshake_wait_for(sysname_t notifier)
{
    int result = __dpusim_handshake_wait_for(notifier, __handshake_array);
    if (result == EALREADY)
        errno = EALREADY;
    return result;
}

#endif /* DPUSIM_HANDSHAKE_H */
