/*
 * Named MRAM arrays and logs:
 *   - `__mram_noinit` arrays written by name with dpu_copy_to (a broadcast) and read back by name per DPU with
 *     dpu_copy_from, at offsets; their symbols through dpu_get_symbol and the *_symbol calls;
 *   - an initialised `__mram` array and an initialised `__host` variable, readable right after dpu_load;
 *   - DPU printf output read with dpu_log_read into a tmpfile and a memstream (after the SDK's line naming the
 *     DPU), and with PrIM's dpulog_read_for_dpu(dpu.dpu, stream) (the output alone); the log holds the last
 *     launch's output only.
 */
#include <dpu.h>
#include <dpu_log.h>
#include <dpu_management.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#ifndef DPU_BINARY
#define DPU_BINARY "./bin/dpu_code"
#endif

static unsigned errors;

#define CHECK(cond, ...)                                                                                             \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            if (errors < 30) {                                                                                       \
                printf("FAILED: " __VA_ARGS__);                                                                      \
                printf("\n");                                                                                        \
            }                                                                                                        \
            errors++;                                                                                                \
        }                                                                                                            \
    } while (0)

/* What a DPU should print for a launch. */
static char *expected_log(const uint64_t *table, uint64_t factor, uint32_t dpu_id, uint32_t launch) {
    char *text = NULL;
    size_t length = 0;
    FILE *stream = open_memstream(&text, &length);
    uint64_t checksum = 0;
    for (unsigned t = 0; t < NR_TASKLETS; t++) {
        uint64_t local = 0;
        for (unsigned i = t * CHUNK; i < TABLE_LEN; i += CHUNK * NR_TASKLETS) {
            for (unsigned k = 0; k < CHUNK; k++) {
                local += table[i + k] * factor + dpu_id;
            }
        }
        checksum += local;
        fprintf(stream, "tasklet %u: %llu\n", t, (unsigned long long)local);
    }
    fprintf(stream, "dpu %u launch %u: checksum=%llu hex=%x str=%s char=%c neg=%d init=%llu\n", dpu_id, launch,
            (unsigned long long)checksum, 0xBEEFu, "named", 'Z', -42, 11ull);
    fprintf(stream, "puts line\n!\n");
    fclose(stream);
    return text;
}

/* What dpu_log_read prints for a DPU: the SDK's line naming the DPU by its dpu_get_id, then the DPU's log. */
static char *with_header(const char *log, struct dpu_t *dpu) {
    char *text = NULL;
    size_t length = 0;
    FILE *stream = open_memstream(&text, &length);
    fprintf(stream, "=== DPU#0x%x ===\n%s", dpu_get_id(dpu), log);
    fclose(stream);
    return text;
}

static char *read_stream(FILE *stream) {
    fflush(stream);
    long size = ftell(stream);
    char *text = calloc((size_t)size + 1, 1);
    rewind(stream);
    if (fread(text, 1, (size_t)size, stream) != (size_t)size) {
        printf("FAILED: reading back the tmpfile\n");
        errors++;
    }
    return text;
}

int main(void) {
    struct dpu_set_t dpu_set, dpu;
    struct dpu_program_t *program = NULL;
    uint32_t nr_of_dpus, i;

    DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &dpu_set));
    DPU_ASSERT(dpu_load(dpu_set, DPU_BINARY, &program));
    DPU_ASSERT(dpu_get_nr_dpus(dpu_set, &nr_of_dpus));
    CHECK(program != NULL, "dpu_load did not return the program");

    /* Symbols: MRAM arrays in the 0x08000000 window, WRAM variables below it; the heap follows the arrays. */
    struct dpu_symbol_t table_symbol, output_symbol, heap_symbol, params_symbol, init_symbol;
    DPU_ASSERT(dpu_get_symbol(program, "table", &table_symbol));
    DPU_ASSERT(dpu_get_symbol(program, "output", &output_symbol));
    DPU_ASSERT(dpu_get_symbol(program, DPU_MRAM_HEAP_POINTER_NAME, &heap_symbol));
    DPU_ASSERT(dpu_get_symbol(program, "params", &params_symbol));
    DPU_ASSERT(dpu_get_symbol(program, "initialised", &init_symbol));
    CHECK((table_symbol.address & 0x08000000) == 0x08000000, "table at 0x%x is not in the MRAM window",
          table_symbol.address);
    CHECK(table_symbol.size == TABLE_LEN * sizeof(uint64_t), "table has size %u", table_symbol.size);
    CHECK(output_symbol.size == TABLE_LEN * sizeof(uint64_t), "output has size %u", output_symbol.size);
    CHECK(init_symbol.size == INIT_LEN * sizeof(uint64_t), "initialised has size %u", init_symbol.size);
    CHECK((params_symbol.address & 0x08000000) == 0, "params at 0x%x is in the MRAM window", params_symbol.address);
    CHECK(params_symbol.size == sizeof(dpu_params_t), "params has size %u", params_symbol.size);
    CHECK(heap_symbol.address % 8 == 0, "the MRAM heap at 0x%x is not 8-aligned", heap_symbol.address);
    CHECK(heap_symbol.address >= output_symbol.address + output_symbol.size &&
              heap_symbol.address >= table_symbol.address + table_symbol.size,
          "the MRAM heap (0x%x) overlaps the MRAM arrays", heap_symbol.address);
    CHECK(heap_symbol.size == (64u << 20) - (heap_symbol.address & ~0x08000000u),
          "the MRAM heap's size is %u, expected the rest of the 64 MiB MRAM", heap_symbol.size);

    /* Initialised variables are there right after dpu_load. */
    DPU_FOREACH(dpu_set, dpu, i) {
        uint64_t init[INIT_LEN];
        uint32_t host_init = 0;
        DPU_ASSERT(dpu_copy_from(dpu, "initialised", 0, init, sizeof(init)));
        DPU_ASSERT(dpu_copy_from(dpu, "host_init", 0, &host_init, sizeof(host_init)));
        CHECK(init[0] == 11 && init[1] == 22 && init[2] == 33 && init[3] == 44,
              "DPU %u: initialised = {%llu, %llu, %llu, %llu}", i, (unsigned long long)init[0],
              (unsigned long long)init[1], (unsigned long long)init[2], (unsigned long long)init[3]);
        CHECK(host_init == 0x12345678, "DPU %u: host_init = 0x%x", i, host_init);
    }

    uint64_t *table = malloc(TABLE_LEN * sizeof(uint64_t));
    uint64_t *output = malloc(TABLE_LEN * sizeof(uint64_t));
    for (uint32_t launch = 1; launch <= 2; launch++) {
        uint64_t factor = launch == 1 ? 3 : 1000003;
        for (i = 0; i < TABLE_LEN; i++) {
            table[i] = (uint64_t)i * i + launch;
        }
        /* The table by name, broadcast to every DPU: in two halves, the second at an offset. */
        DPU_ASSERT(dpu_copy_to(dpu_set, "table", 0, table, TABLE_LEN / 2 * sizeof(uint64_t)));
        DPU_ASSERT(dpu_copy_to(dpu_set, "table", TABLE_LEN / 2 * sizeof(uint64_t), table + TABLE_LEN / 2,
                               TABLE_LEN / 2 * sizeof(uint64_t)));
        /* The parameters: the factor to everyone through the resolved symbol, the id per DPU. */
        dpu_params_t common = {.factor = factor, .dpu_id = 0, .launch = launch};
        DPU_ASSERT(dpu_copy_to_symbol(dpu_set, params_symbol, 0, &common, sizeof(common)));
        DPU_FOREACH(dpu_set, dpu, i) { DPU_ASSERT(dpu_copy_to(dpu, "params", 8, &i, sizeof(i))); }

        DPU_ASSERT(dpu_launch(dpu_set, DPU_SYNCHRONOUS));

        DPU_FOREACH(dpu_set, dpu, i) {
            memset(output, 0, TABLE_LEN * sizeof(uint64_t));
            /* Read by name in three pieces: [0, 100), [100, 1000) by symbol, [1000, 1024). */
            DPU_ASSERT(dpu_copy_from(dpu, "output", 0, output, 100 * sizeof(uint64_t)));
            DPU_ASSERT(dpu_copy_from_symbol(dpu, output_symbol, 100 * sizeof(uint64_t), output + 100,
                                            900 * sizeof(uint64_t)));
            DPU_ASSERT(dpu_copy_from(dpu, "output", 1000 * sizeof(uint64_t), output + 1000,
                                     (TABLE_LEN - 1000) * sizeof(uint64_t)));
            for (uint32_t e = 0; e < TABLE_LEN; e++) {
                uint64_t want = table[e] * factor + i;
                CHECK(output[e] == want, "launch %u DPU %u output[%u] = %llu, expected %llu", launch, i, e,
                      (unsigned long long)output[e], (unsigned long long)want);
            }
            /* The broadcast table itself, read back. */
            uint64_t t500 = 0;
            DPU_ASSERT(dpu_copy_from(dpu, "table", 500 * sizeof(uint64_t), &t500, sizeof(t500)));
            CHECK(t500 == table[500], "launch %u DPU %u table[500] = %llu", launch, i, (unsigned long long)t500);

            char *want = expected_log(table, factor, i, launch);
            char *want_read = with_header(want, dpu.dpu);

            /* dpu_log_read into a tmpfile. */
            FILE *tmp = tmpfile();
            DPU_ASSERT(dpu_log_read(dpu, tmp));
            char *got = read_stream(tmp);
            fclose(tmp);
            CHECK(strcmp(got, want_read) == 0, "launch %u DPU %u: dpu_log_read gave\n%s---\nexpected\n%s---", launch,
                  i, got, want_read);
            free(got);

            /* dpu_log_read into a memstream. */
            char *text = NULL;
            size_t length = 0;
            FILE *memstream = open_memstream(&text, &length);
            DPU_ASSERT(dpu_log_read(dpu, memstream));
            fclose(memstream);
            CHECK(strcmp(text, want_read) == 0, "launch %u DPU %u: dpu_log_read (memstream) gave\n%s---", launch, i,
                  text);
            free(text);

            /* PrIM's form. */
            text = NULL;
            memstream = open_memstream(&text, &length);
            DPU_ASSERT(dpulog_read_for_dpu(dpu.dpu, memstream));
            fclose(memstream);
            CHECK(strcmp(text, want) == 0, "launch %u DPU %u: dpulog_read_for_dpu gave\n%s---", launch, i, text);
            free(text);
            free(want);
            free(want_read);
        }
    }

    /* Show one DPU's log as PrIM does. */
    DPU_FOREACH(dpu_set, dpu) {
        DPU_ASSERT(dpulog_read_for_dpu(dpu.dpu, stdout));
        break;
    }

    DPU_ASSERT(dpu_free(dpu_set));
    printf("mram_names_log: %u DPUs x %u tasklets: %s (%u errors)\n", nr_of_dpus, NR_TASKLETS,
           errors ? "FAILED" : "OK", errors);
    free(table);
    free(output);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
