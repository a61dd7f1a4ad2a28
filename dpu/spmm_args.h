/*
 * Arguments of the SpMM kernels (dpu/spmm_csr.c, dpu/spmm_coo.c), shared with the host: the Rust mirror in
 * src/pim/abi.rs is checked against this file by tests/pim_abi.rs (sizes and field offsets).
 *
 * Every DPU holds one block of A (its rows, the columns it sees renumbered from 0) in its MRAM heap, written
 * once; per call the host writes X (this DPU's rows of X, `nr_features` wide) and reads Y back. All offsets
 * are bytes from the start of the MRAM heap (DPU_MRAM_HEAP_POINTER) and multiples of 8.
 *
 * A block's structure (row pointers, columns) and its values are separate arrays, the values first, at the same
 * offset on every DPU: a matrix whose values change at every call (attention) gets them with one parallel write
 * of that region, and its structure never moves again.
 *
 * Only <stdint.h>: the host's C compiler reads this file too.
 */
#ifndef PIMGNN_SPMM_ARGS_H
#define PIMGNN_SPMM_ARGS_H

#include <stdint.h>

/* The most tasklets the kernels are built with (a v1A DPU's threads; a v1B build has 16), the size of the work
 * table; the host gives work to 1..NR_TASKLETS of them. */
#define SPMM_MAX_TASKLETS 24
/* Features per pass over a tasklet's nonzeros: one X DMA reads at most this many features of one row, one
 * Y DMA writes this many accumulators (64 x 4 B = 256 B, far below the 2,048-byte DMA limit). */
#define SPMM_FEATURE_CHUNK 64
/* Entries per DMA when a kernel walks its row pointers, its nonzeros' indices and their values (spmm_kernel.h's
 * readers): 128 bytes of 4-byte entries, 256 of COO's 8-byte indices. */
#define SPMM_READ_ENTRIES 32
/* A tasklet shares at most its first and its last row with its neighbours. */
#define SPMM_MAX_PARTIALS 2

/* What a call computes (spmm_call_args.mode). */
#define SPMM_MODE_SPMM 0
/* SDDMM over the block's structure: for each nonzero (i, j), <P_i, Q_j> over the call's features. Q takes X's
 * place and layout, P has one row per row of the block at p_offset, and the results (the accumulator type) go to
 * out_offset in nonzero order, except where a tasklet's range starts or ends at an odd nonzero: DMAs move whole
 * 8-byte words, so that result goes to the tasklet's edge slot (SDDMM_EDGE_FIRST or _LAST, 8 bytes each, the
 * value in the first 4) and no two tasklets write one word. */
#define SPMM_MODE_SDDMM 1
/* SpMM with attention weights computed on the DPU (f32 kernels only): value set h's value of nonzero (i, j) is
 * w = 2^x, x = min(0, S_j > N_i ? A_i + S_j : B_i + S'_j), the scores in base-2 fixed point (struct
 * attention_column, struct attention_row): GAT's exp(LeakyReLU(e_ij) - max_i) with the row's largest score
 * taken off on the host. The host gives each head's features a column of ones, whose sum is the softmax's
 * denominator. */
#define SPMM_MODE_ATTENTION 2
/* Fraction bits of the attention scores' fixed point (x / 2^ATTENTION_FRACTION_BITS). */
#define ATTENTION_FRACTION_BITS 20
/* The table of 2^(-k / ATTENTION_EXP2_ENTRIES) (the __host WRAM array attention_exp2, Q31) takes the top
 * ATTENTION_EXP2_BITS of a score's fraction. */
#define ATTENTION_EXP2_BITS 9
#define ATTENTION_EXP2_ENTRIES (1 << ATTENTION_EXP2_BITS)
#define SDDMM_EDGE_FIRST 0
#define SDDMM_EDGE_LAST 1
/* SDDMM results a tasklet keeps in WRAM before one write (even, so that every write is whole words). */
#define SDDMM_RESULT_BUFFER 32

/* A nonzero's value as stored in MRAM: f32 bits, or an integer sign-extended to 32 bits (i32, i16, i8). */
typedef union {
    float f32;
    int32_t i32;
} spmm_value;

/* A column's attention scores for one value set (head): its source score s_j and slope * s_j, both times log2(e) in fixed point. */
struct attention_column {
    int32_t source;
    int32_t sloped;
};

/* A row's for one value set, with d_i its target score and m_i
 * its largest LeakyReLU(d_i + s_j): threshold = -d_i (e_ij > 0 where source > threshold), above = d_i - m_i,
 * below = slope * d_i - m_i, all times log2(e) in fixed point. */
struct attention_row {
    int32_t threshold;
    int32_t above;
    int32_t below;
    int32_t reserved; /* keeps the size a multiple of 8 */
};

/* Where a COO nonzero lies; the entries are sorted by row. */
struct spmm_coo_index {
    uint32_t row;
    uint32_t column;
};

/*
 * One tasklet's work: nonzeros [nz_begin, nz_end) of the DPU's block, which lie in rows [row_begin, row_end); every
 * row of that range ends at or after nz_begin. Rows of that range without nonzeros are written as zeros. The rows
 * listed in partial_rows (at most the first and the last) are shared with the neighbouring tasklets: their sums go
 * to the tasklet's partial slots and are added up, in tasklet order, after a barrier. Every other row is written by
 * this tasklet alone. A tasklet with nothing to do has nz_begin == nz_end and row_begin == row_end.
 */
struct spmm_tasklet_work {
    uint32_t nz_begin;
    uint32_t nz_end;
    uint32_t row_begin;
    uint32_t row_end;
    uint32_t nr_partials;
    uint32_t partial_rows[SPMM_MAX_PARTIALS];
    /* Index in the DPU's wide-row list (spmm_matrix_args) of the first wide row at or after row_begin. */
    uint32_t wide_begin;
};

/* This DPU's block of A, written once when the matrix is loaded. */
struct spmm_matrix_args {
    uint32_t nr_rows;
    uint32_t nr_nonzeros;
    /* nr_rows + 1 row pointers (uint32_t, local nonzero indices): CSR, and COO in the i8 and i16 kernels, whose walk
     * with X per nonzero counts a row's nonzeros by them (spmm_kernel.h's spmm_walk_units); unused by the other COO
     * kernels. */
    uint32_t row_ptr_offset;
    /* CSR: uint32_t columns[nr_nonzeros]; COO: struct spmm_coo_index[nr_nonzeros]. */
    uint32_t indices_offset;
    /* spmm_value values[nr_nonzeros], in the order of the indices. */
    uint32_t values_offset;
    /* Tasklets with work (the others only join the barrier). */
    uint32_t nr_tasklets;
    /* Rows of X this block's columns address (its column numbering's size): at most 2^16, with rows of at most
     * 2^16 - 1 bytes, lets the kernels find a row with a 16-bit multiply. */
    uint32_t nr_x_rows;
    /* The block's wide rows (see spmm_call_args.y_narrow): nr_wide_rows local row numbers (uint32_t), ascending. */
    uint32_t wide_rows_offset;
    uint32_t nr_wide_rows;
    uint32_t reserved; /* keeps the size a multiple of 8 */
    struct spmm_tasklet_work tasklets[SPMM_MAX_TASKLETS];
};

/* One call, the same on every DPU. */
struct spmm_call_args {
    /* Row length of X and Y (SDDMM: of Q and P) in elements: even, and a multiple of 8 bytes of X. */
    uint32_t nr_features;
    /* X (SDDMM: Q): rows of the value type, nr_features each, in the DPU's column numbering. */
    uint32_t x_offset;
    /* Y: nr_rows rows of accumulators (int32 or float), nr_features each; with y_narrow, of int16_t. */
    uint32_t y_offset;
    /* SPMM_MAX_TASKLETS x SPMM_MAX_PARTIALS rows of accumulators, nr_features each. */
    uint32_t partials_offset;
    /* SPMM_MODE_SPMM or SPMM_MODE_SDDMM; the three offsets below are SDDMM's. */
    uint32_t mode;
    /* P: nr_rows rows of the value type, nr_features each. */
    uint32_t p_offset;
    /* nr_nonzeros accumulators, rounded up to even. */
    uint32_t out_offset;
    /* SPMM_MAX_TASKLETS x 2 edge slots of 8 bytes. */
    uint32_t edges_offset;
    /* SpMM: the values of features [h * head_features, (h + 1) * head_features) are set h of the call's value
     * sets, nr_nonzeros spmm_values each at values_offset + h * values_stride; head_features is a multiple of 8
     * bytes of X and divides nr_features. One set (the block's own values): head_features = nr_features and
     * values_offset = the matrix's. Attention heads are value sets: a head's features are one feature group. */
    uint32_t head_features;
    uint32_t values_offset;
    uint32_t values_stride;
    /* SPMM_MODE_ATTENTION: set h's struct attention_column of each X row (column) at column_scores_offset + h *
     * column_scores_stride + column * 8, its struct attention_row of each row at row_scores_offset + h *
     * row_scores_stride + row * 16. */
    uint32_t column_scores_offset;
    uint32_t column_scores_stride;
    uint32_t row_scores_offset;
    uint32_t row_scores_stride;
    /* SpMM over the block's own values, i8 kernels: when set, Y comes back in 16 bits. A row the block's
     * wide-row list does not name goes to Y as int16_t, row * nr_features + f at y_offset; the list's k-th row,
     * whose sums may not fit 16 bits, goes as 32-bit accumulators to row k of y_wide_offset, and its int16_t row
     * is left unwritten. The host lists a row as wide unless its values' magnitudes times the value type's
     * largest magnitude sum to at most INT16_MAX. */
    uint32_t y_narrow;
    uint32_t y_wide_offset;
    /* SpMM over the block's values (no attention): when set, X comes as one row per nonzero, in the block's nonzero
     * order and cut into units of 8 bytes (SPMM_UNIT features): unit u of nonzero k at x_offset + (u *
     * x_unit_stride + k) * 8. A pass then reads its unit of every nonzero in order, 32 per DMA, and needs no
     * column; the host sends nr_nonzeros rows instead of nr_x_rows. */
    uint32_t x_per_nonzero;
    /* Entries (of 8 bytes) from one unit's nonzeros to the next's: at least nr_nonzeros, even. */
    uint32_t x_unit_stride;
};

#endif /* PIMGNN_SPMM_ARGS_H */
