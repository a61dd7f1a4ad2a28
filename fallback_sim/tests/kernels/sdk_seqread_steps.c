/*
 * sdk_seqread_steps.c: one sequential reader walked through a list of steps, its cache placed `cache_skew` bytes
 * past a SEQREAD_CACHE_SIZE boundary (0: aligned, as seqread_alloc's), so that the host can compare what it
 * returns with what the SDK's compiled readers return (the host test models them).
 *
 * Built with -DSEQREAD_CACHE_SIZE=S (32 to 1024) and one tasklet.
 * Host inputs:  data[] (MRAM, DATA_BYTES bytes), cache_skew (a multiple of 8 below S), start (the byte of data
 *               the reader starts at), nr_steps (at most MAX_STEPS), steps[i] = (kind << 24) | argument:
 *               kind 0 = seqread_get with inc = argument, kind 1 = seqread_seek to byte `argument` of data.
 * Outputs:      for the init (index 0) and after each step i (index i + 1): positions[] = the returned pointer
 *               minus area's address, values[] = the 4 bytes it points at (OUTSIDE_AREA when they are not all in
 *               area), tells[] = seqread_tell of it; area_address (WRAM) and data_address (MRAM).
 * Before the init, area (4 S bytes, S-aligned, holding the cache) is filled with GUARD_BYTE.
 */
#include <stdint.h>
#include <string.h>

#include <mram.h>
#include <seqread.h>

#define DATA_BYTES 16384
#define MAX_STEPS 64
#define AREA_BYTES (4 * SEQREAD_CACHE_SIZE)
#define GUARD_BYTE 0xEE
#define OUTSIDE_AREA 0xFFFFFFFFu
#define STEP_KIND_SHIFT 24
#define STEP_ARGUMENT_MASK 0xFFFFFFu

enum step_kind { STEP_GET = 0, STEP_SEEK = 1 };

__host uint32_t cache_skew;
__host uint32_t start;
__host uint32_t nr_steps;
__host uint32_t steps[MAX_STEPS];
__host int32_t positions[MAX_STEPS + 1];
__host uint32_t values[MAX_STEPS + 1];
__host uint32_t tells[MAX_STEPS + 1];
__host uint32_t area_address;
__host uint32_t data_address;

__mram_noinit uint8_t data[DATA_BYTES];

uint8_t area[AREA_BYTES] __attribute__((aligned(SEQREAD_CACHE_SIZE)));

static void record(uint32_t index, const uint8_t *pointer, seqreader_t *reader)
{
    int32_t position = (int32_t)(pointer - area);
    positions[index] = position;
    values[index] = OUTSIDE_AREA;
    if (position >= 0 && position <= AREA_BYTES - (int32_t)sizeof(uint32_t)) {
        /* Byte by byte, in the kernel's own code: no runtime routine besides the reader's runs per step. */
        values[index] = (uint32_t)pointer[0] | (uint32_t)pointer[1] << 8 | (uint32_t)pointer[2] << 16 |
                        (uint32_t)pointer[3] << 24;
    }
    tells[index] = (uint32_t)(uintptr_t)seqread_tell((void *)pointer, reader);
}

int main(void)
{
    area_address = (uint32_t)(uintptr_t)area;
    data_address = (uint32_t)(uintptr_t)data;
    memset(area, GUARD_BYTE, sizeof(area));
    seqreader_t reader;
    const uint8_t *pointer = seqread_init((seqreader_buffer_t)(area + cache_skew), &data[start], &reader);
    record(0, pointer, &reader);
    uint32_t count = nr_steps < MAX_STEPS ? nr_steps : MAX_STEPS;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t argument = steps[i] & STEP_ARGUMENT_MASK;
        if (steps[i] >> STEP_KIND_SHIFT == STEP_SEEK) {
            pointer = seqread_seek(&data[argument], &reader);
        } else {
            pointer = seqread_get((void *)pointer, argument, &reader);
        }
        record(i + 1, pointer, &reader);
    }
    return 0;
}
