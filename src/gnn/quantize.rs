//! Quantized aggregation's host side: the scales ([`Quantization`], chosen by [`quantize_matrix`]) and the
//! conversions of features to integer levels and back, at memory speed.
//!
//! Each conversion is one parallel pass over the values. [`largest_magnitude`] finds `max |x|` from the values'
//! bits (an integer maximum, which also finds any NaN or infinity: their exponent bits are all ones), and
//! [`quantize`] rounds `x * scale` half away from zero, as `f32::round`, without calling it: on an x86-64
//! target without SSE4.1 (Rust's default) `round` is a library call per value, and Rust's saturating `as`
//! conversion does not vectorise either; clamping first makes the truncation one vector instruction.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::pim::PimElement;
use crate::sparse::{Csr, Element};

/// The scales of quantized aggregation ([`Aggregator::quantization`](super::Aggregator::quantization)): the
/// matrix is held as `M_q = round(M * matrix_scale)`, and each call's features `X` go in as
/// `X_q = round(X * s_x)`, `s_x` their [`Quantization::feature_scale`]; the result is
/// `(M_q X_q) / (matrix_scale * s_x)`.
///
/// Each rounding moves a value by at most half a level, so an aggregated value differs from the exact
/// `y_i = sum_j m_ij x_j` by at most `sum_j (|m_ij| / (2 s_x) + |x_j| / (2 matrix_scale) + 1 / (4 matrix_scale
/// s_x))` over the row's nonzeros, plus the rounding of the `f32` arithmetic around it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantization {
    /// What the matrix's values are multiplied by before rounding.
    pub matrix_scale: f32,
    /// The level the largest `|x|` of a call is quantized to: the most that keeps every sum inside `i32`, within
    /// the type's range.
    pub feature_range: f32,
}

impl Quantization {
    /// What features whose largest magnitude is `largest` are multiplied by before rounding (1 when they are all
    /// zero).
    pub fn feature_scale(&self, largest: f32) -> f32 {
        if largest > 0.0 {
            self.feature_range / largest
        } else {
            1.0
        }
    }

    /// The feature scale of `features` (row-major) quantized to `T`; [`Error::NotFinite`] for a NaN or an
    /// infinity, which no level holds.
    pub fn feature_scale_of<T: Quantized>(&self, features: &[f32]) -> Result<f32> {
        let largest = largest_magnitude(features).map_err(|index| {
            let what = format!("feature to quantize to {} (row-major)", T::NAME);
            Error::NotFinite { what, index, value: features[index] }
        })?;
        Ok(self.feature_scale(largest))
    }
}

/// A matrix quantized for aggregation, with its scales.
#[derive(Clone, Debug)]
pub struct QuantizedMatrix<T: Element> {
    /// `round(M * matrix_scale)`.
    pub matrix: Csr<T>,
    /// The scales, features' range included.
    pub scales: Quantization,
}

/// `matrix` quantized to `T` with the scales that keep every sum of products inside `i32` whatever the
/// features: `max_row |M_q|_1 * max |X_q| <= i32::MAX`, the matrix getting `sqrt(i32::MAX / L)` levels (`L`
/// the largest row's L1 norm in units of the largest entry; one level when every nonzero has the same magnitude,
/// which is then exact) and the features what is left, each within the type's range. A NaN or an infinity is
/// refused with [`Error::NotFinite`].
pub fn quantize_matrix<T: Quantized>(matrix: &Csr<f32>) -> Result<QuantizedMatrix<T>> {
    let (values, scales) = quantize_values::<T>(matrix.row_ptr(), matrix.values())?;
    let matrix =
        Csr::new(matrix.nrows(), matrix.ncols(), matrix.row_ptr().to_vec(), matrix.col_idx().to_vec(), values)?;
    Ok(QuantizedMatrix { matrix, scales })
}

/// A matrix's `values` (rows cut at `row_ptr`, as in [`Csr`]) quantized to `T` as [`quantize_matrix`] does, with
/// their scales: what a matrix whose values change per call (attention) quantizes at every call.
pub fn quantize_values<T: Quantized>(row_ptr: &[u32], values: &[f32]) -> Result<(Vec<T>, Quantization)> {
    quantize_head_values(row_ptr, values, 1)
}

/// As [`quantize_values`] for `heads` values per nonzero (`values[k * heads + h]`, attention's heads in one
/// call): one scale for all heads, from the largest row L1 norm of any head.
pub fn quantize_head_values<T: Quantized>(
    row_ptr: &[u32],
    values: &[f32],
    heads: usize,
) -> Result<(Vec<T>, Quantization)> {
    if let Some(index) = values.iter().position(|v| !v.is_finite()) {
        let what = format!("aggregation matrix value (nonzero) to quantize to {}", T::NAME);
        return Err(Error::NotFinite { what, index, value: values[index] });
    }
    let largest = values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let heads = heads.max(1);
    let row_l1 = |value: &(dyn Fn(usize) -> f64 + Sync)| {
        row_ptr
            .par_windows(2)
            .map(|span| {
                let sum = |head| (span[0] as usize..span[1] as usize).map(|k| value(k * heads + head)).sum::<f64>();
                (0..heads).map(sum).fold(0.0, f64::max)
            })
            .reduce(|| 0.0, f64::max)
    };
    let relative_l1 = if largest > 0.0 { row_l1(&|at| f64::from(values[at].abs() / largest)) } else { 1.0 };
    // A matrix whose nonzeros all have one magnitude (an adjacency, sum aggregation) is exact at one level: more
    // levels add no precision, only bits to every sum, which then come back from the DPUs in 32 bits, not 16.
    let one_magnitude = values.iter().all(|v| v.abs() == largest);
    let matrix_range = if one_magnitude {
        1.0
    } else {
        T::MAX.min((f64::from(i32::MAX) / relative_l1.max(1.0)).sqrt().floor()).max(1.0)
    };
    let matrix_scale = if largest > 0.0 { (matrix_range / f64::from(largest)) as f32 } else { 1.0 };
    let quantized: Vec<T> = values.par_iter().map(|&v| T::round_from(v * matrix_scale)).collect();
    let quantized_l1 = row_l1(&|at| f64::from(quantized[at].widen().unsigned_abs()));
    let feature_range = T::MAX.min((f64::from(i32::MAX) / quantized_l1.max(1.0)).floor()).max(1.0) as f32;
    Ok((quantized, Quantization { matrix_scale, feature_range }))
}

/// Values per task of the parallel passes: large enough that scheduling costs nothing next to the pass, small
/// enough to spread a layer's features over every core.
const CHUNK: usize = 1 << 16;

/// Values rounded to `i32` levels at a time before they are narrowed, without wide vectors
/// ([`round_chunk_blocked`]): a buffer that stays in L1.
const BLOCK: usize = 64;

/// An integer type features are quantized to: `i32`, `i16` or `i8`, each accumulating in `i32`.
pub trait Quantized: PimElement + Element<Acc = i32> + sealed::Sealed {
    /// The largest magnitude used (symmetric range `-MAX..=MAX`).
    const MAX: f64;
    /// The lowest level, as an `f32` (exact).
    const LOW: f32;
    /// The highest level an `f32` holds: the type's maximum, or for `i32` 2,147,483,520, the largest `f32`
    /// inside it.
    const HIGH: f32;
    /// A level in `LOW..=HIGH`, as the type.
    fn narrow(level: i32) -> Self;
    /// The value as an `i32`.
    fn widen(self) -> i32;

    /// `value` rounded half away from zero (as `f32::round`) and saturated to `LOW..=HIGH`; a NaN becomes
    /// `LOW`, so callers check for NaN first, as [`largest_magnitude`] does.
    #[inline]
    fn round_from(value: f32) -> Self {
        Self::narrow(clamp_and_round(value, Self::LOW, Self::HIGH))
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The largest `f32` not above `max`: `max` itself for `i8` and `i16`, and 2,147,483,520 for `i32`, whose
/// maximum rounds up to 2^31 as an `f32`.
const fn highest_below(max: i64) -> f32 {
    let nearest = max as f32;
    if nearest as i64 > max {
        f32::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    }
}

/// `value` clamped to `low..=high` (a NaN to `low`) and rounded half away from zero, exactly as `f32::round`:
/// the truncation `t` is exact, and so is `value - t` (below 2^23 both lie within one unit of each other; from
/// 2^23 on every `f32` is an integer and the difference is 0). `low..=high` must lie within `i32`.
#[inline]
fn clamp_and_round(value: f32, low: f32, high: f32) -> i32 {
    // `max` takes a NaN to `low`, so `clamped` is finite and inside `low..=high`.
    let clamped = value.max(low).min(high);
    // SAFETY: `clamped` is finite and within `low..=high`, which lie within `i32` (see the callers), so its
    // truncation is representable, as `to_int_unchecked` requires.
    let truncated: i32 = unsafe { clamped.to_int_unchecked() };
    let fraction = clamped - truncated as f32;
    truncated + i32::from(fraction >= 0.5) - i32::from(fraction <= -0.5)
}

macro_rules! quantized {
    ($ty:ty) => {
        impl sealed::Sealed for $ty {}

        impl Quantized for $ty {
            const MAX: f64 = <$ty>::MAX as f64;
            // Both ends are exact `f32`s inside the type, and so inside `i32`, as `clamp_and_round` needs.
            const LOW: f32 = <$ty>::MIN as f32;
            const HIGH: f32 = highest_below(<$ty>::MAX as i64);
            #[inline]
            fn narrow(level: i32) -> Self {
                level as $ty
            }
            #[inline]
            fn widen(self) -> i32 {
                self as i32
            }
        }
    };
}
quantized!(i32);
quantized!(i16);
quantized!(i8);

/// The largest `|v|` of `values` (0 when empty), or the index of the first value that is a NaN or an infinity.
pub fn largest_magnitude(values: &[f32]) -> Result<f32, usize> {
    const NOT_FINITE: u32 = 0x7f80_0000;
    let largest_bits = values.par_chunks(CHUNK).map(widest::largest_bits).max().unwrap_or(0);
    if largest_bits >= NOT_FINITE {
        // Rare: find the first one, for the error.
        return Err(values.par_iter().position_first(|v| !v.is_finite()).unwrap_or(0));
    }
    Ok(f32::from_bits(largest_bits))
}

/// `round(v * scale)` of every value, saturated to `T`.
pub fn quantize<T: Quantized>(values: &[f32], scale: f32) -> Vec<T> {
    let mut out = vec![T::default(); values.len()];
    quantize_into(values, scale, &mut out);
    out
}

/// [`quantize`] into `out`, which must be as long as `values` (a shorter one takes the first values only).
pub fn quantize_into<T: Quantized>(values: &[f32], scale: f32, out: &mut [T]) {
    out.par_chunks_mut(CHUNK)
        .zip(values.par_chunks(CHUNK))
        .for_each(|(out, values)| widest::round_chunk(values, scale, out));
}

/// The largest magnitude's bits (sign cleared) of `values`: as integers, a NaN's or an infinity's are above
/// every finite value's.
#[inline(always)]
fn largest_bits(values: &[f32]) -> u32 {
    values.iter().fold(0u32, |largest, v| largest.max(v.to_bits() & 0x7fff_ffff))
}

/// [`quantize_into`] of one chunk, in one loop: with AVX2 or AVX-512 the rounding and the narrowing vectorise
/// together (i8: 5.5 ms against 7.2 ms in two loops for 25.6 million values with AVX-512, 8.6 against 9.3 ms
/// with AVX2).
#[inline(always)]
fn round_chunk<T: Quantized>(values: &[f32], scale: f32, out: &mut [T]) {
    for (out, &value) in out.iter_mut().zip(values) {
        *out = T::narrow(clamp_and_round(value * scale, T::LOW, T::HIGH));
    }
}

/// [`round_chunk`] for SSE2 alone, which has no narrowing of 32-bit lanes: rounding to i32 levels and narrowing
/// them are two loops that vectorise on their own, while as one loop narrowing to i8 or i16 keeps the rounding
/// from vectorising as well (i8: 9.7 ms against 17.6 ms in one loop).
fn round_chunk_blocked<T: Quantized>(values: &[f32], scale: f32, out: &mut [T]) {
    for (out, values) in out.chunks_mut(BLOCK).zip(values.chunks(BLOCK)) {
        let mut levels = [0i32; BLOCK];
        for (level, &value) in levels.iter_mut().zip(values) {
            *level = clamp_and_round(value * scale, T::LOW, T::HIGH);
        }
        for (out, &level) in out.iter_mut().zip(&levels) {
            *out = T::narrow(level);
        }
    }
}

/// The passes' loops compiled for the widest vectors the CPU has, chosen at run time: Rust's default x86-64
/// target has only SSE2, which has no 32-bit integer maximum and no narrowing of 32-bit lanes. Measured on a
/// 2-core AVX-512 Xeon, 25.6 million values (`pimgnn bench quantize`): the scan 7.4 ms with SSE2, 3.0 ms with
/// AVX-512; quantizing to i8 as aggregation does 17.5 ms, 7.0 ms (a parallel copy of the values: 7.7 ms).
mod widest {
    use super::Quantized;

    /// [`super::largest_bits`].
    pub(super) fn largest_bits(values: &[f32]) -> u32 {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: this CPU has AVX-512F, checked just above.
                return unsafe { largest_bits_avx512(values) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: this CPU has AVX2, checked just above.
                return unsafe { largest_bits_avx2(values) };
            }
        }
        super::largest_bits(values)
    }

    /// [`super::round_chunk`].
    pub(super) fn round_chunk<T: Quantized>(values: &[f32], scale: f32, out: &mut [T]) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: this CPU has AVX-512F, checked just above.
                return unsafe { round_chunk_avx512(values, scale, out) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: this CPU has AVX2, checked just above.
                return unsafe { round_chunk_avx2(values, scale, out) };
            }
        }
        super::round_chunk_blocked(values, scale, out)
    }

    /// # Safety
    /// The CPU must support AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn largest_bits_avx512(values: &[f32]) -> u32 {
        super::largest_bits(values)
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn largest_bits_avx2(values: &[f32]) -> u32 {
        super::largest_bits(values)
    }

    /// # Safety
    /// The CPU must support AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn round_chunk_avx512<T: Quantized>(values: &[f32], scale: f32, out: &mut [T]) {
        super::round_chunk(values, scale, out)
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn round_chunk_avx2<T: Quantized>(values: &[f32], scale: f32, out: &mut [T]) {
        super::round_chunk(values, scale, out)
    }
}

/// `v * unscale` of every accumulated value, in place: levels back to features, in the same memory (a new
/// buffer would cost its page faults, more than the conversion).
pub fn dequantize(sums: Vec<i32>, unscale: f32) -> Vec<f32> {
    let mut values: Vec<f32> = bytemuck::allocation::cast_vec(sums);
    values.par_chunks_mut(CHUNK).for_each(|values| {
        for value in values {
            // The slot still holds the sum's bits.
            *value = value.to_bits() as i32 as f32 * unscale;
        }
    });
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rounding is `f32::round`'s on every `f32` of chosen ranges (each whole) and on every 4,099th bit
    /// pattern of all of them, NaNs aside, saturated as documented; a NaN becomes the type's minimum.
    #[test]
    fn rounding_is_f32_rounds_everywhere() {
        let check = |bits: u32| {
            let value = f32::from_bits(bits);
            if value.is_nan() {
                return;
            }
            if value.abs() <= 2_147_483_520.0 {
                assert_eq!(i32::round_from(value), value.round() as i32, "{value:e} ({bits:#x})");
            } else {
                assert_eq!(i32::round_from(value), if value > 0.0 { 2_147_483_520 } else { i32::MIN }, "{value:e}");
            }
            assert_eq!(i8::round_from(value), value.round() as i8, "{value:e} as i8");
            assert_eq!(i16::round_from(value), value.round() as i16, "{value:e} as i16");
        };
        // Around 0, the halves up to 2^24 (where f32 stops holding fractions) and the ends of i32.
        for around in [0.0f32, 0.5, 1.5, 127.5, 128.5, 32767.5, 8_388_607.5, 16_777_216.0, 2_147_483_648.0] {
            for value in [around, -around] {
                let bits = value.to_bits();
                (bits.saturating_sub(4096)..=bits.saturating_add(4096)).for_each(check);
            }
        }
        (0..=u32::MAX).step_by(4099).for_each(check);
        assert_eq!((i8::round_from(f32::NAN), i16::round_from(-f32::NAN)), (i8::MIN, i16::MIN));
        assert_eq!(i32::round_from(f32::NAN), i32::MIN);
    }

    /// Every compiled form of the rounding pass (the widest vectors this CPU has, and SSE2's blocked loops)
    /// rounds as `round_from`: halves, values beyond the type's range, and lengths that end mid-vector.
    #[test]
    fn every_rounding_pass_rounds_as_round_from() {
        fn check<T: Quantized + std::fmt::Debug>(values: &[f32]) {
            let expected: Vec<T> = values.iter().map(|&value| T::round_from(value * 3.0)).collect();
            for length in [values.len(), values.len() - 1, 17, 1] {
                let (mut wide, mut blocked) = (vec![T::default(); length], vec![T::default(); length]);
                widest::round_chunk(&values[..length], 3.0, &mut wide);
                round_chunk_blocked(&values[..length], 3.0, &mut blocked);
                assert_eq!((&wide, &blocked), (&expected[..length].to_vec(), &expected[..length].to_vec()));
            }
        }
        let values: Vec<f32> =
            (0..1000).map(|i| (i as f32 - 500.0) * 0.5 / 3.0).chain([1e10, -1e10, 11_000.5, -70_000.5]).collect();
        check::<i8>(&values);
        check::<i16>(&values);
        check::<i32>(&values);
    }

    #[test]
    fn the_largest_magnitude_or_the_first_value_that_is_not_finite() {
        let mut values: Vec<f32> = (0..200_000).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
        values[150_001] = -7.25;
        assert_eq!(largest_magnitude(&values), Ok(7.25));
        assert_eq!(largest_magnitude(&[]), Ok(0.0));
        values[199_999] = f32::INFINITY;
        values[70_000] = f32::NAN;
        assert_eq!(largest_magnitude(&values), Err(70_000));
    }

    #[test]
    fn quantize_and_dequantize_every_value() {
        let values: Vec<f32> = (0..300_000).map(|i| ((i as f32) * 0.013).cos()).collect();
        let levels: Vec<i8> = quantize(&values, 127.0);
        assert!(levels.iter().zip(&values).all(|(&level, &value)| level == (value * 127.0).round() as i8));
        let widened: Vec<i32> = levels.iter().map(|&level| level.widen()).collect();
        let back = dequantize(widened, 1.0 / 127.0);
        assert!(back.iter().zip(&values).all(|(b, v)| (b - v).abs() <= 0.5 / 127.0 + 1e-6));
    }
}
