/*
 * mram.h: DMA between MRAM and WRAM (mram_read, mram_write) and the start of the MRAM heap.
 *
 * Sizes must be 8..2048 and multiples of 8, and both addresses 8-byte aligned and in range. As in the SDK 2025.1
 * (syslib/mram.h: clang's diagnose_if, with "error"), a size that is a constant outside these rules does not
 * compile. A size known only at run time goes to one ldma/sdma as the SDK's compiler issues it, with no check:
 * the engine moves __dpusim_dma_length(size) bytes (dpusim/abi.h), for example 2,048 bytes for a size of 0. The
 * simulator's __dpusim_mram_read/__dpusim_mram_write do the same, with a warning (a fault in strict mode), and
 * charge the DMA to the cost model.
 */
#ifndef DPUSIM_MRAM_H
#define DPUSIM_MRAM_H

#include <stdint.h>

#include <dpusim/abi.h>

#include <attributes.h>
#include <dpu_characteristics.h>

/* The first free byte of MRAM after the program's __mram/__mram_noinit variables (8-aligned). */
#define DPU_MRAM_HEAP_POINTER ((__mram_ptr void *)(&__sys_used_mram_end))

/* Copies nb_of_bytes from MRAM to WRAM. */
static inline void mram_read(const __mram_ptr void *from, void *to, unsigned int nb_of_bytes)
{
    __dpusim_mram_read(from, to, nb_of_bytes);
}

/* Copies nb_of_bytes from WRAM to MRAM. */
static inline void mram_write(const void *from, __mram_ptr void *to, unsigned int nb_of_bytes)
{
    __dpusim_mram_write(from, to, nb_of_bytes);
}

/* 1 when x is an integer constant expression, else 0; itself an integer constant expression, and x is not
 * evaluated: x * 0 is a null pointer constant only when x is one, and only then is the conditional an int *. */
#define __DPUSIM_IS_CONSTANT(x) _Generic((1 ? (void *)((long)(x) * 0l) : (int *)1), int *: 1, default: 0)
/* `condition` on a constant size; true for a size known only at run time. */
#define __DPUSIM_IF_CONSTANT(size, condition) __builtin_choose_expr(__DPUSIM_IS_CONSTANT(size), (condition), 1)
/* The SDK's three compile-time errors, with its messages, for a constant size; nothing at run time. */
#define __DPUSIM_CHECK_DMA_SIZE(function, size)                                                                       \
    ((void)sizeof(struct {                                                                                            \
        _Static_assert(__DPUSIM_IF_CONSTANT(size, (size) != 0), #function ": nb_of_bytes must not be null");          \
        _Static_assert(__DPUSIM_IF_CONSTANT(size, (size) <= 2048),                                                    \
                       #function ": nb_of_bytes must not be higher than 2048");                                       \
        _Static_assert(__DPUSIM_IF_CONSTANT(size, (size) % 8 == 0),                                                   \
                       #function ": nb_of_bytes must be a multiple of 8");                                            \
        int checked;                                                                                                  \
    }))

/* The functions above, behind the compile-time check (the macros do not expand again inside themselves). */
#define mram_read(from, to, nb_of_bytes)                                                                             \
    (__DPUSIM_CHECK_DMA_SIZE(mram_read, nb_of_bytes), mram_read(from, to, nb_of_bytes))
#define mram_write(from, to, nb_of_bytes)                                                                            \
    (__DPUSIM_CHECK_DMA_SIZE(mram_write, nb_of_bytes), mram_write(from, to, nb_of_bytes))

#endif /* DPUSIM_MRAM_H */
