/*
 * isolation.c: every DPU has its own WRAM and MRAM. Each tasklet writes values derived from the DPU's id (given
 * by the host) into WRAM, into a named MRAM array and into the MRAM heap.
 *
 * Host input:   dpu_id (a different value per DPU, e.g. its index, with dpu_prepare_xfer/dpu_push_xfer)
 * DPU outputs:  wram_ids[t] = dpu_id * ID_STRIDE + t                          (ID_STRIDE = 1000)
 *               mram_ids[t] = ((uint64_t)dpu_id << 32) | t                     (MRAM, named array)
 *               heap word t (at DPU_MRAM_HEAP_POINTER + 8 t) = ((uint64_t)dpu_id << 32) | t | HEAP_TAG
 *               (HEAP_TAG = 1 << 31)
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#include <defs.h>
#include <mram.h>

#define ID_STRIDE 1000
#define HEAP_TAG (1u << 31)

__host uint32_t dpu_id;
__host uint32_t wram_ids[NR_TASKLETS];

__mram_noinit uint64_t mram_ids[NR_TASKLETS];

__dma_aligned uint64_t scratch[NR_TASKLETS];

int main(void)
{
    uint32_t id = me();
    wram_ids[id] = dpu_id * ID_STRIDE + id;

    scratch[id] = ((uint64_t)dpu_id << 32) | id;
    mram_write(&scratch[id], &mram_ids[id], sizeof(uint64_t));

    scratch[id] |= HEAP_TAG;
    uint32_t heap = (uint32_t)DPU_MRAM_HEAP_POINTER;
    mram_write(&scratch[id], (__mram_ptr void *)(heap + id * sizeof(uint64_t)), sizeof(uint64_t));
    return 0;
}
