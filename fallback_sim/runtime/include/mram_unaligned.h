/*
 * mram_unaligned.h: DMA at MRAM addresses that are not 8-byte aligned, and updates of 4- and 1-byte values in
 * MRAM that other tasklets may update at the same time.
 *
 * mram_read_unaligned reads the 8-byte-aligned MRAM range covering [from, from + nb_of_bytes) into buffer (which
 * must be 8-byte aligned and hold at least nb_of_bytes + 16 bytes) and returns the pointer into buffer at the
 * byte `from` names.
 * mram_write_unaligned writes nb_of_bytes from WRAM to MRAM without touching the surrounding bytes; the WRAM and
 * MRAM addresses must be equal modulo 8, else runtime fault 8 (Wrong Alignment).
 * nb_of_bytes is at most 2048 for both. What the SDK's compiled routines do beyond that (and with 0 bytes) is
 * in mram_unaligned.c.
 *
 * The partial 8-byte words are read, patched and written back under a lock of their address, one of
 * 2^__MRAM_UNALIGNED_ACCESS_LOG_NB_VLOCK hashed from the address's bits 3 and up, as in the SDK (whose locks are
 * the virtual mutexes __mram_unaligned_access_virtual_locks); the mram_{update,write}_{int,byte}_atomic macros
 * take the same locks, so they are safe against each other and against mram_write_unaligned. The SDK patches the
 * word in its own WRAM buffer (__mram_unaligned_access_buffer, 8 bytes per tasklet), the simulator in a word on
 * the tasklet's stack.
 */
#ifndef DPUSIM_MRAM_UNALIGNED_H
#define DPUSIM_MRAM_UNALIGNED_H

#include <stdint.h>

#include <dpusim/abi.h>

#include <mram.h>
#include <vmutex.h>

#ifndef __MRAM_UNALIGNED_ACCESS_LOG_NB_VLOCK
/* log2 of the number of locks guarding partial MRAM words. */
#define __MRAM_UNALIGNED_ACCESS_LOG_NB_VLOCK 11
#endif

void *mram_read_unaligned(const __mram_ptr void *from, void *buffer, unsigned int nb_of_bytes);
void mram_write_unaligned(const void *from, __mram_ptr void *to, unsigned int nb_of_bytes);

/* The lock key of the MRAM word holding `address`: bit 61 set, so no real address (nor a virtual mutex's key,
 * vmutex.h) is one. */
static inline const void *__dpusim_mram_word_lock(uintptr_t address)
{
    return (const void *)(((uintptr_t)1 << 61) | ((address >> 3) & ((1u << __MRAM_UNALIGNED_ACCESS_LOG_NB_VLOCK) - 1)));
}

/* Runs `patch` on `word`, a copy of dest's MRAM word, under the word's lock, and writes the word back. */
#define __DPUSIM_MRAM_PATCH_WORD(dest, word, patch)                                                                  \
    do {                                                                                                              \
        __dma_aligned uint8_t word[8];                                                                                \
        __mram_ptr void *__dpusim_at = (__mram_ptr void *)((uintptr_t)(dest) & ~(uintptr_t)7);                        \
        __dpusim_mutex_lock(__dpusim_mram_word_lock((uintptr_t)__dpusim_at));                                         \
        mram_read(__dpusim_at, word, 8);                                                                              \
        patch;                                                                                                        \
        mram_write(word, __dpusim_at, 8);                                                                             \
        __dpusim_mutex_unlock(__dpusim_mram_word_lock((uintptr_t)__dpusim_at));                                       \
    } while (0)

/* The int of dest's word: its upper half when dest is not 8-aligned, as the SDK's macros pick it. */
#define __DPUSIM_WORD_INT(word, dest) ((int *)((word) + ((((uintptr_t)(dest) & 7) != 0) << 2)))
#define __DPUSIM_WORD_BYTE(word, dest) ((uint8_t *)((word) + ((uintptr_t)(dest) & 7)))

/* Calls update_func(int *value, args) on the int at dest in MRAM, atomically with respect to the other tasklets. */
#define mram_update_int_atomic(dest, update_func, args)                                                              \
    __DPUSIM_MRAM_PATCH_WORD(dest, __dpusim_word, (*(update_func))(__DPUSIM_WORD_INT(__dpusim_word, dest), (args)))
/* Writes val to the int at dest in MRAM, atomically with respect to the other tasklets. */
#define mram_write_int_atomic(dest, val)                                                                             \
    __DPUSIM_MRAM_PATCH_WORD(dest, __dpusim_word, *__DPUSIM_WORD_INT(__dpusim_word, dest) = (val))
/* Calls update_func(uint8_t *value, args) on the byte at dest in MRAM, atomically. */
#define mram_update_byte_atomic(dest, update_func, args)                                                             \
    __DPUSIM_MRAM_PATCH_WORD(dest, __dpusim_word, (*(update_func))(__DPUSIM_WORD_BYTE(__dpusim_word, dest), (args)))
/* Writes val to the byte at dest in MRAM, atomically. */
#define mram_write_byte_atomic(dest, val)                                                                            \
    __DPUSIM_MRAM_PATCH_WORD(dest, __dpusim_word, *__DPUSIM_WORD_BYTE(__dpusim_word, dest) = (val))

#endif /* DPUSIM_MRAM_UNALIGNED_H */
