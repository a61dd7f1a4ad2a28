/*
 * handshake_order.c: DMA order after a handshake (the pattern of kernels that append variable-length chunks
 * and end the output with a marker).
 *
 * Tasklet t appends count(t) = 1 + (3t + 2) % 7 words: it waits for tasklet t - 1 to hand over the start
 * position, hands its own end to tasklet t + 1, then mram_writes its words followed by an end marker. The next
 * tasklet's chunk starts on that marker and overwrites it, so tasklet t's mram_write must land before tasklet
 * t + 1's. On a DPU it does: after the rendezvous the notifier is ahead, and the waiter still has to finish
 * handshake_wait_for and read the position. (When the waiter arrives first, the two resume within a slot of
 * each other on a DPU, a race; the counts here make tasklet 1 arrive after tasklet 0, as in the kernel.)
 *
 * DPU outputs:  output[] (MRAM, u64): for each tasklet t in order, its words (t << 8) | i for i < count(t),
 *               then END_MARKER; total_words = the number of chunk words (without the marker)
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>
#include <handshake.h>
#include <mram.h>

#define MAX_WORDS 7
#define END_MARKER 0xFFFFFFFFFFFFFFFFull

__host uint32_t total_words;
__mram_noinit uint64_t output[NR_TASKLETS * MAX_WORDS + 1];

uint32_t end_of[NR_TASKLETS];
uint64_t chunk[NR_TASKLETS][MAX_WORDS + 1];

int main(void)
{
    uint32_t id = me();
    uint32_t count = 1 + (3 * id + 2) % MAX_WORDS;
    for (uint32_t i = 0; i < count; i++) {
        chunk[id][i] = (id << 8) | i;
    }
    chunk[id][count] = END_MARKER;
    uint32_t start = 0;
    if (id > 0) {
        handshake_wait_for(id - 1);
        start = end_of[id - 1];
    }
    end_of[id] = start + count;
    if (id < NR_TASKLETS - 1) {
        handshake_notify();
    } else {
        total_words = start + count;
    }
    mram_write(chunk[id], &output[start], (count + 1) * sizeof(uint64_t));
    return 0;
}
