/*
 * vmutex.h: virtual mutexes. VMUTEX_INIT(name, nb_vmutexes, nb_mutexes) defines `struct vmutex name`, a set of
 * nb_vmutexes independent locks numbered 0..nb_vmutexes-1. On a DPU they are bits of a WRAM bitfield guarded by
 * nb_mutexes atomic bits; in the simulator each (vmutex, id) pair is a lock of its own, keyed by a value that
 * no real address can take.
 */
#ifndef DPUSIM_VMUTEX_H
#define DPUSIM_VMUTEX_H

#include <stdint.h>

#include <dpusim/abi.h>

struct vmutex {
    uint32_t nb_vmutexes;
    uint32_t nb_mutexes;
};

/* Defines `_name`: _nb_vmutexes virtual mutexes over _nb_mutexes. Ends with a semicolon, as in the SDK. */
#define VMUTEX_INIT(_name, _nb_vmutexes, _nb_mutexes)                                                                 \
    _Static_assert((_nb_vmutexes) > 0 && (_nb_vmutexes) <= 65536, "nb_vmutexes must be in 1..65536");                 \
    _Static_assert((_nb_mutexes) > 0 && (_nb_mutexes) <= 64, "nb_mutexes must be in 1..64");                          \
    struct vmutex _name = {.nb_vmutexes = (_nb_vmutexes), .nb_mutexes = (_nb_mutexes)};

_Static_assert(sizeof(uintptr_t) == 8, "vmutex keys need 64-bit pointers");

/* The lock key of virtual mutex `id`: bit 62 set, so it is not a canonical address. */
static inline const void *__dpusim_vmutex_key(const struct vmutex *vmutex, uint16_t id)
{
    if (id >= vmutex->nb_vmutexes && __dpusim_strict()) {
        __dpusim_fault(DPUSIM_FAULT_SYNC_MISUSE, (uint64_t)(uintptr_t)vmutex, id,
                       "virtual mutex %u out of range (the vmutex has %u)", (unsigned)id, vmutex->nb_vmutexes);
    }
    return (const void *)(((uintptr_t)1 << 62) | ((uintptr_t)vmutex << 16) | id);
}

static inline void vmutex_lock(struct vmutex *vmutex, uint16_t vmutex_id)
{
    __dpusim_mutex_lock(__dpusim_vmutex_key(vmutex, vmutex_id));
}

static inline void vmutex_unlock(struct vmutex *vmutex, uint16_t vmutex_id)
{
    __dpusim_mutex_unlock(__dpusim_vmutex_key(vmutex, vmutex_id));
}

#endif /* DPUSIM_VMUTEX_H */
