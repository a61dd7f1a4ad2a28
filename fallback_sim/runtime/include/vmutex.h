/*
 * vmutex.h: virtual mutexes, as syslib/vmutex.h of the SDK 2025.1. VMUTEX_INIT(name, NB_VMUTEXES, NB_MUTEXES)
 * defines `struct vmutex name`: NB_VMUTEXES (a multiple of 8) virtual mutexes, bits of a WRAM bitfield, guarded by
 * NB_MUTEXES (a power of two) atomic bits; virtual mutex id is bit id & 7 of byte id >> 3, guarded by atomic bit
 * (id >> 3) & (NB_MUTEXES - 1). vmutex_lock sets the bit, waiting while it is set; vmutex_unlock clears it,
 * whoever set it. The bitfield is WRAM, so a virtual mutex still locked when a launch ends stays locked in the
 * next. An id past NB_VMUTEXES uses a byte past the bitfield, as on a DPU (strict mode faults).
 */
#ifndef DPUSIM_VMUTEX_H
#define DPUSIM_VMUTEX_H

#include <stdint.h>

#include <dpusim/abi.h>

#include <assert.h>
#include <atomic_bit.h>
#include <macro_utils.h>
#include <mutex.h>

struct vmutex {
    uint8_t *vm;                  /* the virtual mutexes' bits */
    uint8_t *hw_mutexes;          /* the atomic bits guarding them */
    uint8_t hw_mutexes_mask;      /* NB_MUTEXES - 1 */
    uint32_t __dpusim_nb_vmutexes; /* the simulator's own, for strict mode's range check */
};

/* Defines `_name`: _nb_vmutexes virtual mutexes over _nb_mutexes. Ends with a semicolon, as in the SDK. */
#define VMUTEX_INIT(_name, _nb_vmutexes, _nb_mutexes)                                                                 \
    _Static_assert((_nb_mutexes) > 0, "Number of hw mutexes should be at least 1.");                                  \
    _Static_assert(__builtin_popcount(_nb_mutexes) == 1, "Number of hardware mutexes should be a power of 2");        \
    _Static_assert(((_nb_vmutexes) & 7) == 0, "Number of virtual mutexes should be a multiple of 8");                 \
    _Static_assert((_nb_mutexes) <= 64, "a DPU has at most 64 atomic bits for a program");                            \
    ATOMIC_BIT_INIT(__DPUSIM_CONCAT(__vmutex_hw_, _name))[_nb_mutexes];                                               \
    uint8_t __DPUSIM_CONCAT(__vmutex_bits_, _name)[(_nb_vmutexes) >> 3];                                              \
    struct vmutex _name = {.vm = __DPUSIM_CONCAT(__vmutex_bits_, _name),                                              \
                           .hw_mutexes = ATOMIC_BIT_GET(__DPUSIM_CONCAT(__vmutex_hw_, _name)),                        \
                           .hw_mutexes_mask = (_nb_mutexes) - 1,                                                      \
                           .__dpusim_nb_vmutexes = (_nb_vmutexes)};

static inline void __dpusim_vmutex_check(const struct vmutex *vmutex, uint16_t id)
{
    if (id >= vmutex->__dpusim_nb_vmutexes && __dpusim_strict()) {
        __dpusim_fault(DPUSIM_FAULT_SYNC_MISUSE, (uint64_t)(uintptr_t)vmutex, id,
                       "virtual mutex %u out of range (the vmutex has %u)", (unsigned)id,
                       vmutex->__dpusim_nb_vmutexes);
    }
}

static inline void vmutex_lock(struct vmutex *vmutex, uint16_t id)
{
    __dpusim_vmutex_check(vmutex, id);
    __dpusim_vmutex_lock(&vmutex->vm[id >> 3], id & 7u, &vmutex->hw_mutexes[(id >> 3) & vmutex->hw_mutexes_mask]);
}

static inline void vmutex_unlock(struct vmutex *vmutex, uint16_t id)
{
    __dpusim_vmutex_check(vmutex, id);
    __dpusim_vmutex_unlock(&vmutex->vm[id >> 3], id & 7u, &vmutex->hw_mutexes[(id >> 3) & vmutex->hw_mutexes_mask]);
}

#endif /* DPUSIM_VMUTEX_H */
