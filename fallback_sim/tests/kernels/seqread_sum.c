/*
 * seqread_sum.c: the sequential reader, with a SEQREAD_CACHE_SIZE other than the default, defined before
 * <seqread.h> as in the SDK.
 *
 * The host's elements [first_element, first_element + nr_elements) are split into NR_TASKLETS contiguous
 * chunks; each tasklet sums its chunk with its own reader, element by element (first_element may be odd, so
 * the reader may start at a 4-byte-aligned but not 8-byte-aligned MRAM address), then checks seqread_tell (at
 * the end of the chunk) and seqread_seek (back to the chunk's first element).
 *
 * Host inputs:  elements[] (MRAM, uint32_t, MAX_ELEMENTS), first_element, nr_elements
 *               (first_element + nr_elements <= MAX_ELEMENTS)
 * DPU outputs:  partial_sums[t]; their sum = sum of elements[first_element .. first_element + nr_elements)
 *               tell_errors[t] = seek_errors[t] = 0
 *               cache_bytes = bytes seqread_alloc took from the heap = 2 * SEQREAD_CACHE_SIZE = 256
 * Any NR_TASKLETS.
 */
#define SEQREAD_CACHE_SIZE 128

#include <stdint.h>

#include <alloc.h>
#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <seqread.h>

#define MAX_ELEMENTS 8192

__host uint32_t first_element;
__host uint32_t nr_elements;
__host uint64_t partial_sums[NR_TASKLETS];
__host uint32_t tell_errors[NR_TASKLETS];
__host uint32_t seek_errors[NR_TASKLETS];
__host uint32_t cache_bytes;

__mram_noinit uint32_t elements[MAX_ELEMENTS];

BARRIER_INIT(start_barrier, NR_TASKLETS);

int main(void)
{
    uint32_t id = me();
    if (id == 0) {
        mem_reset();
        seqreader_buffer_t probe = seqread_alloc();
        cache_bytes = (uint32_t)((uintptr_t)mem_alloc(8) - probe);
        mem_reset();
    }
    barrier_wait(&start_barrier);

    uint32_t total = nr_elements;
    if (first_element > MAX_ELEMENTS) {
        total = 0;
    } else if (total > MAX_ELEMENTS - first_element) {
        total = MAX_ELEMENTS - first_element;
    }
    uint32_t chunk = (total + NR_TASKLETS - 1) / NR_TASKLETS;
    uint32_t begin = first_element + (id * chunk < total ? id * chunk : total);
    uint32_t end = first_element + ((id + 1) * chunk < total ? (id + 1) * chunk : total);

    seqreader_buffer_t cache = seqread_alloc();
    partial_sums[id] = 0;
    tell_errors[id] = 0;
    seek_errors[id] = 0;
    if (begin == end) {
        return 0;
    }

    seqreader_t reader;
    uint32_t *current = seqread_init(cache, &elements[begin], &reader);
    uint32_t first_value = *current;
    uint64_t sum = 0;
    for (uint32_t i = begin; i < end; i++) {
        sum += *current;
        current = seqread_get(current, sizeof(uint32_t), &reader);
    }
    partial_sums[id] = sum;

    tell_errors[id] = seqread_tell(current, &reader) != (__mram_ptr void *)&elements[end];
    current = seqread_seek(&elements[begin], &reader);
    seek_errors[id] = *current != first_value;
    return 0;
}
