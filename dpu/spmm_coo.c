/*
 * SpMM Y = A X over one COO block of A per DPU, nonzeros sorted by row (see spmm_kernel.h for the work split
 * and data movement).
 *
 * A tasklet walks its nonzeros' indices and values in step (spmm_kernel.h's readers): a row's nonzeros are the run of entries carrying
 * its index; rows of the tasklet's range that no entry names are written as zeros. No row pointers are
 * stored, which pays off when most rows of a block are empty (2D tiles, hypersparse graphs).
 */
/* A nonzero's index: struct spmm_coo_index. */
#define SPMM_INDEX_BYTES 8
#include "spmm_kernel.h"

_Static_assert(sizeof(struct spmm_coo_index) == SPMM_INDEX_BYTES, "a COO index is 8 bytes");

/* The readers' blocks (spmm_kernel.h): indices and values. */
SPMM_READ_BLOCK(index_block, SPMM_INDEX_BYTES);
SPMM_READ_BLOCK(value_block, sizeof(spmm_value));

/* spmm_kernel.h's spmm_walk for a COO block. */
static inline __attribute__((always_inline)) void spmm_walk(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                                            uint32_t first, uint32_t width, uint32_t set,
                                                            uint32_t values_at, enum spmm_row_addressing addressing,
                                                            enum spmm_y_width y_width) {
    const struct spmm_scores scores = spmm_scores_of(set);
    struct spmm_nonzeros nonzeros =
        spmm_nonzeros_from(index_block[tasklet], (spmm_value *)value_block[tasklet], values_at, work->nz_begin);
    spmm_acc *sum = row_sum[tasklet];
    struct spmm_batch batch = spmm_batch_start(first, width);
    const uint32_t y_row_bytes = spmm_y_row_bytes();
    uint32_t y_at = spmm_y_at(work->row_begin, first);
    struct spmm_wide_cursor wide = spmm_wide_start(work, tasklet);
    uint32_t k = work->nz_begin;
    for (uint32_t row = work->row_begin; row < work->row_end; row++) {
        const struct spmm_coo_index *index = (const struct spmm_coo_index *)nonzeros.index;
        if (k < work->nz_end && index->row == row)
            spmm_row_scores(scores, tasklet, row);
        while (k < work->nz_end && index->row == row) {
            spmm_batch_push(&batch, tasklet, sum, spmm_nonzero_value(scores, tasklet, *nonzeros.value, index->column),
                            index->column, addressing);
            spmm_nonzeros_next(&nonzeros);
            index = (const struct spmm_coo_index *)nonzeros.index;
            k++;
        }
        spmm_batch_finish(&batch, tasklet, sum);
        spmm_store(work, tasklet, row, sum, y_at, first, width, &wide, y_width);
        y_at += y_row_bytes;
    }
}

static void sddmm_pass(const struct spmm_tasklet_work *work, uint32_t tasklet) {
    struct spmm_reader indices;
    const struct spmm_coo_index *index =
        spmm_read_from(&indices, index_block[tasklet], matrix.indices_offset, work->nz_begin, SPMM_INDEX_BYTES);
    struct sddmm_results out;
    sddmm_start(&out, work);
    const int one_chunk = call.nr_features <= SPMM_FEATURE_CHUNK;
    uint32_t p_row = UINT32_MAX;
    for (uint32_t k = work->nz_begin; k < work->nz_end; k++) {
        if (one_chunk && index->row != p_row) {
            p_row = index->row;
            sddmm_read_p(tasklet, p_row, 0, call.nr_features);
        }
        sddmm_put(&out, tasklet, sddmm_dot(tasklet, index->row, index->column, one_chunk));
        index = spmm_read_next(&indices, index, SPMM_INDEX_BYTES);
    }
    sddmm_flush(&out, tasklet);
}
