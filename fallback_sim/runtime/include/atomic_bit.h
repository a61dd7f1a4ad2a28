/*
 * atomic_bit.h: named atomic bits. On a DPU they are bits of a 256-bit hardware register; in the simulator each
 * is a WRAM byte whose address is the lock key, so ATOMIC_BIT_INIT(name)[N] arrays and mutex_id_t values made
 * from &ATOMIC_BIT_GET(name)[i] work as on hardware (distinct bits are distinct locks).
 */
#ifndef DPUSIM_ATOMIC_BIT_H
#define DPUSIM_ATOMIC_BIT_H

#include <stdint.h>

#include <dpusim/abi.h>

#include <attributes.h>
#include <macro_utils.h>

/* The atomic bit object (an lvalue of type uint8_t, or an array of them). */
#define ATOMIC_BIT_GET(_name) __DPUSIM_CONCAT(__atomic_bit_, _name)
/* Defines the atomic bit; append [N] for an array. */
#define ATOMIC_BIT_INIT(_name) uint8_t __atomic_bit ATOMIC_BIT_GET(_name)
/* Declares an atomic bit defined in another file. */
#define ATOMIC_BIT_EXTERN(_name) extern ATOMIC_BIT_INIT(_name)
/* A number identifying the bit (its address here). */
#define ATOMIC_BIT_INDEX(_name) ((uint32_t)(uintptr_t)&ATOMIC_BIT_GET(_name))
/* Takes the bit, waiting while another tasklet holds it; gives it back. */
#define ATOMIC_BIT_ACQUIRE(_name) __dpusim_mutex_lock(&ATOMIC_BIT_GET(_name))
#define ATOMIC_BIT_RELEASE(_name) __dpusim_mutex_unlock(&ATOMIC_BIT_GET(_name))

#endif /* DPUSIM_ATOMIC_BIT_H */
