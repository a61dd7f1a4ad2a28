//! SpMM on the host CPU: the oracle of every PIM test and a backend of its own.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::sparse::{Csr, Dense, Element};

/// Output columns accumulated together: 64 `f32` are 16 SSE or 8 AVX registers.
const TILE: usize = 64;
/// Nonzeros ahead whose X tile is prefetched: row gathers are random, so each would otherwise wait on memory.
const PREFETCH_DISTANCE: usize = 4;
/// Rows per parallel task, so that scheduling costs little next to the rows' work.
const ROWS_PER_TASK: usize = 64;

/// `Y = A X` on all host cores: `A` is `n x m` CSR, `X` is `m x F` dense, `Y` is `n x F` in the accumulator
/// type (integers wrap on overflow, as on the DPUs).
pub fn spmm<T: Element>(a: &Csr<T>, x: &Dense<T>) -> Result<Dense<T::Acc>> {
    if x.rows() != a.ncols() {
        return Err(Error::shape("SpMM: rows of X (columns of A)", a.ncols(), x.rows()));
    }
    let features = x.cols();
    let mut y = Dense::<T::Acc>::zeros(a.nrows(), features);
    if features == 0 {
        return Ok(y);
    }
    y.as_mut_slice().par_chunks_mut(features).enumerate().with_min_len(ROWS_PER_TASK).for_each(|(r, out)| {
        let (cols, values) = a.row(r);
        let mut tiles = out.chunks_exact_mut(TILE);
        for (t, tile) in (&mut tiles).enumerate() {
            // A tile of the output row stays in registers while the row's nonzeros stream past it.
            let start = t * TILE;
            let mut acc = [T::Acc::default(); TILE];
            for (k, (&c, &v)) in cols.iter().zip(values).enumerate() {
                if let Some(&ahead) = cols.get(k + PREFETCH_DISTANCE) {
                    prefetch(&x.row(ahead as usize)[start..start + TILE]);
                }
                let x_tile = &x.row(c as usize)[start..start + TILE];
                for (a, &xv) in acc.iter_mut().zip(x_tile) {
                    *a = T::mul_add(*a, v, xv);
                }
            }
            tile.copy_from_slice(&acc);
        }
        let rest = tiles.into_remainder();
        let start = features - rest.len();
        for (&c, &v) in cols.iter().zip(values) {
            for (o, &xv) in rest.iter_mut().zip(&x.row(c as usize)[start..]) {
                *o = T::mul_add(*o, v, xv);
            }
        }
    });
    Ok(y)
}

/// Asks the cache to fetch `data` soon (a hint; no effect on results).
#[inline(always)]
fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        const LINE: usize = 64;
        let bytes = std::mem::size_of_val(data);
        let start = data.as_ptr().cast::<i8>();
        for offset in (0..bytes).step_by(LINE) {
            // SAFETY: SSE is part of the x86-64 baseline, and a prefetch never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sparse::Coo;

    /// A 40 x 30 matrix with a few nonzeros per row (some repeated, one row empty) and X of `features` columns.
    fn operands(features: usize) -> (Csr<i32>, Dense<i32>) {
        let (mut rows, mut cols, mut values) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..40u32 {
            if r == 17 {
                continue;
            }
            for k in 0..(r % 5 + 1) {
                rows.push(r);
                cols.push((r * 7 + k * 11) % 30);
                values.push(r as i32 - 20 + k as i32);
            }
        }
        rows.extend([3, 3]);
        cols.extend([4, 4]);
        values.extend([5, 6]);
        let a = Coo::new(40, 30, rows, cols, values).unwrap().to_csr();
        let x = (0..30 * features).map(|i| (i as i32 * 37 % 101) - 50).collect();
        (a, Dense::from_vec(30, features, x).unwrap())
    }

    #[test]
    fn matches_the_definition_across_tiles_and_remainders() {
        for features in [1, 63, 64, 65, 130, 256] {
            let (a, x) = operands(features);
            let y = spmm(&a, &x).unwrap();
            for r in 0..a.nrows() {
                let mut expected = vec![0i32; features];
                let (cols, values) = a.row(r);
                for (&c, &v) in cols.iter().zip(values) {
                    for (e, &xv) in expected.iter_mut().zip(x.row(c as usize)) {
                        *e += v * xv;
                    }
                }
                assert_eq!(y.row(r), &expected[..], "row {r} with {features} features");
            }
        }
    }
}
