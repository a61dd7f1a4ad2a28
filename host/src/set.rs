//! DPU sets: allocation, loading, transfers, launches. The phases are types: a [`DpuSet`] has DPUs but no
//! program; [`DpuSet::load`] turns it into a [`LoadedSet`], the only type that can transfer by symbol and
//! launch.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use upmem_sim::Symbol;
#[cfg(feature = "simulator")]
use upmem_sim::Topology;
use upmem_sim::{ChipVersion, SimConfig};

use crate::backend::{self, BackendKind};
use crate::copy::{as_bytes, as_bytes_mut, DpuCopy};
use crate::error::{Error, Result};
#[cfg(feature = "hardware")]
use crate::hw::HwEngine;
use crate::set_stats::SetStats;
#[cfg(feature = "simulator")]
use crate::sim::SimEngine;
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

/// The backends compiled in (features `simulator` and `hardware`).
pub(crate) enum Engine {
    #[cfg(feature = "simulator")]
    Simulator(Box<SimEngine>),
    #[cfg(feature = "hardware")]
    Hardware(HwEngine),
}

macro_rules! dispatch {
    ($engine:expr, $e:ident => $body:expr) => {
        match $engine {
            #[cfg(feature = "simulator")]
            Engine::Simulator($e) => $body,
            #[cfg(feature = "hardware")]
            Engine::Hardware($e) => $body,
        }
    };
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
    fn hardware(&self) -> Result<Engine> {
        Ok(Engine::Hardware(HwEngine::allocate(self.libdpu.as_deref(), self.amount, &self.profile)?))
    }

    #[cfg(not(feature = "hardware"))]
    fn hardware(&self) -> Result<Engine> {
        Err(Error::BackendNotCompiled { backend: BackendKind::Hardware, feature: "hardware" })
    }

    #[cfg(feature = "simulator")]
    fn simulated(&self) -> Result<Engine> {
        let config = self.simulator.clone().unwrap_or_else(|| {
            let server = Topology::full_server();
            SimConfig::new(match self.amount {
                Amount::Dpus(n) => Topology::server_ranks_for(n),
                Amount::Ranks(n) => Topology::server_ranks_for(n.saturating_mul(server.dpus_per_rank)),
                Amount::All => server,
            })
        });
        Ok(Engine::Simulator(Box::new(SimEngine::allocate(config, self.amount)?)))
    }

    #[cfg(not(feature = "simulator"))]
    fn simulated(&self) -> Result<Engine> {
        Err(Error::BackendNotCompiled { backend: BackendKind::Simulator, feature: "simulator" })
    }
}

/// Allocated DPUs with no program loaded (`struct dpu_set_t` after `dpu_alloc`). Freed on drop.
pub struct DpuSet {
    engine: Engine,
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
        dispatch!(&self.engine, e => e.nr_dpus())
    }

    /// The chip version of the set's DPUs: what the ranks report on hardware (`dpu_get_description`), the
    /// simulated machine's on the simulator ([`Topology::chip`](upmem_sim::Topology)).
    pub fn chip(&self) -> ChipVersion {
        match &self.engine {
            #[cfg(feature = "simulator")]
            Engine::Simulator(engine) => engine.machine().topology().chip,
            #[cfg(feature = "hardware")]
            Engine::Hardware(engine) => engine.silicon().chip,
        }
    }

    /// Hardware threads of each DPU: the most tasklets a program loaded in this set may have (24 on v1A chips,
    /// 16 on v1B ones).
    pub fn hardware_threads(&self) -> u32 {
        match &self.engine {
            #[cfg(feature = "simulator")]
            Engine::Simulator(engine) => engine.machine().topology().chip.hardware_threads(),
            #[cfg(feature = "hardware")]
            Engine::Hardware(engine) => engine.silicon().hardware_threads,
        }
    }

    /// The version of the UPMEM SDK whose libdpu drives a hardware set, when it says (`None` on the simulator).
    pub fn sdk_version(&self) -> Option<&str> {
        match &self.engine {
            #[cfg(feature = "simulator")]
            Engine::Simulator(_) => None,
            #[cfg(feature = "hardware")]
            Engine::Hardware(engine) => engine.sdk_version(),
        }
    }

    /// Ranks in the set.
    pub fn nr_ranks(&self) -> usize {
        self.rank_ranges().len()
    }

    fn rank_ranges(&self) -> &[Range<usize>] {
        dispatch!(&self.engine, e => e.ranks())
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
        dispatch!(&mut self.engine, e => e.load(kernel))?;
        Ok(LoadedSet::new(self))
    }

    /// Loads a binary held in memory (`dpu_load_from_memory`): a simulated binary on the simulator, a DPU ELF
    /// on hardware.
    pub fn load_from_memory(mut self, binary: &[u8]) -> Result<LoadedSet> {
        dispatch!(&mut self.engine, e => e.load_from_memory(binary))?;
        Ok(LoadedSet::new(self))
    }

    /// The simulated machine behind a simulator set (statistics, raw memory), `None` on hardware.
    pub fn simulator(&self) -> Option<&upmem_sim::Machine> {
        match &self.engine {
            #[cfg(feature = "simulator")]
            Engine::Simulator(engine) => Some(engine.machine()),
            #[cfg(feature = "hardware")]
            Engine::Hardware(_) => None,
        }
    }

    /// The raw libdpu handles of a hardware set (`struct dpu_set_t` and the loaded library), `None` on the
    /// simulator: the escape hatch for what the safe API does not cover (feature `hardware`).
    #[cfg(feature = "hardware")]
    pub fn as_raw(&self) -> Option<(upmem_sys::dpu_set_t, &upmem_sys::LibDpu)> {
        match &self.engine {
            Engine::Hardware(engine) => Some(engine.as_raw()),
            #[cfg(feature = "simulator")]
            Engine::Simulator(_) => None,
        }
    }
}

/// A set with a program loaded: transfers by symbol and launches.
pub struct LoadedSet {
    set: DpuSet,
    timeline: Timeline,
    transfer_model: TransferModel,
}

impl std::ops::Deref for LoadedSet {
    type Target = DpuSet;

    fn deref(&self) -> &DpuSet {
        &self.set
    }
}

impl LoadedSet {
    fn new(set: DpuSet) -> Self {
        LoadedSet { set, timeline: Timeline::default(), transfer_model: TransferModel::default() }
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
    pub fn launch_stats(&self) -> Result<Option<SetStats>> {
        match &self.set.engine {
            #[cfg(feature = "simulator")]
            Engine::Simulator(engine) => {
                let stats = (0..engine.nr_dpus()).map(|dpu| engine.stats(dpu)).collect::<Result<Vec<_>>>()?;
                Ok(Some(SetStats::of(&stats)))
            }
            #[cfg(feature = "hardware")]
            Engine::Hardware(_) => Ok(None),
        }
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
        match &self.set.engine {
            #[cfg(feature = "simulator")]
            Engine::Simulator(engine) => Ok(engine
                .machine()
                .config()
                .schedule
                .predicts_hardware_time()
                .then(|| engine.slowest_cycles())
                .transpose()?
                .map(|cycles| self.transfer_model.launch_time(cycles, crate::SIM_CLOCK_HZ))),
            #[cfg(feature = "hardware")]
            Engine::Hardware(_) => Ok(None),
        }
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
        dispatch!(&mut self.set.engine, e => e.load(kernel))
    }

    /// Loads another program held in memory in place.
    pub fn load_from_memory(&mut self, binary: &[u8]) -> Result<()> {
        dispatch!(&mut self.set.engine, e => e.load_from_memory(binary))
    }

    /// A symbol of the loaded program.
    pub fn symbol(&self, name: &str) -> Result<Symbol> {
        dispatch!(&self.set.engine, e => e.symbol(name)).ok_or_else(|| Error::UnknownSymbol(name.to_owned()))
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
        dispatch!(&mut self.set.engine, e => e.write(symbol, offset, data, queued))?;
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
        dispatch!(&mut self.set.engine, e => e.read(symbol, offset, &mut slices))?;
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
        dispatch!(&mut self.set.engine, e => e.write_one(dpu, symbol, offset, bytes))?;
        self.record_transfer(Operation::CopyTo, bytes.len(), 1, started);
        Ok(())
    }

    /// Reads from one DPU of the set (`dpu_copy_from`).
    pub fn copy_from<T: DpuCopy>(&mut self, dpu: usize, symbol: &str, offset: u32, values: &mut [T]) -> Result<()> {
        let started = Instant::now();
        self.check_dpu(dpu)?;
        let bytes = as_bytes_mut(values);
        let symbol = self.checked(symbol, offset, bytes.len())?;
        dispatch!(&mut self.set.engine, e => e.read_one(dpu, symbol, offset, bytes))?;
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
        dispatch!(&mut self.set.engine, e => e.launch(true))?;
        self.record_launch(started, true)
    }

    /// Starts every DPU; the set is borrowed until the returned launch is waited for (or dropped, which waits).
    pub fn launch_async(&mut self) -> Result<Launch<'_>> {
        let started = Instant::now();
        dispatch!(&mut self.set.engine, e => e.launch(false))?;
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
        let bytes = dispatch!(&mut self.set.engine, e => e.log(dpu))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// What DPU `dpu` did during the last launch (DMA traffic per tasklet, modelled cycles, synchronisation
    /// waits), on the simulator; `None` on hardware, which does not say.
    pub fn simulator_stats(&self, dpu: usize) -> Result<Option<upmem_sim::DpuStats>> {
        self.check_dpu(dpu)?;
        match &self.set.engine {
            #[cfg(feature = "simulator")]
            Engine::Simulator(engine) => engine.stats(dpu).map(Some),
            #[cfg(feature = "hardware")]
            Engine::Hardware(_) => Ok(None),
        }
    }

    /// The DPUs in fault after the last launch, with reasons.
    pub fn faults(&mut self) -> Result<Vec<FaultInfo>> {
        match &mut self.set.engine {
            #[cfg(feature = "simulator")]
            Engine::Simulator(engine) => Ok(engine.faults()),
            #[cfg(feature = "hardware")]
            Engine::Hardware(engine) => engine.faults(),
        }
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
        dispatch!(&mut self.set.set.engine, e => e.sync())?;
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
        dispatch!(&mut self.set.set.engine, e => e.launch(false))?;
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
        dispatch!(&mut self.set.set.engine, e => e.poll())
    }

    /// Waits for every DPU; DPU faults come back as [`Error::Fault`].
    pub fn wait(mut self) -> Result<()> {
        self.finished = true;
        dispatch!(&mut self.set.set.engine, e => e.sync())?;
        self.set.record_launch(self.started, true)
    }
}

impl Drop for Launch<'_> {
    fn drop(&mut self) {
        if !self.finished {
            if let Err(error) = dispatch!(&mut self.set.set.engine, e => e.sync()) {
                log::warn!("a launch dropped without waiting ended with: {error}");
            }
        }
    }
}
