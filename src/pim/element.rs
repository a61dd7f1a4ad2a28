//! What the PIM engine needs of a value type beyond [`Element`].

use upmem::DpuCopy;

use crate::sparse::Element;

/// A value type the SpMM kernels are built for: copyable to DPU memory, with accumulators that are too.
pub trait PimElement: Element<Acc: DpuCopy> + DpuCopy {
    /// The value as stored in a nonzero record (`spmm_value`): f32 bits, or the integer sign-extended.
    fn value_bits(self) -> u32;
}

impl PimElement for f32 {
    fn value_bits(self) -> u32 {
        self.to_bits()
    }
}

macro_rules! integer_pim_element {
    ($($ty:ty),*) => { $(
        impl PimElement for $ty {
            fn value_bits(self) -> u32 {
                i32::from(self) as u32
            }
        }
    )* };
}
integer_pim_element!(i32, i16, i8);
