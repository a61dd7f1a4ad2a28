/*
 * mutex_pool.h: a pool of nb_mutexes hardware mutexes shared by any number of ids. As on a DPU, id selects the
 * mutex id % nb_mutexes, so ids with equal residues are the same lock.
 */
#ifndef DPUSIM_MUTEX_POOL_H
#define DPUSIM_MUTEX_POOL_H

#include <stdint.h>

#include <dpusim/abi.h>

#include <atomic_bit.h>
#include <macro_utils.h>

struct mutex_pool {
    uint8_t *mutexes; /* nb_mutexes atomic bits */
    uint32_t nb_mutexes;
};

/* Defines the pool `_name` of _nb_mutexes mutexes. Ends with a semicolon, as in the SDK. */
#define MUTEX_POOL_INIT(_name, _nb_mutexes)                                                                           \
    _Static_assert((_nb_mutexes) > 0 && (_nb_mutexes) <= 64, "nb_mutexes must be in 1..64");                          \
    ATOMIC_BIT_INIT(__DPUSIM_CONCAT(__mutex_pool_, _name))[_nb_mutexes];                                              \
    struct mutex_pool _name = {.mutexes = ATOMIC_BIT_GET(__DPUSIM_CONCAT(__mutex_pool_, _name)),                      \
                               .nb_mutexes = (_nb_mutexes)};

static inline void mutex_pool_lock(struct mutex_pool *pool, uint16_t id)
{
    __dpusim_mutex_lock(&pool->mutexes[id % pool->nb_mutexes]);
}

static inline void mutex_pool_unlock(struct mutex_pool *pool, uint16_t id)
{
    __dpusim_mutex_unlock(&pool->mutexes[id % pool->nb_mutexes]);
}

#endif /* DPUSIM_MUTEX_POOL_H */
