//! What may be copied to DPU memory as raw bytes.

/// Plain data that may be copied to and from DPU memory byte for byte.
///
/// A transfer moves `len * size_of::<T>()` bytes; the runtime checks that this length and the offset satisfy
/// the DPU's rules (multiples of 8 bytes for MRAM, of 4 for WRAM), so choose element counts accordingly,
/// e.g. an even number of `u32` for MRAM.
///
/// # Safety
/// `Self` must have no padding, no pointers or references, and every bit pattern must be a valid value
/// (DPU memory can hold anything). `#[repr(C)]` argument structs made only of such fields, without padding,
/// qualify, and so do the DPU-side structs they mirror.
pub unsafe trait DpuCopy: Copy + Send + Sync + 'static {}

macro_rules! dpu_copy {
    ($($type:ty),*) => { $(
        // SAFETY: a primitive number: no padding, every bit pattern valid.
        unsafe impl DpuCopy for $type {}
    )* };
}

dpu_copy!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

// SAFETY: an array of such values has no padding between elements and every bit pattern is valid.
unsafe impl<T: DpuCopy, const N: usize> DpuCopy for [T; N] {}

/// The bytes of a slice of plain data.
pub(crate) fn as_bytes<T: DpuCopy>(values: &[T]) -> &[u8] {
    // SAFETY: T is DpuCopy, so its bytes are initialised and have no padding; the length is the slice's.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), std::mem::size_of_val(values)) }
}

/// The bytes of a mutable slice of plain data; any bytes written are valid values.
pub(crate) fn as_bytes_mut<T: DpuCopy>(values: &mut [T]) -> &mut [u8] {
    // SAFETY: as above, and every bit pattern is a valid T, so writing arbitrary bytes is sound.
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), std::mem::size_of_val(values)) }
}
