/*
 * SpMM Y = A X over one CSR block of A per DPU (see spmm_kernel.h for the work split and data movement).
 *
 * A tasklet walks its rows' pointers, and its nonzeros' columns and values in step (spmm_kernel.h's readers); row
 * r's nonzeros within the tasklet's range are [max(row_ptr[r], nz_begin), min(row_ptr[r + 1], nz_end)).
 */
/* A nonzero's index: its column. */
#define SPMM_INDEX_BYTES 4
#include "spmm_kernel.h"

/* The readers' blocks (spmm_kernel.h): row pointers and columns; the values' block is the header's. */
SPMM_READ_BLOCK(row_ptr_block, sizeof(uint32_t));
SPMM_READ_BLOCK(column_block, SPMM_INDEX_BYTES);

/* The tasklet's reader of its rows' pointers, at its first row's. */
static inline const uint32_t *csr_row_ptrs(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                           struct spmm_reader *reader) {
    return spmm_read_from(reader, row_ptr_block[tasklet], matrix.row_ptr_offset, work->row_begin, sizeof(uint32_t));
}

/* spmm_kernel.h's spmm_walk for a CSR block. */
static inline __attribute__((always_inline)) void spmm_walk(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                                            uint32_t first, uint32_t width, uint32_t set,
                                                            uint32_t values_at, enum spmm_row_addressing addressing,
                                                            enum spmm_y_width y_width) {
    const struct spmm_scores scores = spmm_scores_of(set);
    struct spmm_reader row_ptrs;
    const uint32_t *row_ptr = csr_row_ptrs(work, tasklet, &row_ptrs);
    struct spmm_nonzeros nonzeros =
        spmm_nonzeros_from(column_block[tasklet], (spmm_value *)value_block[tasklet], values_at, work->nz_begin);
    spmm_acc *sum = row_sum[tasklet];
    struct spmm_batch batch = spmm_batch_start(first, width);
    const uint32_t y_row_bytes = spmm_y_row_bytes();
    uint32_t y_at = spmm_y_at(work->row_begin, first);
    struct spmm_rows_out out = spmm_rows_out_start(work, tasklet, first);
    uint32_t row_start = *row_ptr;
    for (uint32_t row = work->row_begin; row < work->row_end; row++) {
        row_ptr = spmm_read_next(&row_ptrs, row_ptr, sizeof(uint32_t));
        const uint32_t row_stop = *row_ptr;
        const uint32_t begin = row_start > work->nz_begin ? row_start : work->nz_begin;
        const uint32_t end = row_stop < work->nz_end ? row_stop : work->nz_end;
        if (begin < end)
            spmm_row_scores(scores, tasklet, row);
        for (uint32_t k = begin; k < end; k++) {
            const uint32_t column = *(const uint32_t *)nonzeros.index;
            spmm_batch_push(&batch, tasklet, sum, spmm_nonzero_value(scores, tasklet, *nonzeros.value, column), column,
                            addressing);
            spmm_nonzeros_next(&nonzeros);
        }
        spmm_batch_finish(&batch, tasklet, sum);
        spmm_store(&out, tasklet, row, sum, y_at, first, width, y_width);
        y_at += y_row_bytes;
        row_start = row_stop;
    }
}

#if SPMM_X_PER_NONZERO
static void *spmm_row_ptr_block(uint32_t tasklet) {
    return row_ptr_block[tasklet];
}
#endif

static void sddmm_pass(const struct spmm_tasklet_work *work, uint32_t tasklet) {
    struct spmm_reader row_ptrs, columns;
    const uint32_t *row_ptr = csr_row_ptrs(work, tasklet, &row_ptrs);
    const uint32_t *column =
        spmm_read_from(&columns, column_block[tasklet], matrix.indices_offset, work->nz_begin, SPMM_INDEX_BYTES);
    struct sddmm_results out;
    sddmm_start(&out, work);
    const int one_chunk = call.nr_features <= SPMM_FEATURE_CHUNK;
    uint32_t row_start = *row_ptr;
    for (uint32_t row = work->row_begin; row < work->row_end; row++) {
        row_ptr = spmm_read_next(&row_ptrs, row_ptr, sizeof(uint32_t));
        const uint32_t row_stop = *row_ptr;
        const uint32_t begin = row_start > work->nz_begin ? row_start : work->nz_begin;
        const uint32_t end = row_stop < work->nz_end ? row_stop : work->nz_end;
        if (one_chunk && begin < end)
            sddmm_read_p(tasklet, row, 0, call.nr_features);
        for (uint32_t k = begin; k < end; k++) {
            sddmm_put(&out, tasklet, sddmm_dot(tasklet, row, *column, one_chunk));
            column = spmm_read_next(&columns, column, SPMM_INDEX_BYTES);
        }
        row_start = row_stop;
    }
    sddmm_flush(&out, tasklet);
}
