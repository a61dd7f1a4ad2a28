/*
 * The DPU's DMA engine (mram_read/mram_write) and its log (printf).
 *
 * DMA follows the hardware: the size is a multiple of 8 between 8 and 2,048 bytes, both ranges lie in the
 * DPU's memories, and the engine ignores the low three bits of both addresses. A 0-byte transfer does nothing.
 * Strict mode faults on what the documentation forbids but the hardware tolerates: unaligned addresses and
 * 0-byte transfers. Native tasklet stacks count as WRAM, since on a DPU the stacks are in WRAM.
 */
#include <string.h>

#include "internal.h"

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

/* Checks one transfer and returns false when it is a no-op. Aligns the addresses down as the hardware does. */
static bool check_dma(const char *operation, uintptr_t *mram, uintptr_t *wram, uint32_t size) {
    if (size == 0) {
        if (__dpusim_strict())
            __dpusim_fault(DPUSIM_FAULT_DMA, *mram, 0, "%s of 0 bytes (strict mode)", operation);
        return false;
    }
    if (size % 8 != 0 || size > DPUSIM_DMA_MAX)
        __dpusim_fault(DPUSIM_FAULT_DMA, *mram, size,
                       "%s of %u bytes: the size must be a multiple of 8 between 8 and %u", operation, size,
                       DPUSIM_DMA_MAX);
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
    return true;
}

void __dpusim_mram_read(const void *mram, void *wram, uint32_t size) {
    uintptr_t from = (uintptr_t)mram, to = (uintptr_t)wram;
    if (!check_dma("mram_read", &from, &to, size))
        return;
    clock_dma_issue(DPUSIM_DMA_READ_ALPHA, size);
    memcpy((void *)to, (const void *)from, size);
    struct dpusim_tasklet_stats *stats = &run.record->tasklets[__dpusim_tasklet_id];
    stats->dma_read_ops++;
    stats->dma_read_bytes += size;
    clock_wait_turn();
}

void __dpusim_mram_write(const void *wram, void *mram, uint32_t size) {
    uintptr_t to = (uintptr_t)mram, from = (uintptr_t)wram;
    if (!check_dma("mram_write", &to, &from, size))
        return;
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
