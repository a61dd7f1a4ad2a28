/*
 * mutex_pool.h: a pool of NB_MUTEXES hardware mutexes shared by any number of ids, as syslib/mutex_pool.h of the
 * SDK 2025.1: NB_MUTEXES must be a power of two, and id selects the mutex id & (NB_MUTEXES - 1), so ids with
 * equal low bits are the same lock.
 */
#ifndef DPUSIM_MUTEX_POOL_H
#define DPUSIM_MUTEX_POOL_H

#include <stdint.h>

#include <dpusim/abi.h>

#include <assert.h>
#include <atomic_bit.h>
#include <macro_utils.h>
#include <mutex.h>

struct mutex_pool {
    uint8_t *hw_mutexes;     /* NB_MUTEXES atomic bits */
    uint8_t hw_mutexes_mask; /* NB_MUTEXES - 1 */
};

/* Defines the pool `_name` of _nb_mutexes mutexes. Ends with a semicolon, as in the SDK. */
#define MUTEX_POOL_INIT(_name, _nb_mutexes)                                                                           \
    _Static_assert((_nb_mutexes) > 0, "Number of hw mutexes should be at least 1.");                                  \
    _Static_assert(__builtin_popcount(_nb_mutexes) == 1, "Number of hardware mutexes should be a power of 2");        \
    _Static_assert((_nb_mutexes) <= 64, "a DPU has at most 64 atomic bits for a program");                            \
    ATOMIC_BIT_INIT(__DPUSIM_CONCAT(__mutex_pool_, _name))[_nb_mutexes];                                              \
    struct mutex_pool _name = {.hw_mutexes = ATOMIC_BIT_GET(__DPUSIM_CONCAT(__mutex_pool_, _name)),                   \
                               .hw_mutexes_mask = (_nb_mutexes) - 1};

static inline void mutex_pool_lock(struct mutex_pool *pool, uint16_t id)
{
    __dpusim_mutex_lock(&pool->hw_mutexes[id & pool->hw_mutexes_mask]);
}

static inline void mutex_pool_unlock(struct mutex_pool *pool, uint16_t id)
{
    __dpusim_mutex_unlock(&pool->hw_mutexes[id & pool->hw_mutexes_mask]);
}

#endif /* DPUSIM_MUTEX_POOL_H */
