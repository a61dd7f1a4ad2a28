//! What UPMEM's hardware and the bundled simulator share, defined once, so that the runtime (`upmem`) can
//! drive real DPUs without compiling the simulator (`upmem-sim`): both depend on this crate, neither on the
//! other for these facts. It holds the DPU chip versions ([`ChipVersion`]), the shape of a server
//! ([`Topology`]), a program's symbols ([`Symbol`]), the description of a kernel to build ([`KernelBuilder`]:
//! sources, defines, flags, tasklets, chip, and the SDK compiler's arguments for it), the model of host-DPU
//! transfer times ([`TransferModel`], PrIM's figures) and the DPU's constants ([`CLOCK_HZ`], [`MAX_TASKLETS`],
//! [`MRAM_HEAP`], memory sizes, DMA costs).
//!
//! It depends on `thiserror`, and on `serde` and `serde_json` for transfer profiles ([`TransferModel::read_profile`]).

mod chip;
mod kernel;
mod symbol;
mod topology;
pub mod transfer_model;
mod transfer_profile;

pub use chip::{parse_chip_id, ChipVersion, ParseChipVersionError};
pub use kernel::KernelBuilder;
pub use symbol::{MemoryKind, Symbol};
pub use topology::Topology;
pub use transfer_model::{Operation, RankScaling, TransferModel};
pub use transfer_profile::{ProfileError, TRANSFER_PROFILE_VARIABLE};

/// The DPU clock of PrIM's server, 350 MHz: what the simulator's cycles run at and `CLOCKS_PER_SEC` says there.
pub const CLOCK_HZ: u64 = 350_000_000;

/// Hardware threads of a v1A DPU, the most tasklets any DPU program may have (v1B DPUs have 16:
/// [`ChipVersion::hardware_threads`]).
pub const MAX_TASKLETS: usize = 24;

/// The symbol of the MRAM heap, what `DPU_MRAM_HEAP_POINTER` points at on the DPU (`DPU_MRAM_HEAP_POINTER_NAME`):
/// it spans the MRAM after the program's variables.
pub const MRAM_HEAP: &str = "__sys_used_mram_end";

/// Where MRAM starts in a DPU's address space: a symbol at or above it is in MRAM ([`Symbol::at`]).
pub const MRAM_BASE: u64 = 0x0800_0000;

/// WRAM of a UPMEM DPU: 64 KiB.
pub const DEFAULT_WRAM_SIZE: u64 = 64 << 10;

/// MRAM of a UPMEM DPU: 64 MiB.
pub const DEFAULT_MRAM_SIZE: u64 = 64 << 20;

/// Fixed cycles of an MRAM -> WRAM DMA (`mram_read`), PrIM's measurement: a DMA takes alpha plus
/// [`DMA_CYCLES_PER_BYTE`] per byte.
pub const DMA_READ_ALPHA_CYCLES: u32 = 77;

/// Fixed cycles of a WRAM -> MRAM DMA (`mram_write`), PrIM's measurement.
pub const DMA_WRITE_ALPHA_CYCLES: u32 = 61;

/// DMA cycles per byte moved between MRAM and WRAM (beta), PrIM's measurement: two bytes per cycle.
pub const DMA_CYCLES_PER_BYTE: f64 = 0.5;
