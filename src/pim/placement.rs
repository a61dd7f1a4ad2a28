//! Where aggregation runs: the one place that turns a backend choice into an [`SpmmEngine`].

use std::fmt;
use std::str::FromStr;

use upmem::{BackendKind, DpuSet, RankInventory, Topology};

use crate::attention::AttentionSite;
use crate::error::{Error, Result};
use crate::pim::auto::{self, Decision, Pick};
use crate::pim::coexec::SplitSpmm;
use crate::pim::cost::{self, Choice, Costed, HardwareModel};
use crate::pim::plan::Plan;
use crate::pim::{plan_target, LoadBalance, PimElement, PimSpmm};
use crate::sparse::{Csr, Element};
use crate::spmm::{CpuSpmm, SpmmEngine};

/// Where aggregation runs: the model's pick, on DPUs (which ones as [`BackendKind`] says), on DPUs and the
/// host CPU at once, or on the host CPU.
///
/// Parsed, in any case, from `auto`, `pim`, `simulator` or `sim`, `hardware` or `hw`, `split` (optionally
/// `split:sim` or `split:hw`) and `cpu`; displayed the same way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// What the model predicts fastest for the matrix and widths ([`auto::decide`]): the host CPU, the DPUs, or
    /// both at once. On UPMEM hardware that is what runs; without it aggregation runs on the simulator's DPUs
    /// (what a user without the hardware studies) and [`Engine::decision`] holds the pick for the modelled
    /// server.
    #[default]
    Auto,
    /// PIM on the DPUs `upmem` resolves this to: [`BackendKind::Auto`] is UPMEM hardware when present, else the
    /// simulator; an explicit backend never falls back.
    Pim(BackendKind),
    /// Co-execution ([`SplitSpmm`]): the first rows on these DPUs and the rest on the host cores, at the same
    /// time, cut in proportion to their predicted throughputs.
    Split(BackendKind),
    /// The host CPU on all cores.
    Cpu,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backend::Auto => f.write_str("auto"),
            Backend::Pim(BackendKind::Auto) => f.write_str("pim"),
            Backend::Pim(kind) => fmt::Display::fmt(kind, f),
            Backend::Split(BackendKind::Auto) => f.write_str("split"),
            Backend::Split(kind) => write!(f, "split:{kind}"),
            Backend::Cpu => f.write_str("cpu"),
        }
    }
}

impl FromStr for Backend {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let invalid = || {
            Error::invalid(
                "backend",
                format!("`{text}` is not one of auto, pim, simulator (sim), hardware (hw), split[:sim|:hw], cpu"),
            )
        };
        let lower = text.to_ascii_lowercase();
        match lower.as_str() {
            "auto" => Ok(Backend::Auto),
            "pim" => Ok(Backend::Pim(BackendKind::Auto)),
            "cpu" => Ok(Backend::Cpu),
            "split" => Ok(Backend::Split(BackendKind::Auto)),
            _ => match lower.strip_prefix("split:") {
                Some(kind) => kind.parse().map(Backend::Split).map_err(|_| invalid()),
                None => lower.parse().map(Backend::Pim).map_err(|_| invalid()),
            },
        }
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
    /// Where GAT layers compute their attention weights.
    pub attention: AttentionSite,
    /// The plan to run on PIM instead of the one the cost model chooses (its tasklets replace `tasklets`); the
    /// engine allocates the DPUs it gives work to, which must be within `dpus` when that is given.
    pub plan: Option<Plan>,
}

/// An engine and the backend it runs on.
pub struct Engine<T: Element> {
    /// The engine, with the matrix resident.
    pub spmm: Box<dyn SpmmEngine<T>>,
    /// The backend it runs on (never [`Backend::Auto`], nor [`BackendKind::Auto`] inside another).
    pub backend: Backend,
    /// One line describing how it executes (printed as the plan).
    pub plan: String,
    /// Nonzeros per DPU, on PIM.
    pub balance: Option<LoadBalance>,
    /// DPUs allocated, on PIM.
    pub allocated_dpus: Option<usize>,
    /// The model's pick and the predictions behind it, for [`Backend::Auto`] and [`Backend::Split`].
    pub decision: Option<Decision>,
}

/// Builds the engine for `options.backend` with `matrix` resident in it, for every call to come.
///
/// [`Backend::Auto`] runs what the model predicts fastest on hardware, and PIM on the simulator without it; an
/// explicit backend never falls back.
pub fn spmm_engine<T: PimElement>(matrix: Csr<T>, options: &EngineOptions) -> Result<Engine<T>> {
    match options.backend {
        Backend::Cpu => Ok(cpu_engine(matrix)),
        Backend::Pim(kind) => pim_engine(matrix, kind, options).map(PimEngine::into_engine),
        Backend::Split(kind) => {
            let kind = kind.resolve()?;
            let decision = decide(&matrix, kind, options)?;
            let Some(split) = decision.split else {
                return Err(Error::invalid(
                    "backend split",
                    format!("the model gives one side every row, so there is nothing to split: {decision}"),
                ));
            };
            split_engine(matrix, kind, split.pim_rows, options, decision)
        }
        Backend::Auto => {
            let kind = BackendKind::Auto.resolve()?;
            let decision = decide(&matrix, kind, options)?;
            let mut engine = match (kind, decision.pick) {
                (BackendKind::Hardware, Pick::Cpu) => cpu_engine(matrix),
                (BackendKind::Hardware, Pick::Split { pim_rows }) => {
                    return split_engine(matrix, kind, pim_rows, options, decision)
                }
                _ => pim_engine(matrix, kind, options)?.into_engine(),
            };
            engine.decision = Some(decision);
            Ok(engine)
        }
    }
}

/// The model's pick for `matrix` on the DPUs `options` plans for on `kind` (resolved).
fn decide<T: PimElement>(matrix: &Csr<T>, kind: BackendKind, options: &EngineOptions) -> Result<Decision> {
    let nr_dpus = match allocation(kind, options.dpus, RankInventory::of_this_machine) {
        Allocation::Planned(budget) | Allocation::Ranks { budget, .. } => budget,
    };
    if nr_dpus == 0 {
        return Err(Error::invalid("DPUs", "at least 1 DPU is needed"));
    }
    let tasklets = options.tasklets.unwrap_or(DEFAULT_TASKLETS);
    auto::decide(&HardwareModel::configured()?, matrix, &plan_widths(options), nr_dpus, tasklets)
}

/// The widths a PIM plan is chosen for: the options', or one call of [`DEFAULT_PLAN_WIDTH`].
fn plan_widths(options: &EngineOptions) -> Vec<usize> {
    if options.widths.is_empty() {
        vec![DEFAULT_PLAN_WIDTH]
    } else {
        options.widths.clone()
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
    Engine {
        spmm: Box::new(CpuSpmm::new(matrix)),
        backend: Backend::Cpu,
        plan,
        balance: None,
        allocated_dpus: None,
        decision: None,
    }
}

/// Rows `..pim_rows` of `matrix` on `kind`'s DPUs, the others on the host cores, at the same time.
fn split_engine<T: PimElement>(
    matrix: Csr<T>,
    kind: BackendKind,
    pim_rows: usize,
    options: &EngineOptions,
    decision: Decision,
) -> Result<Engine<T>> {
    let (rows, nnz) = (matrix.nrows(), matrix.nnz());
    let cpu_rows = matrix.row_range(pim_rows..rows);
    let pim = pim_engine(matrix.row_range(0..pim_rows), kind, options)?;
    drop(matrix);
    let share = if nnz == 0 { 0.0 } else { (nnz - cpu_rows.nnz()) as f64 / nnz as f64 };
    let plan = format!(
        "co-execution: rows 0..{pim_rows} ({:.0}% of the nonzeros) on {}; rows {pim_rows}..{rows} on the CPU, {}          threads, at the same time",
        share * 1e2,
        pim.plan,
        rayon::current_num_threads()
    );
    let backend = Backend::Split(pim.backend);
    let (balance, allocated_dpus) = (Some(pim.spmm.report().balance), Some(pim.allocated_dpus));
    Ok(Engine {
        spmm: Box::new(SplitSpmm::new(pim.spmm, cpu_rows)?),
        backend,
        plan,
        balance,
        allocated_dpus,
        decision: Some(decision),
    })
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

/// A PIM engine as built, before it is boxed.
struct PimEngine<T: PimElement> {
    spmm: PimSpmm<T>,
    backend: BackendKind,
    plan: String,
    allocated_dpus: usize,
}

impl<T: PimElement> PimEngine<T> {
    fn into_engine(self) -> Engine<T> {
        let balance = Some(self.spmm.report().balance);
        Engine {
            spmm: Box::new(self.spmm),
            backend: Backend::Pim(self.backend),
            plan: self.plan,
            balance,
            allocated_dpus: Some(self.allocated_dpus),
            decision: None,
        }
    }
}

/// The PIM engine on `kind`'s DPUs, `matrix` loaded once with the plan predicted fastest over
/// `options.widths`, on no more DPUs than that plan gives work to (up to a rank's worth more on hardware without
/// `--dpus`, see [`Allocation::Ranks`]). On error the DPUs are released (the set is dropped) before returning.
fn pim_engine<T: PimElement>(matrix: Csr<T>, kind: BackendKind, options: &EngineOptions) -> Result<PimEngine<T>> {
    if options.dpus == Some(0) {
        return Err(Error::invalid("DPUs", "at least 1 DPU is needed"));
    }
    let kind = kind.resolve()?;
    let model = HardwareModel::configured()?;
    if let Some(plan) = options.plan {
        return given_plan_engine(matrix, kind, plan, options, model);
    }
    let tasklets = options.tasklets.unwrap_or(DEFAULT_TASKLETS);
    let widths = plan_widths(options);
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
    let backend = set.backend();
    let plan = describe::<T>(&choice, &widths, set.nr_dpus(), backend, &model);
    let allocated_dpus = set.nr_dpus();
    let spmm = PimSpmm::with_model(set, matrix, choice.best.plan, model)?;
    Ok(PimEngine { spmm, backend, plan, allocated_dpus })
}

/// The PIM engine on `kind`'s DPUs (resolved) running `plan` as given, on the DPUs it gives work to.
fn given_plan_engine<T: PimElement>(
    matrix: Csr<T>,
    kind: BackendKind,
    plan: Plan,
    options: &EngineOptions,
    model: HardwareModel,
) -> Result<PimEngine<T>> {
    let needed = plan.dpus_used();
    let limit = options.dpus.unwrap_or(u32::MAX);
    if needed > u64::from(limit) {
        return Err(Error::Capacity { what: format!("DPUs for plan {plan}"), needed, limit: limit.into() });
    }
    let set = DpuSet::builder().backend(kind).dpus(needed as u32).allocate()?;
    let backend = set.backend();
    let allocated_dpus = set.nr_dpus();
    let spmm = PimSpmm::with_model(set, matrix, plan, model)?;
    let plan = format!("{allocated_dpus} DPUs ({backend}), plan {plan} as given");
    Ok(PimEngine { spmm, backend, plan, allocated_dpus })
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

    #[test]
    fn backends_parse_from_their_names_and_display_as_they_parse() {
        let cases = [
            ("auto", Backend::Auto),
            ("pim", Backend::Pim(BackendKind::Auto)),
            ("simulator", Backend::Pim(BackendKind::Simulator)),
            ("hardware", Backend::Pim(BackendKind::Hardware)),
            ("split", Backend::Split(BackendKind::Auto)),
            ("split:simulator", Backend::Split(BackendKind::Simulator)),
            ("split:hardware", Backend::Split(BackendKind::Hardware)),
            ("cpu", Backend::Cpu),
        ];
        for (name, backend) in cases {
            assert_eq!(name.parse::<Backend>().unwrap(), backend);
            assert_eq!(backend.to_string(), name);
        }
        assert_eq!("SIM".parse::<Backend>().unwrap(), Backend::Pim(BackendKind::Simulator));
        assert_eq!("Split:HW".parse::<Backend>().unwrap(), Backend::Split(BackendKind::Hardware));
        for bad in ["gpu", "split:cpu", "split:", ""] {
            let error = bad.parse::<Backend>().unwrap_err().to_string();
            assert!(error.contains(&format!("`{bad}` is not one of auto, pim,")), "{error}");
        }
    }

    /// One row, which cannot be split between the DPUs and the CPU.
    #[cfg(feature = "simulator")]
    fn one_row() -> Csr<f32> {
        Csr::new(1, 3, vec![0, 3], vec![2, 0, 1], vec![1.0, 2.0, 3.0]).unwrap()
    }

    /// Without hardware `auto` runs PIM on the simulator and keeps the pick it would make on the modelled
    /// server; an explicit split where one side would get every row is refused, saying why.
    #[cfg(feature = "simulator")]
    #[test]
    fn auto_runs_pim_on_the_simulator_and_reports_its_pick() {
        if upmem::hardware_present() {
            return;
        }
        let options = |backend| EngineOptions {
            backend,
            dpus: Some(2),
            tasklets: Some(2),
            widths: vec![4],
            ..EngineOptions::default()
        };
        let engine = spmm_engine(one_row(), &options(Backend::Auto)).unwrap();
        assert_eq!(engine.backend, Backend::Pim(BackendKind::Simulator));
        let decision = engine.decision.expect("auto keeps its decision");
        assert_eq!((decision.nr_dpus, decision.split), (2, None));
        let faster = if decision.cpu.predicted <= decision.pim { Pick::Cpu } else { Pick::Pim };
        assert_eq!(decision.pick, faster, "{decision}");
        let split = options(Backend::Split(BackendKind::Simulator));
        let error = spmm_engine(one_row(), &split).map(|_| ()).unwrap_err();
        assert!(error.to_string().contains("nothing to split: "), "{error}");
        assert!(spmm_engine(one_row(), &options(Backend::Pim(BackendKind::Simulator))).unwrap().decision.is_none());
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

    /// A plan given in the options runs as given, on the DPUs it uses; one needing more DPUs than allowed is
    /// refused before any is allocated.
    #[cfg(feature = "simulator")]
    #[test]
    fn a_given_plan_runs_as_given_within_the_dpus_allowed() {
        let plan: Plan = "csr:rows=1,split=no,cols=1,groups=2,x=whole,tasklets=2".parse().unwrap();
        let options = |dpus| EngineOptions {
            backend: Backend::Pim(BackendKind::Simulator),
            dpus,
            plan: Some(plan),
            ..EngineOptions::default()
        };
        let mut engine = spmm_engine(one_row(), &options(None)).unwrap();
        assert_eq!(engine.allocated_dpus, Some(2));
        assert!(engine.plan.ends_with(&format!("plan {plan} as given")), "{}", engine.plan);
        let y = engine.spmm.spmm(&crate::Dense::from_vec(3, 2, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap()).unwrap();
        assert_eq!(y.as_slice(), &[1.0 * 5.0 + 2.0 * 1.0 + 3.0 * 3.0, 1.0 * 6.0 + 2.0 * 2.0 + 3.0 * 4.0]);
        let refused = spmm_engine(one_row(), &options(Some(1))).err().unwrap();
        assert!(matches!(refused, Error::Capacity { needed: 2, limit: 1, .. }), "{refused}");
    }
}
