/*
 * barrier.h: re-arming barriers, as the SDK 2025.1's compiled runtime runs them (barrier.c.obj, disassembled).
 * barrier_wait with a count of 1 releases: it resumes every waiter in arrival order, sets wait_queue to 0xFF and
 * count to initial_count; with no waiter (wait_queue 0xFF) it changes nothing. Any other count (an unsigned
 * byte: 0 too) queues the caller (wait_queue becomes its id) and decrements count, 0 wrapping to 255. Programs
 * may fill a barrier_t's fields by hand (wait_queue 0xFF) and use it with a subset of the tasklets.
 */
#ifndef DPUSIM_BARRIER_H
#define DPUSIM_BARRIER_H

#include <stdint.h>

#include <dpusim/abi.h>

#include <atomic_bit.h>

/* The SDK's 4-byte layout. */
typedef struct barrier_t {
    uint8_t wait_queue;    /* the last tasklet to queue (0xFF: none) */
    uint8_t count;         /* arrivals still expected, the releasing one included */
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
