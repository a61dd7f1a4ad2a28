//! The seeded random inputs of the check: a sparse matrix shaped to reach every path of the SpMM kernels, and
//! dense features.

use pimgnn::pim::PimElement;
use pimgnn::{Csr, Dense};
use rand::rngs::ChaCha8Rng;
use rand::{Rng as _, RngExt, SeedableRng};

use super::compare::Exact;

/// The generator of every input: the same seed gives the same inputs on every machine.
pub type Rng = ChaCha8Rng;

/// A generator for `seed`.
pub fn rng(seed: u64) -> Rng {
    Rng::seed_from_u64(seed)
}

/// Which values a case draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// Values whose products and sums are exact in any order, so that every order of summation gives the same
    /// bits: for `f32`, multiples of 1/4 up to 4 in magnitude (see [`EXACT_F32_MAX_ROW`]).
    Exact,
    /// Values whose sums round (`f32` with full 24-bit mantissas), so that the result depends on the order of
    /// summation; integers, which wrap, are exact in any order all the same.
    Rounded,
    /// Integers of magnitude at most [`SMALL_MAX`], so that an `i8` row of up to 127 of them times any `i8`
    /// features sums within 16 bits; `f32` as [`Values::Exact`].
    Small,
}

/// The largest magnitude of [`Values::Small`].
pub const SMALL_MAX: i32 = 2;

/// Most nonzeros a row may have for sums of [`Values::Exact`] `f32` products to stay exact: a product is a
/// multiple of 1/16 of at most 16 in magnitude, so any partial sum of `n` of them is a multiple of 1/16 of at
/// most `16 n`, which `f32`'s 24-bit mantissa holds exactly while `16 n < 2^20`.
const EXACT_F32_MAX_ROW: usize = (1 << 16) - 1;

/// A value type of the SpMM kernels with the check's ways to draw it.
pub trait CheckValue: PimElement<Acc: Exact> {
    /// A value of the kind `values` says.
    fn draw(rng: &mut Rng, values: Values) -> Self;
}

impl CheckValue for f32 {
    fn draw(rng: &mut Rng, values: Values) -> Self {
        match values {
            Values::Exact | Values::Small => rng.random_range(-16i32..=16) as f32 / 4.0,
            Values::Rounded => rng.random_range(-1.0f32..1.0),
        }
    }
}

macro_rules! full_range_values {
    ($($ty:ty),*) => { $(
        impl CheckValue for $ty {
            /// Any value of the type (products and sums wrap, exactly as on the CPU), or a small one.
            fn draw(rng: &mut Rng, values: Values) -> Self {
                match values {
                    Values::Small => rng.random_range(-SMALL_MAX..=SMALL_MAX) as $ty,
                    Values::Exact | Values::Rounded => rng.next_u32() as $ty,
                }
            }
        }
    )* };
}
full_range_values!(i32, i16, i8);

/// The shape of the check's sparse matrix for a set of `dpus` DPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixShape {
    /// Rows.
    pub rows: usize,
    /// Columns (more than rows, so that column numbering bugs show).
    pub cols: usize,
    /// Nonzeros of the hub row.
    pub hub_nonzeros: usize,
}

/// Rows of the matrix per DPU of the set, up to [`MAX_ROWS`].
const ROWS_PER_DPU: usize = 40;
/// At most this many rows (plus [`TRAILING_EMPTY_ROWS`] and one), so that an `X` sent whole to every DPU of a
/// full server stays a few MiB.
const MAX_ROWS: usize = 4096;
/// Every row whose index is a multiple of this is empty (the hub excepted).
const EMPTY_EVERY: usize = 5;
/// The last rows of the matrix are empty: a DPU's block may end, or consist of, rows without nonzeros.
const TRAILING_EMPTY_ROWS: usize = 6;
/// Most nonzeros of an ordinary row (drawn uniformly from 0 to this).
const MAX_DEGREE: usize = 8;
/// Columns beyond the rows.
const EXTRA_COLUMNS: usize = 13;

impl MatrixShape {
    /// The matrix for `dpus` DPUs: about [`ROWS_PER_DPU`] rows per DPU, and a hub row longer than a DPU's share
    /// of the work, so that row blocks (which cut the work into equal shares) cut inside it, and so do the
    /// tasklets of a DPU holding part of it.
    pub fn for_dpus(dpus: usize) -> Self {
        let rows = (ROWS_PER_DPU * dpus).min(MAX_ROWS) + TRAILING_EMPTY_ROWS + 1;
        // A DPU's share of the work is its rows and nonzeros: some 40 + 130 of the ordinary rows, and its part
        // of the hub. A hub of 100 nonzeros per DPU and 400 more is longer than that from 2 DPUs on.
        let hub_nonzeros = (100 * dpus + 400).min(EXACT_F32_MAX_ROW);
        MatrixShape { rows, cols: rows + EXTRA_COLUMNS, hub_nonzeros }
    }

    /// The same matrix with a hub of at most `nonzeros`.
    pub fn with_hub_at_most(self, nonzeros: usize) -> Self {
        MatrixShape { hub_nonzeros: self.hub_nonzeros.min(nonzeros), ..self }
    }

    /// The hub row, in the middle, so that some DPU's block starts inside it.
    fn is_hub(&self, row: usize) -> bool {
        row == self.rows / 2 + 1
    }

    /// Whether row `row` is empty by construction (other rows may draw no nonzeros too).
    fn is_empty(&self, row: usize) -> bool {
        !self.is_hub(row) && (row.is_multiple_of(EMPTY_EVERY) || row >= self.rows - TRAILING_EMPTY_ROWS)
    }
}

/// A random matrix of `shape`: the hub row, empty rows (every [`EMPTY_EVERY`]-th and the last
/// [`TRAILING_EMPTY_ROWS`]), the others with 0 to [`MAX_DEGREE`] nonzeros in random columns.
pub fn matrix<T: CheckValue>(shape: MatrixShape, values: Values, rng: &mut Rng) -> Csr<T> {
    let mut row_ptr = Vec::with_capacity(shape.rows + 1);
    row_ptr.push(0u32);
    let mut col_idx = Vec::new();
    let mut entries = Vec::new();
    for row in 0..shape.rows {
        let count = match row {
            _ if shape.is_hub(row) => shape.hub_nonzeros,
            _ if shape.is_empty(row) => 0,
            _ => rng.random_range(0..=MAX_DEGREE),
        };
        for _ in 0..count {
            col_idx.push(rng.random_range(0..shape.cols as u32));
            entries.push(T::draw(rng, values));
        }
        row_ptr.push(col_idx.len() as u32);
    }
    match Csr::new(shape.rows, shape.cols, row_ptr, col_idx, entries) {
        Ok(matrix) => matrix,
        Err(error) => unreachable!("row pointers count up from 0 and columns are drawn below {}: {error}", shape.cols),
    }
}

/// A random `rows x cols` dense matrix.
pub fn dense<T: CheckValue>(rows: usize, cols: usize, values: Values, rng: &mut Rng) -> Dense<T> {
    let data = (0..rows * cols).map(|_| T::draw(rng, values)).collect();
    match Dense::from_vec(rows, cols, data) {
        Ok(dense) => dense,
        Err(error) => unreachable!("{rows} x {cols} values: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_has_a_hub_empty_rows_and_more_columns_than_rows() {
        for dpus in [1, 2, 3, 8, 9, 100, 2560] {
            let shape = MatrixShape::for_dpus(dpus);
            let a = matrix::<i32>(shape, Values::Exact, &mut rng(1));
            let lengths: Vec<usize> = a.row_ptr().windows(2).map(|w| (w[1] - w[0]) as usize).collect();
            assert_eq!(lengths[shape.rows / 2 + 1], shape.hub_nonzeros);
            // The hub is longer than a DPU's share of the work (so that row blocks cut it) when there are
            // several, and than a tasklet's share of a DPU's (so that tasklets cut it) in any case.
            let share = (a.nnz() + a.nrows()) / dpus;
            assert!(shape.hub_nonzeros > if dpus > 1 { share } else { share / 16 }, "{dpus} DPUs: {shape:?}");
            assert!(lengths[0] == 0 && lengths[5] == 0 && lengths[lengths.len() - TRAILING_EMPTY_ROWS..] == [0; 6]);
            assert!(a.ncols() > a.nrows());
        }
    }

    /// Exact `f32` values sum to the same bits in any order, up to the longest row allowed.
    #[test]
    fn exact_f32_values_sum_exactly_in_any_order() {
        let mut rng = rng(2);
        let products: Vec<f32> = (0..EXACT_F32_MAX_ROW)
            .map(|_| f32::draw(&mut rng, Values::Exact) * f32::draw(&mut rng, Values::Exact))
            .collect();
        let forward = products.iter().fold(0.0f32, |sum, p| sum + p);
        let backward = products.iter().rev().fold(0.0f32, |sum, p| sum + p);
        let pairwise: f32 = products.chunks(1000).map(|chunk| chunk.iter().sum::<f32>()).sum();
        let exact: f64 = products.iter().map(|&p| f64::from(p)).sum();
        assert_eq!((forward, backward, pairwise), (exact as f32, exact as f32, exact as f32));
        // Even when the products have the largest magnitude and the last one the smallest.
        let largest = (1..EXACT_F32_MAX_ROW).fold(0.0f32, |sum, _| sum + 16.0) + 1.0 / 16.0;
        assert_eq!(f64::from(largest), 16.0 * (EXACT_F32_MAX_ROW - 1) as f64 + 1.0 / 16.0);
    }

    #[test]
    fn rounded_f32_values_depend_on_the_order() {
        let mut rng = rng(3);
        let values: Vec<f32> = (0..1000).map(|_| f32::draw(&mut rng, Values::Rounded)).collect();
        let forward = values.iter().fold(0.0f32, |sum, v| sum + v);
        let backward = values.iter().rev().fold(0.0f32, |sum, v| sum + v);
        assert_ne!(forward.to_bits(), backward.to_bits());
    }
}
