/*
 * sem.h: counting semaphores, as the SDK 2025.1's compiled runtime runs them (sem.c.obj, disassembled). sem_take
 * decrements the count (a signed byte) and queues the caller when it goes below 0; sem_give increments it and
 * resumes the first waiter whenever one is queued (wait_queue not 0xFF), whatever the count.
 */
#ifndef DPUSIM_SEM_H
#define DPUSIM_SEM_H

#include <stdint.h>

#include <dpusim/abi.h>

#include <atomic_bit.h>
#include <attributes.h>

/* The SDK's 4-byte layout, the same as barrier_t's; count is read as a signed byte. */
typedef struct sem_t {
    uint8_t wait_queue;    /* the last tasklet to queue (0xFF: none) */
    uint8_t count;         /* current count */
    uint8_t initial_count; /* count at definition */
    uint8_t lock;          /* the atomic bit protecting the semaphore (unused by the simulator) */
} sem_t;

_Static_assert(sizeof(sem_t) == 4, "sem_t must keep the SDK's 4-byte layout");

/* Defines `sem_t _name` with an initial count of _counter. Ends with a semicolon, as in the SDK. */
#define SEMAPHORE_INIT(_name, _counter)                                                                               \
    _Static_assert((_counter) >= -127 && (_counter) <= 127, "semaphore counter must be encoded on a byte");        \
    sem_t _name = {.wait_queue = 0xFF, .count = (uint8_t)(_counter), .initial_count = (uint8_t)(_counter), .lock = 0};

static inline void sem_take(sem_t *sem)
{
    __dpusim_sem_take(sem);
}

static inline void sem_give(sem_t *sem)
{
    __dpusim_sem_give(sem);
}

#endif /* DPUSIM_SEM_H */
