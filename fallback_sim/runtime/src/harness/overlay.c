/*
 * Broadcast pages shared copy-on-write (abi.h, struct dpusim_overlay). Running a DPU maps its shared ranges
 * read-only over its MRAM window, and the pages of them it already owns read-write from its own MRAM. A kernel
 * write to a shared page faults; the fault handler makes the page the DPU's own (a copy in the DPU's MRAM,
 * mapped read-write, marked owned) and the write is retried. The host reads and writes through the same
 * records (upmem-sim `overlay` module).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

static char *records;
/* Whether the MRAM window holds overlay mappings, which mapping the next DPU must replace. */
static bool window_has_overlay;

void overlay_map_records(void) {
    records = mmap(NULL, (size_t)control->nr_dpus * DPUSIM_OVERLAY_STRIDE, PROT_READ | PROT_WRITE, MAP_SHARED,
                   DPUSIM_FD_OVERLAY, 0);
    if (records == MAP_FAILED) {
        perror("dpusim worker: mapping the overlay records");
        exit(DPUSIM_EXIT_FAULT);
    }
}

static struct dpusim_overlay *overlay_of(uint32_t dpu) {
    return (struct dpusim_overlay *)(records + (size_t)dpu * DPUSIM_OVERLAY_STRIDE);
}

static bool owned(const struct dpusim_overlay *overlay, uint32_t page) {
    return (overlay->owned[page / 8] >> (page % 8)) & 1u;
}

static void *window_page(uint32_t page) {
    return (void *)(uintptr_t)(DPUSIM_MRAM_BASE + (uintptr_t)page * DPUSIM_PAGE_SIZE);
}

static off_t own_offset(uint32_t dpu, uint32_t page) {
    return (off_t)dpu * (off_t)control->mram_size + (off_t)page * DPUSIM_PAGE_SIZE;
}

static bool map_own(uint32_t dpu, uint32_t first_page, uint32_t pages) {
    return mmap(window_page(first_page), (size_t)pages * DPUSIM_PAGE_SIZE, PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_FIXED, DPUSIM_FD_MRAM, own_offset(dpu, first_page)) != MAP_FAILED;
}

bool overlay_needs_mapping(uint32_t dpu) { return window_has_overlay || overlay_of(dpu)->nr_ranges != 0; }

void overlay_map(uint32_t dpu) {
    const struct dpusim_overlay *overlay = overlay_of(dpu);
    window_has_overlay = overlay->nr_ranges != 0;
    for (uint32_t r = 0; r < overlay->nr_ranges && r < DPUSIM_OVERLAY_RANGES; r++) {
        const struct dpusim_overlay_range *range = &overlay->ranges[r];
        uint32_t first = range->mram_offset / DPUSIM_PAGE_SIZE;
        if (mmap(window_page(first), (size_t)range->pages * DPUSIM_PAGE_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED,
                 DPUSIM_FD_SHARED, (off_t)range->shared_offset) == MAP_FAILED) {
            perror("dpusim worker: mapping shared MRAM pages");
            exit(DPUSIM_EXIT_FAULT);
        }
        /* Runs of pages the DPU already owns. */
        for (uint32_t page = first; page < first + range->pages;) {
            uint32_t end = page;
            while (end < first + range->pages && owned(overlay, end))
                end++;
            if (end > page && !map_own(dpu, page, end - page)) {
                perror("dpusim worker: mapping owned MRAM pages");
                exit(DPUSIM_EXIT_FAULT);
            }
            page = end + 1;
        }
    }
}

bool overlay_take_page(uint32_t dpu, uintptr_t address) {
    if (!window_has_overlay || address - DPUSIM_MRAM_BASE >= control->mram_size)
        return false;
    struct dpusim_overlay *overlay = overlay_of(dpu);
    uint32_t page = (uint32_t)((address - DPUSIM_MRAM_BASE) / DPUSIM_PAGE_SIZE);
    for (uint32_t r = 0; r < overlay->nr_ranges && r < DPUSIM_OVERLAY_RANGES; r++) {
        uint32_t first = overlay->ranges[r].mram_offset / DPUSIM_PAGE_SIZE;
        if (page < first || page >= first + overlay->ranges[r].pages || owned(overlay, page))
            continue;
        /* The shared page is readable where it is mapped: copy it into the DPU's own MRAM, then map that. */
        if (pwrite(DPUSIM_FD_MRAM, window_page(page), DPUSIM_PAGE_SIZE, own_offset(dpu, page)) != DPUSIM_PAGE_SIZE ||
            !map_own(dpu, page, 1))
            return false;
        overlay->owned[page / 8] |= (uint8_t)(1u << (page % 8));
        return true;
    }
    return false;
}
