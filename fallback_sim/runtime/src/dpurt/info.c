/*
 * info.c: what the kernel object tells the harness (struct dpusim_kernel_info), built from the kernel's
 * NR_TASKLETS, STACK_SIZE_DEFAULT and STACK_SIZE_TASKLET_<k> macros, plus the weak default log capacity and
 * CLOCKS_PER_SEC.
 *
 * stdout_capacity in the info struct is left 0: the capacity is the constant __dpusim_stdout_capacity, 1 MiB
 * here (weak) unless the kernel's STDOUT_BUFFER_INIT(size) defines it, and the harness reads that symbol.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <perfcounter.h>

#ifndef NR_TASKLETS
#define NR_TASKLETS 1
#endif
#ifndef STACK_SIZE_DEFAULT
#define STACK_SIZE_DEFAULT 1024
#endif

#if NR_TASKLETS < 1 || NR_TASKLETS > DPUSIM_MAX_TASKLETS
#error "NR_TASKLETS must be in 1..24"
#endif

/* __DPUSIM_STACK_<k>: tasklet k's nominal stack, 0 for the tasklets past NR_TASKLETS. */
#if NR_TASKLETS > 0
#ifdef STACK_SIZE_TASKLET_0
#define __DPUSIM_STACK_0 (STACK_SIZE_TASKLET_0)
#else
#define __DPUSIM_STACK_0 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_0 <= 0 || __DPUSIM_STACK_0 % 8 != 0
#error "the stack of tasklet 0 (STACK_SIZE_TASKLET_0 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_0 0
#endif
#if NR_TASKLETS > 1
#ifdef STACK_SIZE_TASKLET_1
#define __DPUSIM_STACK_1 (STACK_SIZE_TASKLET_1)
#else
#define __DPUSIM_STACK_1 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_1 <= 0 || __DPUSIM_STACK_1 % 8 != 0
#error "the stack of tasklet 1 (STACK_SIZE_TASKLET_1 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_1 0
#endif
#if NR_TASKLETS > 2
#ifdef STACK_SIZE_TASKLET_2
#define __DPUSIM_STACK_2 (STACK_SIZE_TASKLET_2)
#else
#define __DPUSIM_STACK_2 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_2 <= 0 || __DPUSIM_STACK_2 % 8 != 0
#error "the stack of tasklet 2 (STACK_SIZE_TASKLET_2 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_2 0
#endif
#if NR_TASKLETS > 3
#ifdef STACK_SIZE_TASKLET_3
#define __DPUSIM_STACK_3 (STACK_SIZE_TASKLET_3)
#else
#define __DPUSIM_STACK_3 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_3 <= 0 || __DPUSIM_STACK_3 % 8 != 0
#error "the stack of tasklet 3 (STACK_SIZE_TASKLET_3 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_3 0
#endif
#if NR_TASKLETS > 4
#ifdef STACK_SIZE_TASKLET_4
#define __DPUSIM_STACK_4 (STACK_SIZE_TASKLET_4)
#else
#define __DPUSIM_STACK_4 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_4 <= 0 || __DPUSIM_STACK_4 % 8 != 0
#error "the stack of tasklet 4 (STACK_SIZE_TASKLET_4 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_4 0
#endif
#if NR_TASKLETS > 5
#ifdef STACK_SIZE_TASKLET_5
#define __DPUSIM_STACK_5 (STACK_SIZE_TASKLET_5)
#else
#define __DPUSIM_STACK_5 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_5 <= 0 || __DPUSIM_STACK_5 % 8 != 0
#error "the stack of tasklet 5 (STACK_SIZE_TASKLET_5 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_5 0
#endif
#if NR_TASKLETS > 6
#ifdef STACK_SIZE_TASKLET_6
#define __DPUSIM_STACK_6 (STACK_SIZE_TASKLET_6)
#else
#define __DPUSIM_STACK_6 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_6 <= 0 || __DPUSIM_STACK_6 % 8 != 0
#error "the stack of tasklet 6 (STACK_SIZE_TASKLET_6 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_6 0
#endif
#if NR_TASKLETS > 7
#ifdef STACK_SIZE_TASKLET_7
#define __DPUSIM_STACK_7 (STACK_SIZE_TASKLET_7)
#else
#define __DPUSIM_STACK_7 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_7 <= 0 || __DPUSIM_STACK_7 % 8 != 0
#error "the stack of tasklet 7 (STACK_SIZE_TASKLET_7 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_7 0
#endif
#if NR_TASKLETS > 8
#ifdef STACK_SIZE_TASKLET_8
#define __DPUSIM_STACK_8 (STACK_SIZE_TASKLET_8)
#else
#define __DPUSIM_STACK_8 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_8 <= 0 || __DPUSIM_STACK_8 % 8 != 0
#error "the stack of tasklet 8 (STACK_SIZE_TASKLET_8 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_8 0
#endif
#if NR_TASKLETS > 9
#ifdef STACK_SIZE_TASKLET_9
#define __DPUSIM_STACK_9 (STACK_SIZE_TASKLET_9)
#else
#define __DPUSIM_STACK_9 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_9 <= 0 || __DPUSIM_STACK_9 % 8 != 0
#error "the stack of tasklet 9 (STACK_SIZE_TASKLET_9 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_9 0
#endif
#if NR_TASKLETS > 10
#ifdef STACK_SIZE_TASKLET_10
#define __DPUSIM_STACK_10 (STACK_SIZE_TASKLET_10)
#else
#define __DPUSIM_STACK_10 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_10 <= 0 || __DPUSIM_STACK_10 % 8 != 0
#error "the stack of tasklet 10 (STACK_SIZE_TASKLET_10 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_10 0
#endif
#if NR_TASKLETS > 11
#ifdef STACK_SIZE_TASKLET_11
#define __DPUSIM_STACK_11 (STACK_SIZE_TASKLET_11)
#else
#define __DPUSIM_STACK_11 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_11 <= 0 || __DPUSIM_STACK_11 % 8 != 0
#error "the stack of tasklet 11 (STACK_SIZE_TASKLET_11 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_11 0
#endif
#if NR_TASKLETS > 12
#ifdef STACK_SIZE_TASKLET_12
#define __DPUSIM_STACK_12 (STACK_SIZE_TASKLET_12)
#else
#define __DPUSIM_STACK_12 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_12 <= 0 || __DPUSIM_STACK_12 % 8 != 0
#error "the stack of tasklet 12 (STACK_SIZE_TASKLET_12 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_12 0
#endif
#if NR_TASKLETS > 13
#ifdef STACK_SIZE_TASKLET_13
#define __DPUSIM_STACK_13 (STACK_SIZE_TASKLET_13)
#else
#define __DPUSIM_STACK_13 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_13 <= 0 || __DPUSIM_STACK_13 % 8 != 0
#error "the stack of tasklet 13 (STACK_SIZE_TASKLET_13 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_13 0
#endif
#if NR_TASKLETS > 14
#ifdef STACK_SIZE_TASKLET_14
#define __DPUSIM_STACK_14 (STACK_SIZE_TASKLET_14)
#else
#define __DPUSIM_STACK_14 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_14 <= 0 || __DPUSIM_STACK_14 % 8 != 0
#error "the stack of tasklet 14 (STACK_SIZE_TASKLET_14 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_14 0
#endif
#if NR_TASKLETS > 15
#ifdef STACK_SIZE_TASKLET_15
#define __DPUSIM_STACK_15 (STACK_SIZE_TASKLET_15)
#else
#define __DPUSIM_STACK_15 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_15 <= 0 || __DPUSIM_STACK_15 % 8 != 0
#error "the stack of tasklet 15 (STACK_SIZE_TASKLET_15 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_15 0
#endif
#if NR_TASKLETS > 16
#ifdef STACK_SIZE_TASKLET_16
#define __DPUSIM_STACK_16 (STACK_SIZE_TASKLET_16)
#else
#define __DPUSIM_STACK_16 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_16 <= 0 || __DPUSIM_STACK_16 % 8 != 0
#error "the stack of tasklet 16 (STACK_SIZE_TASKLET_16 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_16 0
#endif
#if NR_TASKLETS > 17
#ifdef STACK_SIZE_TASKLET_17
#define __DPUSIM_STACK_17 (STACK_SIZE_TASKLET_17)
#else
#define __DPUSIM_STACK_17 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_17 <= 0 || __DPUSIM_STACK_17 % 8 != 0
#error "the stack of tasklet 17 (STACK_SIZE_TASKLET_17 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_17 0
#endif
#if NR_TASKLETS > 18
#ifdef STACK_SIZE_TASKLET_18
#define __DPUSIM_STACK_18 (STACK_SIZE_TASKLET_18)
#else
#define __DPUSIM_STACK_18 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_18 <= 0 || __DPUSIM_STACK_18 % 8 != 0
#error "the stack of tasklet 18 (STACK_SIZE_TASKLET_18 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_18 0
#endif
#if NR_TASKLETS > 19
#ifdef STACK_SIZE_TASKLET_19
#define __DPUSIM_STACK_19 (STACK_SIZE_TASKLET_19)
#else
#define __DPUSIM_STACK_19 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_19 <= 0 || __DPUSIM_STACK_19 % 8 != 0
#error "the stack of tasklet 19 (STACK_SIZE_TASKLET_19 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_19 0
#endif
#if NR_TASKLETS > 20
#ifdef STACK_SIZE_TASKLET_20
#define __DPUSIM_STACK_20 (STACK_SIZE_TASKLET_20)
#else
#define __DPUSIM_STACK_20 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_20 <= 0 || __DPUSIM_STACK_20 % 8 != 0
#error "the stack of tasklet 20 (STACK_SIZE_TASKLET_20 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_20 0
#endif
#if NR_TASKLETS > 21
#ifdef STACK_SIZE_TASKLET_21
#define __DPUSIM_STACK_21 (STACK_SIZE_TASKLET_21)
#else
#define __DPUSIM_STACK_21 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_21 <= 0 || __DPUSIM_STACK_21 % 8 != 0
#error "the stack of tasklet 21 (STACK_SIZE_TASKLET_21 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_21 0
#endif
#if NR_TASKLETS > 22
#ifdef STACK_SIZE_TASKLET_22
#define __DPUSIM_STACK_22 (STACK_SIZE_TASKLET_22)
#else
#define __DPUSIM_STACK_22 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_22 <= 0 || __DPUSIM_STACK_22 % 8 != 0
#error "the stack of tasklet 22 (STACK_SIZE_TASKLET_22 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_22 0
#endif
#if NR_TASKLETS > 23
#ifdef STACK_SIZE_TASKLET_23
#define __DPUSIM_STACK_23 (STACK_SIZE_TASKLET_23)
#else
#define __DPUSIM_STACK_23 (STACK_SIZE_DEFAULT)
#endif
#if __DPUSIM_STACK_23 <= 0 || __DPUSIM_STACK_23 % 8 != 0
#error "the stack of tasklet 23 (STACK_SIZE_TASKLET_23 or STACK_SIZE_DEFAULT) must be a positive multiple of 8"
#endif
#else
#define __DPUSIM_STACK_23 0
#endif

const struct dpusim_kernel_info __dpusim_kernel_info __attribute__((section(".dpusim.info"), used)) = {
    .magic = DPUSIM_KERNEL_MAGIC,
    .abi_version = DPUSIM_ABI_VERSION,
    .nr_tasklets = NR_TASKLETS,
    .stdout_capacity = 0,
    .stack_sizes = {
        __DPUSIM_STACK_0,
        __DPUSIM_STACK_1,
        __DPUSIM_STACK_2,
        __DPUSIM_STACK_3,
        __DPUSIM_STACK_4,
        __DPUSIM_STACK_5,
        __DPUSIM_STACK_6,
        __DPUSIM_STACK_7,
        __DPUSIM_STACK_8,
        __DPUSIM_STACK_9,
        __DPUSIM_STACK_10,
        __DPUSIM_STACK_11,
        __DPUSIM_STACK_12,
        __DPUSIM_STACK_13,
        __DPUSIM_STACK_14,
        __DPUSIM_STACK_15,
        __DPUSIM_STACK_16,
        __DPUSIM_STACK_17,
        __DPUSIM_STACK_18,
        __DPUSIM_STACK_19,
        __DPUSIM_STACK_20,
        __DPUSIM_STACK_21,
        __DPUSIM_STACK_22,
        __DPUSIM_STACK_23,
    },
};

/* The log capacity when the kernel has no STDOUT_BUFFER_INIT: the SDK's 1 MiB. */
__attribute__((weak, used)) const uint32_t __dpusim_stdout_capacity = 1u << 20;

const volatile uint32_t CLOCKS_PER_SEC = DPUSIM_CLOCK_HZ;
