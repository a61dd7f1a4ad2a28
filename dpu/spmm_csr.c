/*
 * SpMM Y = A X over one CSR block of A per DPU (see spmm_kernel.h for the work split and data movement).
 *
 * A tasklet walks its rows' pointers, its nonzeros' columns and their values with three sequential readers; row
 * r's nonzeros within the tasklet's range are [max(row_ptr[r], nz_begin), min(row_ptr[r + 1], nz_end)).
 */
#define SEQREAD_CACHE_SIZE 128
#include <seqread.h>

#include "spmm_kernel.h"

#if SEQREAD_CACHE_SIZE != SPMM_SEQREAD
#error "SEQREAD_CACHE_SIZE must be SPMM_SEQREAD"
#endif

/* seqread caches (2 x SEQREAD_CACHE_SIZE each): row pointers, columns and values. Aligned to SEQREAD_CACHE_SIZE, as
 * seqread_alloc's are: the SDK's readers tell when to refill from the low bits of the pointer's WRAM address, so
 * a cache 8-byte aligned only would give wrong elements (SPMM_SEQREAD_ALIGNED, spmm_kernel.h). */
static SPMM_SEQREAD_ALIGNED uint8_t row_ptr_cache[NR_TASKLETS][2 * SEQREAD_CACHE_SIZE];
static SPMM_SEQREAD_ALIGNED uint8_t column_cache[NR_TASKLETS][2 * SEQREAD_CACHE_SIZE];
static SPMM_SEQREAD_ALIGNED uint8_t value_cache[NR_TASKLETS][2 * SEQREAD_CACHE_SIZE];

/* The tasklet's readers of its rows' pointers and of its nonzeros' columns, at their first elements. */
static inline const uint32_t *csr_row_ptrs(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                           seqreader_t *reader) {
    return seqread_init(
        (seqreader_buffer_t)row_ptr_cache[tasklet],
        (__mram_ptr void *)(spmm_heap() + matrix.row_ptr_offset + work->row_begin * (uint32_t)sizeof(uint32_t)),
        reader);
}

static inline const uint32_t *csr_columns(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                          seqreader_t *reader) {
    return seqread_init(
        (seqreader_buffer_t)column_cache[tasklet],
        (__mram_ptr void *)(spmm_heap() + matrix.indices_offset + work->nz_begin * (uint32_t)sizeof(uint32_t)),
        reader);
}

/* spmm_pass, built once with X rows found by 16-bit multiplies (`narrow`) and once without. */
static inline __attribute__((always_inline)) void csr_pass(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                                           uint32_t first, uint32_t width, uint32_t set,
                                                           uint32_t values_at, int narrow) {
    const struct spmm_scores scores = spmm_scores_of(set);
    seqreader_t row_ptrs, columns, values;
    const uint32_t *row_ptr = csr_row_ptrs(work, tasklet, &row_ptrs);
    const uint32_t *column = csr_columns(work, tasklet, &columns);
    const spmm_value *value = seqread_init(
        (seqreader_buffer_t)value_cache[tasklet],
        (__mram_ptr void *)(spmm_heap() + values_at + work->nz_begin * (uint32_t)sizeof(spmm_value)),
        &values);
    spmm_acc *sum = row_sum[tasklet];
    struct spmm_batch batch = spmm_batch_start(first, width);
    const uint32_t y_row_bytes = spmm_y_row_bytes();
    uint32_t y_at = spmm_y_at(work->row_begin, first);
    uint32_t row_start = *row_ptr;
    for (uint32_t row = work->row_begin; row < work->row_end; row++) {
        row_ptr = seqread_get((void *)row_ptr, sizeof(uint32_t), &row_ptrs);
        const uint32_t row_stop = *row_ptr;
        const uint32_t begin = row_start > work->nz_begin ? row_start : work->nz_begin;
        const uint32_t end = row_stop < work->nz_end ? row_stop : work->nz_end;
        if (begin < end)
            spmm_row_scores(scores, tasklet, row);
        for (uint32_t k = begin; k < end; k++) {
            spmm_batch_push(&batch, tasklet, sum, spmm_nonzero_value(scores, tasklet, *value, *column), *column, narrow);
            column = seqread_get((void *)column, sizeof(uint32_t), &columns);
            value = seqread_get((void *)value, sizeof(spmm_value), &values);
        }
        spmm_batch_finish(&batch, tasklet, sum);
        spmm_store(work, tasklet, row, sum, y_at, first, width);
        y_at += y_row_bytes;
        row_start = row_stop;
    }
}

static void spmm_pass(const struct spmm_tasklet_work *work, uint32_t tasklet, uint32_t first, uint32_t width,
                      uint32_t set, uint32_t values_at) {
    if (spmm_narrow_rows())
        csr_pass(work, tasklet, first, width, set, values_at, 1);
    else
        csr_pass(work, tasklet, first, width, set, values_at, 0);
}

static void sddmm_pass(const struct spmm_tasklet_work *work, uint32_t tasklet) {
    seqreader_t row_ptrs, columns;
    const uint32_t *row_ptr = csr_row_ptrs(work, tasklet, &row_ptrs);
    const uint32_t *column = csr_columns(work, tasklet, &columns);
    struct sddmm_results out;
    sddmm_start(&out, work);
    const int one_chunk = call.nr_features <= SPMM_FEATURE_CHUNK;
    uint32_t row_start = *row_ptr;
    for (uint32_t row = work->row_begin; row < work->row_end; row++) {
        row_ptr = seqread_get((void *)row_ptr, sizeof(uint32_t), &row_ptrs);
        const uint32_t row_stop = *row_ptr;
        const uint32_t begin = row_start > work->nz_begin ? row_start : work->nz_begin;
        const uint32_t end = row_stop < work->nz_end ? row_stop : work->nz_end;
        if (one_chunk && begin < end)
            sddmm_read_p(tasklet, row, 0, call.nr_features);
        for (uint32_t k = begin; k < end; k++) {
            sddmm_put(&out, tasklet, sddmm_dot(tasklet, row, *column, one_chunk));
            column = seqread_get((void *)column, sizeof(uint32_t), &columns);
        }
        row_start = row_stop;
    }
    sddmm_flush(&out, tasklet);
}
