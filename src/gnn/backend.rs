//! Where aggregation runs: the one place that turns a backend choice into an [`SpmmEngine`].

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::sparse::{Csr, Element};
use crate::spmm::{CpuSpmm, SpmmEngine};

/// The backend a user asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// PIM when an engine is available (hardware, else the simulator, as `upmem` resolves it), else the CPU,
    /// with a log line saying why.
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

/// How to build an aggregation engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// The backend asked for.
    pub backend: Backend,
    /// DPUs to use on PIM (default: the engine's choice).
    pub dpus: Option<u32>,
    /// Tasklets per DPU on PIM (default: the engine's choice).
    pub tasklets: Option<u32>,
}

/// An engine and the backend it runs on.
pub struct Engine<T: Element> {
    /// The engine, with the matrix resident.
    pub spmm: Box<dyn SpmmEngine<T>>,
    /// The backend it runs on (never [`Backend::Auto`]).
    pub backend: Backend,
    /// One line describing how it executes (printed as the plan).
    pub plan: String,
}

/// Builds the engine for `options.backend` with `matrix` resident in it, for every call to come.
pub fn spmm_engine<T: Element>(matrix: Csr<T>, options: &EngineOptions) -> Result<Engine<T>> {
    let pim_kind = match options.backend {
        Backend::Cpu => return Ok(cpu_engine(matrix)),
        Backend::Simulator => upmem::BackendKind::Simulator,
        Backend::Hardware => upmem::BackendKind::Hardware,
        Backend::Auto => upmem::BackendKind::Auto,
    };
    match pim_engine(&matrix, pim_kind, options) {
        Ok(engine) => Ok(engine),
        Err(Error::Unavailable { what, reason }) if options.backend == Backend::Auto => {
            log::warn!("{what} is not available ({reason}); aggregating on the CPU");
            Ok(cpu_engine(matrix))
        }
        Err(error) => Err(error),
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
    Engine { spmm: Box::new(CpuSpmm::new(matrix)), backend: Backend::Cpu, plan }
}

/// The PIM engine on `kind`'s DPUs. The PIM SpMM engine lands separately; until then this is the single place
/// that says so.
fn pim_engine<T: Element>(_matrix: &Csr<T>, kind: upmem::BackendKind, _options: &EngineOptions) -> Result<Engine<T>> {
    Err(Error::Unavailable {
        what: format!("PIM aggregation ({kind})"),
        reason: "PIM SpMM engine not available yet".into(),
    })
}
