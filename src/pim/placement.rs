//! Where aggregation runs: the one place that turns a backend choice into an [`SpmmEngine`].

use std::fmt;
use std::str::FromStr;

use upmem::{BackendKind, DpuSet, RankInventory, Topology};

use crate::error::{Error, Result};
use crate::pim::cost::{self, Choice, Costed, HardwareModel};
use crate::pim::{plan_target, LoadBalance, PimElement, PimSpmm};
use crate::sparse::{Csr, Element};
use crate::spmm::{CpuSpmm, SpmmEngine};

/// Where aggregation runs: on DPUs (which ones as [`BackendKind`] says), or on the host CPU.
///
/// Displayed as `auto`, `simulator`, `hardware` or `cpu`; parsed from those, from `sim` and `hw`, in any case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// PIM on the DPUs `upmem` resolves this to: [`BackendKind::Auto`] is UPMEM hardware when present, else the
    /// simulator; an explicit backend never falls back.
    Pim(BackendKind),
    /// The host CPU on all cores.
    Cpu,
}

impl Default for Backend {
    fn default() -> Self {
        Backend::Pim(BackendKind::Auto)
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backend::Pim(kind) => fmt::Display::fmt(kind, f),
            Backend::Cpu => f.write_str("cpu"),
        }
    }
}

impl FromStr for Backend {
    type Err = Error;

    /// `cpu`, or a PIM backend as [`BackendKind`] parses it (`auto`, `simulator` or `sim`, `hardware` or `hw`).
    fn from_str(text: &str) -> Result<Self> {
        if text.eq_ignore_ascii_case("cpu") {
            return Ok(Backend::Cpu);
        }
        text.parse().map(Backend::Pim).map_err(|_| {
            Error::invalid("backend", format!("`{text}` is not one of auto, simulator (sim), hardware (hw), cpu"))
        })
    }
}

/// DPUs a PIM engine plans for when `--dpus` is not given: the simulator simulates this many, hardware uses
/// the free DPUs up to this many.
pub const DEFAULT_DPUS: u32 = 2048;

/// Tasklets per DPU when not given.
pub const DEFAULT_TASKLETS: u32 = 16;

/// The width a PIM plan is chosen for when the caller names no widths.
pub const DEFAULT_PLAN_WIDTH: usize = 64;

/// How to build an aggregation engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// The backend asked for.
    pub backend: Backend,
    /// DPUs to use on PIM, at most (default: [`DEFAULT_DPUS`]; on hardware, the free ones up to that). The
    /// engine allocates the DPUs its plan gives work to, which may be fewer.
    pub dpus: Option<u32>,
    /// Tasklets per DPU on PIM (default: [`DEFAULT_TASKLETS`]).
    pub tasklets: Option<u32>,
    /// Feature widths of the calls to come, one per aggregation of a forward pass
    /// ([`Model::aggregation_widths`](crate::gnn::Model::aggregation_widths)). The PIM engine keeps one plan for
    /// every call and picks the one predicted fastest over all of them; empty plans for one call of
    /// [`DEFAULT_PLAN_WIDTH`].
    pub widths: Vec<usize>,
}

/// An engine and the backend it runs on.
pub struct Engine<T: Element> {
    /// The engine, with the matrix resident.
    pub spmm: Box<dyn SpmmEngine<T>>,
    /// The backend it runs on (never `Backend::Pim(BackendKind::Auto)`).
    pub backend: Backend,
    /// One line describing how it executes (printed as the plan).
    pub plan: String,
    /// Nonzeros per DPU, on PIM.
    pub balance: Option<LoadBalance>,
    /// DPUs allocated, on PIM.
    pub allocated_dpus: Option<usize>,
}

/// Builds the engine for `options.backend` with `matrix` resident in it, for every call to come.
///
/// `Backend::Pim(BackendKind::Auto)` runs on PIM: UPMEM hardware when present, else the simulator; an explicit backend never
/// falls back.
pub fn spmm_engine<T: PimElement>(matrix: Csr<T>, options: &EngineOptions) -> Result<Engine<T>> {
    match options.backend {
        Backend::Cpu => Ok(cpu_engine(matrix)),
        Backend::Pim(kind) => pim_engine(matrix, kind, options),
    }
}

fn cpu_engine<T: Element>(matrix: Csr<T>) -> Engine<T> {
    let plan = format!(
        "CPU SpMM, {} x {} with {} nonzeros, {} threads, {}",
        matrix.nrows(),
        matrix.ncols(),
        matrix.nnz(),
        rayon::current_num_threads(),
        T::NAME
    );
    Engine { spmm: Box::new(CpuSpmm::new(matrix)), backend: Backend::Cpu, plan, balance: None, allocated_dpus: None }
}

/// How a PIM engine gets its DPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Allocation {
    /// Plan for at most this many DPUs, then allocate the DPUs the plan gives work to.
    Planned(u32),
    /// Allocate this many whole ranks, then plan for the DPUs they hold, up to `budget`: on hardware without
    /// `--dpus`, where the free DPUs the driver counts are nominal (the SDK disables faulty ones when it
    /// allocates), so asking for exactly that many could fail where their ranks hold a few fewer.
    Ranks { ranks: u32, budget: u32 },
}

/// How the engine gets its DPUs on `kind` (resolved) for `asked` DPUs, `machine` being the driver's ranks.
fn allocation(kind: BackendKind, asked: Option<u32>, machine: impl FnOnce() -> RankInventory) -> Allocation {
    match (kind, asked) {
        (BackendKind::Hardware, None) => {
            let machine = machine();
            let free = machine.free_dpus().filter(|&free| free > 0);
            let budget = free.map_or(DEFAULT_DPUS, |free| free.min(DEFAULT_DPUS));
            let free_ranks = machine.ranks().iter().filter(|rank| rank.owned == Some(false));
            let per_rank =
                free_ranks.filter_map(|rank| rank.dpus).max().unwrap_or(Topology::full_server().dpus_per_rank);
            Allocation::Ranks { ranks: budget.div_ceil(per_rank.max(1)), budget }
        }
        (_, asked) => Allocation::Planned(asked.unwrap_or(DEFAULT_DPUS)),
    }
}

/// The PIM engine on `kind`'s DPUs, `matrix` loaded once with the plan predicted fastest over
/// `options.widths`, on no more DPUs than that plan gives work to (up to a rank's worth more on hardware without
/// `--dpus`, see [`Allocation::Ranks`]). On error the DPUs are released (the set is dropped) before returning.
fn pim_engine<T: PimElement>(matrix: Csr<T>, kind: BackendKind, options: &EngineOptions) -> Result<Engine<T>> {
    if options.dpus == Some(0) {
        return Err(Error::invalid("DPUs", "at least 1 DPU is needed"));
    }
    let kind = kind.resolve()?;
    let tasklets = options.tasklets.unwrap_or(DEFAULT_TASKLETS);
    let widths = if options.widths.is_empty() { vec![DEFAULT_PLAN_WIDTH] } else { options.widths.clone() };
    let model = HardwareModel::default();
    let plan_for =
        |nr_dpus: u32| cost::choose_for_calls(&model, &matrix, &widths, nr_dpus, tasklets, plan_target(kind));
    let mut builder = DpuSet::builder();
    builder.backend(kind);
    let (set, choice) = match allocation(kind, options.dpus, RankInventory::of_this_machine) {
        Allocation::Planned(budget) => {
            let choice = plan_for(budget)?;
            let set = builder.dpus(choice.best.plan.dpus_used() as u32).allocate()?;
            (set, choice)
        }
        Allocation::Ranks { ranks, budget } => {
            let set = builder.ranks(ranks).allocate()?;
            let choice = plan_for((set.nr_dpus() as u32).min(budget))?;
            (set, choice)
        }
    };
    let backend = Backend::Pim(set.backend());
    let plan = describe::<T>(&choice, &widths, set.nr_dpus(), set.backend(), &model);
    let allocated_dpus = Some(set.nr_dpus());
    let engine = PimSpmm::with_model(set, matrix, choice.best.plan, model)?;
    let balance = Some(engine.report().balance);
    Ok(Engine { spmm: Box::new(engine), backend, plan, balance, allocated_dpus })
}

/// The plan line of a PIM engine: the DPUs, the plan and its predicted time over the calls, and the hardware's
/// choice when the simulator runs another plan (see [`cost::Target::Simulator`]).
fn describe<T: PimElement>(
    choice: &Choice,
    widths: &[usize],
    nr_dpus: usize,
    kind: BackendKind,
    model: &HardwareModel,
) -> String {
    let ms = |costed: &Costed| costed.prediction.total().as_secs_f64() * 1e3;
    let (chosen, fastest) = (&choice.best, &choice.fastest);
    let budgeted = if fastest.plan == chosen.plan {
        String::new()
    } else {
        format!(
            "; hardware's choice {} at {:.3} ms: the simulator runs the plan cheapest to simulate among those within \
             {:.0}% of the fastest that fit its host-memory budget, when it saves at least {:.0}% of the work",
            fastest.plan,
            ms(fastest),
            cost::SIMULATOR_TOLERANCE * 1e2,
            cost::SIMULATOR_MIN_SAVING * 1e2
        )
    };
    let pygim = match &choice.pygim {
        Some(pygim) => format!("; PyGim's default {} predicted {:.3} ms", pygim.plan, ms(pygim)),
        None => "; no PyGim plan fits the DPUs' MRAM".to_owned(),
    };
    let share = chosen.prediction.transfer_share();
    let bound = if share > 0.5 {
        format!(", transfer-bound: send X and gather are {:.0}% of it", share * 1e2)
    } else {
        String::new()
    };
    format!(
        "PIM SpMM on {nr_dpus} {kind} DPUs ({} used), {}, plan {} (predicted {:.3} ms on hardware over calls of \
         width {widths:?}{bound}, transfers as measured with {}{budgeted}{pygim})",
        chosen.plan.dpus_used(),
        T::NAME,
        chosen.plan,
        ms(chosen),
        model.transfers.source,
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::*;

    /// A driver's rank class with `free` free and `owned` owned ranks of 64 DPUs.
    fn machine(dir: &Path, free: usize, owned: usize) -> RankInventory {
        for rank in 0..free + owned {
            let rank_dir = dir.join(format!("dpu_rank{rank}"));
            std::fs::create_dir_all(&rank_dir).unwrap();
            std::fs::write(rank_dir.join("is_owned"), if rank < free { "0" } else { "1" }).unwrap();
            std::fs::write(rank_dir.join("nb_ci"), "8").unwrap();
            std::fs::write(rank_dir.join("nb_dpus_per_ci"), "8").unwrap();
        }
        RankInventory::read(dir)
    }

    /// Hardware without `--dpus` takes the ranks of at most DEFAULT_DPUS of the free DPUs, never every free
    /// rank (which DPU_ALLOCATE_ALL would take, blocking other users of the server).
    #[test]
    fn hardware_without_dpus_takes_the_ranks_of_at_most_the_default_dpus() {
        let hardware = BackendKind::Hardware;
        let server = tempfile::tempdir().unwrap();
        let full = machine(server.path(), 40, 0);
        assert_eq!(allocation(hardware, None, || full), Allocation::Ranks { ranks: 32, budget: DEFAULT_DPUS });
        let shared = tempfile::tempdir().unwrap();
        let busy = machine(shared.path(), 10, 30);
        assert_eq!(allocation(hardware, None, || busy), Allocation::Ranks { ranks: 10, budget: 640 });
        let none = tempfile::tempdir().unwrap();
        let absent = RankInventory::read(&none.path().join("dpu_rank"));
        assert_eq!(allocation(hardware, None, || absent), Allocation::Ranks { ranks: 32, budget: DEFAULT_DPUS });
        assert_eq!(allocation(hardware, Some(100), || unreachable!()), Allocation::Planned(100));
        assert_eq!(allocation(BackendKind::Simulator, None, || unreachable!()), Allocation::Planned(2048));
    }

    /// The plan line says which transfer figures the prediction used, when transfers dominate it, and what PyGim's
    /// default would take.
    #[test]
    fn the_plan_line_names_the_transfer_figures_and_a_transfer_bound_plan() {
        let ms = Duration::from_millis;
        let costed = |send_x, kernel| Costed {
            plan: crate::pim::plan::Plan::pygim(64, 1, 16),
            prediction: cost::Prediction { send_x: ms(send_x), kernel: ms(kernel), gather: ms(1), merge: ms(1) },
        };
        let choice = |best: Costed| Choice { fastest: best, best, pygim: None, candidates: Vec::new() };
        let model = HardwareModel::default();
        let line = |send_x, kernel| {
            describe::<f32>(&choice(costed(send_x, kernel)), &[64], 64, BackendKind::Simulator, &model)
        };
        let bound = line(7, 1);
        assert!(bound.contains("transfer-bound: send X and gather are 80% of it"), "{bound}");
        assert!(bound.contains("; no PyGim plan fits the DPUs' MRAM"), "{bound}");
        assert!(bound.contains(&format!("transfers as measured with {}", model.transfers.source)), "{bound}");
        let compute = line(1, 7);
        assert!(!compute.contains("transfer-bound"), "{compute}");
        let beside_pygim = Choice { pygim: Some(costed(20, 20)), ..choice(costed(1, 7)) };
        let with_pygim = describe::<f32>(&beside_pygim, &[64], 64, BackendKind::Simulator, &model);
        let expected =
            "; PyGim's default csr:rows=64,split=no,cols=1,groups=1,x=whole,tasklets=16 predicted 42.000 ms)";
        assert!(with_pygim.ends_with(expected), "{with_pygim}");
    }
}
