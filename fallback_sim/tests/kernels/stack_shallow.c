/*
 * stack_shallow.c: a kernel whose own frames are a few bytes deep, run long enough for the simulator's block hook
 * to take its slow path (every quantum) and for its DMAs to wait their turn, both of which push the harness's
 * frames below the kernel's on the tasklet's native stack.
 *
 * Host input:   none
 * DPU outputs:  sums[t] = the sum of the first words read, for t < NR_TASKLETS
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>
#include <mram.h>

#define ROUNDS 20000

__mram_noinit uint64_t words[64];
__dma_aligned uint64_t block[NR_TASKLETS][8];
__host uint64_t sums[NR_TASKLETS];

int main(void)
{
    const uint32_t tasklet = me();
    uint64_t sum = 0;
    for (uint32_t round = 0; round < ROUNDS; round++) {
        if (round % 4096 == 0)
            mram_read(&words[(round / 4096) % 8 * 8], block[tasklet], sizeof(block[tasklet]));
        sum += block[tasklet][round % 8] ^ round;
    }
    sums[tasklet] = sum;
    return 0;
}
