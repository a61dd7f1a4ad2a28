/*
 * barrier.h: re-arming barriers. barrier_wait blocks the caller until `count` tasklets have arrived, then lets
 * them all go and re-arms with initial_count. Programs may fill a barrier_t's fields by hand and use it with a
 * subset of the tasklets: the simulator works from count and initial_count alone.
 */
#ifndef DPUSIM_BARRIER_H
#define DPUSIM_BARRIER_H

#include <stdint.h>

#include <dpusim/abi.h>

#include <atomic_bit.h>

/* The SDK's 4-byte layout. */
typedef struct barrier_t {
    uint8_t wait_queue;    /* tasklets waiting (0xFF: none) */
    uint8_t count;         /* tasklets still expected */
    uint8_t initial_count; /* value count is re-armed with */
    uint8_t lock;          /* the atomic bit protecting the barrier (unused by the simulator) */
} barrier_t;

_Static_assert(sizeof(barrier_t) == 4, "barrier_t must keep the SDK's 4-byte layout");

/* Defines `barrier_t _name` for _counter tasklets. Ends with a semicolon, as in the SDK. */
#define BARRIER_INIT(_name, _counter)                                                                                 \
    _Static_assert((_counter) >= -127 && (_counter) <= 127, "barrier counter must be encoded on a byte");          \
    barrier_t _name = {                                                                                               \
        .wait_queue = 0xFF, .count = (uint8_t)(_counter), .initial_count = (uint8_t)(_counter), .lock = 0};

static inline void barrier_wait(barrier_t *barrier)
{
    __dpusim_barrier_wait(barrier);
}

#endif /* DPUSIM_BARRIER_H */
