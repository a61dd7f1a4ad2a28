//! A safe Rust runtime for UPMEM DPUs: one API for real DPUs (the SDK's libdpu, loaded at run time) and the
//! bundled simulator.
//!
//! # Workflow
//!
//! Write a kernel in C against the UPMEM runtime headers, build it (from `build.rs` with [`build::kernel`]),
//! allocate DPUs, load the kernel, transfer, launch, read back:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let source = dir.path().join("double.c");
//! # std::fs::write(&source, r#"
//! #include <defs.h>
//! #include <stdint.h>
//! __host uint32_t input[4];
//! __host uint32_t output[4];
//! int main(void) { if (me() == 0) for (int i = 0; i < 4; i++) output[i] = 2 * input[i]; return 0; }
//! # "#)?;
//! use upmem::{BackendKind, DpuSet};
//!
//! // In a build script: upmem::build::kernel("double", KernelBuilder::new().source("dpu/double.c"))?,
//! // then `upmem::kernel!("double")` in the crate.
//! let kernel = upmem::build::kernel_into("double", upmem::build::KernelBuilder::new().source(&source), dir.path())?;
//!
//! let mut set = DpuSet::builder().dpus(64).backend(BackendKind::Simulator).allocate()?.load(&kernel)?;
//! let inputs: Vec<[u32; 4]> = (0..64).map(|dpu| [dpu, dpu + 1, dpu + 2, dpu + 3]).collect();
//! set.push("input", 0, &inputs)?;
//! set.launch()?;
//! let outputs: Vec<Vec<u32>> = set.gather("output", 0, 4)?;
//! assert_eq!(outputs[10], [20, 22, 24, 26]);
//! # Ok(()) }
//! ```
//!
//! # From libdpu
//!
//! | libdpu | upmem |
//! |---|---|
//! | `struct dpu_set_t` from `dpu_alloc` | [`DpuSet`] (freed on drop), [`DpuSet::builder`] |
//! | `dpu_alloc_ranks` | [`DpuSetBuilder::ranks`] |
//! | `dpu_load` / `dpu_load_from_memory` | [`DpuSet::load`] / [`DpuSet::load_from_memory`] → [`LoadedSet`] (only a loaded set can transfer by symbol and launch) |
//! | `DPU_MRAM_HEAP_POINTER_NAME` | [`MRAM_HEAP`] |
//! | `DPU_FOREACH(set, dpu, i)` / `DPU_RANK_FOREACH` | [`DpuSet::dpus`] / [`DpuSet::ranks`] (and the same on [`LoadedSet`]) |
//! | `dpu_get_nr_dpus` / `dpu_get_nr_ranks` | [`DpuSet::nr_dpus`] / [`DpuSet::nr_ranks`] (and the same on [`LoadedSet`]) |
//! | `dpu_get_description(rank)->hw.signature.chip_id`, `hw.dpu.nr_of_threads` | [`DpuSet::chip`] ([`ChipVersion`]), [`DpuSet::hardware_threads`] (at most [`MAX_TASKLETS`]) |
//! | `dpu_get_symbol` | [`LoadedSet::symbol`] |
//! | `dpu_broadcast_to` / `dpu_copy_to` | [`LoadedSet::broadcast`] / [`LoadedSet::copy_to`] |
//! | `dpu_prepare_xfer` + `dpu_push_xfer(TO_DPU)` | [`LoadedSet::push`] |
//! | `dpu_prepare_xfer` + `dpu_push_xfer(FROM_DPU)` / `dpu_copy_from` | [`LoadedSet::gather`], [`LoadedSet::gather_into`] / [`LoadedSet::copy_from`] |
//! | `dpu_launch(SYNCHRONOUS)` | [`LoadedSet::launch`] |
//! | `dpu_launch(ASYNCHRONOUS)` + `dpu_status` + `dpu_sync` | [`LoadedSet::launch_async`] → [`Launch::poll`], [`Launch::wait`] |
//! | `DPU_XFER_ASYNC` transfers and launches, then `dpu_sync` | [`LoadedSet::async_scope`] |
//! | `dpu_log_read` | [`LoadedSet::log`] |
//! | `DPU_ERR_DPU_FAULT` | [`Error::Fault`] with a [`FaultInfo`] per DPU (the simulator says why) |
//! | `dpu_error_t` | [`Error::Dpu`] keeps the code |
//! | (none) | [`LoadedSet::timeline`]: every transfer and launch with its predicted hardware time ([`TransferModel`], DPUs at [`CLOCK_HZ`]); [`LoadedSet::models_hardware_cycles`]: whether launches have predicted cycles; [`LoadedSet::launch_stats`] and [`LoadedSet::simulator_stats`] (feature `simulator`): a simulated launch's cycles, instructions by class and DMA, over the set and per DPU |
//! | raw handles | [`DpuSet::as_raw`] / [`LoadedSet::as_raw`] (hardware); the simulator's own core, [`sim::Machine`], for what the safe API does not cover (feature `simulator`) |
//!
//! # Backends
//!
//! | backend | Cargo feature (default: both) | needs | selected by |
//! |---|---|---|---|
//! | simulator | `simulator` (brings `upmem-sim`; its configuration and statistics are in [`sim`]) | Linux (x86-64, aarch64), a C compiler and binutils to build kernels | [`BackendKind::Simulator`], `UPMEM_BACKEND=sim`, or automatically without hardware; shaped with [`DpuSetBuilder::simulator`] |
//! | hardware | `hardware` | the UPMEM SDK 2025.1's `libdpu.so` (`UPMEM_LIBDPU`, `$UPMEM_HOME/lib`, or the loader's path) and DPUs | [`BackendKind::Hardware`], `UPMEM_BACKEND=hw`, or automatically when `/sys/class/dpu_rank/dpu_rank0` exists |
//!
//! A build for a UPMEM server may leave the simulator out (`default-features = false, features =
//! ["hardware"]`: no C compiler needed, kernels are built with the SDK's compiler, and `upmem-sim` is not
//! compiled); a CI build may leave the hardware backend out. What both backends share (chip versions,
//! [`Topology`], [`Symbol`], the kernel description [`build::KernelBuilder`], [`TransferModel`] and the DPU's
//! constants) comes from the `upmem-types` crate, which this one re-exports. Both backends implement one
//! internal contract, so every operation of a set behaves the same on either. A backend left out still exists as a [`BackendKind`]: asking for it is
//! [`Error::BackendNotCompiled`], and [`BackendKind::Auto`] picks the one compiled in.
//!
//! [`BackendKind::Auto`] (the default) follows `UPMEM_BACKEND` when it is set, else picks hardware when
//! present and the simulator otherwise, and logs which and why ([`BackendKind::resolve`] tells before
//! allocating). An explicit choice never falls back: a missing libdpu is [`Error::LibraryNotFound`], one of
//! another SDK release [`Error::UnsupportedSdk`], and a hardware set is allocated with `backend=hw` in its
//! profile, so it fails with [`Error::HardwareAllocation`] rather than run on the SDK's own simulator when no
//! DPU is found ([`RankInventory`] is what the kernel driver lists). The hardware backend pointed at the
//! simulator's libdpu-compatible library (`UPMEM_LIBDPU=target/.../libdpu.so`), with a profile naming
//! `backend=simulator` (which that library refuses `backend=hw` without, as the SDK's does on a machine without
//! DPUs), runs on the simulator, which is how it is tested without hardware.
//!
//! # Who checks what
//!
//! This layer checks every transfer once, before a backend sees it: the symbol exists, offset + length stay
//! within it, and both are multiples of 8 (MRAM) or 4 (WRAM); per-DPU buffers are one per DPU and of equal
//! length; only [`DpuCopy`] data is copied as raw bytes. Backends report only what cannot be foreseen: an
//! allocation that fails, a DPU that faults, a library that is missing.

pub mod backend;
pub mod build;
mod copy;
pub mod driver;
mod engine;
mod error;
#[cfg(feature = "hardware")]
mod hw;
mod kernel;
mod set;
#[cfg(feature = "simulator")]
pub mod sim;
pub mod timeline;

#[cfg(not(any(feature = "simulator", feature = "hardware")))]
compile_error!("upmem needs at least one backend: enable the feature `simulator`, `hardware` or both");

pub use backend::{hardware_present, BackendKind};
pub use copy::DpuCopy;
pub use driver::RankInventory;
pub use error::{Error, LoadAttempt, MissingLibrary, Result};
pub use kernel::Kernel;
pub use set::{AsyncScope, Dpu, DpuSet, DpuSetBuilder, FaultInfo, Launch, LoadedSet};
pub use timeline::{Timeline, TransferModel};
pub use upmem_types::RankScaling;
pub use upmem_types::{
    ChipVersion, MemoryKind, ParseChipVersionError, Symbol, Topology, CLOCK_HZ, DEFAULT_MRAM_SIZE, DEFAULT_WRAM_SIZE,
    DMA_CYCLES_PER_BYTE, DMA_READ_ALPHA_CYCLES, DMA_WRITE_ALPHA_CYCLES, MAX_TASKLETS, MRAM_HEAP,
};
