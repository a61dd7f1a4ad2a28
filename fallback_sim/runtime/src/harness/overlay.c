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
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

static char *records;
/* Whether the MRAM window holds overlay mappings, which mapping the next DPU must replace. */
static bool window_has_overlay;
/* The shared ranges mapped in the window, and whether they are mapped whole (no page of them from a DPU's own
 * MRAM). The next DPU with the same ranges and no own page in them keeps these mappings and their page-table
 * entries, and only its own MRAM around them is mapped: remapping a broadcast X for each DPU made every DPU
 * fault the pages it reads in again. */
static struct dpusim_overlay_range window_ranges[DPUSIM_OVERLAY_RANGES];
static uint32_t window_nr_ranges;
static bool window_pristine;

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

static uint32_t nr_ranges(const struct dpusim_overlay *overlay) {
    return overlay->nr_ranges < DPUSIM_OVERLAY_RANGES ? overlay->nr_ranges : DPUSIM_OVERLAY_RANGES;
}

/* Whether the DPU owns a page of [first, first + pages): whole bytes of the bitmap at once. */
static bool owns_any(const struct dpusim_overlay *overlay, uint32_t first, uint32_t pages) {
    uint32_t page = first, end = first + pages;
    for (; page < end && page % 8 != 0; page++)
        if (owned(overlay, page))
            return true;
    for (; page + 8 <= end; page += 8)
        if (overlay->owned[page / 8] != 0)
            return true;
    for (; page < end; page++)
        if (owned(overlay, page))
            return true;
    return false;
}

/* Whether the window can keep its shared mappings for `overlay`: they are the same ranges, no page of them is
 * mapped from the last DPU's own MRAM, and the new DPU owns none of their pages either. */
static bool window_fits(const struct dpusim_overlay *overlay) {
    uint32_t count = nr_ranges(overlay);
    if (!window_pristine || count == 0 || count != window_nr_ranges ||
        memcmp(overlay->ranges, window_ranges, count * sizeof window_ranges[0]) != 0)
        return false;
    for (uint32_t r = 0; r < count; r++)
        if (owns_any(overlay, overlay->ranges[r].mram_offset / DPUSIM_PAGE_SIZE, overlay->ranges[r].pages))
            return false;
    return true;
}

/* Maps dpu's own MRAM everywhere in the window but its shared ranges (disjoint, since the host replaces a range
 * that a new one overlaps). */
static void map_own_around_ranges(uint32_t dpu, const struct dpusim_overlay *overlay) {
    uint32_t count = nr_ranges(overlay);
    struct dpusim_overlay_range sorted[DPUSIM_OVERLAY_RANGES];
    memcpy(sorted, overlay->ranges, count * sizeof sorted[0]);
    for (uint32_t i = 1; i < count; i++)
        for (uint32_t j = i; j > 0 && sorted[j - 1].mram_offset > sorted[j].mram_offset; j--) {
            struct dpusim_overlay_range swapped = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = swapped;
        }
    uint32_t page = 0, end = (uint32_t)(control->mram_size / DPUSIM_PAGE_SIZE);
    for (uint32_t r = 0; r <= count; r++) {
        uint32_t next = r < count ? sorted[r].mram_offset / DPUSIM_PAGE_SIZE : end;
        if (next > page && !map_own(dpu, page, next - page)) {
            perror("dpusim worker: mapping a DPU's MRAM");
            exit(DPUSIM_EXIT_FAULT);
        }
        if (r < count)
            page = next + sorted[r].pages;
    }
}

/* Maps the shared ranges read-only over the window, and the pages of them the DPU already owns from its MRAM. */
static void map_ranges(uint32_t dpu, const struct dpusim_overlay *overlay) {
    window_pristine = true;
    for (uint32_t r = 0; r < nr_ranges(overlay); r++) {
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
            if (end > page) {
                window_pristine = false;
                if (!map_own(dpu, page, end - page)) {
                    perror("dpusim worker: mapping owned MRAM pages");
                    exit(DPUSIM_EXIT_FAULT);
                }
            }
            page = end + 1;
        }
    }
    window_nr_ranges = nr_ranges(overlay);
    memcpy(window_ranges, overlay->ranges, window_nr_ranges * sizeof window_ranges[0]);
}

void overlay_map_mram(uint32_t dpu) {
    const struct dpusim_overlay *overlay = overlay_of(dpu);
    if (window_fits(overlay)) {
        map_own_around_ranges(dpu, overlay);
        return;
    }
    if (!map_own(dpu, 0, (uint32_t)(control->mram_size / DPUSIM_PAGE_SIZE))) {
        perror("dpusim worker: mapping a DPU's MRAM");
        exit(DPUSIM_EXIT_FAULT);
    }
    window_has_overlay = nr_ranges(overlay) != 0;
    if (window_has_overlay)
        map_ranges(dpu, overlay);
    else
        window_pristine = false;
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
        window_pristine = false;
        return true;
    }
    return false;
}
