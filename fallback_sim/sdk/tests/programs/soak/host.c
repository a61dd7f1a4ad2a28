/*
 * Soak: a long-running service's life, one process that allocates NR_DPUS DPUs, loads the kernel, sends each DPU
 * its argument and inputs, launches, reads the results back (checked against the CPU) and frees the set, cycle
 * after cycle. After WARMUP_CYCLES cycles (the allocator's arenas, the library's thread pool and the simulated
 * server are made by then), the memory the process holds, its open file descriptors and its threads must stay
 * where they are.
 *
 * The memory checked is the resident memory the process allocated (RssAnon + RssShmem of /proc/self/status:
 * heap, stacks, the simulated DPUs' shared memories); the total (VmRSS) is printed too, but it also counts the
 * pages of libraries' code, which the kernel drops and reads back as memory pressure comes and goes.
 *
 * SOAK_CYCLES (environment) sets the measured cycles (default DEFAULT_CYCLES).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <dpu.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#ifndef DPU_BINARY
#define DPU_BINARY "./bin/dpu_code"
#endif
#define DEFAULT_CYCLES 300
#define WARMUP_CYCLES 20
/* Allocated memory may move by allocator noise after the warm-up, never by a per-cycle amount: leak-free runs
 * measure 20-24 KiB over 300 or 2,000 cycles (reached within the first 300), where the leaks this guards against added 300 bytes to 6 KB per
 * cycle (90 KiB to 1.7 MiB over the default cycles). */
#define GROWTH_LIMIT_KIB 64

static unsigned errors;

#define CHECK(cond, ...)                                                                                             \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            if (errors < 20) {                                                                                       \
                printf("FAILED: " __VA_ARGS__);                                                                      \
                printf("\n");                                                                                        \
            }                                                                                                        \
            errors++;                                                                                                \
        }                                                                                                            \
    } while (0)

/* What the process holds: resident memory (all of it, and what it allocated), open descriptors, threads. */
struct usage {
    long rss_kib;
    long allocated_kib;
    long fds;
    long threads;
};

/* A "Name:   value kB" line of /proc/self/status, or -1. */
static long status_field(const char *name) {
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    long value = -1;
    size_t length = strlen(name);
    if (status == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), status) != NULL) {
        if (strncmp(line, name, length) == 0 && line[length] == ':') {
            value = strtol(line + length + 1, NULL, 10);
            break;
        }
    }
    fclose(status);
    return value;
}

/* Entries of /proc/self/fd other than ".", ".." and the descriptor reading it. */
static long open_fds(void) {
    DIR *dir = opendir("/proc/self/fd");
    long count = 0;
    if (dir == NULL) {
        return -1;
    }
    while (readdir(dir) != NULL) {
        count++;
    }
    closedir(dir);
    return count - 3;
}

static struct usage measure(void) {
    struct usage now = {status_field("VmRSS"), status_field("RssAnon") + status_field("RssShmem"), open_fds(),
                        status_field("Threads")};
    return now;
}

static uint32_t in[NR_DPUS][N], out[NR_DPUS][N], arguments[NR_DPUS];
static uint8_t *binary; /* the kernel's bytes, for dpu_load_from_memory */
static size_t binary_size;

/* Reads the kernel into `binary`; false if it cannot. */
static bool read_binary(void) {
    FILE *file = fopen(DPU_BINARY, "rb");
    if (file == NULL || fseek(file, 0, SEEK_END) != 0) {
        return false;
    }
    long size = ftell(file);
    binary = size > 0 ? malloc((size_t)size) : NULL;
    bool read = binary != NULL && fseek(file, 0, SEEK_SET) == 0 && fread(binary, 1, (size_t)size, file) == (size_t)size;
    fclose(file);
    binary_size = (size_t)size;
    return read;
}

/* One service request: allocate, load (from the file, or every other cycle from memory as an embedded kernel
 * is), send each DPU its argument and inputs, launch, read back, check, free. */
static void cycle(unsigned number) {
    struct dpu_set_t set, dpu;
    uint32_t i, nr_dpus;
    DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &set));
    DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));
    CHECK(nr_dpus == NR_DPUS, "cycle %u: dpu_alloc(%u) gave %u DPUs", number, NR_DPUS, nr_dpus);
    if (number % 2 == 0) {
        DPU_ASSERT(dpu_load(set, DPU_BINARY, NULL));
    } else {
        DPU_ASSERT(dpu_load_from_memory(set, binary, binary_size, NULL));
    }
    for (i = 0; i < nr_dpus; i++) {
        arguments[i] = number * 131u + i;
        for (uint32_t e = 0; e < N; e++) {
            in[i][e] = (number << 20) ^ (i << 10) ^ e;
        }
    }
    DPU_FOREACH(set, dpu, i) { DPU_ASSERT(dpu_copy_to(dpu, "argument", 0, &arguments[i], sizeof(arguments[i]))); }
    DPU_FOREACH(set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, in[i])); }
    DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, sizeof(in[0]), DPU_XFER_DEFAULT));
    DPU_ASSERT(dpu_launch(set, DPU_SYNCHRONOUS));
    memset(out, 0, sizeof(out));
    DPU_FOREACH(set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, out[i])); }
    DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, sizeof(in[0]), sizeof(out[0]),
                             DPU_XFER_DEFAULT));
    DPU_FOREACH(set, dpu, i) {
        uint32_t processed = 0;
        DPU_ASSERT(dpu_copy_from(dpu, "processed", 0, &processed, sizeof(processed)));
        CHECK(processed == N, "cycle %u: DPU %u processed %u elements, expected %u", number, i, processed, N);
        for (uint32_t e = 0; e < N; e++) {
            uint32_t want = soak_output(in[i][e], arguments[i]);
            CHECK(out[i][e] == want, "cycle %u: DPU %u out[%u] = %u, expected %u", number, i, e, out[i][e], want);
        }
    }
    DPU_ASSERT(dpu_free(set));
}

int main(void) {
    const char *requested = getenv("SOAK_CYCLES");
    long cycles = requested != NULL ? strtol(requested, NULL, 10) : DEFAULT_CYCLES;
    if (cycles <= 0) {
        printf("soak: SOAK_CYCLES=%s is not a positive number of cycles: FAILED (1 errors)\n", requested);
        return EXIT_FAILURE;
    }

    if (!read_binary()) {
        printf("soak: cannot read %s: FAILED (1 errors)\n", DPU_BINARY);
        return EXIT_FAILURE;
    }
    for (unsigned number = 0; number < WARMUP_CYCLES; number++) {
        cycle(number);
    }
    struct usage start = measure();
    for (long number = 0; number < cycles; number++) {
        cycle(WARMUP_CYCLES + (unsigned)number);
        if (cycles >= 10 && (number + 1) % (cycles / 10) == 0) {
            struct usage now = measure();
            printf("cycle %ld: RSS %ld KiB, allocated %ld KiB, %ld fds, %ld threads\n", number + 1, now.rss_kib,
                   now.allocated_kib, now.fds, now.threads);
        }
    }
    struct usage end = measure();

    long grown_kib = end.allocated_kib - start.allocated_kib;
    CHECK(start.rss_kib > 0 && start.allocated_kib > 0 && start.fds >= 0 && start.threads > 0,
          "cannot read /proc/self (RSS %ld, allocated %ld, fds %ld, threads %ld)", start.rss_kib, start.allocated_kib,
          start.fds, start.threads);
    CHECK(grown_kib <= GROWTH_LIMIT_KIB, "allocated memory grew by %ld KiB over %ld cycles (%.0f bytes per cycle), "
          "more than %d KiB", grown_kib, cycles, grown_kib * 1024.0 / (double)cycles, GROWTH_LIMIT_KIB);
    CHECK(end.fds == start.fds, "open file descriptors went from %ld to %ld", start.fds, end.fds);
    CHECK(end.threads == start.threads, "threads went from %ld to %ld", start.threads, end.threads);

    printf("soak: %ld cycles of alloc / load / push / launch / read back / free on %u DPUs after %d warm-up: RSS %ld "
           "-> %ld KiB, allocated %ld -> %ld KiB (%+.1f bytes per cycle, limit %d KiB in all), fds %ld -> %ld, "
           "threads %ld -> %ld: %s (%u errors)\n",
           cycles, NR_DPUS, WARMUP_CYCLES, start.rss_kib, end.rss_kib, start.allocated_kib, end.allocated_kib,
           grown_kib * 1024.0 / (double)cycles, GROWTH_LIMIT_KIB, start.fds, end.fds, start.threads, end.threads,
           errors ? "FAILED" : "OK", errors);
    free(binary);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
