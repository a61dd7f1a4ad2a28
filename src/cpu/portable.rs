//! The kernel for every element type on every CPU: a row's features in tiles of 64, 32, 16, 8, 4, 2 and 1
//! columns (the binary decomposition of `F`, so every `F` is covered by at most seven tiles of compile-time
//! width). A tile's sums stay in registers while the row's nonzeros stream past, each reading a contiguous
//! slice of an `X` row; the tile is written to `Y` once. Each output is the sum of its row's products in the
//! order the nonzeros are stored, exact (wrapping) for integer types. On x86-64 the same code is also compiled
//! for AVX2 and chosen at run time.

use crate::sparse::{Csr, Element};

/// Rows `first_row..` of `Y = A X` into `out` (whole rows of `features` values), with the widest instructions
/// this CPU has.
pub(super) fn compute_rows<T: Element>(a: &Csr<T>, x: &[T], features: usize, first_row: usize, out: &mut [T::Acc]) {
    #[cfg(target_arch = "x86_64")]
    if avx2_available() {
        // SAFETY: this CPU supports AVX2, checked just above.
        return unsafe { compute_rows_avx2(a, x, features, first_row, out) };
    }
    compute_rows_inlined(a, x, features, first_row, out)
}

/// Whether [`compute_rows`] runs its AVX2 build on this CPU.
pub(super) fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    let available = std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    let available = false;
    available
}

/// [`compute_rows_inlined`] compiled for AVX2.
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn compute_rows_avx2<T: Element>(a: &Csr<T>, x: &[T], features: usize, first_row: usize, out: &mut [T::Acc]) {
    compute_rows_inlined(a, x, features, first_row, out)
}

/// [`compute_rows`] for the instructions of its caller, one row at a time, each in feature tiles of
/// compile-time width.
#[inline(always)]
fn compute_rows_inlined<T: Element>(a: &Csr<T>, x: &[T], features: usize, first_row: usize, out: &mut [T::Acc]) {
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
