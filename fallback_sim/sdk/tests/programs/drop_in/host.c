/*
 * Runs the drop_in kernel (embedded with DPU_INCBIN, written without its semicolon as SDK programs do) on a few
 * DPUs and checks every output; then once more in strict mode, where the stack overflow faults. Prints one line
 * per check ("ok ..." or "FAILED ...") and a summary.
 */
#include <dpu.h>
#include <dpu_sim.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define NR_DPUS 4
#define MARKER 0xAAAAAAAAAAAAAAAAull

DPU_INCBIN(drop_in_kernel, "bin/dpu_code")

static unsigned nr_errors;

static void check(const char *what, uint64_t got, uint64_t want)
{
    if (got == want) {
        printf("ok %s\n", what);
    } else {
        printf("FAILED %s: got %#llx, expected %#llx\n", what, (unsigned long long)got, (unsigned long long)want);
        nr_errors++;
    }
}

static uint32_t heap_offset(struct dpu_program_t *program)
{
    struct dpu_symbol_t heap;
    DPU_ASSERT(dpu_get_symbol(program, DPU_MRAM_HEAP_POINTER_NAME, &heap));
    return heap.address % MRAM_BYTES;
}

static void write_word(struct dpu_set_t dpu, uint32_t heap, uint32_t mram_offset, uint64_t word)
{
    DPU_ASSERT(dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME, mram_offset - heap, &word, sizeof(word)));
}

static uint64_t host_word(const char *symbol, struct dpu_set_t dpu)
{
    uint64_t value = 0;
    DPU_ASSERT(dpu_copy_from(dpu, symbol, 0, &value, sizeof(value)));
    return value;
}

static uint32_t host_u32(const char *symbol, struct dpu_set_t dpu)
{
    uint32_t value = 0;
    DPU_ASSERT(dpu_copy_from(dpu, symbol, 0, &value, sizeof(value)));
    return value;
}

static void check_outputs(struct dpu_set_t dpu, uint32_t index, uint32_t heap)
{
    char what[160];
    uint32_t seed = 1u * 1103515245u + 12345u;
    snprintf(what, sizeof what, "DPU %u: the kernel's own rand() next to <stdlib.h>", index);
    check(what, host_u32("random_value", dpu), seed >> 16);
    snprintf(what, sizeof what, "DPU %u: __builtin_cao_rr", index);
    check(what, host_u32("builtin_ones", dpu), 9);
    snprintf(what, sizeof what, "DPU %u: __builtin_lsl_rri", index);
    check(what, host_u32("builtin_shifted", dpu), 0x0F000010u);
    snprintf(what, sizeof what, "DPU %u: __builtin_mul_sl_sl_rrr", index);
    check(what, host_u32("builtin_product", dpu), (uint32_t)-6);
    snprintf(what, sizeof what, "DPU %u: SEQREAD_CACHE_SIZE defaults to 256", index);
    check(what, host_u32("seqread_cache_size", dpu), 256);
    snprintf(what, sizeof what, "DPU %u: a & b - 1", index);
    check(what, host_u32("precedence", dpu), 12 & (5 - 1));
    snprintf(what, sizeof what, "DPU %u: mram_read at a plain MRAM offset", index);
    check(what, host_word("offset_word", dpu), 0x0FF5E7000000ull + index);
    snprintf(what, sizeof what, "DPU %u: mram_read at 64 MiB - 8", index);
    check(what, host_word("end_word", dpu), 0xE4D000000000ull + index);
    snprintf(what, sizeof what, "DPU %u: mram_read at p + (uint32_t)(a - b)", index);
    check(what, host_word("wrapped_word", dpu), 0x3A9000000000ull + index);
    snprintf(what, sizeof what, "DPU %u: 4 KiB of locals on tasklet 3's stack", index);
    check(what, host_word("deep_stack_sum", dpu), (uint64_t)DEEP_STACK_WORDS * (DEEP_STACK_WORDS + 1) / 2);

    uint64_t written[ODD_WRITE_WORDS + 1];
    DPU_ASSERT(dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, ODD_WRITE_AT, written, sizeof(written)));
    uint32_t landed = 0;
    while (landed < ODD_WRITE_WORDS && written[landed] == ODD_WRITE_PATTERN + landed)
        landed++;
    snprintf(what, sizeof what, "DPU %u: a 1-byte mram_write moves 2,048 bytes (words written)", index);
    check(what, landed, ODD_WRITE_WORDS);
    snprintf(what, sizeof what, "DPU %u: and nothing after them", index);
    check(what, written[ODD_WRITE_WORDS], MARKER);
    uint64_t twelve[2];
    DPU_ASSERT(dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, TWELVE_WRITE_AT, twelve, sizeof(twelve)));
    snprintf(what, sizeof what, "DPU %u: a 12-byte mram_write moves 8 bytes", index);
    check(what, twelve[0] == ODD_WRITE_PATTERN && twelve[1] == MARKER, 1);

    struct dpu_sim_instructions instructions;
    struct dpu_sim_timing timing;
    DPU_ASSERT(dpu_sim_instructions(dpu, &instructions));
    DPU_ASSERT(dpu_sim_timing(dpu, &timing));
    uint64_t by_class = 0;
    for (int c = 0; c < DPU_SIM_INSTRUCTION_CLASSES; c++)
        by_class += instructions.by_class[c];
    snprintf(what, sizeof what, "DPU %u: instructions by class add up to dpu_sim_timing's", index);
    check(what, by_class == instructions.total && instructions.total == timing.instructions, 1);
    snprintf(what, sizeof what, "DPU %u: the boot is charged to the SDK routines", index);
    check(what, instructions.by_class[DPU_SIM_CLASS_SDK_ROUTINE] > 0, 1);
    (void)heap;
}

static void prepare(struct dpu_set_t set, uint32_t heap, uint32_t stack_only)
{
    struct dpu_set_t dpu;
    uint32_t index;
    DPU_FOREACH (set, dpu, index) {
        write_word(dpu, heap, OFFSET_WORD_AT, 0x0FF5E7000000ull + index);
        write_word(dpu, heap, MRAM_BYTES - 8, 0xE4D000000000ull + index);
        write_word(dpu, heap, heap + WRAPPED_AT, 0x3A9000000000ull + index);
        uint64_t markers[ODD_WRITE_WORDS + 1];
        for (uint32_t i = 0; i <= ODD_WRITE_WORDS; i++)
            markers[i] = MARKER;
        DPU_ASSERT(dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME, ODD_WRITE_AT, markers, sizeof(markers)));
        DPU_ASSERT(dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME, TWELVE_WRITE_AT, markers, 2 * sizeof(uint64_t)));
        uint32_t odd_write_size = 1, twelve_write_size = 12;
        DPU_ASSERT(dpu_copy_to(dpu, "odd_write_size", 0, &odd_write_size, sizeof(odd_write_size)));
        DPU_ASSERT(dpu_copy_to(dpu, "twelve_write_size", 0, &twelve_write_size, sizeof(twelve_write_size)));
        DPU_ASSERT(dpu_copy_to(dpu, "stack_only", 0, &stack_only, sizeof(stack_only)));
    }
}

int main(void)
{
    struct dpu_set_t set, dpu;
    struct dpu_program_t *program;
    uint32_t index;

    DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &set));
    DPU_ASSERT(dpu_load_from_incbin(set, &drop_in_kernel, &program));
    uint32_t heap = heap_offset(program);
    prepare(set, heap, 0);
    DPU_ASSERT(dpu_launch(set, DPU_SYNCHRONOUS));
    DPU_FOREACH (set, dpu, index) {
        check_outputs(dpu, index, heap);
    }
    /* The timeline: every transfer and launch so far, each launch predicted from its DPUs' modelled cycles, a
     * copy to one DPU at the serial 0.33 GB/s. */
    size_t nr_events = 0;
    struct dpu_sim_event events[512];
    DPU_ASSERT(dpu_sim_timeline(NULL, 0, &nr_events));
    size_t copied = nr_events < 512 ? nr_events : 512;
    DPU_ASSERT(dpu_sim_timeline(events, copied, &nr_events));
    unsigned launches = 0, predicted_launches = 0, serial_ok = 0, serial = 0;
    for (size_t e = 0; e < copied; e++) {
        if (events[e].operation == DPU_SIM_OP_LAUNCH) {
            launches++;
            predicted_launches += events[e].predicted_ns != DPU_SIM_NOT_PREDICTED && events[e].predicted_ns > 0;
        } else if (events[e].operation == DPU_SIM_OP_COPY_TO) {
            uint64_t expected = (uint64_t)((double)events[e].bytes_per_dpu / 0.33);
            serial++;
            serial_ok += events[e].nr_dpus == 1 && events[e].predicted_ns + 1 >= expected &&
                         events[e].predicted_ns <= expected + 1;
        }
    }
    check("the timeline holds the launches, each predicted", launches > 0 && predicted_launches == launches, 1);
    check("the timeline's copies to one DPU run at 0.33 GB/s", serial > 0 && serial_ok == serial, 1);
    DPU_ASSERT(dpu_sim_timeline_clear());
    DPU_ASSERT(dpu_sim_timeline(NULL, 0, &nr_events));
    check("dpu_sim_timeline_clear empties the timeline", nr_events, 0);
    DPU_ASSERT(dpu_free(set));

    DPU_ASSERT(dpu_alloc(1, "simStrict=true", &set));
    DPU_ASSERT(dpu_load_from_incbin(set, &drop_in_kernel, &program));
    prepare(set, heap, 1);
    check("strict mode: the stack overflow faults", dpu_launch(set, DPU_SYNCHRONOUS), DPU_ERR_DPU_FAULT);
    DPU_FOREACH (set, dpu) {
        char reason[512];
        DPU_ASSERT(dpu_sim_fault_reason(dpu, reason, sizeof reason));
        check("strict mode: the fault names the tasklet, its use and budget",
              strstr(reason, "tasklet 3 used ") != NULL && strstr(reason, "1024-byte budget") != NULL, 1);
        printf("strict mode fault: %s\n", reason);
    }
    DPU_ASSERT(dpu_free(set));

    check("instruction classes have names",
          strcmp(dpu_sim_instruction_class_name(DPU_SIM_CLASS_FLOAT_MUL), "float mul") == 0 &&
              dpu_sim_instruction_class_name(DPU_SIM_INSTRUCTION_CLASSES) == NULL,
          1);
    printf("drop_in: %s (%u errors)\n", nr_errors == 0 ? "OK" : "FAILED", nr_errors);
    return nr_errors == 0 ? 0 : 1;
}
