/*
 * handshake.h: pairwise rendezvous between tasklets. handshake_notify blocks the caller until a tasklet waits for
 * it; handshake_wait_for(notifier) blocks until `notifier` notifies. Each notify pairs with exactly one wait.
 * handshake_wait_for returns 0, EALREADY when another tasklet already waits for that notifier, or EINVAL for a
 * notifier that is not a tasklet (values from <errno.h>).
 */
#ifndef DPUSIM_HANDSHAKE_H
#define DPUSIM_HANDSHAKE_H

#include <errno.h>

#include <dpusim/abi.h>

#include <sysdef.h>

static inline void handshake_notify(void)
{
    __dpusim_handshake_notify();
}

static inline int handshake_wait_for(sysname_t notifier)
{
    return __dpusim_handshake_wait_for(notifier);
}

#endif /* DPUSIM_HANDSHAKE_H */
