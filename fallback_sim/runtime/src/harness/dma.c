/*
 * The DPU's DMA engine (mram_read/mram_write) and its log (printf).
 *
 * DMA follows the hardware: a transfer moves 8 to 2,048 bytes, both ranges lie in the DPU's memories, and the
 * engine ignores the low three bits of both addresses. A 0-byte transfer does nothing; a size above 2,048 faults.
 * What the documentation forbids but the hardware does something definite with is done as the hardware does it,
 * with a warning for sizes that are not a multiple of 8; strict mode faults on all of it: unaligned addresses,
 * 0-byte transfers, sizes that are not a multiple of 8, and MRAM addresses outside the MRAM window.
 * Native tasklet stacks count as WRAM, since on a DPU the stacks are in WRAM.
 */
#include <string.h>

#include "internal.h"

uint32_t __dpusim_wram_size(void) { return (uint32_t)control->wram_size; }

static bool in_wram(uintptr_t address, uint32_t size) {
    uintptr_t wram_end = DPUSIM_WRAM_BASE + control->wram_size;
    if (address >= DPUSIM_WRAM_BASE && address + size <= wram_end)
        return true;
    uintptr_t stacks_end = DPUSIM_STACK_BASE + (uintptr_t)DPUSIM_MAX_TASKLETS *
                                                   (DPUSIM_STACK_GUARD + DPUSIM_NATIVE_STACK_SIZE);
    return address >= DPUSIM_STACK_BASE && address + size <= stacks_end;
}

static bool in_mram(uintptr_t address, uint32_t size) {
    return address >= DPUSIM_MRAM_BASE && address + size <= DPUSIM_MRAM_BASE + control->mram_size;
}

/*
 * MRAM addresses as the DMA engine reads them: DPU pointers are 32 bits and the engine uses only the address
 * bits inside the MRAM, so an MRAM address is truncated to 32 bits and taken modulo the MRAM size. Kernels rely
 * on it: one with no __mram variable passes plain heap offsets (no MRAM base), another forms `64 MiB - k`, and
 * `ptr + (uint32_t)(a - b)` with a < b wraps to just below ptr. The SDK itself does this: the bootstrap that the
 * host patches to reach MRAM through a DPU (dpu-rt/src/misc/accessMramFromDpu.c in UBC-ECE-Sasha/upmem-sdk)
 * loads a plain MRAM offset, with no MRAM base, into the ldma/sdma address register. The MRAM window's base is a
 * multiple of 64 MiB, so addresses inside the window keep their offset.
 */
static uintptr_t mram_as_engine_reads(const char *operation, uintptr_t address, uint32_t size) {
    uintptr_t engine = DPUSIM_MRAM_BASE + (uint32_t)address % control->mram_size;
    if (engine != address && __dpusim_strict())
        __dpusim_fault(DPUSIM_FAULT_DMA, address, size,
                       "%s of %u bytes at MRAM address %#lx, outside the MRAM window [%#x, %#lx): a DPU reads it "
                       "as MRAM offset %#lx (strict mode)",
                       operation, size, (unsigned long)address, DPUSIM_MRAM_BASE,
                       (unsigned long)(DPUSIM_MRAM_BASE + control->mram_size),
                       (unsigned long)(engine - DPUSIM_MRAM_BASE));
    return engine;
}

/*
 * The number of bytes the DMA engine moves for a size that is not a multiple of 8. The SDK's mram_read and
 * mram_write are __builtin_dpu_ldma/__builtin_dpu_sdma, lowered to one ldma/sdma instruction whose 8-bit length
 * field counts 8-byte blocks minus one: the size goes through `lsr 3` and `add -1` into bits 24..31 of the
 * WRAM address register, and the instruction's immediate is added to it (dpu-rt/src/misc/accessMramFromDpu.c:
 * `lsr r3, r1, 3; add r3, r3, -1; lsl_add r2, r2, r3, 24; ldma r2, r0, 0`, and `ldma r2, r0, 255` for 2,048
 * bytes; the LDMArri encoding in backends/commons/src/dpu_instruction_encoder.h has the 8-bit immDma field).
 * So the engine moves ((((size >> 3) - 1) mod 256) + 1) * 8 bytes: the size rounded down to a multiple of 8,
 * and 2,048 bytes for sizes 1 to 7, whose block count wraps from -1 to 255.
 */
static uint32_t engine_length(uint32_t size) { return ((((size >> 3) - 1) & 0xFFu) + 1) * 8; }

static uint32_t length_as_engine_reads(const char *operation, uintptr_t mram, uint32_t size) {
    uint32_t length = engine_length(size);
    if (__dpusim_strict())
        __dpusim_fault(DPUSIM_FAULT_DMA, mram, size,
                       "%s of %u bytes: not a multiple of 8 (a DPU moves %u bytes; strict mode)", operation, size,
                       length);
    warning_once(operation, size, __dpusim_tasklet_id,
                 "%s of %u bytes, not a multiple of 8: a DPU moves %u bytes, and so does the simulator", operation,
                 size, length);
    return length;
}

/*
 * Checks one transfer, reads its MRAM address and size as the engine does (see above) and aligns both addresses
 * down as the hardware does. Returns the number of bytes to move, 0 for a no-op.
 */
static uint32_t check_dma(const char *operation, uintptr_t *mram, uintptr_t *wram, uint32_t size) {
    if (size == 0) {
        if (__dpusim_strict())
            __dpusim_fault(DPUSIM_FAULT_DMA, *mram, 0, "%s of 0 bytes (strict mode)", operation);
        return 0;
    }
    if (size > DPUSIM_DMA_MAX)
        __dpusim_fault(DPUSIM_FAULT_DMA, *mram, size, "%s of %u bytes: the size must be between 8 and %u",
                       operation, size, DPUSIM_DMA_MAX);
    *mram = mram_as_engine_reads(operation, *mram, size);
    if (size % 8 != 0)
        size = length_as_engine_reads(operation, *mram, size);
    if ((*mram | *wram) % 8 != 0) {
        if (__dpusim_strict())
            __dpusim_fault(DPUSIM_FAULT_DMA, (*mram % 8 != 0) ? *mram : *wram, size,
                           "%s with unaligned address (MRAM %#lx, WRAM %#lx; strict mode)", operation,
                           (unsigned long)*mram, (unsigned long)*wram);
        *mram &= ~(uintptr_t)7;
        *wram &= ~(uintptr_t)7;
    }
    if (!in_mram(*mram, size))
        __dpusim_fault(DPUSIM_FAULT_DMA, *mram, size,
                       "%s of %u bytes at MRAM address %#lx: outside MRAM [%#x, %#lx)", operation, size,
                       (unsigned long)*mram, DPUSIM_MRAM_BASE,
                       (unsigned long)(DPUSIM_MRAM_BASE + control->mram_size));
    if (!in_wram(*wram, size))
        __dpusim_fault(DPUSIM_FAULT_DMA, *wram, size,
                       "%s of %u bytes at WRAM address %#lx: outside WRAM [%#x, %#lx)", operation, size,
                       (unsigned long)*wram, DPUSIM_WRAM_BASE,
                       (unsigned long)(DPUSIM_WRAM_BASE + control->wram_size));
    return size;
}

/*
 * Asks the host CPU to start loading the MRAM lines of a transfer. The issuer usually gives way before its
 * transfer moves (clock_dma_issue) and other tasklets run meanwhile, so the copy then finds the lines in cache:
 * kernels that gather small pieces of a large MRAM range otherwise stall on a host cache miss per transfer
 * (a quarter of the simulator's time in `pimgnn infer` before this). A hint only, which changes nothing the
 * kernel or the model sees.
 */
/* The bytes prefetched at most: past the first lines of a long transfer, the host's own stream prefetcher
 * follows the copy, and hinting every line of a 2,048-byte transfer measured slower on a streaming kernel. */
#define PREFETCH_MAX_BYTES 256u

static void prefetch_mram(uintptr_t address, uint32_t size, bool for_write) {
    uintptr_t end = address + (size < PREFETCH_MAX_BYTES ? size : PREFETCH_MAX_BYTES);
    for (uintptr_t line = address & ~(uintptr_t)63; line < end; line += 64) {
        if (for_write)
            __builtin_prefetch((const void *)line, 1);
        else
            __builtin_prefetch((const void *)line, 0);
    }
}

/*
 * Reads MRAM through the worker's shared mapping, so MRAM nothing wrote is committed as zeroed pages when a
 * kernel reads it (host reads skip such pages, Machine::read). Asking the file which pages it holds would cost a
 * system call per transfer.
 */
void __dpusim_mram_read(const void *mram, void *wram, uint32_t requested) {
    uintptr_t from = (uintptr_t)mram, to = (uintptr_t)wram;
    uint32_t size = check_dma("mram_read", &from, &to, requested);
    if (size == 0)
        return;
    prefetch_mram(from, size, false);
    clock_dma_issue(DPUSIM_DMA_READ_ALPHA, size);
    memcpy((void *)to, (const void *)from, size);
    struct dpusim_tasklet_stats *stats = &run.record->tasklets[__dpusim_tasklet_id];
    stats->dma_read_ops++;
    stats->dma_read_bytes += size;
    clock_wait_turn();
}

void __dpusim_mram_write(const void *wram, void *mram, uint32_t requested) {
    uintptr_t to = (uintptr_t)mram, from = (uintptr_t)wram;
    uint32_t size = check_dma("mram_write", &to, &from, requested);
    if (size == 0)
        return;
    prefetch_mram(to, size, true);
    clock_dma_issue(DPUSIM_DMA_WRITE_ALPHA, size);
    memcpy((void *)to, (const void *)from, size);
    struct dpusim_tasklet_stats *stats = &run.record->tasklets[__dpusim_tasklet_id];
    stats->dma_write_ops++;
    stats->dma_write_bytes += size;
    clock_wait_turn();
}

/* The log is a ring of log_capacity bytes: the host reads the last log_capacity bytes written. */
void __dpusim_log_write(const char *text, size_t length) {
    if (length > run.log_capacity)
        __dpusim_fault(DPUSIM_FAULT_PRINTF_OVERFLOW, 0, length,
                       "printf of %zu bytes does not fit the %lu-byte stdout buffer", length,
                       (unsigned long)run.log_capacity);
    uint64_t position = run.record->log_length % run.log_capacity;
    size_t first = length;
    if (position + first > run.log_capacity)
        first = (size_t)(run.log_capacity - position);
    memcpy(run.log + position, text, first);
    memcpy(run.log, text + first, length - first);
    run.record->log_length += length;
}
