//! The process-wide simulated server behind the C API: its machine, ranks, DPUs, allocated sets and programs.
//!
//! `struct dpu_rank_t` and `struct dpu_t` are [`Rank`] and [`Dpu`] objects that live as long as the server,
//! at stable addresses, so the pointers C programs hold (`set.dpu`, `set.list.ranks[i]`) stay valid and can
//! be checked: every set that comes back through the API is validated against these arrays.

use std::collections::HashMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use upmem_sim::{ChipVersion, DpuState, Machine, Program, SimConfig, Topology};

use crate::error::{code, DpuError, Result};
use crate::management::{description, Description};
use crate::profile::Profile;
use crate::types::{dpu_set_t, SetParts, DPU_SET_DPU, DPU_SET_RANKS};

/// DPUs of a rank addressable by the transfer matrix.
pub const MAX_DPUS_PER_RANK: usize = 64;

/// `struct dpu_rank_t` (opaque to C, which only holds pointers; `repr(C)` keeps it FFI-safe in signatures).
#[repr(C)]
pub struct Rank {
    /// Index of the rank in the server.
    pub id: u32,
    /// First DPU of the rank (global index).
    pub first_dpu: u32,
    /// DPUs in the rank.
    pub nr_dpus: u32,
    /// Held by an allocated set.
    pub allocated: bool,
    /// The pending host buffer of each DPU (`dpu_prepare_xfer`).
    pub transfer_matrix: [*mut c_void; MAX_DPUS_PER_RANK],
    /// What `dpu_get_description` points at.
    pub description: Description,
    /// `sgXferEnable` of the profile the rank was allocated with.
    pub sg_xfer_enable: bool,
    /// `sgXferMaxBlocksPerDpu` of that profile.
    pub sg_max_blocks_per_dpu: u32,
}

/// `struct dpu_t` (opaque to C, like [`Rank`]).
#[repr(C)]
pub struct Dpu {
    /// The rank's index.
    pub rank: u32,
    /// Index within the rank.
    pub member: u32,
    /// Usable: enabled in the topology and not trimmed away by `dpu_alloc`.
    pub enabled: bool,
}

/// A loaded program and the handle C sees as `struct dpu_program_t *`.
pub struct ProgramEntry {
    pub program: Arc<Program>,
    /// The current version of a file, kept for the next `dpu_load` of that file even while no DPU runs it. A
    /// program from memory, or an older version of a rebuilt file, is kept only while a DPU runs it.
    reusable: bool,
}

/// The simulated server and what the C API has done with it.
pub struct Server {
    pub machine: Machine,
    pub ranks: Box<[Rank]>,
    pub dpus: Box<[Dpu]>,
    /// Rank arrays of the sets returned by `dpu_alloc`, which only `dpu_free` releases.
    allocations: Vec<Box<[*mut Rank]>>,
    /// Rank arrays `dpu_free` released, kept for the next allocations of their length instead of going back to
    /// the allocator: a stale set's array is still ours to read, and the set is refused until an allocation
    /// reuses the array ([`Server::is_spare`]). An array is made only when no spare has the length asked for,
    /// so allocating and freeing over and over does not grow the list: the arrays of a length never outnumber
    /// the sets of that length that were allocated at once.
    spare_arrays: Vec<Box<[*mut Rank]>>,
    /// Programs from files by path and modification time, so that reloading the same binary reuses its parse
    /// (and, while a DPU runs it, its worker processes); see [`Server::forget_unused_programs`] for how long
    /// they stay.
    programs: HashMap<(PathBuf, Option<SystemTime>), Box<ProgramEntry>>,
    /// Programs loaded from memory: each load is a program of its own. Boxed, as in `programs`: C holds pointers
    /// to the entries, which must not move when the list does.
    #[allow(clippy::vec_box)]
    programs_from_memory: Vec<Box<ProgramEntry>>,
    pub profile: Profile,
    /// DPUs launched asynchronously whose outcome `dpu_sync` has not reported yet.
    pub async_launched: Vec<u32>,
    /// Every transfer and launch with its predicted hardware time (`dpu_sim_timeline`).
    pub timeline: crate::timeline::Timeline,
}

// SAFETY: the raw pointers in Server (rank arrays, prepared host buffers) are only dereferenced under the
// server's mutex or, for host buffers, during a transfer the caller is blocked in; the C API is thread-safe
// in the SDK, and all access goes through `server()`.
unsafe impl Send for Server {}

static SERVER: Mutex<Option<Server>> = Mutex::new(None);

/// Locks the server (created by the first allocation).
pub fn server() -> MutexGuard<'static, Option<Server>> {
    SERVER.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The server, or `DPU_ERR_INVALID_DPU_SET` when nothing was ever allocated (no set can be valid).
pub fn existing(guard: &mut Option<Server>) -> Result<&mut Server> {
    guard.as_mut().ok_or(DpuError(code::INVALID_DPU_SET))
}

impl Server {
    /// Creates the server for a profile's topology.
    pub fn new(profile: Profile) -> Result<Server> {
        let mut topology = Topology::new(profile.nr_ranks, profile.dpus_per_rank);
        topology.disabled = profile.disabled.clone();
        topology.mram_size = profile.mram_size;
        topology.wram_size = profile.wram_size;
        topology.chip = ChipVersion::from_chip_id(profile.chip_id);
        let mut config = SimConfig::new(topology);
        if let Some(workers) = profile.workers {
            config.workers = workers;
        }
        config.strict = profile.strict;
        if let Some(schedule) = profile.schedule {
            config.schedule = schedule;
        }
        let machine = Machine::new(config)?;
        log::info!("libdpu: simulator backend with {}", machine.topology());
        let ranks = (0..profile.nr_ranks)
            .map(|id| Rank {
                id,
                first_dpu: id * profile.dpus_per_rank,
                nr_dpus: profile.dpus_per_rank,
                allocated: false,
                transfer_matrix: [std::ptr::null_mut(); MAX_DPUS_PER_RANK],
                description: description(&profile),
                sg_xfer_enable: false,
                sg_max_blocks_per_dpu: u32::MAX,
            })
            .collect();
        let dpus = (0..profile.nr_ranks * profile.dpus_per_rank)
            .map(|id| Dpu {
                rank: id / profile.dpus_per_rank,
                member: id % profile.dpus_per_rank,
                enabled: machine.topology().is_enabled(id),
            })
            .collect();
        Ok(Server {
            machine,
            ranks,
            dpus,
            allocations: Vec::new(),
            spare_arrays: Vec::new(),
            programs: HashMap::new(),
            programs_from_memory: Vec::new(),
            profile,
            async_launched: Vec::new(),
            timeline: Default::default(),
        })
    }

    /// Whether any set is allocated.
    pub fn in_use(&self) -> bool {
        !self.allocations.is_empty()
    }

    fn rank_index(&self, rank: *const Rank) -> Option<usize> {
        let base = self.ranks.as_ptr() as usize;
        let offset = (rank as usize).checked_sub(base)?;
        let index = offset / std::mem::size_of::<Rank>();
        (offset % std::mem::size_of::<Rank>() == 0 && index < self.ranks.len()).then_some(index)
    }

    fn dpu_index(&self, dpu: *const Dpu) -> Option<usize> {
        let base = self.dpus.as_ptr() as usize;
        let offset = (dpu as usize).checked_sub(base)?;
        let index = offset / std::mem::size_of::<Dpu>();
        (offset % std::mem::size_of::<Dpu>() == 0 && index < self.dpus.len()).then_some(index)
    }

    pub fn rank_ptr(&mut self, index: usize) -> *mut Rank {
        &mut self.ranks[index]
    }

    pub fn dpu_ptr(&mut self, index: usize) -> *mut Dpu {
        &mut self.dpus[index]
    }

    /// The DPU behind a `struct dpu_t *` from C, if it is one of ours and belongs to an allocated rank.
    pub fn dpu_of(&self, dpu: *const Dpu) -> Result<u32> {
        let index = self.dpu_index(dpu).ok_or(DpuError(code::INVALID_DPU_SET))?;
        let rank = self.dpus[index].rank as usize;
        if !self.ranks[rank].allocated {
            return Err(DpuError(code::INVALID_DPU_SET));
        }
        Ok(index as u32)
    }

    /// The ranks of a set (indices), validated; a single-DPU set gives its rank.
    pub fn ranks_of(&self, set: &dpu_set_t) -> Result<Vec<usize>> {
        match set.kind {
            DPU_SET_RANKS => {
                // SAFETY: kind says the union holds `list`.
                let list = unsafe { set.rank_list() };
                if list.nr_ranks == 0 {
                    return Ok(Vec::new());
                }
                if list.ranks.is_null() || self.is_spare(list.ranks, list.nr_ranks) {
                    return Err(DpuError(code::INVALID_DPU_SET));
                }
                let mut ranks = Vec::with_capacity(list.nr_ranks as usize);
                for i in 0..list.nr_ranks as usize {
                    // SAFETY: the pointer came from one of our rank arrays (checked below by the rank pointer it
                    // yields; arrays stay alive until dpu_free). A forged array is the caller's undefined
                    // behaviour, as with libdpu.
                    let rank = unsafe { *list.ranks.add(i) };
                    let index = self.rank_index(rank).ok_or(DpuError(code::INVALID_DPU_SET))?;
                    if !self.ranks[index].allocated {
                        return Err(DpuError(code::INVALID_DPU_SET));
                    }
                    ranks.push(index);
                }
                Ok(ranks)
            }
            DPU_SET_DPU => {
                // SAFETY: kind says the union holds `dpu`.
                let dpu = self.dpu_of(unsafe { set.single() })?;
                Ok(vec![self.dpus[dpu as usize].rank as usize])
            }
            _ => Err(DpuError(code::INVALID_DPU_SET)),
        }
    }

    /// Whether `count` rank pointers at `ranks` overlap an array `dpu_free` released that no set holds now.
    fn is_spare(&self, ranks: *mut *mut Rank, count: u32) -> bool {
        let start = ranks as usize;
        let end = start.saturating_add(count as usize * std::mem::size_of::<*mut Rank>());
        self.spare_arrays.iter().any(|spare| {
            let spare_start = spare.as_ptr() as usize;
            start < spare_start + std::mem::size_of_val(&**spare) && spare_start < end
        })
    }

    /// The enabled DPUs of a set, in `DPU_FOREACH` order. A single disabled DPU gives `DPU_ERR_DPU_DISABLED`.
    pub fn dpus_of(&self, set: &dpu_set_t) -> Result<Vec<u32>> {
        if set.kind == DPU_SET_DPU {
            // SAFETY: kind says the union holds `dpu`.
            let dpu = self.dpu_of(unsafe { set.single() })?;
            if !self.dpus[dpu as usize].enabled {
                return Err(DpuError(code::DPU_DISABLED));
            }
            return Ok(vec![dpu]);
        }
        let mut dpus = Vec::new();
        for rank in self.ranks_of(set)? {
            let rank = &self.ranks[rank];
            dpus.extend((rank.first_dpu..rank.first_dpu + rank.nr_dpus).filter(|&dpu| self.dpus[dpu as usize].enabled));
        }
        Ok(dpus)
    }

    /// The single DPU of a `DPU_SET_DPU` set; other sets give `DPU_ERR_INVALID_DPU_SET`.
    pub fn single_dpu(&self, set: &dpu_set_t) -> Result<u32> {
        if set.kind != DPU_SET_DPU {
            return Err(DpuError(code::INVALID_DPU_SET));
        }
        // SAFETY: kind says the union holds `dpu`.
        self.dpu_of(unsafe { set.single() })
    }

    /// Allocates free ranks holding at least `nr_dpus` enabled DPUs (all free ranks for `None`), trims the
    /// surplus in the last rank, and records the set.
    pub fn allocate(&mut self, nr_dpus: Option<u32>, nr_ranks: Option<u32>) -> Result<dpu_set_t> {
        let mut taken = Vec::new();
        let mut enabled = 0u32;
        for index in 0..self.ranks.len() {
            let satisfied = match (nr_dpus, nr_ranks) {
                (Some(wanted), _) => enabled >= wanted,
                (None, Some(wanted)) => taken.len() as u32 >= wanted,
                (None, None) => false,
            };
            if satisfied {
                break;
            }
            if self.ranks[index].allocated {
                continue;
            }
            let rank = &self.ranks[index];
            let usable = (rank.first_dpu..rank.first_dpu + rank.nr_dpus)
                .filter(|&dpu| self.machine.topology().is_enabled(dpu))
                .count() as u32;
            if usable == 0 {
                continue;
            }
            taken.push(index);
            enabled += usable;
        }
        let enough = match (nr_dpus, nr_ranks) {
            (Some(wanted), _) => enabled >= wanted,
            (None, Some(wanted)) => taken.len() as u32 >= wanted,
            (None, None) => !taken.is_empty(),
        };
        if !enough || taken.is_empty() {
            eprintln!(
                "libdpu (simulator): cannot allocate {}: {} ranks of {} DPUs are free (set the simulator's size with \
                 the profile keys nrRanks= and nrDpusPerRank=, e.g. UPMEM_PROFILE=nrRanks=40)",
                match (nr_dpus, nr_ranks) {
                    (Some(n), _) => format!("{n} DPUs"),
                    (None, Some(n)) => format!("{n} ranks"),
                    (None, None) => "all ranks".into(),
                },
                self.ranks.iter().filter(|rank| !rank.allocated).count(),
                self.profile.dpus_per_rank
            );
            return Err(DpuError(code::ALLOCATION));
        }
        let dpus: Vec<u32> = taken
            .iter()
            .flat_map(|&rank| {
                let rank = &self.ranks[rank];
                rank.first_dpu..rank.first_dpu + rank.nr_dpus
            })
            .filter(|&dpu| self.machine.topology().is_enabled(dpu))
            .collect();
        if !self.profile.disable_reset_on_alloc {
            self.machine.reset(&dpus)?;
        }
        for &rank in &taken {
            let rank = &mut self.ranks[rank];
            rank.allocated = true;
            rank.transfer_matrix = [std::ptr::null_mut(); MAX_DPUS_PER_RANK];
            rank.sg_xfer_enable = self.profile.sg_xfer_enable;
            rank.sg_max_blocks_per_dpu = self.profile.sg_max_blocks_per_dpu;
        }
        for &dpu in &dpus {
            self.dpus[dpu as usize].enabled = true;
        }
        if let (Some(wanted), Some(&last)) = (nr_dpus, taken.last()) {
            self.trim(last, enabled - wanted);
        }
        let array = self.rank_array(&taken);
        let set = dpu_set_t::of_ranks(array.len() as u32, array.as_ptr().cast_mut());
        self.allocations.push(array);
        Ok(set)
    }

    /// An array of pointers to `ranks`: a spare of that length if there is one (a stale set that still points
    /// at it now names the new set, as its memory would with libdpu), else a new one.
    fn rank_array(&mut self, ranks: &[usize]) -> Box<[*mut Rank]> {
        let pointers: Vec<*mut Rank> = ranks.iter().map(|&rank| self.rank_ptr(rank)).collect();
        match self.spare_arrays.iter().position(|spare| spare.len() == pointers.len()) {
            Some(index) => {
                let mut array = self.spare_arrays.swap_remove(index);
                array.copy_from_slice(&pointers);
                array
            }
            None => pointers.into_boxed_slice(),
        }
    }

    /// Takes over the spare rank arrays of the server this one replaces, so that stale sets of that server
    /// are refused too instead of being read from memory given back to the allocator.
    pub fn adopt_spare_arrays(&mut self, replaced: Server) {
        debug_assert!(!replaced.in_use(), "a server is replaced only when no set is allocated");
        self.spare_arrays.extend(replaced.spare_arrays);
    }

    /// Disables `surplus` DPUs of a rank the way libdpu does: highest member id first, looping over the
    /// control interfaces (8 per rank) from the top.
    fn trim(&mut self, rank: usize, surplus: u32) {
        let rank = &self.ranks[rank];
        let (first, size) = (rank.first_dpu, rank.nr_dpus);
        let order: Vec<u32> = if size % 8 == 0 {
            let per_ci = size / 8;
            (0..per_ci).rev().flat_map(|member| (0..8).rev().map(move |ci| ci * per_ci + member)).collect()
        } else {
            (0..size).rev().collect()
        };
        let mut left = surplus;
        for index in order {
            if left == 0 {
                break;
            }
            let dpu = &mut self.dpus[(first + index) as usize];
            if dpu.enabled {
                dpu.enabled = false;
                left -= 1;
            }
        }
    }

    /// Frees a set returned by `dpu_alloc`/`dpu_alloc_ranks` (matched exactly, as libdpu does).
    pub fn free(&mut self, set: &dpu_set_t) -> Result<()> {
        if set.kind != DPU_SET_RANKS {
            return Err(DpuError(code::INVALID_DPU_SET));
        }
        // SAFETY: kind says the union holds `list`.
        let list = unsafe { set.rank_list() };
        let position = self
            .allocations
            .iter()
            .position(|array| array.as_ptr() == list.ranks.cast_const() && array.len() == list.nr_ranks as usize)
            .ok_or(DpuError(code::INVALID_DPU_SET))?;
        let ranks = self.ranks_of(set)?;
        self.machine.poll()?;
        let busy =
            |dpu| self.machine.dpu_state(dpu).is_ok_and(|state| matches!(state, DpuState::Running | DpuState::Queued));
        if ranks.iter().any(|&rank| {
            let rank = &self.ranks[rank];
            (rank.first_dpu..rank.first_dpu + rank.nr_dpus).any(busy)
        }) {
            return Err(DpuError(code::DPU_ALREADY_RUNNING));
        }
        if !self.profile.disable_reset_on_alloc {
            // The next allocation would reset these DPUs anyway: give their memory back now, and the worker
            // processes of programs that no allocated DPU runs any more. (With disableResetOnAlloc the contents
            // must survive until the next allocation, as on hardware, so both stay.)
            let dpus: Vec<u32> = ranks
                .iter()
                .flat_map(|&rank| self.ranks[rank].first_dpu..self.ranks[rank].first_dpu + self.ranks[rank].nr_dpus)
                .filter(|&dpu| self.machine.topology().is_enabled(dpu))
                .collect();
            self.machine.reset(&dpus)?;
        }
        for rank in ranks {
            self.ranks[rank].allocated = false;
            self.ranks[rank].transfer_matrix = [std::ptr::null_mut(); MAX_DPUS_PER_RANK];
        }
        let array = self.allocations.swap_remove(position);
        self.spare_arrays.push(array);
        self.forget_unused_programs();
        Ok(())
    }

    /// The program at `path`, parsed once per version of the file: the current version stays in the table
    /// (a rebuilt file is a new entry, and the older one goes once no DPU runs it).
    pub fn program(&mut self, path: &Path) -> Result<*mut ProgramEntry> {
        let modified = std::fs::metadata(path).and_then(|metadata| metadata.modified()).ok();
        let key = (std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()), modified);
        if modified.is_some() {
            if let Some(entry) = self.programs.get_mut(&key) {
                return Ok(&mut **entry);
            }
        }
        let program = Arc::new(Program::from_file(path).map_err(|error| {
            let code = DpuError::from(error);
            if code.0 == code::SYSTEM {
                DpuError(code::ELF_INVALID_FILE)
            } else {
                code
            }
        })?);
        for (other, entry) in &mut self.programs {
            if other.0 == key.0 {
                entry.reusable = false;
            }
        }
        let reusable = modified.is_some();
        let entry = self.programs.entry(key).insert_entry(Box::new(ProgramEntry { program, reusable }));
        Ok(&mut **entry.into_mut())
    }

    /// A program loaded from memory: every call is a new program, kept while a DPU runs it.
    pub fn program_from_bytes(&mut self, bytes: &[u8]) -> Result<*mut ProgramEntry> {
        let program = Arc::new(Program::from_bytes(bytes)?);
        let mut entry = Box::new(ProgramEntry { program, reusable: false });
        let handle: *mut ProgramEntry = &mut *entry;
        self.programs_from_memory.push(entry);
        Ok(handle)
    }

    /// Drops the programs no DPU runs any more, except the current version of each file: as libdpu frees a
    /// program when the last DPU running it is freed or loaded with another, so that a process that loads
    /// programs from memory (or rebuilds and reloads a file) over and over does not keep every one of them (and
    /// the executable a program from memory runs from). A `struct dpu_program_t *` of a dropped program is
    /// refused from then on ([`Server::program_entry`]), where libdpu's would dangle.
    pub fn forget_unused_programs(&mut self) {
        // The machine holds a program for each DPU that has it loaded (and its worker pool one more); between API
        // calls nothing else does, so a count of one is the table's own.
        let in_use = |entry: &ProgramEntry| entry.reusable || Arc::strong_count(&entry.program) > 1;
        self.programs.retain(|_, entry| in_use(entry));
        self.programs_from_memory.retain(|entry| in_use(entry));
    }

    /// Checks that a `struct dpu_program_t *` from C is one of ours.
    pub fn program_entry(&self, handle: *const ProgramEntry) -> Option<&ProgramEntry> {
        self.programs
            .values()
            .chain(&self.programs_from_memory)
            .map(|entry| &**entry)
            .find(|entry| std::ptr::eq(*entry, handle))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_server() -> Server {
        Server::new(Profile::parse("nrRanks=4,nrDpusPerRank=1").unwrap()).unwrap()
    }

    fn array_of(set: &dpu_set_t) -> *mut *mut Rank {
        // SAFETY: dpu_alloc's sets are sets of ranks.
        unsafe { set.rank_list() }.ranks
    }

    #[test]
    fn freed_rank_arrays_are_reused_so_that_their_number_stays_bounded() {
        let mut server = small_server();
        for _ in 0..1000 {
            let one = server.allocate(None, Some(1)).unwrap();
            let two = server.allocate(None, Some(2)).unwrap();
            server.free(&one).unwrap();
            let other_one = server.allocate(None, Some(1)).unwrap();
            server.free(&two).unwrap();
            server.free(&other_one).unwrap();
        }
        let mut lengths: Vec<usize> = server.spare_arrays.iter().map(|array| array.len()).collect();
        lengths.sort_unstable();
        assert!(
            lengths == [1, 2],
            "{} spare arrays after 1000 cycles, of lengths {:?}...",
            lengths.len(),
            &lengths[..8.min(lengths.len())]
        );
    }

    #[test]
    fn a_freed_set_is_refused_until_its_array_holds_another_set() {
        let mut server = small_server();
        let first = server.allocate(None, Some(1)).unwrap();
        let second = server.allocate(None, Some(1)).unwrap();
        assert_ne!(array_of(&first), array_of(&second), "two live sets never share an array");
        server.free(&first).unwrap();
        assert_eq!(server.ranks_of(&first), Err(DpuError(code::INVALID_DPU_SET)));
        assert_eq!(server.free(&first), Err(DpuError(code::INVALID_DPU_SET)));
        let third = server.allocate(None, Some(1)).unwrap();
        assert_eq!(array_of(&third), array_of(&first), "the freed array serves the next set of its length");
        assert_eq!(server.ranks_of(&first), server.ranks_of(&third));
    }

    #[test]
    fn a_server_that_replaces_another_refuses_the_stale_sets_of_the_other() {
        let mut replaced = small_server();
        let stale = replaced.allocate(None, Some(3)).unwrap();
        replaced.free(&stale).unwrap();
        let mut replacement = Server::new(Profile::parse("nrRanks=2,nrDpusPerRank=1").unwrap()).unwrap();
        replacement.adopt_spare_arrays(replaced);
        assert_eq!(replacement.ranks_of(&stale), Err(DpuError(code::INVALID_DPU_SET)));
    }
}
