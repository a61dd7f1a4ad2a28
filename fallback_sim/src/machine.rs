//! A simulated UPMEM server: DPU memories in shared memory, programs, launches, faults, logs and statistics.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::config::SimConfig;
use crate::control::Control;
use crate::error::{Result, SimError};
use crate::fault::Fault;
use crate::layout::{
    self, control_layout, state, ControlHeader, DpuRecord, ABI_VERSION, CONTROL_MAGIC, FLAG_STRICT, MAX_WORKERS,
};
use crate::memory::SharedFile;
use crate::overlay::{self, Overlays};
use upmem_types::{MemoryKind, Symbol};

use crate::program::Program;
use crate::stats::{DpuStats, TaskletStats};
use crate::worker::{SharedFds, WorkerPool};

/// Where a DPU is in its life cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DpuState {
    /// Never launched since its program was loaded.
    Idle,
    /// Part of a launch, not started yet.
    Queued,
    /// Running.
    Running,
    /// Its last launch completed.
    Done,
    /// Its last launch faulted; [`Machine::fault`] says why.
    Fault,
}

/// DPUs of one program within a launch: workers of one pool run them.
/// DPUs of one launch that run one program, so one worker pool. The pool is named by its program, not by its
/// index: loading other DPUs while the launch runs may drop unused pools and move the others.
struct Group {
    program: Arc<Program>,
    dpus: Vec<u32>,
}

struct Launch {
    dpus: Vec<u32>,
    pending: VecDeque<Group>,
    running: Option<Arc<Program>>,
}

fn find_pool(pools: &[WorkerPool], program: &Arc<Program>) -> Option<usize> {
    pools.iter().position(|pool| Arc::ptr_eq(pool.program(), program))
}

/// The pool of a program in the launch in progress. It exists: that program's DPUs are queued or running, so
/// they keep it loaded and its pool alive.
fn pool_of(pools: &[WorkerPool], program: &Arc<Program>) -> usize {
    find_pool(pools, program).expect("a program in the launch in progress keeps its worker pool")
}

/// A simulated UPMEM server.
///
/// Every DPU's WRAM and MRAM live in shared memory (sparse: untouched pages cost nothing), so host reads and
/// writes are plain memory copies (a large first write into fresh pages goes through `pwrite`, which fills them
/// without a page fault each), and worker processes map a DPU's memories in place to run it.
///
/// ```no_run
/// use upmem_sim::{Machine, Program, SimConfig, Topology};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut machine = Machine::new(SimConfig::new(Topology::new(2, 64)))?;
/// let program = std::sync::Arc::new(Program::from_file("kernel.dpusim")?);
/// let dpus: Vec<u32> = machine.topology().enabled_dpus().collect();
/// machine.load(&dpus, &program)?;
/// machine.write_symbol(0, "input", 0, &42u64.to_le_bytes())?;
/// machine.launch(&dpus)?;
/// let mut output = [0u8; 8];
/// machine.read_symbol(0, "output", 0, &mut output)?;
/// # Ok(()) }
/// ```
pub struct Machine {
    config: SimConfig,
    control: Control,
    wram: SharedFile,
    mram: SharedFile,
    log: SharedFile,
    /// MRAM pages shared copy-on-write by the DPUs of a broadcast.
    overlays: Overlays,
    loaded: Vec<Option<Arc<Program>>>,
    /// One lock per DPU, held by a host-side read or write of its memories: `write` and `read` take `&self`
    /// (transfers to different DPUs run in parallel), so two host threads on one DPU take turns instead of
    /// racing on the same bytes.
    host_access: Box<[Mutex<()>]>,
    /// Whether each DPU's MRAM may hold pages of its own (written since its last reset), so that a broadcast
    /// into a DPU that has none skips giving back an empty range.
    mram_written: Box<[AtomicBool]>,
    pools: Vec<WorkerPool>,
    pool_slots: Vec<usize>,
    launch: Option<Launch>,
}

impl Machine {
    /// Creates a machine: its memories are allocated (sparse, zeroed); no worker runs until a launch.
    pub fn new(config: SimConfig) -> Result<Machine> {
        if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            return Err(SimError::UnsupportedPlatform(std::env::consts::ARCH));
        }
        config.validate()?;
        let topology = &config.topology;
        let nr_dpus = topology.nr_dpus();
        let (job_list, workers, records, _) = control_layout(nr_dpus);
        let wram = SharedFile::new("wram", (topology.wram_size * u64::from(nr_dpus)) as usize)?;
        let mram = SharedFile::new("mram", (topology.mram_size * u64::from(nr_dpus)) as usize)?;
        let log = SharedFile::new("log", (config.log_size * u64::from(nr_dpus)) as usize)?;
        let mut flags = 0;
        if config.strict {
            flags |= FLAG_STRICT;
        }
        let header = ControlHeader {
            magic: CONTROL_MAGIC,
            abi_version: ABI_VERSION,
            nr_dpus,
            wram_size: topology.wram_size,
            mram_size: topology.mram_size,
            log_size: config.log_size,
            flags,
            hang_limit_ms: config.hang_limit.map_or(0, |limit| limit.as_millis() as u32),
            job_list_offset: job_list as u64,
            workers_offset: workers as u64,
            records_offset: records as u64,
            record_size: std::mem::size_of::<DpuRecord>() as u64,
            job_generation: 0,
            job_count: 0,
            job_next: 0,
            schedule: config.schedule.control_code(),
            reserved: 0,
            shuffle_seed: config.schedule.shuffle_seed(),
        };
        let control = Control::new(header)?;
        log::info!(
            "simulated UPMEM machine: {topology} ({} enabled), {} KiB WRAM and {} MiB MRAM per DPU, {} workers",
            topology.nr_enabled_dpus(),
            topology.wram_size >> 10,
            topology.mram_size >> 20,
            config.workers
        );
        let overlays = Overlays::new(nr_dpus)?;
        Ok(Machine {
            overlays,
            loaded: vec![None; nr_dpus as usize],
            host_access: (0..nr_dpus).map(|_| Mutex::new(())).collect(),
            mram_written: (0..nr_dpus).map(|_| AtomicBool::new(false)).collect(),
            config,
            control,
            wram,
            mram,
            log,
            pools: Vec::new(),
            pool_slots: Vec::new(),
            launch: None,
        })
    }

    /// The machine's shape.
    pub fn topology(&self) -> &crate::Topology {
        &self.config.topology
    }

    /// The configuration the machine was made with.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    // ---- Checks ------------------------------------------------------------------------------------------

    fn check_dpu(&self, dpu: u32) -> Result<()> {
        let topology = self.topology();
        if dpu >= topology.nr_dpus() {
            return Err(SimError::NoSuchDpu { dpu, nr_dpus: topology.nr_dpus() });
        }
        if topology.disabled.contains(&dpu) {
            return Err(SimError::DpuDisabled(dpu));
        }
        Ok(())
    }

    fn check_idle(&self, dpu: u32) -> Result<()> {
        self.check_dpu(dpu)?;
        match self.control.state(dpu).load(Ordering::Acquire) {
            state::QUEUED | state::RUNNING => Err(SimError::DpuRunning(dpu)),
            _ => Ok(()),
        }
    }

    /// The state of a DPU.
    pub fn dpu_state(&self, dpu: u32) -> Result<DpuState> {
        self.check_dpu(dpu)?;
        Ok(match self.control.state(dpu).load(Ordering::Acquire) {
            state::QUEUED => DpuState::Queued,
            state::RUNNING => DpuState::Running,
            state::DONE => DpuState::Done,
            state::FAULT => DpuState::Fault,
            _ => DpuState::Idle,
        })
    }

    // ---- Programs ----------------------------------------------------------------------------------------

    /// Loads `program` into `dpus`: their WRAM is reset to the program's initial image (globals initialised,
    /// the rest zero) and its `__mram` variables are written; the rest of MRAM is kept, as on hardware. In
    /// strict mode, a program its build found too large for a DPU's IRAM ([`SimError::IramOverflow`]) or with
    /// `__host`/MRAM variables laid out differently on a DPU ([`SimError::LayoutMismatch`]) is refused.
    pub fn load(&mut self, dpus: &[u32], program: &Arc<Program>) -> Result<()> {
        let topology = self.topology();
        program.check_fits(topology.wram_size, topology.mram_size)?;
        program.check_threads(topology.chip)?;
        if self.config.strict {
            program.check_strict(topology.chip)?;
        }
        for &dpu in dpus {
            self.check_idle(dpu)?;
        }
        let wram_size = topology.wram_size as usize;
        let mram_size = topology.mram_size as usize;
        for &dpu in dpus {
            let wram_offset = dpu as usize * wram_size;
            self.wram.discard(wram_offset, wram_size)?;
            // SAFETY: the image fits in WRAM (check_fits) and the DPU is idle, so no worker writes it.
            unsafe { self.wram.write(wram_offset, program.wram_image()) };
            let mram_base = dpu as usize * mram_size;
            self.overlays.make_own(dpu, &self.mram, mram_base, 0, program.mram_image().len());
            // SAFETY: as above, for the MRAM variables' image.
            unsafe { self.mram.write(mram_base, program.mram_image()) };
            if !program.mram_image().is_empty() {
                self.mram_written[dpu as usize].store(true, Ordering::Relaxed);
            }
            self.control.reset_record(dpu);
            self.loaded[dpu as usize] = Some(Arc::clone(program));
        }
        self.drop_unused_pools();
        Ok(())
    }

    /// Returns `dpus` to their state after allocation: no program, WRAM, MRAM and log zeroed. Their memory goes
    /// back to the system, and the worker processes of programs no longer loaded anywhere end.
    pub fn reset(&mut self, dpus: &[u32]) -> Result<()> {
        for &dpu in dpus {
            self.check_idle(dpu)?;
        }
        let wram_size = self.topology().wram_size as usize;
        let mram_size = self.topology().mram_size as usize;
        for &dpu in dpus {
            self.wram.discard(dpu as usize * wram_size, wram_size)?;
            self.overlays.detach_all(dpu)?;
            self.mram.discard(dpu as usize * mram_size, mram_size)?;
            self.mram_written[dpu as usize].store(false, Ordering::Relaxed);
            let log_size = self.config.log_size as usize;
            self.log.discard(dpu as usize * log_size, log_size)?;
            self.control.reset_record(dpu);
            self.loaded[dpu as usize] = None;
        }
        self.drop_unused_pools();
        Ok(())
    }

    /// The program loaded in a DPU.
    pub fn program(&self, dpu: u32) -> Result<&Arc<Program>> {
        self.check_dpu(dpu)?;
        self.loaded[dpu as usize].as_ref().ok_or(SimError::NoProgramLoaded(dpu))
    }

    fn drop_unused_pools(&mut self) {
        let loaded = &self.loaded;
        let mut index = 0;
        while index < self.pools.len() {
            let program = self.pools[index].program();
            if loaded.iter().flatten().any(|other| Arc::ptr_eq(other, program)) {
                index += 1;
            } else {
                self.pools.swap_remove(index);
                self.pool_slots.swap_remove(index);
            }
        }
    }

    /// Starts the worker pool of `program` unless it runs already.
    fn ensure_pool(&mut self, program: &Arc<Program>) -> Result<()> {
        if find_pool(&self.pools, program).is_some() {
            return Ok(());
        }
        let workers = self.config.workers;
        let first_slot =
            (0..=MAX_WORKERS - workers).step_by(workers).find(|slot| !self.pool_slots.contains(slot)).ok_or_else(
                || SimError::InvalidConfig(format!("more than {MAX_WORKERS} workers across loaded programs")),
            )?;
        let fds = SharedFds {
            control: self.control.fd(),
            wram: self.wram.fd(),
            mram: self.mram.fd(),
            log: self.log.fd(),
            shared: self.overlays.shared_fd(),
            overlay: self.overlays.records_fd(),
        };
        self.pools.push(WorkerPool::start(Arc::clone(program), fds, first_slot, workers)?);
        self.pool_slots.push(first_slot);
        Ok(())
    }

    // ---- Memories ----------------------------------------------------------------------------------------

    fn memory(&self, kind: MemoryKind) -> (&SharedFile, u64, &'static str) {
        match kind {
            MemoryKind::Wram => (&self.wram, self.topology().wram_size, "WRAM"),
            MemoryKind::Mram => (&self.mram, self.topology().mram_size, "MRAM"),
        }
    }

    /// Checks `[offset, offset + length)` against `size`; `memory` names the memory in the error (built only
    /// then: small transfers are frequent).
    fn check_range(
        &self,
        what: &'static str,
        memory: impl FnOnce() -> String,
        offset: u64,
        length: usize,
        size: u64,
    ) -> Result<()> {
        let length = length as u64;
        if offset.checked_add(length).is_none_or(|end| end > size) {
            return Err(SimError::OutOfBounds { what, memory: memory(), offset, length, size });
        }
        Ok(())
    }

    /// Writes `data` into a DPU's WRAM or MRAM at a byte offset.
    pub fn write(&self, dpu: u32, memory: MemoryKind, offset: u64, data: &[u8]) -> Result<()> {
        self.check_idle(dpu)?;
        let (file, size, name) = self.memory(memory);
        self.check_range("write", || format!("{name} of DPU {dpu}"), offset, data.len(), size)?;
        let _turn = self.host_access(dpu);
        let base = (u64::from(dpu) * size) as usize;
        if memory == MemoryKind::Mram {
            self.overlays.make_own(dpu, file, base, offset, data.len());
            self.mram_written[dpu as usize].store(true, Ordering::Relaxed);
        }
        // SAFETY: the range is within this DPU's slice of the file (checked), the DPU is idle and no other host
        // thread accesses its memories (`_turn`).
        unsafe { file.write(base + offset as usize, data) };
        Ok(())
    }

    /// Reads from a DPU's WRAM or MRAM at a byte offset.
    ///
    /// Memory nothing wrote reads as zeroes and stays free: the read asks which pages hold data and copies only
    /// those. A kernel reading MRAM nothing wrote commits the pages it reads instead (zeroed pages, as a read of
    /// shared memory does): asking per DMA transfer would cost a system call each.
    pub fn read(&self, dpu: u32, memory: MemoryKind, offset: u64, out: &mut [u8]) -> Result<()> {
        self.check_idle(dpu)?;
        let (file, size, name) = self.memory(memory);
        self.check_range("read", || format!("{name} of DPU {dpu}"), offset, out.len(), size)?;
        let _turn = self.host_access(dpu);
        // SAFETY: the range is within this DPU's slice of the file (checked), the DPU is idle and no other host
        // thread writes its memories (`_turn`).
        unsafe { file.read((u64::from(dpu) * size + offset) as usize, out) };
        // The DPU's own pages under its shared ones are holes (given back when the broadcast was attached), which
        // the read above filled with zeroes without committing them.
        if memory == MemoryKind::Mram {
            self.overlays.read_shared(dpu, offset, out);
        }
        Ok(())
    }

    /// Bytes of host memory the simulated memories hold now: the pages of WRAM, MRAM and logs written (by the
    /// host or a kernel) and not given back since, a broadcast's shared pages once however many DPUs share
    /// them. A host read of memory nothing wrote adds nothing; a kernel's read of MRAM nothing wrote does add
    /// the pages it reads (see [`Machine::read`]).
    pub fn held_memory(&self) -> Result<u64> {
        Ok(self.wram.held_bytes()? + self.mram.held_bytes()? + self.log.held_bytes()? + self.overlays.held_bytes()?)
    }

    /// Writes the same `data` into every DPU of `dpus` at a byte offset of their WRAM or MRAM. In MRAM, the
    /// whole pages of a large broadcast are written once and shared copy-on-write: memory grows with the
    /// bytes, not with the number of DPUs, and a later write to a shared page (by the host or a kernel) makes
    /// that page the writing DPU's own. A broadcast repeated to the same DPUs and range rewrites the pages they
    /// share in place.
    pub fn broadcast(&mut self, dpus: &[u32], memory: MemoryKind, offset: u64, data: &[u8]) -> Result<()> {
        let (body, pages) = overlay::whole_pages(offset, data.len());
        if memory != MemoryKind::Mram || dpus.len() < 2 || pages < overlay::MIN_SHARED_PAGES {
            return dpus.iter().try_for_each(|&dpu| self.write(dpu, memory, offset, data));
        }
        let size = self.topology().mram_size;
        for &dpu in dpus {
            self.check_idle(dpu)?;
            self.check_range("write", || format!("MRAM of DPU {dpu}"), offset, data.len(), size)?;
        }
        let head = (body - offset) as usize;
        let tail = head + pages * overlay::PAGE;
        let mram_base = |dpu: u32| (u64::from(dpu) * size) as usize;
        let shared = if self.overlays.rewrite(dpus, &self.mram, mram_base, body, &data[head..tail])? {
            None
        } else {
            Some(self.overlays.share(&data[head..tail]))
        };
        for &dpu in dpus {
            for (at, part) in [(offset, &data[..head]), (body + (pages * overlay::PAGE) as u64, &data[tail..])] {
                if !part.is_empty() {
                    self.write(dpu, memory, at, part)?;
                }
            }
            let Some(shared) = shared else { continue };
            let own_pages_possible = self.mram_written[dpu as usize].load(Ordering::Relaxed);
            if !self.overlays.attach(dpu, &self.mram, mram_base(dpu), body, shared, own_pages_possible)? {
                self.write(dpu, memory, body, &data[head..tail])?;
            }
        }
        shared.map_or(Ok(()), |shared| self.overlays.forget_if_unused(shared))
    }

    /// Takes `dpu`'s host access lock (a poisoned lock guards no state, so it is taken all the same).
    fn host_access(&self, dpu: u32) -> MutexGuard<'_, ()> {
        self.host_access[dpu as usize].lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Looks a symbol up in the program loaded in `dpu`.
    pub fn symbol(&self, dpu: u32, name: &str) -> Result<Symbol> {
        let program = self.program(dpu)?;
        program
            .symbol(name, self.topology().mram_size)
            .ok_or_else(|| SimError::UnknownSymbol { program: program.path().to_path_buf(), symbol: name.to_owned() })
    }

    /// Writes `data` at `offset` bytes into a symbol of the DPU's program.
    pub fn write_symbol(&self, dpu: u32, name: &str, offset: u64, data: &[u8]) -> Result<()> {
        let symbol = self.symbol(dpu, name)?;
        self.check_range("write", || format!("symbol `{name}`"), offset, data.len(), u64::from(symbol.size))?;
        self.write(dpu, symbol.memory, symbol.offset() + offset, data)
    }

    /// Reads `out.len()` bytes at `offset` bytes into a symbol of the DPU's program.
    pub fn read_symbol(&self, dpu: u32, name: &str, offset: u64, out: &mut [u8]) -> Result<()> {
        let symbol = self.symbol(dpu, name)?;
        self.check_range("read", || format!("symbol `{name}`"), offset, out.len(), u64::from(symbol.size))?;
        self.read(dpu, symbol.memory, symbol.offset() + offset, out)
    }

    // ---- Launches ----------------------------------------------------------------------------------------

    /// Runs `dpus` to completion. Every DPU runs even if others fault; then the first fault is returned.
    pub fn launch(&mut self, dpus: &[u32]) -> Result<()> {
        self.launch_async(dpus)?;
        self.wait()
    }

    /// Starts `dpus` and returns at once; [`Machine::wait`] or [`Machine::poll`] finish the launch.
    pub fn launch_async(&mut self, dpus: &[u32]) -> Result<()> {
        if self.launch.is_some() {
            return Err(SimError::LaunchInProgress);
        }
        let mut groups: Vec<(Arc<Program>, Vec<u32>)> = Vec::new();
        let mut named = vec![false; self.loaded.len()];
        for &dpu in dpus {
            self.check_idle(dpu)?;
            if std::mem::replace(&mut named[dpu as usize], true) {
                return Err(SimError::DuplicateDpu(dpu));
            }
            let program = self.program(dpu)?;
            match groups.iter_mut().find(|(other, _)| Arc::ptr_eq(other, program)) {
                Some((_, members)) => members.push(dpu),
                None => groups.push((Arc::clone(program), vec![dpu])),
            }
        }
        let mut pending = VecDeque::with_capacity(groups.len());
        for (program, members) in groups {
            self.ensure_pool(&program)?;
            pending.push_back(Group { program, dpus: members });
        }
        for &dpu in dpus {
            self.control.state(dpu).store(state::QUEUED, Ordering::Release);
            // Its kernel may write anywhere in its MRAM.
            self.mram_written[dpu as usize].store(true, Ordering::Relaxed);
        }
        self.launch = Some(Launch { dpus: dpus.to_vec(), pending, running: None });
        self.progress(Some(Duration::ZERO))?;
        Ok(())
    }

    /// Waits for the launch in progress. Returns the first fault if any DPU faulted.
    pub fn wait(&mut self) -> Result<()> {
        self.progress(None)?;
        let Some(launch) = self.launch.take() else { return Ok(()) };
        let faults: Vec<u32> = launch
            .dpus
            .iter()
            .copied()
            .filter(|&dpu| self.control.state(dpu).load(Ordering::Acquire) == state::FAULT)
            .collect();
        match faults.first() {
            None => Ok(()),
            Some(&first) => {
                let fault = self.fault(first)?.expect("a DPU in fault has a fault record");
                Err(SimError::DpuFault { count: faults.len(), first: Box::new(fault) })
            }
        }
    }

    /// Advances the launch in progress without blocking; returns whether it has finished (or none is running).
    pub fn poll(&mut self) -> Result<bool> {
        self.progress(Some(Duration::ZERO))
    }

    /// Whether every DPU of `dpus` has finished, and whether any is in fault (`dpu_status`).
    pub fn status(&mut self, dpus: &[u32]) -> Result<(bool, bool)> {
        self.poll()?;
        let mut done = true;
        let mut fault = false;
        for &dpu in dpus {
            match self.dpu_state(dpu)? {
                DpuState::Queued | DpuState::Running => done = false,
                DpuState::Fault => fault = true,
                DpuState::Idle | DpuState::Done => {}
            }
        }
        Ok((done, fault))
    }

    /// Drives the launch: starts groups one after the other and reaps their workers.
    fn progress(&mut self, timeout: Option<Duration>) -> Result<bool> {
        loop {
            let Some(launch) = self.launch.as_mut() else { return Ok(true) };
            let pool_index = match &launch.running {
                Some(program) => pool_of(&self.pools, program),
                None => match launch.pending.pop_front() {
                    None => {
                        self.fault_unfinished();
                        return Ok(true);
                    }
                    Some(group) => {
                        let pool = pool_of(&self.pools, &group.program);
                        self.control.post_job(&group.dpus);
                        self.pools[pool].start_job();
                        launch.running = Some(group.program);
                        pool
                    }
                },
            };
            let control = &self.control;
            let finished = self.pools[pool_index]
                .collect(timeout, &|| control.job_left(), &mut |slot, exit| control.record_casualty(slot, exit));
            let finished = match finished {
                Ok(finished) => finished,
                Err(error) => {
                    self.abandon_launch(pool_index);
                    return Err(error);
                }
            };
            if !finished {
                return Ok(false);
            }
            if let Some(launch) = self.launch.as_mut() {
                launch.running = None;
            }
        }
    }

    /// Ends a launch whose workers fail by themselves: its unfinished DPUs are put in fault.
    fn abandon_launch(&mut self, pool: usize) {
        self.pools[pool].kill_busy();
        self.fault_unfinished();
        self.launch = None;
    }

    /// Puts every DPU of the finished launch that never completed in fault (a worker died before it said
    /// which DPU it had claimed).
    fn fault_unfinished(&mut self) {
        let Some(launch) = self.launch.as_ref() else { return };
        for &dpu in &launch.dpus {
            if matches!(self.control.state(dpu).load(Ordering::Acquire), state::QUEUED | state::RUNNING) {
                self.control.write_worker_lost(dpu, "the DPU never completed: its worker ended");
            }
        }
    }

    // ---- Outcomes ----------------------------------------------------------------------------------------

    /// Why a DPU is in fault, or `None` if it is not.
    pub fn fault(&self, dpu: u32) -> Result<Option<Fault>> {
        if self.dpu_state(dpu)? != DpuState::Fault {
            return Ok(None);
        }
        Ok(Some(Fault::from_record(dpu, &self.control.read_record(dpu).fault)))
    }

    /// Faults of every DPU currently in fault, by DPU.
    pub fn faults(&self) -> Vec<Fault> {
        self.topology().enabled_dpus().filter_map(|dpu| self.fault(dpu).ok().flatten()).collect()
    }

    /// What the DPU printed during its last launch (the last `log_capacity` bytes, like the SDK's ring buffer).
    pub fn log(&self, dpu: u32) -> Result<Vec<u8>> {
        self.check_idle(dpu)?;
        let record = self.control.read_record(dpu);
        let capacity = record.log_capacity.min(self.config.log_size);
        if capacity == 0 {
            return Ok(Vec::new());
        }
        let length = record.log_length;
        let base = dpu as usize * self.config.log_size as usize;
        let mut text = vec![0u8; length.min(capacity) as usize];
        if length <= capacity {
            // SAFETY: within this DPU's log slice; the DPU is idle.
            unsafe { self.log.read(base, &mut text) };
        } else {
            let start = (length % capacity) as usize;
            let first = capacity as usize - start;
            // SAFETY: both ranges are within this DPU's log slice of `capacity` bytes; the DPU is idle.
            unsafe {
                self.log.read(base + start, &mut text[..first]);
                self.log.read(base, &mut text[first..]);
            }
        }
        Ok(text)
    }

    /// The modelled cycles of the slowest of `dpus` in their last launch (0 for none): the launch's modelled
    /// time, for less than their [`Machine::stats`] cost.
    pub fn slowest_cycles(&self, dpus: &[u32]) -> Result<u64> {
        dpus.iter().try_fold(0, |slowest, &dpu| {
            self.check_dpu(dpu)?;
            Ok(slowest.max(self.control.read_cycles(dpu)))
        })
    }

    /// Statistics of the DPU's last launch.
    pub fn stats(&self, dpu: u32) -> Result<DpuStats> {
        self.check_dpu(dpu)?;
        let record = self.control.read_record(dpu);
        let tasklets = record.tasklets[..(record.nr_tasklets as usize).min(layout::MAX_TASKLETS)]
            .iter()
            .map(TaskletStats::from_record)
            .collect();
        Ok(DpuStats {
            nr_tasklets: record.nr_tasklets,
            launches: record.launches,
            cycles: record.cycles,
            dma_cycles: record.dma_cycles,
            instructions: record.instructions,
            instructions_by_class: record.class_instructions,
            native_time: Duration::from_nanos(record.native_ns),
            switches: record.switches,
            tasklets,
        })
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        if self.launch.is_some() {
            for pool in &mut self.pools {
                pool.kill_busy();
            }
        }
        // Dropping the pools ends the workers before the shared files go away.
        self.pools.clear();
    }
}
