//! The DPUs `pimgnn check` runs on: how its sets are allocated, which backend was chosen and why, and what the
//! runtime tells of the DPUs.

use std::fmt;

#[cfg(feature = "simulator")]
use upmem::sim::SimConfig;
use upmem::{BackendKind, ChipVersion, DpuSet, LoadedSet, Topology, MRAM_HEAP};

/// DPUs per rank of the simulated machine: a small rank, so that the few DPUs of a check span several ranks.
#[cfg(feature = "simulator")]
const SIM_DPUS_PER_RANK: u32 = 4;
/// Ranks of the simulated machine without `--dpus`.
#[cfg(feature = "simulator")]
const SIM_DEFAULT_RANKS: u32 = 3;

/// The simulated machine for a set of `dpus` DPUs (every enabled one without `--dpus`): the fewest ranks of
/// [`SIM_DPUS_PER_RANK`] that hold them with one DPU of each rank disabled, as real servers have a few disabled
/// DPUs. Rank `r`'s disabled DPU is its member `r % SIM_DPUS_PER_RANK`, so the first DPU of the set is not the
/// machine's first.
#[cfg(feature = "simulator")]
pub fn simulated_machine(dpus: Option<u32>) -> Topology {
    let enabled_per_rank = SIM_DPUS_PER_RANK - 1;
    let ranks = dpus.map_or(SIM_DEFAULT_RANKS, |dpus| dpus.div_ceil(enabled_per_rank).max(1));
    Topology::new(ranks, SIM_DPUS_PER_RANK)
        .with_disabled((0..ranks).map(|rank| rank * SIM_DPUS_PER_RANK + rank % SIM_DPUS_PER_RANK))
}

/// How the check's DPU sets are allocated: every set of a run has as many DPUs (on the simulator, the same
/// ones).
#[derive(Clone, Debug)]
pub struct Dpus {
    backend: BackendKind,
    /// `None`: every DPU the backend has.
    count: Option<u32>,
    #[cfg(feature = "simulator")]
    simulated: SimConfig,
}

impl Dpus {
    /// `count` DPUs (every one the hardware has, or [`simulated_machine`]'s, when `None`) on `backend`.
    pub fn new(backend: BackendKind, count: Option<u32>) -> Self {
        Dpus {
            backend,
            count,
            #[cfg(feature = "simulator")]
            simulated: SimConfig::new(simulated_machine(count)),
        }
    }

    /// The same DPUs as `set` (the first set of a run), for the sets after it.
    pub fn as_in(&self, set: &DpuSet) -> Self {
        let mut dpus = self.clone();
        dpus.backend = set.backend();
        dpus.count = Some(set.nr_dpus() as u32);
        dpus
    }

    /// Allocates a set.
    pub fn allocate(&self) -> upmem::Result<DpuSet> {
        let mut builder = DpuSet::builder();
        builder.backend(self.backend);
        #[cfg(feature = "simulator")]
        builder.simulator(self.simulated.clone());
        if let Some(count) = self.count {
            builder.dpus(count);
        }
        builder.allocate()
    }
}

/// Why `chosen` runs the check when `asked` was asked for (`--backend`).
pub fn backend_reason(asked: BackendKind, chosen: BackendKind) -> String {
    if asked != BackendKind::Auto {
        return format!("asked for with --backend {asked}");
    }
    if let Ok(value) = std::env::var("UPMEM_BACKEND") {
        if value.parse::<BackendKind>().is_ok_and(|kind| kind != BackendKind::Auto) {
            return format!("auto: UPMEM_BACKEND={value}");
        }
    }
    let reason = match chosen {
        BackendKind::Hardware if !cfg!(feature = "simulator") => "the simulator backend is not compiled in",
        BackendKind::Hardware => "UPMEM hardware is present and libdpu loaded",
        _ if !cfg!(feature = "hardware") => "the hardware backend is not compiled in",
        _ if !upmem::hardware_present() => "no UPMEM hardware: the kernel driver exposes no DPU rank on this machine",
        _ => "UPMEM hardware is present but libdpu did not load (the warning above says why)",
    };
    format!("auto: {reason}")
}

/// What the runtime tells of the DPUs' chips and software.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Silicon {
    /// The chip version.
    pub chip_version: ChipVersion,
    /// Tasklets a DPU runs in hardware.
    pub tasklet_limit: u32,
    /// The UPMEM SDK version, on hardware, when its libdpu says.
    pub sdk_version: Option<String>,
}

/// The chip version, hardware tasklet limit and SDK version of `set`'s DPUs, as the `upmem` crate reports them
/// (the ranks' descriptions on hardware).
pub fn silicon(set: &LoadedSet) -> Silicon {
    Silicon {
        chip_version: set.chip(),
        tasklet_limit: set.hardware_threads(),
        sdk_version: set.sdk_version().map(str::to_owned),
    }
}

/// What a check run prints about its DPUs.
#[derive(Clone, Debug)]
pub struct Description {
    /// The backend running the check.
    pub backend: BackendKind,
    /// Why it was chosen.
    pub reason: String,
    /// Ranks of the set.
    pub ranks: usize,
    /// DPUs of the set (enabled ones only: a set never holds a disabled DPU).
    pub dpus: usize,
    /// The simulated machine, on the simulator (its disabled DPUs and WRAM).
    pub machine: Option<Topology>,
    /// MRAM per DPU: where the MRAM heap of a program without MRAM variables ends (libdpu reports the heap
    /// symbol as the rest of MRAM).
    pub mram_bytes: u64,
    /// What the runtime says of the chips.
    pub silicon: Silicon,
}

impl Description {
    /// The description of `set`, loaded with a program (its MRAM heap gives the MRAM size), allocated for a
    /// request of `asked`.
    pub fn of(set: &LoadedSet, asked: BackendKind) -> upmem::Result<Self> {
        let heap = set.symbol(MRAM_HEAP)?;
        Ok(Description {
            backend: set.backend(),
            reason: backend_reason(asked, set.backend()),
            ranks: set.nr_ranks(),
            dpus: set.nr_dpus(),
            machine: set.topology().cloned(),
            mram_bytes: heap.offset() + u64::from(heap.size),
            silicon: silicon(set),
        })
    }
}

/// DPUs listed in full up to this many, else the first of them and how many more.
const LISTED_DPUS: usize = 8;

/// `items` separated by commas, the first [`LISTED_DPUS`] of them and how many more when there are more.
fn first_few(items: impl ExactSizeIterator<Item = impl fmt::Display>) -> String {
    let count = items.len();
    let listed: Vec<String> = items.take(LISTED_DPUS).map(|item| item.to_string()).collect();
    match count - listed.len() {
        0 => listed.join(", "),
        more => format!("{} and {more} more", listed.join(", ")),
    }
}

/// Says "not reported by the runtime" for what it does not report.
fn reported<T: fmt::Display>(value: &Option<T>) -> String {
    value.as_ref().map_or_else(|| "not reported by the runtime".to_owned(), ToString::to_string)
}

impl fmt::Display for Description {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "backend: {} ({})", self.backend, self.reason)?;
        match self.backend {
            BackendKind::Hardware => writeln!(f, "UPMEM SDK: {}", reported(&self.silicon.sdk_version))?,
            _ => writeln!(f, "UPMEM SDK: none (the bundled simulator runs the kernels' simulator builds)")?,
        }
        writeln!(
            f,
            "chip version: {}; hardware tasklets per DPU: {} (the kernels are built for each chip, the SpMM \
             ones with as many tasklets as it has threads)",
            self.silicon.chip_version, self.silicon.tasklet_limit,
        )?;
        write!(f, "DPUs: {} in {} rank{}", self.dpus, self.ranks, if self.ranks == 1 { "" } else { "s" })?;
        match &self.machine {
            Some(machine) => writeln!(
                f,
                ", of a simulated machine of {machine} with {} disabled (DPUs {})",
                machine.disabled.len(),
                first_few(machine.disabled.iter())
            )?,
            None => writeln!(f, "; disabled DPUs: not reported by the runtime")?,
        }
        let wram = self.machine.as_ref().map(|machine| format!("{} KiB", machine.wram_size >> 10));
        write!(f, "per DPU: MRAM {} MiB, WRAM {}", self.mram_bytes >> 20, reported(&wram))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // On the simulated machine of a check, which only a build with the simulator has.
    #[cfg(feature = "simulator")]
    #[test]
    fn the_simulated_machine_holds_the_dpus_with_one_disabled_per_rank() {
        let default = simulated_machine(None);
        assert_eq!((default.nr_ranks, default.nr_enabled_dpus()), (3, 9));
        assert_eq!(default.disabled.iter().copied().collect::<Vec<_>>(), [0, 5, 10]);
        for dpus in [1, 2, 3, 4, 8, 9, 10, 2560] {
            let machine = simulated_machine(Some(dpus));
            assert!(machine.nr_enabled_dpus() >= dpus, "{dpus}: {machine:?}");
            assert!(machine.nr_enabled_dpus() < dpus + SIM_DPUS_PER_RANK - 1, "{dpus}: more ranks than needed");
        }
    }

    // On the simulated machine of a check, which only a build with the simulator has.
    #[cfg(feature = "simulator")]
    #[test]
    fn long_lists_of_dpus_are_cut_short() {
        assert_eq!(first_few([0, 5, 10].iter()), "0, 5, 10");
        assert_eq!(first_few(simulated_machine(Some(300)).disabled.iter()), "0, 5, 10, 15, 16, 21, 26, 31 and 92 more");
    }

    #[test]
    fn an_explicit_backend_is_the_reason() {
        assert_eq!(
            backend_reason(BackendKind::Simulator, BackendKind::Simulator),
            "asked for with --backend simulator"
        );
        assert_eq!(backend_reason(BackendKind::Hardware, BackendKind::Hardware), "asked for with --backend hardware");
    }

    #[test]
    fn the_description_says_what_the_runtime_does_not_report() {
        let description = Description {
            backend: BackendKind::Hardware,
            reason: "auto: UPMEM hardware is present and libdpu loaded".into(),
            ranks: 40,
            dpus: 2556,
            machine: None,
            mram_bytes: 64 << 20,
            silicon: Silicon { chip_version: ChipVersion::V1B, tasklet_limit: 16, sdk_version: None },
        };
        let text = description.to_string();
        assert!(text.contains("UPMEM SDK: not reported by the runtime"), "{text}");
        assert!(text.contains("chip version: v1B; hardware tasklets per DPU: 16"), "{text}");
        assert!(text.contains("DPUs: 2556 in 40 ranks; disabled DPUs: not reported"), "{text}");
        assert!(text.contains("MRAM 64 MiB, WRAM not reported by the runtime"), "{text}");
    }
}
