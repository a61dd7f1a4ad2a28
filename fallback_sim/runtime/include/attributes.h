/*
 * attributes.h: the DPU runtime's variable and function attributes, for gcc.
 *
 * Where the variables go in a simulated DPU binary (the linker script maps these sections):
 *   __host               WRAM, section .dpu_host, 8-aligned (host-visible by name)
 *   __keep               WRAM, section .data.__sys_keep
 *   __mram               MRAM, section .mram (loaded by dpu_load)
 *   __mram_keep          MRAM, section .mram.keep
 *   __mram_noinit        MRAM, section .mram.noinit (not loaded)
 *   __mram_noinit_keep   MRAM, section .mram.noinit.keep
 * __mram_ptr is empty: gcc has no DPU address spaces, and MRAM addresses are plain 32-bit pointers here.
 * Atomic bits are ordinary WRAM bytes whose addresses serve as lock keys, so __atomic_bit adds nothing.
 */
#ifndef DPUSIM_ATTRIBUTES_H
#define DPUSIM_ATTRIBUTES_H

#define __weak __attribute__((weak))
#define __section(s) __attribute__((section(s)))
#define __aligned(a) __attribute__((aligned(a)))
#define __used __attribute__((used))
#define __noinline __attribute__((noinline))
#define __atomic_bit
#define __dma_aligned __aligned(8)
#define __keep __used __section(".data.__sys_keep")
#define __host __aligned(8) __used __section(".dpu_host")
/* On a DPU: keep the variable in the immediately addressable first 2 KiB of WRAM. No meaning here. */
#define __lower_data(name)

#define __mram_ptr
#define __mram __mram_ptr __section(".mram") __dma_aligned __used
#define __mram_noinit __mram_ptr __section(".mram.noinit") __dma_aligned __used
#define __mram_keep __mram_ptr __section(".mram.keep") __dma_aligned __used
#define __mram_noinit_keep __mram_ptr __section(".mram.noinit.keep") __dma_aligned __used

#define DEPRECATED __attribute__((deprecated))
#define __NO_RETURN __attribute__((noreturn))

#endif /* DPUSIM_ATTRIBUTES_H */
