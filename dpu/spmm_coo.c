/*
 * SpMM Y = A X over one COO block of A per DPU, nonzeros sorted by row (see spmm_kernel.h for the work split
 * and data movement).
 *
 * A tasklet walks its nonzeros' indices and values in step (spmm_kernel.h's readers): a row's nonzeros are the
 * run of entries carrying its index; rows of the tasklet's range that no entry names are written as zeros. The
 * walk needs no row pointers, which pays off when most rows of a block are empty (2D tiles, hypersparse graphs);
 * the i8 and i16 kernels' walk with X per nonzero reads no indices and counts rows by row pointers, which their
 * blocks have too (spmm_args.h).
 */
/* A nonzero's index: struct spmm_coo_index. */
#define SPMM_INDEX_BYTES 8
#include "spmm_kernel.h"

_Static_assert(sizeof(struct spmm_coo_index) == SPMM_INDEX_BYTES, "a COO index is 8 bytes");

/* The readers' block of indices (spmm_kernel.h); the values' block is the header's. */
SPMM_READ_BLOCK(index_block, SPMM_INDEX_BYTES);

/* The row a walk's WRAM copy of entry nz_end gets (no row's), so that the loop over a row's entries stops there. */
#define COO_END_ROW 0xffffffffu

/* Marks the end of the tasklet's entries, at MRAM address `end_at`, in the block of entries the walk `indices`
 * holds (`index` one of them), if it lies there: the block's WRAM copy is aligned to its size, and its MRAM address
 * is the one before next_at. */
static inline void coo_mark_end(const struct spmm_reader *indices, const void *index, uint32_t end_at) {
    const uint32_t block_bytes = SPMM_READ_ENTRIES * SPMM_INDEX_BYTES;
    const uint32_t offset = end_at - (indices->next_at - block_bytes);
    if (offset < block_bytes) {
        uint8_t *block = (uint8_t *)((uintptr_t)index & ~(uintptr_t)(block_bytes - 1));
        ((struct spmm_coo_index *)(block + offset))->row = COO_END_ROW;
    }
}

/*
 * spmm_kernel.h's spmm_walk for a COO block. Each row takes the entries that carry its index, one test per
 * nonzero: the walk's copy of the entry after the tasklet's last nonzero (nz_end) carries COO_END_ROW, so no
 * count of the nonzeros is kept.
 */
static inline __attribute__((always_inline)) void spmm_walk(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                                            uint32_t first, uint32_t width, uint32_t set,
                                                            uint32_t values_at, enum spmm_row_addressing addressing,
                                                            enum spmm_y_width y_width) {
    const struct spmm_scores scores = spmm_scores_of(set);
    struct spmm_nonzeros nonzeros =
        spmm_nonzeros_from(index_block[tasklet], (spmm_value *)value_block[tasklet], values_at, work->nz_begin);
    const uint32_t end_at = spmm_heap() + matrix.indices_offset + work->nz_end * SPMM_INDEX_BYTES;
    coo_mark_end(&nonzeros.indices, nonzeros.index, end_at);
    spmm_acc *sum = row_sum[tasklet];
    struct spmm_batch batch = spmm_batch_start(first, width);
    const uint32_t y_row_bytes = spmm_y_row_bytes();
    uint32_t y_at = spmm_y_at(work->row_begin, first);
    struct spmm_rows_out out = spmm_rows_out_start(work, tasklet, first);
    const struct spmm_coo_index *index = (const struct spmm_coo_index *)nonzeros.index;
    for (uint32_t row = work->row_begin; row < work->row_end; row++) {
        if (index->row == row) {
            spmm_row_scores(scores, tasklet, row);
            do {
                spmm_batch_push(&batch, tasklet, sum,
                                spmm_nonzero_value(scores, tasklet, *nonzeros.value, index->column), index->column,
                                addressing);
                if (spmm_nonzeros_next(&nonzeros))
                    coo_mark_end(&nonzeros.indices, nonzeros.index, end_at);
                index = (const struct spmm_coo_index *)nonzeros.index;
            } while (index->row == row);
        }
        spmm_batch_finish(&batch, tasklet, sum);
        spmm_store(&out, tasklet, row, sum, y_at, first, width, y_width);
        y_at += y_row_bytes;
    }
}

#if SPMM_X_PER_NONZERO
/* With X per nonzero the walk reads no indices, so the row pointers (spmm_args.h) take the indices' block. */
static void *spmm_row_ptr_block(uint32_t tasklet) {
    return index_block[tasklet];
}
#endif

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
