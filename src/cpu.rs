//! SpMM on the host CPU: the oracle of every PIM test and a backend of its own.
//!
//! How the work is split: the rows of `A` are cut into contiguous chunks of about equal work (nonzeros plus a
//! small cost per row, so hub rows and runs of empty rows both balance), several chunks per thread so that
//! rayon's work stealing evens out what the estimate misses. Each chunk owns its rows of `Y`, so no two threads
//! ever write the same place and the result does not depend on the schedule.
//!
//! How a row is computed: its features are done in tiles of 64, 32, 16, 8, 4, 2 and 1 columns (the binary
//! decomposition of `F`, so every `F` is covered by at most seven tiles of compile-time width). A tile's sums
//! stay in registers while the row's nonzeros stream past, each reading a contiguous slice of an `X` row; the
//! tile is written to `Y` once. Each output is the sum of its row's products in the order the nonzeros are
//! stored, so results are bitwise reproducible across thread counts, and exact (wrapping) for integer types.
//! On x86-64 the same code is also compiled for AVX2 and chosen at run time.

use std::ops::Range;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::sparse::{Csr, Dense, Element};

/// Work chunks per thread: enough for work stealing to absorb a poor estimate, few enough to stay cheap.
const CHUNKS_PER_THREAD: usize = 8;

/// The work of one row beyond its nonzeros (loop setup, writing its `F` outputs), in nonzeros.
const ROW_COST: u64 = 1;

/// `Y = A X` on all host cores: `A` is `n x m` CSR, `X` is `m x F` dense, `Y` is `n x F` in the accumulator
/// type (integers wrap on overflow, as on the DPUs).
pub fn spmm<T: Element>(a: &Csr<T>, x: &Dense<T>) -> Result<Dense<T::Acc>> {
    let mut y = Dense::<T::Acc>::zeros(a.nrows(), x.cols());
    spmm_into(a, x, &mut y)?;
    Ok(y)
}

/// `Y = A X` into an existing `Y` (`n x F`), whose previous values are overwritten: for callers that reuse
/// one output buffer across calls.
pub fn spmm_into<T: Element>(a: &Csr<T>, x: &Dense<T>, y: &mut Dense<T::Acc>) -> Result<()> {
    if x.rows() != a.ncols() {
        return Err(Error::shape("SpMM: rows of X (columns of A)", a.ncols(), x.rows()));
    }
    if (y.rows(), y.cols()) != (a.nrows(), x.cols()) {
        return Err(Error::shape(
            "SpMM: Y (rows of A x columns of X)",
            format!("{} x {}", a.nrows(), x.cols()),
            format!("{} x {}", y.rows(), y.cols()),
        ));
    }
    let features = x.cols();
    if features == 0 || a.nrows() == 0 {
        return Ok(());
    }
    let chunks = balanced_row_chunks(a.row_ptr(), rayon::current_num_threads() * CHUNKS_PER_THREAD);
    let mut outputs = Vec::with_capacity(chunks.len());
    let mut rest = y.as_mut_slice();
    for rows in &chunks {
        let (chunk, tail) = rest.split_at_mut(rows.len() * features);
        outputs.push((rows.start, chunk));
        rest = tail;
    }
    outputs.into_par_iter().for_each(|(first_row, out)| compute_rows(a, x.as_slice(), features, first_row, out));
    Ok(())
}

/// `Y = A^T X`: `A` is `n x m` CSR, `X` is `n x F`, `Y` is `m x F` (the backward pass of an aggregation).
/// It transposes `A` on every call; callers that repeat it with the same `A` should keep [`Csr::transpose`]
/// and call [`spmm`].
pub fn spmm_transposed<T: Element>(a: &Csr<T>, x: &Dense<T>) -> Result<Dense<T::Acc>> {
    if x.rows() != a.nrows() {
        return Err(Error::shape("SpMM with A^T: rows of X (rows of A)", a.nrows(), x.rows()));
    }
    spmm(&a.transpose(), x)
}

/// Cuts rows `0..n` (`row_ptr` has `n + 1` entries) into at most `chunks` contiguous, nonempty ranges of
/// about equal work: nonzeros plus [`ROW_COST`] per row.
fn balanced_row_chunks(row_ptr: &[u32], chunks: usize) -> Vec<Range<usize>> {
    let rows = row_ptr.len() - 1;
    let work_before = |r: usize| u64::from(row_ptr[r]) + r as u64 * ROW_COST;
    let total = work_before(rows);
    let chunks = chunks.clamp(1, rows.max(1)) as u64;
    let mut bounds = Vec::with_capacity(chunks as usize + 1);
    bounds.push(0);
    for k in 1..chunks {
        let target = total * k / chunks;
        // The first row boundary with at least `target` work before it.
        let bound = partition_point(rows, |r| work_before(r) < target);
        if bound > *bounds.last().expect("bounds start with 0") && bound < rows {
            bounds.push(bound);
        }
    }
    bounds.push(rows);
    bounds.windows(2).map(|w| w[0]..w[1]).collect()
}

/// The first `r` in `0..=n` for which `below(r)` is false, `below` being true then false over `0..=n`.
fn partition_point(n: usize, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Rows `first_row..` of `Y` into `out` (whole rows of `features` values), with the widest instructions this
/// CPU has.
fn compute_rows<T: Element>(a: &Csr<T>, x: &[T], features: usize, first_row: usize, out: &mut [T::Acc]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU supports AVX2, checked just above.
        return unsafe { compute_rows_avx2(a, x, features, first_row, out) };
    }
    compute_rows_portable(a, x, features, first_row, out)
}

/// [`compute_rows_portable`] compiled for AVX2.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn compute_rows_avx2<T: Element>(a: &Csr<T>, x: &[T], features: usize, first_row: usize, out: &mut [T::Acc]) {
    compute_rows_portable(a, x, features, first_row, out)
}

/// Rows `first_row..` of `Y` into `out`, one row at a time, each in feature tiles of compile-time width.
#[inline(always)]
fn compute_rows_portable<T: Element>(a: &Csr<T>, x: &[T], features: usize, first_row: usize, out: &mut [T::Acc]) {
    for (i, y_row) in out.chunks_exact_mut(features).enumerate() {
        let (cols, values) = a.row(first_row + i);
        let mut offset = 0;
        while features - offset >= 64 {
            row_tile::<T, 64>(cols, values, x, features, offset, y_row);
            offset += 64;
        }
        if features - offset >= 32 {
            row_tile::<T, 32>(cols, values, x, features, offset, y_row);
            offset += 32;
        }
        if features - offset >= 16 {
            row_tile::<T, 16>(cols, values, x, features, offset, y_row);
            offset += 16;
        }
        if features - offset >= 8 {
            row_tile::<T, 8>(cols, values, x, features, offset, y_row);
            offset += 8;
        }
        if features - offset >= 4 {
            row_tile::<T, 4>(cols, values, x, features, offset, y_row);
            offset += 4;
        }
        if features - offset >= 2 {
            row_tile::<T, 2>(cols, values, x, features, offset, y_row);
            offset += 2;
        }
        if features - offset >= 1 {
            row_tile::<T, 1>(cols, values, x, features, offset, y_row);
        }
    }
}

/// `y_row[offset..offset + W] = sum over the row's nonzeros (c, v) of v * X[c][offset..offset + W]`, with the
/// `W` sums in registers.
#[inline(always)]
fn row_tile<T: Element, const W: usize>(
    cols: &[u32],
    values: &[T],
    x: &[T],
    features: usize,
    offset: usize,
    y_row: &mut [T::Acc],
) {
    let mut sums = [T::Acc::default(); W];
    for (&c, &v) in cols.iter().zip(values) {
        let start = c as usize * features + offset;
        let x_tile: &[T; W] = x[start..start + W].try_into().expect("a tile is W values");
        for (sum, &xv) in sums.iter_mut().zip(x_tile) {
            *sum = T::mul_add(*sum, v, xv);
        }
    }
    y_row[offset..offset + W].copy_from_slice(&sums);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive<T: Element>(a: &Csr<T>, x: &Dense<T>) -> Dense<T::Acc> {
        let mut y = Dense::<T::Acc>::zeros(a.nrows(), x.cols());
        for r in 0..a.nrows() {
            let (cols, values) = a.row(r);
            for (&c, &v) in cols.iter().zip(values) {
                for (k, &xv) in x.row(c as usize).iter().enumerate() {
                    y.row_mut(r)[k] = T::mul_add(y.row(r)[k], v, xv);
                }
            }
        }
        y
    }

    /// A 5 x 4 matrix with an empty first and last row and a repeated column.
    fn small() -> Csr<i32> {
        Csr::new(5, 4, vec![0, 0, 2, 3, 6, 6], vec![1, 3, 0, 2, 2, 1], vec![2, -1, 5, 3, 4, 7]).unwrap()
    }

    #[test]
    fn matches_the_naive_product_at_every_tile_width() {
        let a = small();
        for features in [1, 2, 3, 7, 8, 15, 17, 63, 64, 65, 127, 200] {
            let x = Dense::from_vec(4, features, (0..4 * features as i32).map(|v| v * 3 - 50).collect()).unwrap();
            assert_eq!(spmm(&a, &x).unwrap(), naive(&a, &x), "F = {features}");
        }
    }

    #[test]
    fn integers_wrap_like_the_dpus() {
        let a = Csr::new(1, 2, vec![0, 2], vec![0, 1], vec![i32::MAX, 2]).unwrap();
        let x = Dense::from_vec(2, 1, vec![1, 1]).unwrap();
        assert_eq!(spmm(&a, &x).unwrap().as_slice(), &[i32::MAX.wrapping_add(2)]);
        let a8 = Csr::new(1, 2, vec![0, 2], vec![0, 1], vec![-128i8, -128]).unwrap();
        let x8 = Dense::from_vec(2, 1, vec![-128i8, -128]).unwrap();
        assert_eq!(spmm(&a8, &x8).unwrap().as_slice(), &[32768]);
    }

    #[test]
    fn transposed_product_equals_the_product_with_the_transpose() {
        let a = small();
        let x = Dense::from_vec(5, 3, (0..15).collect()).unwrap();
        assert_eq!(spmm_transposed(&a, &x).unwrap(), naive(&a.transpose(), &x));
    }

    #[test]
    fn spmm_into_overwrites_what_was_there() {
        let a = small();
        let x = Dense::from_vec(4, 2, (0..8).collect()).unwrap();
        let mut y = Dense::from_vec(5, 2, vec![99; 10]).unwrap();
        spmm_into(&a, &x, &mut y).unwrap();
        assert_eq!(y, naive(&a, &x));
    }

    #[test]
    fn mismatched_shapes_are_errors() {
        let a = small();
        let x = Dense::<i32>::zeros(5, 2);
        assert!(matches!(spmm(&a, &x), Err(Error::Shape { .. })));
        assert!(matches!(spmm_transposed(&a, &Dense::zeros(4, 2)), Err(Error::Shape { .. })));
        let mut y = Dense::<i32>::zeros(4, 2);
        assert!(matches!(spmm_into(&a, &Dense::zeros(4, 2), &mut y), Err(Error::Shape { .. })));
    }

    #[test]
    fn chunks_cover_every_row_once_and_balance_work() {
        // Row 0 is a hub with 1,000 nonzeros, then 999 rows of one nonzero each.
        let mut row_ptr = vec![0u32, 1000];
        row_ptr.extend((1..1000).map(|r| 1000 + r));
        let chunks = balanced_row_chunks(&row_ptr, 8);
        assert_eq!(chunks.first().unwrap().start, 0);
        assert_eq!(chunks.last().unwrap().end, 1000);
        assert!(chunks.windows(2).all(|w| w[0].end == w[1].start && !w[1].is_empty()));
        // The hub row alone is about a third of the work: it gets a chunk of its own.
        assert_eq!(chunks[0], 0..1);
        assert_eq!(balanced_row_chunks(&[0, 5], 8), vec![0..1]);
        assert_eq!(balanced_row_chunks(&[0, 0, 0, 0], 2), vec![0..1, 1..3]);
    }
}
