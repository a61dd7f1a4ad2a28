/*
 * counter_after_dma.c: a shared WRAM counter updated right after a DMA, with no barrier in between (the
 * pattern of stream-compaction kernels such as PrIM's SEL and UNI).
 *
 * Every round, each tasklet t contributes count(t, round) = 1 + (7t + 3 round) % 8 words. The tasklets pass a
 * running count down a handshake chain (t waits for t - 1, then notifies t + 1), meet at a barrier, and each
 * mram_writes its words at output[base + its prefix]. The last tasklet advances `base` by the round's total
 * right after its own mram_write. On a DPU the other tasklets computed their addresses while that DMA was in
 * flight; a tasklet that reads `base` after the update writes its words a round too far.
 *
 * Host input:   nr_rounds (u32, <= MAX_ROUNDS)
 * DPU outputs:  output[] (MRAM, u64): for each round in order, for each tasklet t in order, its words
 *               (round << 16) | (t << 8) | i for i < count(t, round); words_written = the total
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <barrier.h>
#include <defs.h>
#include <handshake.h>
#include <mram.h>

#define MAX_ROUNDS 8
#define MAX_WORDS 8

__host uint32_t nr_rounds;
__host uint32_t words_written;
/* Twice what the rounds need: a tasklet that reads a stale base writes past the rounds' words. */
__mram_noinit uint64_t output[2 * MAX_ROUNDS * NR_TASKLETS * MAX_WORDS];

BARRIER_INIT(round_barrier, NR_TASKLETS);
uint32_t base;
uint32_t prefix_after[NR_TASKLETS];
uint64_t words[NR_TASKLETS][MAX_WORDS];

int main(void)
{
    uint32_t id = me();
    if (id == 0) {
        base = 0;
    }
    barrier_wait(&round_barrier);
    for (uint32_t round = 0; round < nr_rounds; round++) {
        uint32_t count = 1 + (7 * id + 3 * round) % MAX_WORDS;
        for (uint32_t i = 0; i < count; i++) {
            words[id][i] = ((uint64_t)round << 16) | (id << 8) | i;
        }
        uint32_t prefix = 0;
        if (id > 0) {
            handshake_wait_for(id - 1);
            prefix = prefix_after[id - 1];
        }
        prefix_after[id] = prefix + count;
        if (id < NR_TASKLETS - 1) {
            handshake_notify();
        }
        barrier_wait(&round_barrier);
        mram_write(words[id], &output[base + prefix], count * sizeof(uint64_t));
        if (id == NR_TASKLETS - 1) {
            base += prefix + count;
            words_written = base;
        }
    }
    return 0;
}
