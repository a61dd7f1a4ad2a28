/*
 * SpMM Y = A X over one COO block of A per DPU, nonzeros sorted by row (see spmm_kernel.h for the work split
 * and data movement).
 *
 * A tasklet walks its nonzeros' indices and values with two sequential readers: a row's nonzeros are the run of entries carrying
 * its index; rows of the tasklet's range that no entry names are written as zeros. No row pointers are
 * stored, which pays off when most rows of a block are empty (2D tiles, hypersparse graphs).
 */
#define SEQREAD_CACHE_SIZE 128
#include <seqread.h>

#include "spmm_kernel.h"

#if SEQREAD_CACHE_SIZE != SPMM_SEQREAD
#error "SEQREAD_CACHE_SIZE must be SPMM_SEQREAD"
#endif

/* seqread caches (2 x SEQREAD_CACHE_SIZE each) for the indices and the values, aligned as seqread needs
 * (SPMM_SEQREAD_ALIGNED). */
static SPMM_SEQREAD_ALIGNED uint8_t index_cache[NR_TASKLETS][2 * SEQREAD_CACHE_SIZE];
static SPMM_SEQREAD_ALIGNED uint8_t value_cache[NR_TASKLETS][2 * SEQREAD_CACHE_SIZE];

/* spmm_pass, built once with X rows found by 16-bit multiplies (`narrow`) and once without. */
static inline __attribute__((always_inline)) void coo_pass(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                                           uint32_t first, uint32_t width, uint32_t set,
                                                           uint32_t values_at, int narrow) {
    const struct spmm_scores scores = spmm_scores_of(set);
    seqreader_t indices, values;
    const struct spmm_coo_index *index = seqread_init(
        (seqreader_buffer_t)index_cache[tasklet],
        (__mram_ptr void *)(spmm_heap() + matrix.indices_offset +
                            work->nz_begin * (uint32_t)sizeof(struct spmm_coo_index)),
        &indices);
    const spmm_value *value = seqread_init(
        (seqreader_buffer_t)value_cache[tasklet],
        (__mram_ptr void *)(spmm_heap() + values_at + work->nz_begin * (uint32_t)sizeof(spmm_value)),
        &values);
    spmm_acc *sum = row_sum[tasklet];
    struct spmm_batch batch = spmm_batch_start(first, width);
    const uint32_t y_row_bytes = spmm_y_row_bytes();
    uint32_t y_at = spmm_y_at(work->row_begin, first);
    uint32_t k = work->nz_begin;
    for (uint32_t row = work->row_begin; row < work->row_end; row++) {
        if (k < work->nz_end && index->row == row)
            spmm_row_scores(scores, tasklet, row);
        while (k < work->nz_end && index->row == row) {
            spmm_batch_push(&batch, tasklet, sum, spmm_nonzero_value(scores, tasklet, *value, index->column),
                            index->column, narrow);
            index = seqread_get((void *)index, sizeof(struct spmm_coo_index), &indices);
            value = seqread_get((void *)value, sizeof(spmm_value), &values);
            k++;
        }
        spmm_batch_finish(&batch, tasklet, sum);
        spmm_store(work, tasklet, row, sum, y_at, first, width);
        y_at += y_row_bytes;
    }
}

static void spmm_pass(const struct spmm_tasklet_work *work, uint32_t tasklet, uint32_t first, uint32_t width,
                      uint32_t set, uint32_t values_at) {
    if (spmm_narrow_rows())
        coo_pass(work, tasklet, first, width, set, values_at, 1);
    else
        coo_pass(work, tasklet, first, width, set, values_at, 0);
}

static void sddmm_pass(const struct spmm_tasklet_work *work, uint32_t tasklet) {
    seqreader_t indices;
    const struct spmm_coo_index *index = seqread_init(
        (seqreader_buffer_t)index_cache[tasklet],
        (__mram_ptr void *)(spmm_heap() + matrix.indices_offset +
                            work->nz_begin * (uint32_t)sizeof(struct spmm_coo_index)),
        &indices);
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
        index = seqread_get((void *)index, sizeof(struct spmm_coo_index), &indices);
    }
    sddmm_flush(&out, tasklet);
}
