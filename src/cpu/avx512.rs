//! The `f32` kernel for x86-64 CPUs with AVX-512F, chosen at run time.
//!
//! The product is bound by gathering rows of `X`, not by arithmetic, and this kernel is shaped for that:
//!
//! - A row's outputs are computed in slabs of up to 256 columns, sixteen 16-lane accumulators that stay in
//!   registers while the row's nonzeros stream past. Up to `F = 256` that is one pass per row, reading each
//!   referenced row of `X` whole (contiguous lines, which the hardware fetches as a stream) instead of once per
//!   narrower tile. A slab not a multiple of 16 columns ends with a masked vector.
//! - The `X` rows of upcoming nonzeros are prefetched (their column indices are known ahead), about
//!   [`PREFETCH_AHEAD_BYTES`] ahead, so that many gathers are in flight at once.
//! - Outputs too large to stay in cache are written with streaming stores, which neither read the lines of `Y`
//!   before writing them nor evict `X` from the cache.
//!
//! Each output is the sum of its row's products in the order the nonzeros are stored (fused multiply-adds), so
//! results do not depend on the thread count.
//!
//! Measured on a 2-core AVX-512 Xeon (R-MAT, 100,000 nodes, 1,000,000 nonzeros), against the portable kernel
//! in the same run: each of the one-pass slab, the prefetch and 64-byte-aligned `X` rows cut the time by
//! 10 to 30 %; streaming stores and fused multiply-adds by a few % more.

use std::arch::x86_64::{
    __m512, __mmask16, _mm512_fmadd_ps, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps, _mm512_set1_ps,
    _mm512_setzero_ps, _mm512_storeu_ps, _mm512_stream_ps, _mm_prefetch, _mm_sfence, _MM_HINT_T0,
};

use crate::sparse::Csr;

/// `f32` lanes in one AVX-512 register.
const LANES: usize = 16;

/// Registers of accumulators in a slab: half of the 32 AVX-512 registers, the rest holding the broadcast value
/// and the loaded `X` vectors.
const SLAB_VECTORS: usize = 16;

/// Columns in a full slab.
const SLAB: usize = SLAB_VECTORS * LANES;

/// Bytes of `X` rows between the nonzero being computed and the one whose row is prefetched: about four rows
/// at `F = 256` and sixteen at `F = 64`, the distances that measured fastest.
const PREFETCH_AHEAD_BYTES: usize = 4096;

/// The prefetch distance in nonzeros stays within these bounds: narrow rows are cheap to fetch, but a distance
/// beyond a few rows no longer adds gathers in flight.
const PREFETCH_NONZEROS: (usize, usize) = (4, 16);

/// Outputs of at least this many bytes are written with streaming stores: they cannot stay in cache beside
/// `X` anyway, while smaller ones are better left in the cache for whatever reads them next.
pub(super) const STREAMING_MIN_BYTES: usize = 32 << 20;

/// Whether this CPU runs the kernel.
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

/// Rows `first_row..` of `Y = A X` into `out` (whole rows of `features` values); `streaming` writes them with
/// streaming stores where a row's slab starts a cache line.
///
/// # Safety
///
/// The CPU must support AVX-512F ([`available`]).
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn compute_rows(
    a: &Csr<f32>,
    x: &[f32],
    features: usize,
    first_row: usize,
    out: &mut [f32],
    streaming: bool,
) {
    let mut offset = 0;
    while offset < features {
        let slab = Slab { offset, width: SLAB.min(features - offset), features, streaming };
        // Monomorphised for each register count, so that the accumulators are an array the compiler keeps in
        // registers.
        macro_rules! by_vectors {
            ($($vectors:literal)*) => {
                match slab.width.div_ceil(LANES) {
                    $($vectors => slab.compute::<$vectors>(a, x, first_row, out),)*
                    _ => unreachable!("a slab is 1 to {SLAB} columns"),
                }
            };
        }
        by_vectors!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
        offset += slab.width;
    }
    if streaming {
        // Streaming stores are weakly ordered: the fence makes them visible before whatever the caller does next.
        _mm_sfence();
    }
}

/// Columns `offset..offset + width` of rows of `Y`, `width <= SLAB`.
#[derive(Clone, Copy)]
struct Slab {
    offset: usize,
    width: usize,
    features: usize,
    streaming: bool,
}

impl Slab {
    /// The slab's columns of rows `first_row..` into `out`, with `V = ceil(width / 16)` accumulator registers.
    #[target_feature(enable = "avx512f")]
    fn compute<const V: usize>(self, a: &Csr<f32>, x: &[f32], first_row: usize, out: &mut [f32]) {
        let Slab { offset, width, features, .. } = self;
        // Lanes of the last vector inside the slab.
        let tail: __mmask16 = u16::MAX >> (V * LANES - width);
        let rows = out.len() / features;
        let (row_ptr, col_idx, values) = (a.row_ptr(), a.col_idx(), a.values());
        let ahead = (PREFETCH_AHEAD_BYTES / (width * 4)).clamp(PREFETCH_NONZEROS.0, PREFETCH_NONZEROS.1);
        let last_nonzero = row_ptr[first_row + rows] as usize;
        for (i, y_row) in out.chunks_exact_mut(features).enumerate() {
            let row = first_row + i;
            let mut sums = [_mm512_setzero_ps(); V];
            for at in row_ptr[row] as usize..row_ptr[row + 1] as usize {
                if at + ahead < last_nonzero {
                    self.prefetch(x, col_idx[at + ahead] as usize);
                }
                let start = col_idx[at] as usize * features + offset;
                let x_slab = &x[start..start + width];
                let value = _mm512_set1_ps(values[at]);
                for (k, sum) in sums.iter_mut().enumerate() {
                    let mask = if k + 1 == V { tail } else { u16::MAX };
                    // SAFETY: the lanes `mask` selects are `x_slab[16 k..16 k + 16]` cut to `width`, inside
                    // the slice; masked-out lanes are not read.
                    let x_vector = unsafe { _mm512_maskz_loadu_ps(mask, x_slab.as_ptr().add(k * LANES)) };
                    *sum = _mm512_fmadd_ps(value, x_vector, *sum);
                }
            }
            self.store(&sums, tail, &mut y_row[offset..offset + width]);
        }
    }

    /// Prefetches the lines holding the slab's columns of row `row` of `X`. A hint only: it reads nothing the
    /// kernel sees and cannot fault, whatever the address.
    #[target_feature(enable = "avx512f")]
    fn prefetch(self, x: &[f32], row: usize) {
        let first = x.as_ptr().wrapping_add(row * self.features + self.offset);
        let misalignment = first as usize % 64;
        let line = first.wrapping_byte_sub(misalignment).cast::<i8>();
        for k in 0..(misalignment + self.width * 4).div_ceil(64) {
            _mm_prefetch::<_MM_HINT_T0>(line.wrapping_add(k * 64));
        }
    }

    /// Writes the `V` accumulators to `y` (`width` values), the last one through `tail`.
    #[target_feature(enable = "avx512f")]
    fn store<const V: usize>(self, sums: &[__m512; V], tail: __mmask16, y: &mut [f32]) {
        let aligned = (y.as_ptr() as usize).is_multiple_of(64) && y.len() == V * LANES;
        for (k, &sum) in sums.iter().enumerate() {
            let target = y[k * LANES..].as_mut_ptr();
            if self.streaming && aligned {
                // SAFETY: `y` holds `V` whole vectors (checked just above) and starts a cache line, so vector
                // `k` is 16 values inside it at a 64-byte-aligned address, as a streaming store requires.
                unsafe { _mm512_stream_ps(target, sum) };
            } else if k + 1 == V {
                // SAFETY: `tail` selects the lanes of `y[16 k..]` that lie inside `y`.
                unsafe { _mm512_mask_storeu_ps(target, tail, sum) };
            } else {
                // SAFETY: vector `k < V - 1` is 16 values inside `y`, which holds more than `16 (V - 1)`.
                unsafe { _mm512_storeu_ps(target, sum) };
            }
        }
    }
}
