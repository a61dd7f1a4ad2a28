//! The C types of `dpu.h`, with the SDK's layouts (checked by the C ABI test against the SDK's measured numbers).

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

use crate::server::{Dpu, Rank};

/// `dpu_error_t`.
pub type dpu_error_t = u32;
/// `dpu_set_kind_t`.
pub type dpu_set_kind_t = u32;
/// `DPU_SET_RANKS`.
pub const DPU_SET_RANKS: dpu_set_kind_t = 0;
/// `DPU_SET_DPU`.
pub const DPU_SET_DPU: dpu_set_kind_t = 1;

/// `struct dpu_rank_t`: opaque to C.
pub type dpu_rank_t = Rank;
/// `struct dpu_t`: opaque to C.
pub type dpu_t = Dpu;

/// The `list` member of `struct dpu_set_t`'s union.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dpu_set_list {
    /// Ranks in the set.
    pub nr_ranks: u32,
    /// The ranks.
    pub ranks: *mut *mut dpu_rank_t,
}

/// The union of `struct dpu_set_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union dpu_set_union {
    /// For `DPU_SET_RANKS`.
    pub list: dpu_set_list,
    /// For `DPU_SET_DPU`.
    pub dpu: *mut dpu_t,
}

/// `struct dpu_set_t`, passed by value (24 bytes on x86-64).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpu_set_t {
    /// `DPU_SET_RANKS` or `DPU_SET_DPU`.
    pub kind: dpu_set_kind_t,
    /// The ranks or the DPU.
    pub u: dpu_set_union,
}

impl dpu_set_t {
    pub(crate) fn of_ranks(nr_ranks: u32, ranks: *mut *mut dpu_rank_t) -> Self {
        dpu_set_t { kind: DPU_SET_RANKS, u: dpu_set_union { list: dpu_set_list { nr_ranks, ranks } } }
    }

    pub(crate) fn of_dpu(dpu: *mut dpu_t) -> Self {
        dpu_set_t { kind: DPU_SET_DPU, u: dpu_set_union { dpu } }
    }

    pub(crate) fn empty() -> Self {
        Self::of_ranks(0, std::ptr::null_mut())
    }
}

/// `struct dpu_set_rank_iterator_t` (48 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpu_set_rank_iterator_t {
    /// The set iterated.
    pub set: *mut dpu_set_t,
    /// Index of `next` among the set's ranks.
    pub count: u32,
    /// Index of the rank after `next`.
    pub next_idx: u32,
    /// Whether `next` is valid.
    pub has_next: bool,
    /// The current rank, as a one-rank set.
    pub next: dpu_set_t,
}

/// `struct dpu_set_dpu_iterator_t` (88 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpu_set_dpu_iterator_t {
    /// Over the set's ranks.
    pub rank_iterator: dpu_set_rank_iterator_t,
    /// Index of `next` among the set's enabled DPUs.
    pub count: u32,
    /// Index within the current rank of the DPU after `next`.
    pub next_idx: u32,
    /// Whether `next` is valid.
    pub has_next: bool,
    /// The current DPU, as a one-DPU set.
    pub next: dpu_set_t,
}

/// `struct dpu_symbol_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct dpu_symbol_t {
    /// DPU address (WRAM byte address, or 0x08000000 + MRAM offset).
    pub address: u32,
    /// Size in bytes.
    pub size: u32,
}

/// `struct dpu_incbin_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dpu_incbin_t {
    /// The embedded file.
    pub buffer: *mut u8,
    /// Its size.
    pub size: usize,
    /// Its path at build time.
    pub path: *const c_char,
}

/// `struct sg_block_info`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sg_block_info {
    /// Host address of the block.
    pub addr: *mut u8,
    /// Its length.
    pub length: u32,
}

/// `get_block_func_t`.
pub type get_block_func_t =
    Option<unsafe extern "C" fn(out: *mut sg_block_info, dpu_index: u32, block_index: u32, args: *mut c_void) -> bool>;

/// `get_block_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct get_block_t {
    /// The callback.
    pub f: get_block_func_t,
    /// Its argument.
    pub args: *mut c_void,
    /// Bytes of `args`.
    pub args_size: usize,
}

/// The callback of `dpu_callback`.
pub type dpu_callback_t = Option<unsafe extern "C" fn(set: dpu_set_t, rank_id: u32, args: *mut c_void) -> dpu_error_t>;

/// `struct dpu_sim_stats` (`dpu_sim.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct dpu_sim_stats {
    /// Modelled cycles of the last launch.
    pub cycles: u64,
    /// Cycles the DMA engine was busy.
    pub dma_cycles: u64,
    /// Bytes read from MRAM.
    pub dma_read_bytes: u64,
    /// Bytes written to MRAM.
    pub dma_write_bytes: u64,
    /// `mram_read` calls.
    pub dma_read_ops: u64,
    /// `mram_write` calls.
    pub dma_write_ops: u64,
    /// Blocking waits at synchronisation points.
    pub sync_waits: u64,
    /// Tasklets of the last launch.
    pub nr_tasklets: u32,
    /// Zero.
    pub reserved: u32,
}

/// `DPU_SIM_MAX_TASKLETS` (`dpu_sim.h`).
pub const DPU_SIM_MAX_TASKLETS: usize = 24;

/// `struct dpu_sim_timing` (`dpu_sim.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct dpu_sim_timing {
    /// Modelled cycles of the last launch.
    pub cycles: u64,
    /// Instructions executed by all tasklets.
    pub instructions: u64,
    /// Cycles the DMA engine was busy.
    pub dma_cycles: u64,
    /// Tasklets of the last launch.
    pub nr_tasklets: u32,
    /// Zero.
    pub reserved: u32,
    /// Instructions per tasklet.
    pub tasklet_instructions: [u64; DPU_SIM_MAX_TASKLETS],
    /// The cycle at which each tasklet finished.
    pub tasklet_cycles: [u64; DPU_SIM_MAX_TASKLETS],
}

/// Launch policies.
pub const DPU_ASYNCHRONOUS: u32 = 0;
/// Launch policies.
pub const DPU_SYNCHRONOUS: u32 = 1;
/// Transfer directions.
pub const DPU_XFER_TO_DPU: u32 = 0;
/// Transfer directions.
pub const DPU_XFER_FROM_DPU: u32 = 1;
/// Transfer flags.
pub const DPU_XFER_DEFAULT: u32 = 0;
/// Transfer flags.
pub const DPU_XFER_NO_RESET: u32 = 1;
/// Transfer flags.
pub const DPU_XFER_ASYNC: u32 = 2;
/// Transfer flags.
pub const DPU_XFER_PARALLEL: u32 = 4;
/// Scatter/gather flags.
pub const DPU_SG_XFER_DISABLE_LENGTH_CHECK: u32 = 4;
/// Callback flags.
pub const DPU_CALLBACK_ASYNC: u32 = 1;
/// Callback flags.
pub const DPU_CALLBACK_NONBLOCKING: u32 = 2;
/// Callback flags.
pub const DPU_CALLBACK_SINGLE_CALL: u32 = 4;
/// Callback flags.
pub const DPU_CALLBACK_PARALLEL: u32 = 8;
/// `DPU_ALLOCATE_ALL`.
pub const DPU_ALLOCATE_ALL: u32 = u32::MAX;
