/*
 * Exercises symbols of every kind: a WRAM argument struct, a named MRAM array and printf. Tasklet 0 copies
 * `input` (WRAM) into `output` (WRAM) doubled, copies `mram_in` to `mram_out` plus the DPU's `id`, prints a
 * line, and faults with halt() when `halt_please` is set. `launches` counts launches since the load. With `spin`
 * set, tasklet 0 first runs that many rounds of a busy loop, so that a launch lasts a while.
 */
#include <defs.h>
#include <mram.h>
#include <stdint.h>
#include <stdio.h>

#define WORDS 8

__host uint32_t id;
__host uint32_t halt_please;
__host uint32_t launches;
__host uint32_t spin;
__host uint32_t spun;
__host uint32_t input[WORDS];
__host uint32_t output[WORDS];
__mram_noinit uint64_t mram_in[WORDS];
__mram_noinit uint64_t mram_out[WORDS];

int main(void) {
    if (me() != 0)
        return 0;
    launches++;
    uint32_t state = id;
    for (uint32_t round = 0; round < spin; round++)
        state = state * 1664525u + 1013904223u;
    spun = state;
    if (halt_please)
        halt();
    for (uint32_t i = 0; i < WORDS; i++)
        output[i] = 2 * input[i];
    __dma_aligned uint64_t words[WORDS];
    mram_read(mram_in, words, sizeof(words));
    for (uint32_t i = 0; i < WORDS; i++)
        words[i] += id;
    mram_write(words, mram_out, sizeof(words));
    printf("DPU %u says hello after %u launches\n", id, launches);
    return 0;
}
