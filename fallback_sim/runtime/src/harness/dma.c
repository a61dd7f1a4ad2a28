/*
 * The DPU's DMA engine (mram_read/mram_write) and its log (printf).
 *
 * DMA follows the hardware: a transfer moves 8 to 2,048 bytes, whatever size it was given, the engine ignores the
 * low three bits of both addresses and the MRAM address bits above the MRAM's, and the WRAM range must lie in
 * WRAM. What the documentation forbids but the hardware does something definite with is done as the hardware
 * does it, with a warning for sizes outside the rules and for transfers crossing the end of MRAM; strict mode
 * faults on all of it: unaligned addresses, sizes that are 0, above 2,048 or not a multiple of 8, MRAM addresses
 * outside the MRAM window and transfers crossing its end.
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
    uint64_t size_mask = control->mram_size - 1;
    if ((control->mram_size & size_mask) == 0 && address - DPUSIM_MRAM_BASE <= size_mask)
        return address; /* inside the window of a power-of-two MRAM (a DPU's): its own offset, with no division */
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
 * The number of bytes the DMA engine moves for a size that mram_read or mram_write gets at run time. The SDK's
 * mram_read and mram_write are __builtin_dpu_ldma/__builtin_dpu_sdma (syslib/mram.h of the SDK 2025.1), lowered
 * to one ldma/sdma instruction whose 8-bit length field counts 8-byte blocks minus one: the engine moves
 * (1 + ((immediate + (ra >> 24)) & 0xff)) * 8 bytes (the ISA's ldma/sdma), and for a run-time size the compiler
 * puts (size >> 3) - 1 into bits 24..31 of the WRAM address register with an immediate of 0 (the SDK 2025.1's
 * compiled runtime, librt_v1A.a, mram_unaligned.c.obj, disassembled: mram_write_unaligned's aligned path is
 * `move r3, -1; lsr_add r2, r3, r2, 3; lsl_add r0, r0, r2, 24; sdma r0, r1, 0`). No instruction checks the size
 * first: clang's __builtin_assume in mram.h tells the compiler the size is 8..2048 and a multiple of 8.
 * So the engine moves __dpusim_dma_length(size) bytes: the size rounded down to a multiple of 8, modulo 2,048,
 * and 2,048 bytes for sizes 0 to 7 (the block count wraps from -1 to 255). A constant size outside the rules is
 * a compile-time error (mram.h).
 */
static uint32_t length_as_engine_reads(const char *operation, uintptr_t mram, uint32_t size) {
    uint32_t length = __dpusim_dma_length(size);
    if (length == size)
        return size;
    const char *reason = size % 8 != 0 ? "not a multiple of 8" : "not between 8 and 2048";
    if (__dpusim_strict())
        __dpusim_fault(DPUSIM_FAULT_DMA, mram, size, "%s of %u bytes: %s (a DPU moves %u bytes; strict mode)",
                       operation, size, reason, length);
    warning_once(operation, size, __dpusim_tasklet_id,
                 "%s of %u bytes, %s: a DPU moves %u bytes, and so does the simulator", operation, size, reason,
                 length);
    return length;
}

/*
 * The bytes of a transfer before the end of MRAM; the rest are at MRAM offset 0 on. The ldma/sdma MRAM address is
 * 32 bits (`@m = rb & 0xfffffff8`, the ISA) and the engine keeps only the bits inside the MRAM (see
 * mram_as_engine_reads), so the byte after the last one of MRAM is that of offset 0: the engine raises no fault
 * (the ISA gives ldma/sdma none) and goes on there. The runtime's own read-ahead (seqread's second page) does so
 * silently; a kernel's transfer that crosses the end is most likely a bug: a warning, or a fault in strict mode.
 */
static const char CROSSING_MRAM_END[] = "crossing the end of MRAM";

static uint32_t length_before_mram_end(const char *operation, uint32_t flags, uintptr_t mram, uint32_t length) {
    uintptr_t mram_end = DPUSIM_MRAM_BASE + control->mram_size;
    if (mram + length <= mram_end)
        return length;
    uint32_t before = (uint32_t)(mram_end - mram);
    if (flags & DPUSIM_DMA_READ_AHEAD)
        return before;
    if (__dpusim_strict())
        __dpusim_fault(DPUSIM_FAULT_DMA, mram, length,
                       "%s of %u bytes at MRAM address %#lx: crosses the end of MRAM at %#lx (a DPU goes on at MRAM "
                       "offset 0; strict mode)",
                       operation, length, (unsigned long)mram, (unsigned long)mram_end);
    warning_once(CROSSING_MRAM_END, (uintptr_t)operation, __dpusim_tasklet_id,
                 "%s of %u bytes at MRAM address %#lx crosses the end of MRAM at %#lx: a DPU goes on at MRAM offset "
                 "0, and so does the simulator",
                 operation, length, (unsigned long)mram, (unsigned long)mram_end);
    return before;
}

/*
 * Checks one transfer of `length` bytes (what the engine moves: 8..2048, a multiple of 8) and reads its addresses
 * as the engine does (see above): both aligned down to 8, the MRAM one taken modulo the MRAM size. Returns the
 * bytes before the end of MRAM (the rest wrap to offset 0).
 */
static uint32_t check_transfer(const char *operation, uint32_t flags, uintptr_t *mram, uintptr_t *wram,
                               uint32_t length) {
    *mram = mram_as_engine_reads(operation, *mram, length);
    if ((*mram | *wram) % 8 != 0) {
        if (__dpusim_strict())
            __dpusim_fault(DPUSIM_FAULT_DMA, (*mram % 8 != 0) ? *mram : *wram, length,
                           "%s with unaligned address (MRAM %#lx, WRAM %#lx; strict mode)", operation,
                           (unsigned long)*mram, (unsigned long)*wram);
        *mram &= ~(uintptr_t)7;
        *wram &= ~(uintptr_t)7;
    }
    if (!in_wram(*wram, length))
        __dpusim_fault(DPUSIM_FAULT_DMA, *wram, length,
                       "%s of %u bytes at WRAM address %#lx: outside WRAM [%#x, %#lx)", operation, length,
                       (unsigned long)*wram, DPUSIM_WRAM_BASE,
                       (unsigned long)(DPUSIM_WRAM_BASE + control->wram_size));
    return length_before_mram_end(operation, flags, *mram, length);
}

/*
 * Asks the host CPU to start loading the MRAM lines of a transfer. The issuer usually gives way before its
 * transfer moves (clock_dma) and other tasklets run meanwhile, so the copy then finds the lines in cache:
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
 * One transfer of the engine. Reads MRAM through the worker's shared mapping, so MRAM nothing wrote is committed
 * as zeroed pages when a kernel reads it (host reads skip such pages, Machine::read). Asking the file which pages
 * it holds would cost a system call per transfer.
 */
static void transfer(const char *operation, uint32_t flags, uintptr_t mram, uintptr_t wram, uint32_t length) {
    uint32_t before_end = check_transfer(operation, flags, &mram, &wram, length);
    bool to_mram = flags & DPUSIM_DMA_TO_MRAM;
    prefetch_mram(mram, before_end, to_mram);
    struct dpusim_tasklet_stats *stats = &run.record->tasklets[__dpusim_tasklet_id];
    if (to_mram) {
        stats->dma_write_ops++;
        stats->dma_write_bytes += length;
    } else {
        stats->dma_read_ops++;
        stats->dma_read_bytes += length;
    }
    /* Built where it waits if it must (clock_dma): copying it there would stall on store forwarding. */
    struct dma_move *move = &run.running->transfer;
    move->to = (char *)(to_mram ? mram : wram);
    move->from = (const char *)(to_mram ? wram : mram);
    move->length = length;
    move->before_end = before_end;
    move->to_mram = to_mram;
    clock_dma(to_mram ? DPUSIM_DMA_WRITE_ALPHA : DPUSIM_DMA_READ_ALPHA);
}

void dma_copy(const struct dma_move *move) {
    memcpy(move->to, move->from, move->before_end);
    if (move->before_end < move->length) { /* the rest, from MRAM offset 0 on */
        char *rest_to = move->to_mram ? (char *)DPUSIM_MRAM_BASE : move->to + move->before_end;
        const char *rest_from = move->to_mram ? move->from + move->before_end : (const char *)DPUSIM_MRAM_BASE;
        memcpy(rest_to, rest_from, move->length - move->before_end);
    }
}

void __dpusim_mram_read(const void *mram, void *wram, uint32_t size) {
    uint32_t length = length_as_engine_reads("mram_read", (uintptr_t)mram, size);
    transfer("mram_read", 0, (uintptr_t)mram, (uintptr_t)wram, length);
}

void __dpusim_mram_write(const void *wram, void *mram, uint32_t size) {
    uint32_t length = length_as_engine_reads("mram_write", (uintptr_t)mram, size);
    transfer("mram_write", DPUSIM_DMA_TO_MRAM, (uintptr_t)mram, (uintptr_t)wram, length);
}

void __dpusim_dma(const char *routine, uint32_t flags, const void *mram, void *wram, uint32_t length) {
    transfer(routine, flags, (uintptr_t)mram, (uintptr_t)wram, length);
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
