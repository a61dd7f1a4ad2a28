/*
 * mutex.h: mutexes over atomic bits. A mutex_id_t is a pointer whose value names the lock: equal values are the
 * same lock, NULL included (so never-initialised mutex_id_t arrays behave as one lock, as on hardware).
 * Mutexes are not recursive: mutex_trylock by the holder fails, mutex_lock by the holder deadlocks.
 */
#ifndef DPUSIM_MUTEX_H
#define DPUSIM_MUTEX_H

#include <stdbool.h>
#include <stdint.h>

#include <dpusim/abi.h>

#include <atomic_bit.h>
#include <macro_utils.h>
#include <sysdef.h>

typedef uint8_t *mutex_id_t;

/* Defines `const mutex_id_t _name` on an atomic bit of its own. */
#define MUTEX_INIT(_name)                                                                                             \
    ATOMIC_BIT_INIT(__DPUSIM_CONCAT(__mutex_, _name));                                                                \
    const mutex_id_t _name = &ATOMIC_BIT_GET(__DPUSIM_CONCAT(__mutex_, _name))
#define MUTEX_GET(_name) _name

static inline void mutex_lock(mutex_id_t mutex)
{
    __dpusim_mutex_lock(mutex);
}

/* Takes the mutex if it is free; returns whether it did. */
static inline bool mutex_trylock(mutex_id_t mutex)
{
    return __dpusim_mutex_trylock(mutex);
}

static inline void mutex_unlock(mutex_id_t mutex)
{
    __dpusim_mutex_unlock(mutex);
}

#endif /* DPUSIM_MUTEX_H */
