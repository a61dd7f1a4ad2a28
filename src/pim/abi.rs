//! The SpMM kernels' argument structs and nonzero records, mirroring `dpu/spmm_args.h` field for field.
//!
//! `tests/pim_abi.rs` compiles a probe against the header and checks every size, offset and constant here, so
//! the two cannot drift apart.

use upmem::DpuCopy;

/// Tasklets the kernels are built with (`SPMM_MAX_TASKLETS`): a DPU's most, [`upmem::MAX_TASKLETS`]; plans give
/// work to 1 up to this many.
pub const MAX_TASKLETS: usize = upmem::MAX_TASKLETS;
/// Features per pass over a tasklet's nonzeros (`SPMM_FEATURE_CHUNK`).
pub const FEATURE_CHUNK: usize = 64;
/// Rows a tasklet may share with its neighbours (`SPMM_MAX_PARTIALS`).
pub const MAX_PARTIALS: usize = 2;
/// Entries (row pointers, nonzeros' indices, values) per DMA of the kernels' readers (`SPMM_READ_ENTRIES`).
pub const READ_ENTRIES: usize = 32;
/// [`CallArgs::mode`] of an SpMM call (`SPMM_MODE_SPMM`).
pub const MODE_SPMM: u32 = 0;
/// [`CallArgs::mode`] of an SDDMM call (`SPMM_MODE_SDDMM`).
pub const MODE_SDDMM: u32 = 1;
/// [`CallArgs::mode`] of an SpMM call whose values are attention weights computed on the DPUs from the scores
/// (`SPMM_MODE_ATTENTION`, f32 kernels).
pub const MODE_ATTENTION: u32 = 2;
/// Fraction bits of the attention scores' fixed point (`ATTENTION_FRACTION_BITS`).
pub const ATTENTION_FRACTION_BITS: u32 = 20;
/// Bits of a score's fraction the kernels' table of powers of two covers (`ATTENTION_EXP2_BITS`).
pub const ATTENTION_EXP2_BITS: u32 = 9;
/// Entries of that table (`ATTENTION_EXP2_ENTRIES`), the `__host` WRAM array [`ATTENTION_EXP2_SYMBOL`].
pub const ATTENTION_EXP2_ENTRIES: usize = 1 << ATTENTION_EXP2_BITS;
/// The kernels' table of `2^(-k / ATTENTION_EXP2_ENTRIES)` in Q31.
pub const ATTENTION_EXP2_SYMBOL: &str = "attention_exp2";
/// A tasklet's edge slot of its range's first result when that nonzero is odd (`SDDMM_EDGE_FIRST`).
pub const EDGE_FIRST: usize = 0;
/// A tasklet's edge slot of its range's last result when its end is odd (`SDDMM_EDGE_LAST`).
pub const EDGE_LAST: usize = 1;
/// SDDMM results a tasklet buffers before one write (`SDDMM_RESULT_BUFFER`).
pub const RESULT_BUFFER: usize = 32;

/// `struct spmm_tasklet_work`: one tasklet's nonzeros and rows.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskletWork {
    /// First nonzero (DPU-local index).
    pub nz_begin: u32,
    /// One past the last nonzero.
    pub nz_end: u32,
    /// First row written or contributed to.
    pub row_begin: u32,
    /// One past the last row.
    pub row_end: u32,
    /// How many of `partial_rows` are used.
    pub nr_partials: u32,
    /// Rows shared with the neighbouring tasklets, ascending.
    pub partial_rows: [u32; MAX_PARTIALS],
    /// Index in the DPU's wide-row list ([`MatrixArgs::wide_rows_offset`]) of the first wide row at or after
    /// `row_begin`.
    pub wide_begin: u32,
}

/// `struct spmm_matrix_args`: one DPU's block of A, written once.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixArgs {
    /// Rows of the block.
    pub nr_rows: u32,
    /// Nonzeros of the block.
    pub nr_nonzeros: u32,
    /// MRAM heap offset of the row pointers: CSR's, and COO's for types that take X per nonzero
    /// ([`PimElement::X_PER_NONZERO`](super::PimElement), whose walk counts a row's nonzeros by them); unused by
    /// other COO blocks.
    pub row_ptr_offset: u32,
    /// MRAM heap offset of the nonzeros' indices: CSR columns (`u32`), or COO [`CooIndex`]es.
    pub indices_offset: u32,
    /// MRAM heap offset of the nonzeros' values (`spmm_value`, [`PimElement::value_bits`](super::PimElement)).
    pub values_offset: u32,
    /// Tasklets with work.
    pub nr_tasklets: u32,
    /// Rows of X the block's columns address (its column numbering's size).
    pub nr_x_rows: u32,
    /// MRAM heap offset of the block's wide rows ([`CallArgs::y_narrow`]): local row numbers (`u32`), ascending.
    pub wide_rows_offset: u32,
    /// How many rows the wide-row list holds.
    pub nr_wide_rows: u32,
    /// Keeps the size a multiple of 8.
    pub reserved: u32,
    /// Work of every tasklet (empty for those without).
    pub tasklets: [TaskletWork; MAX_TASKLETS],
}

/// `struct spmm_call_args`: one SpMM or SDDMM call, the same on every DPU.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallArgs {
    /// Row length of X and Y (SDDMM: of Q and P) in elements (padded).
    pub nr_features: u32,
    /// MRAM heap offset of X (SDDMM: Q).
    pub x_offset: u32,
    /// MRAM heap offset of Y.
    pub y_offset: u32,
    /// MRAM heap offset of the tasklets' partial rows.
    pub partials_offset: u32,
    /// [`MODE_SPMM`] or [`MODE_SDDMM`].
    pub mode: u32,
    /// SDDMM: MRAM heap offset of P (one row per row of the block).
    pub p_offset: u32,
    /// SDDMM: MRAM heap offset of the results, one accumulator per nonzero.
    pub out_offset: u32,
    /// SDDMM: MRAM heap offset of the tasklets' edge slots (2 of 8 bytes each).
    pub edges_offset: u32,
    /// SpMM: features per value set (an attention head), dividing `nr_features`; `nr_features` for one set.
    pub head_features: u32,
    /// SpMM: MRAM heap offset of the first value set ([`MatrixArgs::values_offset`] for the block's own).
    pub values_offset: u32,
    /// SpMM: bytes from one value set to the next.
    pub values_stride: u32,
    /// Attention: MRAM heap offset of value set 0's [`AttentionColumn`]s, one per row of X.
    pub column_scores_offset: u32,
    /// Attention: bytes from one value set's column scores to the next's.
    pub column_scores_stride: u32,
    /// Attention: MRAM heap offset of value set 0's [`AttentionRow`]s, one per row of the block.
    pub row_scores_offset: u32,
    /// Attention: bytes from one value set's row scores to the next's.
    pub row_scores_stride: u32,
    /// SpMM over the block's own values, i8 kernels: nonzero to take Y in 16 bits (`i16` at `y_offset`),
    /// except the block's wide rows, whose sums may not fit: the wide-row list's `k`-th row goes in accumulators to
    /// row `k` at `y_wide_offset`.
    pub y_narrow: u32,
    /// MRAM heap offset of the wide rows' accumulators when `y_narrow` is set.
    pub y_wide_offset: u32,
    /// Nonzero when `X` comes as one row per nonzero, in the block's nonzero order, cut into units of 8 bytes:
    /// unit `u` of nonzero `k` at `x_offset + (u * x_unit_stride + k) * 8`.
    pub x_per_nonzero: u32,
    /// With `x_per_nonzero`, 8-byte entries from one unit's nonzeros to the next's.
    pub x_unit_stride: u32,
}

/// `struct attention_column`: a column's scores for one head, times `log2(e)` in fixed point.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AttentionColumn {
    /// Its source score `s_j`.
    pub source: i32,
    /// `slope * s_j`.
    pub sloped: i32,
}

/// `struct attention_row`: a row's scores for one head, times `log2(e)` in fixed point, with `d_i` its target
/// score and `m_i` its largest `LeakyReLU(d_i + s_j)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AttentionRow {
    /// `-d_i`: the score is positive where the column's `source` is above it.
    pub threshold: i32,
    /// `d_i - m_i`.
    pub above: i32,
    /// `slope * d_i - m_i`.
    pub below: i32,
    /// Padding to a multiple of 8 bytes.
    pub reserved: i32,
}

/// `struct spmm_coo_index`: where a COO nonzero lies.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CooIndex {
    /// DPU-local row.
    pub row: u32,
    /// DPU-local column (row of the DPU's X).
    pub column: u32,
}

// SAFETY: #[repr(C)] structs of u32 fields only (sizes are multiples of 4, checked against the C header by
// tests/pim_abi.rs): no padding, every bit pattern valid.
unsafe impl DpuCopy for TaskletWork {}
// SAFETY: as above, u32 fields and an array of TaskletWork.
unsafe impl DpuCopy for MatrixArgs {}
// SAFETY: as above.
unsafe impl DpuCopy for CallArgs {}
// SAFETY: as above.
unsafe impl DpuCopy for CooIndex {}
// SAFETY: as above, i32 fields only.
unsafe impl DpuCopy for AttentionColumn {}
// SAFETY: as above.
unsafe impl DpuCopy for AttentionRow {}

impl Default for MatrixArgs {
    fn default() -> Self {
        MatrixArgs {
            nr_rows: 0,
            nr_nonzeros: 0,
            row_ptr_offset: 0,
            indices_offset: 0,
            values_offset: 0,
            nr_tasklets: 0,
            nr_x_rows: 0,
            wide_rows_offset: 0,
            nr_wide_rows: 0,
            reserved: 0,
            tasklets: [TaskletWork::default(); MAX_TASKLETS],
        }
    }
}
