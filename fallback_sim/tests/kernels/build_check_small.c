/*
 * build_check_small.c: a small kernel whose DPU program size is counted by hand, for the IRAM estimate
 * (tests/build_checks.rs). Each tasklet multiplies its id by `factor` into `results`, then waits at a barrier.
 *
 * On a DPU (the SDK 2025.1's runtime for the routines, each function's .text section in librt_v1A.a / crt0.o):
 *   __bootstrap   11   crt0: clears the atomic bits, boots the tasklets, calls main
 *   __mulsi3      40   the 32-bit multiply id * factor
 *   barrier_wait  31
 *   main          12   what the DPU compiler emits at -O2: save the return address (sd, add), load factor (lw),
 *                      move the tasklet id (move r0, id), call __mulsi3, scale the id (lsl), store the result (sw),
 *                      address the barrier (move), call barrier_wait, return 0 (move), restore (ld), return (jump)
 *   total         94
 */
#include <barrier.h>
#include <defs.h>
#include <stdint.h>

BARRIER_INIT(sync, NR_TASKLETS);

__host uint32_t factor;
__host uint32_t results[NR_TASKLETS];

int main(void)
{
    uint32_t id = me();
    results[id] = id * factor;
    barrier_wait(&sync);
    return 0;
}
