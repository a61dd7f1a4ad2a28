/*
 * alloc.c: mem_alloc/mem_reset, the WRAM bump allocator.
 *
 * __sys_heap_pointer is an ordinary WRAM global: zero after dpu_load, set to the heap start by the first
 * mem_alloc or mem_reset, and kept across launches. The runtime is not instrumented, so no tasklet switch
 * happens inside these functions and the read-modify-write below needs no lock.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <alloc.h>
#include <dpuruntime.h>

#define HEAP_ALIGNMENT 8u
/* The SDK's mem_alloc (dpu-rt/src/syslib/alloc.c): call, acquire, load the heap pointer, align (2), bound check
 * (2), store, release, return. */
#define MEM_ALLOC_INSTRUCTIONS 10u

uint32_t __sys_heap_pointer;

static uint32_t heap_start(void)
{
    return (uint32_t)(uintptr_t)__dpusim_heap_start();
}

void *mem_alloc(size_t size)
{
    __dpusim_charge(MEM_ALLOC_INSTRUCTIONS);
    if (__sys_heap_pointer == 0) {
        __sys_heap_pointer = heap_start();
    }
    uint64_t block = ((uint64_t)__sys_heap_pointer + HEAP_ALIGNMENT - 1) & ~(uint64_t)(HEAP_ALIGNMENT - 1);
    uint64_t wram_end = (uint64_t)(uintptr_t)__dpusim_wram_begin + __dpusim_wram_size();
    if (block > wram_end || size > wram_end - block) {
        __dpusim_fault(DPUSIM_FAULT_HEAP_FULL, block, size,
                       "heap full: mem_alloc(%zu) at 0x%08llx passes the end of WRAM (0x%08llx)", size,
                       (unsigned long long)block, (unsigned long long)wram_end);
    }
    __sys_heap_pointer = (uint32_t)(block + size);
    return (void *)(uintptr_t)block;
}

void *mem_reset(void)
{
    __sys_heap_pointer = heap_start();
    return (void *)(uintptr_t)__sys_heap_pointer;
}
