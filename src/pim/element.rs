//! What the PIM engine needs of a value type beyond [`Element`].

use upmem::DpuCopy;

use crate::sparse::Element;

/// A value type the SpMM kernels are built for: copyable to DPU memory, with accumulators that are too.
pub trait PimElement: Element<Acc: DpuCopy> + DpuCopy {
    /// For the types whose kernels can write `Y` in 16 bits (`i8`, `dpu/spmm_args.h`'s `y_narrow`): how to bound
    /// a row's sums and read them back. `None`: `Y` always comes back in the accumulator type (`i16` too: its
    /// features use all 16 bits, so a row with any nonzero value may need more).
    const NARROW_Y: Option<NarrowY<Self::Acc>> = None;

    /// Whether the type's kernels can take `X` as one row per nonzero (`dpu/spmm_args.h`'s `x_per_nonzero`):
    /// `i8` and `i16`, whose multiply-adds at narrow widths are shorter than a nonzero's DMA of its `X` row.
    const X_PER_NONZERO: bool = false;

    /// The value as stored in a nonzero record (`spmm_value`): f32 bits, or the integer sign-extended.
    fn value_bits(self) -> u32;
}

/// How a type's `Y` rows come back in 16 bits ([`PimElement::NARROW_Y`]).
#[derive(Clone, Copy, Debug)]
pub struct NarrowY<A> {
    /// The largest magnitude of a feature (128 for `i8`): a row whose values' magnitudes sum to `l1` has sums of
    /// magnitude at most `l1 * largest_feature`.
    pub largest_feature: u64,
    /// A 32-bit sum as the accumulator type.
    pub widen: fn(i32) -> A,
}

impl<A> NarrowY<A> {
    /// Whether a row whose values' magnitudes sum to `l1` has every sum within `i16`, whatever the features.
    pub fn fits(&self, l1: u64) -> bool {
        l1.saturating_mul(self.largest_feature) <= i16::MAX as u64
    }
}

/// The magnitude of a value as its nonzero record holds it ([`PimElement::value_bits`] of an integer type).
pub(crate) fn integer_magnitude(bits: u32) -> u64 {
    u64::from((bits as i32).unsigned_abs())
}

impl PimElement for f32 {
    fn value_bits(self) -> u32 {
        self.to_bits()
    }
}

impl PimElement for i32 {
    fn value_bits(self) -> u32 {
        self as u32
    }
}

impl PimElement for i16 {
    const X_PER_NONZERO: bool = true;

    fn value_bits(self) -> u32 {
        i32::from(self) as u32
    }
}

impl PimElement for i8 {
    const NARROW_Y: Option<NarrowY<i32>> =
        Some(NarrowY { largest_feature: i8::MIN.unsigned_abs() as u64, widen: std::convert::identity });
    const X_PER_NONZERO: bool = true;

    fn value_bits(self) -> u32 {
        i32::from(self) as u32
    }
}
