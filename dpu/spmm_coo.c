/*
 * SpMM Y = A X over one COO block of A per DPU, nonzeros sorted by row (see spmm_kernel.h for the work split
 * and data movement).
 *
 * A tasklet walks its nonzeros with one sequential reader: a row's nonzeros are the run of entries carrying
 * its index; rows of the tasklet's range that no entry names are written as zeros. No row pointers are
 * stored, which pays off when most rows of a block are empty (2D tiles, hypersparse graphs).
 */
#define SEQREAD_CACHE_SIZE 128
#include <seqread.h>

#include "spmm_kernel.h"

#if SEQREAD_CACHE_SIZE != SPMM_SEQREAD
#error "SEQREAD_CACHE_SIZE must be SPMM_SEQREAD"
#endif

/* seqread cache (2 x SEQREAD_CACHE_SIZE) for the nonzeros, aligned as seqread needs (SPMM_SEQREAD_ALIGNED). */
static SPMM_SEQREAD_ALIGNED uint8_t nonzero_cache[NR_TASKLETS][2 * SEQREAD_CACHE_SIZE];

static void spmm_pass(const struct spmm_tasklet_work *work, uint32_t tasklet, uint32_t first, uint32_t width) {
    seqreader_t nonzeros;
    const struct spmm_coo_nonzero *nonzero = seqread_init(
        (seqreader_buffer_t)nonzero_cache[tasklet],
        (__mram_ptr void *)(spmm_heap() + matrix.nonzeros_offset +
                            work->nz_begin * (uint32_t)sizeof(struct spmm_coo_nonzero)),
        &nonzeros);
    spmm_acc *sum = row_sum[tasklet];
    uint32_t k = work->nz_begin;
    for (uint32_t row = work->row_begin; row < work->row_end; row++) {
        spmm_clear(sum, width);
        while (k < work->nz_end && nonzero->row == row) {
            spmm_accumulate(sum, incoming[tasklet], nonzero->value, nonzero->column, first, width);
            nonzero = seqread_get((void *)nonzero, sizeof(struct spmm_coo_nonzero), &nonzeros);
            k++;
        }
        spmm_store(work, tasklet, row, sum, first, width);
    }
}
