//! The contract every backend meets: one method per operation on an allocated set. The safe layer
//! ([`crate::set`]) has checked sizes, alignment, symbols and bounds before calling any of them.

use std::ops::Range;

use upmem_types::{ChipVersion, Symbol, Topology};

use crate::error::Result;
use crate::set::FaultInfo;
use crate::Kernel;

/// A backend driving the DPUs of one set. DPU indices are the set's (0 to `nr_dpus() - 1`).
///
/// A set holds its backend as a `Box<dyn Engine>` rather than as an enum of the backends: with an enum, every
/// operation would match on the variants compiled in (a `#[cfg]` per arm, per method); through the trait each
/// backend says once what it does, and the set calls it without knowing which one it is. The call through a
/// vtable costs nothing next to a transfer or a launch.
pub(crate) trait Engine: Send + Sync {
    /// DPUs in the set.
    fn nr_dpus(&self) -> usize;

    /// Each rank's DPUs, in `DPU_RANK_FOREACH` order.
    fn ranks(&self) -> &[Range<usize>];

    /// The chip version of the set's DPUs.
    fn chip(&self) -> ChipVersion;

    /// Hardware threads of each DPU.
    fn hardware_threads(&self) -> u32;

    /// The version of the UPMEM SDK whose libdpu drives the set, when it says.
    fn sdk_version(&self) -> Option<&str> {
        None
    }

    /// The shape of the machine the set was taken from, when the backend knows it (the simulated machine's).
    fn topology(&self) -> Option<&Topology> {
        None
    }

    /// Loads `kernel` (its binary for this backend and the set's chip) into every DPU.
    fn load(&mut self, kernel: &Kernel) -> Result<()>;

    /// Loads a binary held in memory into every DPU.
    fn load_from_memory(&mut self, binary: &[u8]) -> Result<()>;

    /// A symbol of the loaded program.
    fn symbol(&self, name: &str) -> Option<Symbol>;

    /// Writes `data[i]` to DPU `i` (or `data[0]` to every DPU when it has one element) at symbol + offset, now
    /// or `queued` after what is queued.
    fn write(&mut self, symbol: Symbol, offset: u32, data: &[&[u8]], queued: bool) -> Result<()>;

    /// Reads `out[i].len()` bytes of DPU `i` at symbol + offset into `out[i]`.
    fn read(&mut self, symbol: Symbol, offset: u32, out: &mut [&mut [u8]]) -> Result<()>;

    /// Writes `data` to DPU `index` at symbol + offset.
    fn write_one(&mut self, index: usize, symbol: Symbol, offset: u32, data: &[u8]) -> Result<()>;

    /// Reads DPU `index` at symbol + offset into `out`.
    fn read_one(&mut self, index: usize, symbol: Symbol, offset: u32, out: &mut [u8]) -> Result<()>;

    /// Starts every DPU, and waits for them when `wait`.
    fn launch(&mut self, wait: bool) -> Result<()>;

    /// Waits for everything started or queued; DPU faults are [`crate::Error::Fault`].
    fn sync(&mut self) -> Result<()>;

    /// Whether the last launch has finished.
    fn poll(&mut self) -> Result<bool>;

    /// The DPUs in fault after the last launch, with reasons.
    fn faults(&mut self) -> Result<Vec<FaultInfo>>;

    /// What DPU `index` printed during the last launch.
    fn log(&mut self, index: usize) -> Result<Vec<u8>>;

    /// Whether the backend's cycles are a prediction of the hardware's: true on the simulator under a schedule
    /// that models the DPU's (see [`crate::LoadedSet::models_hardware_cycles`]).
    fn models_hardware_cycles(&self) -> bool {
        false
    }

    /// The slowest DPU's modelled cycles in the last launch, when [`Engine::models_hardware_cycles`].
    fn modelled_launch_cycles(&self) -> Result<Option<u64>> {
        Ok(None)
    }

    /// What DPU `index` did during the last launch, on the simulator.
    #[cfg(feature = "simulator")]
    fn dpu_stats(&self, _index: usize) -> Result<Option<crate::sim::DpuStats>> {
        Ok(None)
    }

    /// The raw libdpu handles of a hardware set.
    #[cfg(feature = "hardware")]
    fn as_raw(&self) -> Option<(upmem_sys::dpu_set_t, &upmem_sys::LibDpu)> {
        None
    }
}
