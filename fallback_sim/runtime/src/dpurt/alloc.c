/*
 * alloc.c: mem_alloc/mem_reset, the WRAM bump allocator, as the SDK 2025.1's compiled runtime has them
 * (librt_v1A.a, alloc.c.obj, disassembled):
 *
 *   - the heap starts at __sys_heap_pointer_reset, which the SDK's linker script (link/dpu.lds) places after the
 *     static WRAM, the tasklets' stacks and an 8-byte-per-tasklet software-cache buffer (.data.sw_cache);
 *   - mem_alloc(size) rounds the heap pointer up to 8 bytes and faults (runtime fault 1) unless the block ends
 *     strictly below the end of WRAM (a carry, or `jltu end`), so the last byte of WRAM is never handed out;
 *   - mem_alloc(0) returns the heap pointer as it is, possibly unaligned, and does not move it;
 *   - both take the heap's atomic bit, so they are thread-safe; mem_reset returns the heap's start.
 *
 * __sys_heap_pointer is an ordinary WRAM global kept across launches. The SDK initialises it to the heap's
 * start in the program image; here it is 0 after dpu_load and set by the first mem_alloc or mem_reset.
 * The runtime is not instrumented, so no tasklet switch happens inside these functions and the
 * read-modify-write below needs no lock.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <alloc.h>
#include <dpuruntime.h>

#define HEAP_ALIGNMENT 8u
/* link/dpu.lds: `.data.sw_cache (NOLOAD) : { . += 8 * NR_TASKLETS; }` before __sys_heap_pointer_reset. */
#define SOFTWARE_CACHE_PER_TASKLET 8u
/* mem_alloc: save the return address, acquire, call mem_alloc_nolock, release, restore, return; the nolock
 * part: load the pointer, test the size, round (2), load the end, add with carry check, compare, store,
 * move the result, return. */
#define MEM_ALLOC_INSTRUCTIONS 17u
/* mem_alloc(0): the nolock part is the load, the test, the move of the result and the return. */
#define MEM_ALLOC_ZERO_INSTRUCTIONS 11u
/* mem_reset: acquire, move the start, store, release, return. */
#define MEM_RESET_INSTRUCTIONS 5u

uint32_t __sys_heap_pointer;

static uint32_t heap_reset_address(void)
{
    uintptr_t after_stacks = (uintptr_t)__dpusim_heap_start();
    return (uint32_t)(after_stacks + SOFTWARE_CACHE_PER_TASKLET * __dpusim_kernel_info.nr_tasklets);
}

void *mem_alloc(size_t size)
{
    if (__sys_heap_pointer == 0) {
        __sys_heap_pointer = heap_reset_address();
    }
    if (size == 0) {
        __dpusim_charge(MEM_ALLOC_ZERO_INSTRUCTIONS);
        return (void *)(uintptr_t)__sys_heap_pointer;
    }
    __dpusim_charge(MEM_ALLOC_INSTRUCTIONS);
    uint32_t block = (__sys_heap_pointer + HEAP_ALIGNMENT - 1) & ~(HEAP_ALIGNMENT - 1);
    uint64_t wram_end = (uint64_t)(uintptr_t)__dpusim_wram_begin + __dpusim_wram_size();
    uint64_t block_end = (uint64_t)block + (uint32_t)size;
    if ((uint64_t)size > UINT32_MAX || block_end > UINT32_MAX || block_end >= wram_end) {
        __dpusim_fault(DPUSIM_FAULT_HEAP_FULL, block, size,
                       "heap full: mem_alloc(%zu) at 0x%08x passes the end of WRAM (0x%08llx; runtime fault 1: the "
                       "block must end below it)",
                       size, block, (unsigned long long)wram_end);
    }
    __sys_heap_pointer = (uint32_t)block_end;
    return (void *)(uintptr_t)block;
}

void *mem_reset(void)
{
    __dpusim_charge(MEM_RESET_INSTRUCTIONS);
    __sys_heap_pointer = heap_reset_address();
    return (void *)(uintptr_t)__sys_heap_pointer;
}
