//! Where aggregation runs: the one place that turns a backend choice into an [`SpmmEngine`].

use std::fmt;
use std::str::FromStr;

use upmem::DpuSet;

use crate::cost::{self, Choice, Costed, HardwareModel};
use crate::error::{Error, Result};
use crate::pim::{plan_target, LoadBalance, PimElement, PimSpmm};
use crate::sparse::{Csr, Element};
use crate::spmm::{CpuSpmm, SpmmEngine};

/// The backend a user asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// PIM: UPMEM hardware when present, else the simulator, as `upmem` resolves it.
    #[default]
    Auto,
    /// PIM on the bundled DPU simulator.
    Simulator,
    /// PIM on UPMEM hardware; never falls back.
    Hardware,
    /// The host CPU on all cores.
    Cpu,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Auto => "auto",
            Backend::Simulator => "sim",
            Backend::Hardware => "hw",
            Backend::Cpu => "cpu",
        })
    }
}

impl FromStr for Backend {
    type Err = Error;

    /// `auto`, `sim`, `hw` or `cpu`.
    fn from_str(text: &str) -> Result<Self> {
        match text {
            "auto" => Ok(Backend::Auto),
            "sim" => Ok(Backend::Simulator),
            "hw" => Ok(Backend::Hardware),
            "cpu" => Ok(Backend::Cpu),
            other => Err(Error::invalid("backend", format!("`{other}` is not one of auto, sim, hw, cpu"))),
        }
    }
}

/// DPUs a PIM engine uses when `--dpus` is not given: the simulator simulates this many, hardware uses all it
/// has up to this many.
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
    /// DPUs to use on PIM (default: [`DEFAULT_DPUS`]; on hardware, all present up to that).
    pub dpus: Option<u32>,
    /// Tasklets per DPU on PIM (default: [`DEFAULT_TASKLETS`]).
    pub tasklets: Option<u32>,
    /// Feature widths of the calls to come, one per aggregation of a forward pass
    /// ([`Model::aggregation_widths`](super::Model::aggregation_widths)). The PIM engine keeps one plan for
    /// every call and picks the one predicted fastest over all of them; empty plans for one call of
    /// [`DEFAULT_PLAN_WIDTH`].
    pub widths: Vec<usize>,
}

/// An engine and the backend it runs on.
pub struct Engine<T: Element> {
    /// The engine, with the matrix resident.
    pub spmm: Box<dyn SpmmEngine<T>>,
    /// The backend it runs on (never [`Backend::Auto`]).
    pub backend: Backend,
    /// One line describing how it executes (printed as the plan).
    pub plan: String,
    /// Nonzeros per DPU, on PIM.
    pub balance: Option<LoadBalance>,
}

/// Builds the engine for `options.backend` with `matrix` resident in it, for every call to come.
///
/// [`Backend::Auto`] runs on PIM: UPMEM hardware when present, else the simulator; an explicit backend never
/// falls back.
pub fn spmm_engine<T: PimElement>(matrix: Csr<T>, options: &EngineOptions) -> Result<Engine<T>> {
    let kind = match options.backend {
        Backend::Cpu => return Ok(cpu_engine(matrix)),
        Backend::Simulator => upmem::BackendKind::Simulator,
        Backend::Hardware => upmem::BackendKind::Hardware,
        Backend::Auto => upmem::BackendKind::Auto,
    };
    pim_engine(matrix, kind, options)
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
    Engine { spmm: Box::new(CpuSpmm::new(matrix)), backend: Backend::Cpu, plan, balance: None }
}

/// The PIM engine on `kind`'s DPUs, `matrix` loaded once with the plan predicted fastest over
/// `options.widths`. On error the DPUs are released (the set is dropped) before returning.
fn pim_engine<T: PimElement>(matrix: Csr<T>, kind: upmem::BackendKind, options: &EngineOptions) -> Result<Engine<T>> {
    let asked = options.dpus.unwrap_or(DEFAULT_DPUS);
    if asked == 0 {
        return Err(Error::invalid("DPUs", "at least 1 DPU is needed"));
    }
    let tasklets = options.tasklets.unwrap_or(DEFAULT_TASKLETS);
    let mut builder = DpuSet::builder();
    builder.backend(kind);
    // Hardware without --dpus takes every DPU present (asking for more than that fails); the plan then uses
    // up to DEFAULT_DPUS of them. The simulator simulates exactly the DPUs asked for.
    let all_present = options.dpus.is_none()
        && match kind {
            upmem::BackendKind::Hardware => true,
            upmem::BackendKind::Auto => upmem::hardware_present(),
            upmem::BackendKind::Simulator => false,
        };
    if !all_present {
        builder.dpus(asked);
    }
    let set = builder.allocate()?;
    let backend = match set.backend() {
        upmem::BackendKind::Hardware => Backend::Hardware,
        _ => Backend::Simulator,
    };
    let nr_dpus = set.nr_dpus().min(asked as usize) as u32;
    let widths = if options.widths.is_empty() { vec![DEFAULT_PLAN_WIDTH] } else { options.widths.clone() };
    let model = HardwareModel::default();
    let choice = cost::choose_for_calls(&model, &matrix, &widths, nr_dpus, tasklets, plan_target(set.backend()))?;
    let plan = describe::<T>(&choice, &widths, set.nr_dpus(), set.backend());
    let chosen = choice.best;
    let engine = PimSpmm::with_model(set, matrix, chosen.plan, model)?;
    let balance = Some(engine.report().balance);
    Ok(Engine { spmm: Box::new(engine), backend, plan, balance })
}

/// The plan line of a PIM engine: the DPUs, the plan and its predicted time over the calls, and the hardware's
/// choice when the simulator runs another plan (see [`cost::Target::Simulator`]).
fn describe<T: PimElement>(choice: &Choice, widths: &[usize], nr_dpus: usize, kind: upmem::BackendKind) -> String {
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
    format!(
        "PIM SpMM on {nr_dpus} {kind} DPUs ({} used), {}, plan {} (predicted {:.3} ms on hardware over calls of \
         width {widths:?}{budgeted})",
        chosen.plan.dpus_used(),
        T::NAME,
        chosen.plan,
        ms(chosen),
    )
}
