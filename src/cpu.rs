//! SpMM on the host CPU: the oracle of every PIM test and a backend of its own.
//!
//! How the work is split: the rows of `A` are cut into contiguous chunks of about equal work (nonzeros plus a
//! small cost per row, so hub rows and runs of empty rows both balance), several chunks per thread so that
//! rayon's work stealing evens out what the estimate misses. Each chunk owns its rows of `Y`, so no two threads
//! ever write the same place and the result does not depend on the schedule.
//!
//! How a chunk is computed: `f32` on a CPU with AVX-512 by the kernel in `cpu/avx512.rs` (whole rows of `X`
//! per pass, prefetched gathers, streaming stores), everything else by the one in `cpu/portable.rs`
//! (compile-time tiles, also compiled for AVX2). Both sum each output's products in the order the row's
//! nonzeros are stored, so results are reproducible across thread counts, and exact (wrapping) for integer
//! types. [`kernel`] says which one runs on this CPU.

use std::ops::Range;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::sparse::{Csr, Dense, Element};

#[cfg(target_arch = "x86_64")]
mod avx512;
mod portable;

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

/// SDDMM over `a`'s structure: for each nonzero `(i, j)` of `a`, in its row-by-row order, `<p_i, q_j>`, the
/// products summed in feature order (as the DPU kernels sum them), integers wrapping. `a`'s values are not used.
pub fn sddmm<T: Element>(a: &Csr<T>, p: &Dense<T>, q: &Dense<T>) -> Result<Vec<T::Acc>> {
    if p.rows() != a.nrows() {
        return Err(Error::shape("SDDMM: rows of P (rows of A)", a.nrows(), p.rows()));
    }
    if q.rows() != a.ncols() {
        return Err(Error::shape("SDDMM: rows of Q (columns of A)", a.ncols(), q.rows()));
    }
    if p.cols() != q.cols() {
        return Err(Error::shape("SDDMM: columns of P (columns of Q)", q.cols(), p.cols()));
    }
    let dot = |i: usize, j: u32| {
        p.row(i).iter().zip(q.row(j as usize)).fold(T::Acc::default(), |sum, (&a, &b)| T::mul_add(sum, a, b))
    };
    Ok((0..a.nrows()).into_par_iter().flat_map_iter(|i| a.row(i).0.iter().map(move |&j| dot(i, j))).collect())
}

/// `Y = A_h X` head by head: `X`'s columns are `heads` groups of equal width, and group `h` is multiplied by `A`'s
/// structure with head `h`'s values, `values[k * heads + h]` for nonzero `k` (attention's per-head weights).
/// Each output sums its products in the row's nonzero order, as [`spmm`] and the DPU kernels do; `A`'s own
/// values are not used.
pub fn spmm_heads<T: Element>(a: &Csr<T>, values: &[T], heads: usize, x: &Dense<T>) -> Result<Dense<T::Acc>> {
    check_heads(a, values.len(), heads, x)?;
    let features = x.cols();
    let mut y = Dense::<T::Acc>::zeros(a.nrows(), features);
    if features == 0 || a.nrows() == 0 {
        return Ok(y);
    }
    let width = features / heads;
    let chunks = balanced_row_chunks(a.row_ptr(), rayon::current_num_threads() * CHUNKS_PER_THREAD);
    for_each_chunk(y.as_mut_slice(), features, &chunks, |first_row, out| {
        for (local, y_row) in out.chunks_mut(features).enumerate() {
            let row = first_row + local;
            let nonzeros = a.row_ptr()[row] as usize..a.row_ptr()[row + 1] as usize;
            for (k, &column) in nonzeros.zip(a.row(row).0) {
                let x_row = x.row(column as usize);
                for (head, (y_head, x_head)) in y_row.chunks_mut(width).zip(x_row.chunks(width)).enumerate() {
                    let value = values[k * heads + head];
                    y_head.iter_mut().zip(x_head).for_each(|(y, &x)| *y = T::mul_add(*y, value, x));
                }
            }
        }
    });
    Ok(y)
}

/// Checks the shapes of a per-head call: `values` per nonzero and head, `X` with a row per column of `A` and
/// `heads` groups of equal width.
pub(crate) fn check_heads<T: Element>(a: &Csr<T>, values: usize, heads: usize, x: &Dense<T>) -> Result<()> {
    crate::spmm::check_head_values(a.nnz(), values, heads)?;
    if x.rows() != a.ncols() {
        return Err(Error::shape("SpMM: rows of X (columns of A)", a.ncols(), x.rows()));
    }
    if !x.cols().is_multiple_of(heads) {
        return Err(Error::shape(
            "SpMM: columns of X (heads of equal width)",
            format!("a multiple of {heads}"),
            x.cols(),
        ));
    }
    Ok(())
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
    #[cfg(target_arch = "x86_64")]
    if kernel::<T>() == Kernel::Avx512 {
        if let Some((a, x, y)) = as_f32(a, x, y) {
            let streaming = std::mem::size_of_val(y.as_slice()) >= avx512::STREAMING_MIN_BYTES;
            let x = x.as_slice();
            for_each_chunk(y.as_mut_slice(), features, &chunks, |first_row, out| {
                // SAFETY: this CPU supports AVX-512F, checked just above.
                unsafe { avx512::compute_rows(a, x, features, first_row, out, streaming) }
            });
            return Ok(());
        }
    }
    let x = x.as_slice();
    for_each_chunk(y.as_mut_slice(), features, &chunks, |first_row, out| {
        portable::compute_rows(a, x, features, first_row, out)
    });
    Ok(())
}

/// The kernels [`spmm`] chooses from, by element type and by what the CPU it runs on supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::Display)]
#[non_exhaustive]
pub enum Kernel {
    /// `f32` on x86-64 CPUs with AVX-512F: whole rows of `X` per pass, prefetched, streaming stores.
    #[strum(to_string = "AVX-512F")]
    Avx512,
    /// The portable tiles compiled for AVX2, on x86-64 CPUs that have it.
    #[strum(to_string = "portable (AVX2)")]
    PortableAvx2,
    /// The portable tiles with the target's baseline instructions.
    #[strum(to_string = "portable (baseline instructions)")]
    Portable,
}

/// The kernel [`spmm`] runs for `T` on this CPU.
pub fn kernel<T: Element>() -> Kernel {
    #[cfg(target_arch = "x86_64")]
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>() && avx512::available() {
        return Kernel::Avx512;
    }
    if portable::avx2_available() {
        Kernel::PortableAvx2
    } else {
        Kernel::Portable
    }
}

/// The operands as `f32` matrices, when `T` is `f32`.
#[cfg(target_arch = "x86_64")]
fn as_f32<'a, T: Element>(
    a: &'a Csr<T>,
    x: &'a Dense<T>,
    y: &'a mut Dense<T::Acc>,
) -> Option<(&'a Csr<f32>, &'a Dense<f32>, &'a mut Dense<f32>)> {
    use std::any::Any;
    let a = (a as &dyn Any).downcast_ref()?;
    let x = (x as &dyn Any).downcast_ref()?;
    let y = (y as &mut dyn Any).downcast_mut()?;
    Some((a, x, y))
}

/// Runs `compute(first_row, rows_of_y)` for each chunk of rows in parallel, each on its own rows of `y`
/// (`features` values a row).
fn for_each_chunk<A: Send>(
    y: &mut [A],
    features: usize,
    chunks: &[Range<usize>],
    compute: impl Fn(usize, &mut [A]) + Sync,
) {
    let mut outputs = Vec::with_capacity(chunks.len());
    let mut rest = y;
    for rows in chunks {
        let (chunk, tail) = rest.split_at_mut(rows.len() * features);
        outputs.push((rows.start, chunk));
        rest = tail;
    }
    outputs.into_par_iter().for_each(|(first_row, out)| compute(first_row, out));
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

    /// A `rows x cols` matrix with small integer values (so that every sum is exact in any order), every
    /// fourth row empty and row 1 a hub referencing every column.
    fn integer_valued(rows: usize, cols: usize, seed: u64) -> Csr<f32> {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(seed);
        let (mut row_ptr, mut col_idx, mut values) = (vec![0u32], Vec::new(), Vec::new());
        for r in 0..rows {
            let degree = match r {
                1 => cols,
                _ if r % 4 == 0 => 0,
                _ => rng.random_range(1..=12),
            };
            for _ in 0..degree {
                col_idx.push(rng.random_range(0..cols as u32));
                values.push(rng.random_range(-4i32..=4) as f32);
            }
            row_ptr.push(col_idx.len() as u32);
        }
        Csr::new(rows, cols, row_ptr, col_idx, values).unwrap()
    }

    /// Says on the test's standard error that it did not run, and why. Written to the stream itself rather than
    /// with `eprintln!`, which the test harness captures and shows only for a failing test: libtest has no
    /// "skipped" outcome, so a skipped test would look like one that passed.
    fn skipped(reason: &str) {
        use std::io::Write as _;
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
    }

    #[test]
    fn the_kernel_reported_is_avx512_only_for_f32_on_a_cpu_with_it() {
        #[cfg(target_arch = "x86_64")]
        assert_eq!(kernel::<f32>() == Kernel::Avx512, avx512::available());
        #[cfg(not(target_arch = "x86_64"))]
        assert_ne!(kernel::<f32>(), Kernel::Avx512);
        for integer in [kernel::<i32>(), kernel::<i16>(), kernel::<i8>()] {
            assert_ne!(integer, Kernel::Avx512);
            assert_eq!(integer == Kernel::PortableAvx2, portable::avx2_available());
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn on_a_cpu_with_avx512_the_avx512_kernel_equals_the_portable_one() {
        if !avx512::available() {
            skipped("this CPU has no AVX-512F, so the AVX-512 kernel was not run");
            return;
        }
        let (rows, cols) = (90, 70);
        let a = integer_valued(rows, cols, 7);
        // Widths around the 16-lane vectors and the 256-column slabs.
        for features in [1, 5, 15, 16, 17, 31, 64, 100, 255, 256, 257, 300, 512, 529] {
            let values: Vec<f32> = (0..cols * features).map(|v| (v % 23) as f32 - 11.0).collect();
            let mut aligned = Dense::zeros(cols, features);
            aligned.as_mut_slice().copy_from_slice(&values);
            // One value in, so that rows start off the cache lines.
            let mut shifted = values.clone();
            shifted.insert(0, 0.0);
            let shifted = &shifted[1..];
            let mut expected = vec![f32::NAN; rows * features];
            portable::compute_rows(&a, &values, features, 0, &mut expected);
            for (x, streaming) in [(aligned.as_slice(), false), (aligned.as_slice(), true), (shifted, false)] {
                let mut y = Dense::from_vec(rows, features, vec![f32::NAN; rows * features]).unwrap();
                let mut aligned_y = Dense::zeros(rows, features);
                for y in [y.as_mut_slice(), aligned_y.as_mut_slice()] {
                    // Rows 3.. as a chunk of their own, then rows 0..3.
                    let (head, tail) = y.split_at_mut(3 * features);
                    // SAFETY: this CPU supports AVX-512F, checked above.
                    unsafe {
                        avx512::compute_rows(&a, x, features, 3, tail, streaming);
                        avx512::compute_rows(&a, x, features, 0, head, streaming);
                    }
                    assert_eq!(y, expected, "F = {features}, streaming {streaming}");
                }
            }
        }
    }

    #[test]
    fn f32_products_are_exact_on_integer_values_at_every_width() {
        let a = integer_valued(40, 33, 3);
        for features in [1, 16, 17, 64, 255, 256, 300] {
            let x = Dense::from_vec(33, features, (0..33 * features).map(|v| (v % 7) as f32 - 3.0).collect()).unwrap();
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
        // A shape error's message names the operand, and what it needed and got.
        let failure = |result: Result<Dense<i32>>| result.expect_err("accepted").to_string();
        assert_eq!(failure(spmm(&a, &x)), "shape mismatch in SpMM: rows of X (columns of A): expected 4, found 5");
        assert_eq!(
            failure(spmm_transposed(&a, &Dense::zeros(4, 2))),
            "shape mismatch in SpMM with A^T: rows of X (rows of A): expected 5, found 4"
        );
        let mut y = Dense::<i32>::zeros(4, 2);
        assert_eq!(
            failure(spmm_into(&a, &Dense::zeros(4, 2), &mut y).map(|()| y)),
            "shape mismatch in SpMM: Y (rows of A x columns of X): expected 5 x 2, found 4 x 2"
        );
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
