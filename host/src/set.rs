//! DPU sets: allocation, loading, transfers, launches. The phases are types: a [`DpuSet`] has DPUs but no
//! program; [`DpuSet::load`] turns it into a [`LoadedSet`], the only type that can transfer by symbol and
//! launch.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use upmem_types::{ChipVersion, Symbol, Topology, CLOCK_HZ};

use crate::backend::{self, BackendKind};
use crate::copy::{as_bytes, as_bytes_mut, DpuCopy};
use crate::engine::Engine;
use crate::error::{Error, Result};
#[cfg(feature = "hardware")]
use crate::hw::HwEngine;
#[cfg(feature = "simulator")]
use crate::sim::{SetStats, SimConfig, SimEngine};
use crate::timeline::{Event, Operation, Timeline, TransferModel};
use crate::Kernel;

/// A DPU in fault and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultInfo {
    /// Index of the DPU in its set.
    pub dpu: usize,
    /// The explanation (the simulator says what happened; hardware only that the DPU is in fault).
    pub reason: String,
}

impl fmt::Display for FaultInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DPU {} of the set: {}", self.dpu, self.reason)
    }
}

/// How many DPUs a set asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Amount {
    Dpus(u32),
    Ranks(u32),
    All,
}

/// How to allocate a set.
#[derive(Clone, Debug)]
pub struct DpuSetBuilder {
    amount: Amount,
    backend: BackendKind,
    profile: String,
    libdpu: Option<PathBuf>,
    #[cfg(feature = "simulator")]
    simulator: Option<SimConfig>,
}

impl DpuSetBuilder {
    /// This many DPUs (`dpu_alloc`; default: all the backend has).
    pub fn dpus(&mut self, nr_dpus: u32) -> &mut Self {
        self.amount = Amount::Dpus(nr_dpus);
        self
    }

    /// This many whole ranks (`dpu_alloc_ranks`).
    pub fn ranks(&mut self, nr_ranks: u32) -> &mut Self {
        self.amount = Amount::Ranks(nr_ranks);
        self
    }

    /// The backend (default: [`BackendKind::Auto`]).
    pub fn backend(&mut self, backend: BackendKind) -> &mut Self {
        self.backend = backend;
        self
    }

    /// The libdpu profile string for the hardware backend (e.g. `"nrThreadsPerRank=1"`). `backend=hw` is added
    /// unless it names a backend, so that libdpu never runs the set on the SDK's simulator instead.
    pub fn profile(&mut self, profile: &str) -> &mut Self {
        self.profile = profile.to_owned();
        self
    }

    /// The libdpu the hardware backend loads (default: `$UPMEM_LIBDPU`, `$UPMEM_HOME/lib/libdpu.so`, then the
    /// loader's search path).
    pub fn libdpu(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.libdpu = Some(path.as_ref().to_path_buf());
        self
    }

    /// The simulated machine (default: ranks of 64 DPUs, as many as the set needs up to a full 2,560-DPU
    /// server, and the full server when allocating all DPUs; a set larger than a server is refused, as on the
    /// hardware, unless this gives a larger machine). The set takes the machine's first DPUs (or ranks).
    #[cfg(feature = "simulator")]
    pub fn simulator(&mut self, config: SimConfig) -> &mut Self {
        self.simulator = Some(config);
        self
    }

    /// Allocates the DPUs.
    pub fn allocate(&self) -> Result<DpuSet> {
        let backend = backend::resolve(self.backend, self.libdpu.as_deref())?;
        let engine = match backend {
            BackendKind::Hardware => self.hardware()?,
            _ => self.simulated()?,
        };
        Ok(DpuSet { engine, backend })
    }

    #[cfg(feature = "hardware")]
    fn hardware(&self) -> Result<Box<dyn Engine>> {
        Ok(Box::new(HwEngine::allocate(self.libdpu.as_deref(), self.amount, &self.profile)?))
    }

    #[cfg(not(feature = "hardware"))]
    fn hardware(&self) -> Result<Box<dyn Engine>> {
        Err(Error::BackendNotCompiled { backend: BackendKind::Hardware, feature: "hardware" })
    }

    #[cfg(feature = "simulator")]
    fn simulated(&self) -> Result<Box<dyn Engine>> {
        let config = self.simulator.clone().unwrap_or_else(|| {
            let server = Topology::full_server();
            SimConfig::new(match self.amount {
                Amount::Dpus(n) => Topology::server_ranks_for(n),
                Amount::Ranks(n) => Topology::server_ranks_for(n.saturating_mul(server.dpus_per_rank)),
                Amount::All => server,
            })
        });
        Ok(Box::new(SimEngine::allocate(config, self.amount)?))
    }

    #[cfg(not(feature = "simulator"))]
    fn simulated(&self) -> Result<Box<dyn Engine>> {
        Err(Error::BackendNotCompiled { backend: BackendKind::Simulator, feature: "simulator" })
    }
}

/// Allocated DPUs with no program loaded (`struct dpu_set_t` after `dpu_alloc`). Freed on drop.
pub struct DpuSet {
    engine: Box<dyn Engine>,
    backend: BackendKind,
}

/// A DPU of a set: its index in the set (what `DPU_FOREACH`'s `i` counts) and its rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dpu {
    /// Index in the set.
    pub index: usize,
    /// Index of its rank in the set.
    pub rank: usize,
}

impl DpuSet {
    /// How to allocate a set.
    pub fn builder() -> DpuSetBuilder {
        DpuSetBuilder {
            amount: Amount::All,
            backend: BackendKind::Auto,
            profile: String::new(),
            libdpu: None,
            #[cfg(feature = "simulator")]
            simulator: None,
        }
    }

    /// `nr_dpus` DPUs on the automatically chosen backend.
    pub fn allocate(nr_dpus: u32) -> Result<DpuSet> {
        Self::builder().dpus(nr_dpus).allocate()
    }

    /// The backend in use.
    pub fn backend(&self) -> BackendKind {
        self.backend
    }

    /// DPUs in the set.
    pub fn nr_dpus(&self) -> usize {
        self.engine.nr_dpus()
    }

    /// The chip version of the set's DPUs: what the ranks report on hardware (`dpu_get_description`), the
    /// simulated machine's on the simulator ([`Topology::chip`]).
    pub fn chip(&self) -> ChipVersion {
        self.engine.chip()
    }

    /// Hardware threads of each DPU: the most tasklets a program loaded in this set may have (24 on v1A chips,
    /// 16 on v1B ones).
    pub fn hardware_threads(&self) -> u32 {
        self.engine.hardware_threads()
    }

    /// The version of the UPMEM SDK whose libdpu drives a hardware set, when it says (`None` on the simulator).
    pub fn sdk_version(&self) -> Option<&str> {
        self.engine.sdk_version()
    }

    /// The shape of the simulated machine a simulator set was taken from (its ranks, disabled DPUs, memory
    /// sizes and chip); `None` on hardware.
    pub fn topology(&self) -> Option<&Topology> {
        self.engine.topology()
    }

    /// Ranks in the set.
    pub fn nr_ranks(&self) -> usize {
        self.rank_ranges().len()
    }

    fn rank_ranges(&self) -> &[Range<usize>] {
        self.engine.ranks()
    }

    /// The DPUs in `DPU_FOREACH` order.
    pub fn dpus(&self) -> impl Iterator<Item = Dpu> + '_ {
        self.rank_ranges()
            .iter()
            .enumerate()
            .flat_map(|(rank, range)| range.clone().map(move |index| Dpu { index, rank }))
    }

    /// Each rank's DPUs (indices in the set), in `DPU_RANK_FOREACH` order.
    pub fn ranks(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.rank_ranges().iter().cloned()
    }

    /// Loads `kernel` (its binary for this backend) into every DPU.
    pub fn load(mut self, kernel: &Kernel) -> Result<LoadedSet> {
        self.engine.load(kernel)?;
        LoadedSet::new(self)
    }

    /// Loads a binary held in memory (`dpu_load_from_memory`): a simulated binary on the simulator, a DPU ELF
    /// on hardware.
    pub fn load_from_memory(mut self, binary: &[u8]) -> Result<LoadedSet> {
        self.engine.load_from_memory(binary)?;
        LoadedSet::new(self)
    }

    /// The raw libdpu handles of a hardware set (`struct dpu_set_t` and the loaded library), `None` on the
    /// simulator: the escape hatch for what the safe API does not cover (feature `hardware`).
    #[cfg(feature = "hardware")]
    pub fn as_raw(&self) -> Option<(upmem_sys::dpu_set_t, &upmem_sys::LibDpu)> {
        self.engine.as_raw()
    }
}

/// A set with a program loaded: transfers by symbol and launches.
pub struct LoadedSet {
    set: DpuSet,
    timeline: Timeline,
    transfer_model: TransferModel,
}

impl LoadedSet {
    /// A loaded set whose timeline predicts with [`TransferModel::configured`]: a server's profile named by
    /// `UPMEM_TRANSFER_PROFILE`, else the published defaults.
    fn new(set: DpuSet) -> Result<Self> {
        Ok(LoadedSet { set, timeline: Timeline::default(), transfer_model: TransferModel::configured()? })
    }

    /// The backend in use ([`DpuSet::backend`]).
    pub fn backend(&self) -> BackendKind {
        self.set.backend()
    }

    /// DPUs in the set ([`DpuSet::nr_dpus`]).
    pub fn nr_dpus(&self) -> usize {
        self.set.nr_dpus()
    }

    /// Ranks in the set ([`DpuSet::nr_ranks`]).
    pub fn nr_ranks(&self) -> usize {
        self.set.nr_ranks()
    }

    /// The DPUs in `DPU_FOREACH` order ([`DpuSet::dpus`]).
    pub fn dpus(&self) -> impl Iterator<Item = Dpu> + '_ {
        self.set.dpus()
    }

    /// Each rank's DPUs, in `DPU_RANK_FOREACH` order ([`DpuSet::ranks`]).
    pub fn ranks(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.set.ranks()
    }

    /// The chip version of the set's DPUs ([`DpuSet::chip`]).
    pub fn chip(&self) -> ChipVersion {
        self.set.chip()
    }

    /// Hardware threads of each DPU, the most tasklets a program may have ([`DpuSet::hardware_threads`]).
    pub fn hardware_threads(&self) -> u32 {
        self.set.hardware_threads()
    }

    /// The version of the UPMEM SDK whose libdpu drives a hardware set ([`DpuSet::sdk_version`]).
    pub fn sdk_version(&self) -> Option<&str> {
        self.set.sdk_version()
    }

    /// The shape of the simulated machine of a simulator set, `None` on hardware ([`DpuSet::topology`]).
    pub fn topology(&self) -> Option<&Topology> {
        self.set.topology()
    }

    /// The raw libdpu handles of a hardware set, the escape hatch for what the safe API does not cover
    /// ([`DpuSet::as_raw`]).
    #[cfg(feature = "hardware")]
    pub fn as_raw(&self) -> Option<(upmem_sys::dpu_set_t, &upmem_sys::LibDpu)> {
        self.set.as_raw()
    }

    /// Every transfer and launch since the program was loaded (or the timeline last taken), in order, with its
    /// wall time here and its predicted time on a UPMEM server (see [`crate::timeline`]).
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// Returns the timeline and starts a new one.
    pub fn take_timeline(&mut self) -> Timeline {
        std::mem::take(&mut self.timeline)
    }

    /// The model the timeline's predictions use.
    pub fn transfer_model(&self) -> &TransferModel {
        &self.transfer_model
    }

    /// Predicts the timeline's next events with `model` (a measured server's figures, say).
    pub fn set_transfer_model(&mut self, model: TransferModel) {
        self.transfer_model = model;
    }

    /// The last launch over the whole set on the simulator (the slowest DPU's modelled cycles, instructions by
    /// class and DMA traffic over all DPUs); `None` on hardware, which does not say.
    #[cfg(feature = "simulator")]
    pub fn launch_stats(&self) -> Result<Option<SetStats>> {
        let engine = &self.set.engine;
        let stats = (0..engine.nr_dpus()).map(|dpu| engine.dpu_stats(dpu)).collect::<Result<Option<Vec<_>>>>()?;
        Ok(stats.map(|stats| SetStats::of(&stats)))
    }

    /// Whether the set's launches have modelled cycles that predict the hardware's: true on the simulator under
    /// a schedule that models the DPU's interleaving ([`Schedule::predicts_hardware_time`](crate::sim::Schedule)),
    /// false under one that does not and on hardware, which does not say. The timeline's launches have a
    /// predicted time exactly when this holds.
    pub fn models_hardware_cycles(&self) -> bool {
        self.set.engine.models_hardware_cycles()
    }

    /// Adds a transfer of `bytes_per_dpu` to or from `dpus` DPUs, started at `started`, to the timeline.
    fn record_transfer(&mut self, operation: Operation, bytes_per_dpu: usize, dpus: usize, started: Instant) {
        let bytes_per_dpu = bytes_per_dpu as u64;
        let predicted = self.transfer_model.transfer_time(operation, bytes_per_dpu, self.set.rank_ranges());
        self.timeline.push(Event { operation, bytes_per_dpu, dpus, wall: started.elapsed(), predicted });
    }

    /// Adds a launch started at `started` to the timeline, predicted from the DPUs' modelled cycles when the
    /// backend has them (`complete`: the launch has finished and its statistics are the set's).
    fn record_launch(&mut self, started: Instant, complete: bool) -> Result<()> {
        let predicted = if complete { self.launch_prediction()? } else { None };
        let dpus = self.nr_dpus();
        self.timeline.push(Event {
            operation: Operation::Launch,
            bytes_per_dpu: 0,
            dpus,
            wall: started.elapsed(),
            predicted,
        });
        Ok(())
    }

    /// The last launch's predicted hardware time: the launch overhead and the slowest DPU's modelled cycles,
    /// `None` on hardware and under a simulator schedule whose cycles predict nothing (`fast`).
    fn launch_prediction(&self) -> Result<Option<std::time::Duration>> {
        let cycles = self.set.engine.modelled_launch_cycles()?;
        Ok(cycles.map(|cycles| self.transfer_model.launch_time(cycles, CLOCK_HZ)))
    }

    /// Completes the last launch of the timeline, queued without a prediction, once the queue has run.
    fn complete_queued_launch(&mut self) -> Result<()> {
        let predicted = self.launch_prediction()?;
        let queued = self.timeline.last_launch_mut();
        if let Some(launch) = queued {
            launch.predicted = predicted;
        }
        Ok(())
    }

    /// Loads another program in place (resets WRAM and `__mram` variables, as `dpu_load` does).
    pub fn load(&mut self, kernel: &Kernel) -> Result<()> {
        self.set.engine.load(kernel)
    }

    /// Loads another program held in memory in place.
    pub fn load_from_memory(&mut self, binary: &[u8]) -> Result<()> {
        self.set.engine.load_from_memory(binary)
    }

    /// A symbol of the loaded program.
    pub fn symbol(&self, name: &str) -> Result<Symbol> {
        self.set.engine.symbol(name).ok_or_else(|| Error::UnknownSymbol(name.to_owned()))
    }

    /// Checks a transfer of `length` bytes at `offset` into `name` against its bounds and the DPU's
    /// alignment rules, before any backend sees it.
    fn checked(&self, name: &str, offset: u32, length: usize) -> Result<Symbol> {
        let symbol = self.symbol(name)?;
        if u64::from(offset) + length as u64 > u64::from(symbol.size) {
            return Err(Error::OutOfBounds { symbol: name.to_owned(), offset, length, size: symbol.size });
        }
        let (memory, required) = if symbol.is_mram() { ("MRAM", 8) } else { ("WRAM", 4) };
        let start = symbol.address.wrapping_add(offset);
        if start % required != 0 || !length.is_multiple_of(required as usize) {
            return Err(Error::Misaligned { symbol: name.to_owned(), memory, offset, length, required });
        }
        Ok(symbol)
    }

    /// Writes `data` to every DPU (one slice: the same bytes to all; else one slice per DPU, already checked
    /// with `check_buffers`), now or queued, after checking the symbol range.
    fn write(&mut self, symbol: &str, offset: u32, data: &[&[u8]], queued: bool) -> Result<()> {
        let started = Instant::now();
        let symbol = self.checked(symbol, offset, data[0].len())?;
        self.set.engine.write(symbol, offset, data, queued)?;
        let operation = if data.len() == 1 { Operation::Broadcast } else { Operation::Push };
        self.record_transfer(operation, data[0].len(), self.nr_dpus(), started);
        Ok(())
    }

    /// Writes the same values to every DPU (`dpu_broadcast_to`).
    pub fn broadcast<T: DpuCopy>(&mut self, symbol: &str, offset: u32, values: &[T]) -> Result<()> {
        self.write(symbol, offset, &[as_bytes(values)], false)
    }

    /// Writes `buffers[i]` to DPU `i`, all in parallel (`dpu_prepare_xfer` + `dpu_push_xfer`). Every buffer
    /// has the same length.
    pub fn push<T: DpuCopy, B: AsRef<[T]>>(&mut self, symbol: &str, offset: u32, buffers: &[B]) -> Result<()> {
        let slices: Vec<&[u8]> = buffers.iter().map(|buffer| as_bytes(buffer.as_ref())).collect();
        self.check_buffers(slices.iter().map(|slice| slice.len()))?;
        self.write(symbol, offset, &slices, false)
    }

    /// Reads `buffers[i].len()` values from DPU `i` into `buffers[i]`, all in parallel.
    pub fn gather_into<T: DpuCopy, B: AsMut<[T]>>(
        &mut self,
        symbol: &str,
        offset: u32,
        buffers: &mut [B],
    ) -> Result<()> {
        let started = Instant::now();
        let mut slices: Vec<&mut [u8]> = buffers.iter_mut().map(|buffer| as_bytes_mut(buffer.as_mut())).collect();
        self.check_buffers(slices.iter().map(|slice| slice.len()))?;
        let symbol = self.checked(symbol, offset, slices[0].len())?;
        self.set.engine.read(symbol, offset, &mut slices)?;
        let length = slices[0].len();
        self.record_transfer(Operation::Gather, length, self.nr_dpus(), started);
        Ok(())
    }

    /// Reads `count` values from every DPU.
    pub fn gather<T: DpuCopy + Default>(&mut self, symbol: &str, offset: u32, count: usize) -> Result<Vec<Vec<T>>> {
        let mut buffers = vec![vec![T::default(); count]; self.nr_dpus()];
        self.gather_into(symbol, offset, &mut buffers)?;
        Ok(buffers)
    }

    /// Writes to one DPU of the set.
    pub fn copy_to<T: DpuCopy>(&mut self, dpu: usize, symbol: &str, offset: u32, values: &[T]) -> Result<()> {
        let started = Instant::now();
        self.check_dpu(dpu)?;
        let bytes = as_bytes(values);
        let symbol = self.checked(symbol, offset, bytes.len())?;
        self.set.engine.write_one(dpu, symbol, offset, bytes)?;
        self.record_transfer(Operation::CopyTo, bytes.len(), 1, started);
        Ok(())
    }

    /// Reads from one DPU of the set (`dpu_copy_from`).
    pub fn copy_from<T: DpuCopy>(&mut self, dpu: usize, symbol: &str, offset: u32, values: &mut [T]) -> Result<()> {
        let started = Instant::now();
        self.check_dpu(dpu)?;
        let bytes = as_bytes_mut(values);
        let symbol = self.checked(symbol, offset, bytes.len())?;
        self.set.engine.read_one(dpu, symbol, offset, bytes)?;
        self.record_transfer(Operation::CopyFrom, bytes.len(), 1, started);
        Ok(())
    }

    fn check_dpu(&self, dpu: usize) -> Result<()> {
        if dpu >= self.nr_dpus() {
            return Err(Error::NoSuchDpu { index: dpu, count: self.nr_dpus() });
        }
        Ok(())
    }

    fn check_buffers(&self, lengths: impl ExactSizeIterator<Item = usize>) -> Result<()> {
        let expected = self.nr_dpus();
        if lengths.len() != expected {
            return Err(Error::BufferCount { expected, found: lengths.len() });
        }
        let mut first = None;
        for (index, length) in lengths.enumerate() {
            match first {
                None => first = Some(length),
                Some(expected) if expected != length => {
                    return Err(Error::BufferLength { index, found: length, expected })
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Runs every DPU to completion. DPU faults come back as [`Error::Fault`] with the reasons.
    pub fn launch(&mut self) -> Result<()> {
        let started = Instant::now();
        self.set.engine.launch(true)?;
        self.record_launch(started, true)
    }

    /// Starts every DPU; the set is borrowed until the returned launch is waited for (or dropped, which waits).
    pub fn launch_async(&mut self) -> Result<Launch<'_>> {
        let started = Instant::now();
        self.set.engine.launch(false)?;
        Ok(Launch { set: self, started, finished: false })
    }

    /// Runs `body` with queued operations: pushes, broadcasts and launches return before they complete, run
    /// in order, and are all complete when `async_scope` returns (`DPU_XFER_ASYNC`, `DPU_ASYNCHRONOUS` and
    /// `dpu_sync`). Buffers given to the scope must outlive the call, so none can be freed while a transfer
    /// may still read it.
    ///
    /// A launch's DPU faults come back as [`Error::Fault`] from the scope. If the body panics, the scope still
    /// waits for what it queued while unwinding (as `std::thread::scope` joins its threads), so no queued
    /// transfer outlives the buffers it reads.
    pub fn async_scope<'env, R>(&'env mut self, body: impl FnOnce(&mut AsyncScope<'env>) -> Result<R>) -> Result<R> {
        let mut scope = AsyncScope { set: self, synced: false, launched: false };
        let result = body(&mut scope);
        let synced = scope.sync();
        let value = result?;
        synced?;
        Ok(value)
    }

    /// What DPU `dpu` printed during the last launch.
    pub fn log(&mut self, dpu: usize) -> Result<String> {
        self.check_dpu(dpu)?;
        let bytes = self.set.engine.log(dpu)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// What DPU `dpu` did during the last launch (DMA traffic per tasklet, modelled cycles, synchronisation
    /// waits), on the simulator; `None` on hardware, which does not say.
    #[cfg(feature = "simulator")]
    pub fn simulator_stats(&self, dpu: usize) -> Result<Option<crate::sim::DpuStats>> {
        self.check_dpu(dpu)?;
        self.set.engine.dpu_stats(dpu)
    }

    /// The DPUs in fault after the last launch, with reasons.
    pub fn faults(&mut self) -> Result<Vec<FaultInfo>> {
        self.set.engine.faults()
    }
}

/// Queued operations on a set; see [`LoadedSet::async_scope`].
pub struct AsyncScope<'env> {
    set: &'env mut LoadedSet,
    synced: bool,
    /// Whether a launch was queued, to complete its prediction once the queue has run.
    launched: bool,
}

impl Drop for AsyncScope<'_> {
    /// Reached without a sync only when the body panicked: wait for the queued work all the same (its errors
    /// have nowhere to go during a panic).
    fn drop(&mut self) {
        if !self.synced {
            let _ = self.sync();
        }
    }
}

impl<'env> AsyncScope<'env> {
    /// Waits for everything queued.
    fn sync(&mut self) -> Result<()> {
        self.synced = true;
        self.set.set.engine.sync()?;
        if self.launched {
            // Only the last launch's statistics survive the queue: earlier ones keep no prediction.
            self.set.complete_queued_launch()?;
        }
        Ok(())
    }

    /// Queues a write of `buffers[i]` to DPU `i` (checked as [`LoadedSet::push`]).
    pub fn push<T: DpuCopy, B: AsRef<[T]>>(&mut self, symbol: &str, offset: u32, buffers: &'env [B]) -> Result<()> {
        let slices: Vec<&[u8]> = buffers.iter().map(|buffer| as_bytes(buffer.as_ref())).collect();
        self.set.check_buffers(slices.iter().map(|slice| slice.len()))?;
        self.set.write(symbol, offset, &slices, true)
    }

    /// Queues a write of the same values to every DPU.
    pub fn broadcast<T: DpuCopy>(&mut self, symbol: &str, offset: u32, values: &'env [T]) -> Result<()> {
        self.set.write(symbol, offset, &[as_bytes(values)], true)
    }

    /// Queues a launch of every DPU.
    pub fn launch(&mut self) -> Result<()> {
        let started = Instant::now();
        self.set.set.engine.launch(false)?;
        self.launched = true;
        self.set.record_launch(started, false)
    }
}

/// A launch in progress; the set it runs on is borrowed until it ends.
pub struct Launch<'a> {
    set: &'a mut LoadedSet,
    started: Instant,
    finished: bool,
}

impl Launch<'_> {
    /// Whether every DPU has finished (faults are reported by [`Launch::wait`]).
    pub fn poll(&mut self) -> Result<bool> {
        self.set.set.engine.poll()
    }

    /// Waits for every DPU; DPU faults come back as [`Error::Fault`].
    pub fn wait(mut self) -> Result<()> {
        self.finished = true;
        self.set.set.engine.sync()?;
        self.set.record_launch(self.started, true)
    }
}

impl Drop for Launch<'_> {
    fn drop(&mut self) {
        if !self.finished {
            if let Err(error) = self.set.set.engine.sync() {
                log::warn!("a launch dropped without waiting ended with: {error}");
            }
        }
    }
}
