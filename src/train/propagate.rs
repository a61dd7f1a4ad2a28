//! Aggregation in both directions for training: `M X` forward and `M^T dY` backward, each through an
//! [`Aggregator`] with its matrix resident in the engine for the whole run, and the time of every step
//! accounted to a [`Stage`].

use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::distributed::HaloExchange;
use crate::error::{Error, Result};
use crate::gnn::{Aggregator, Backend, Decision, Dtype, EngineOptions, DEFAULT_DPUS};
use crate::pim::LoadBalance;
use crate::sparse::{Csr, Dense};
use crate::spmm::Phase;

/// Where the time of a training epoch goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum Stage {
    /// `M X` in the forward pass (the engine's compute and merge, without transfers).
    #[strum(to_string = "forward aggregation")]
    ForwardAggregation,
    /// `M^T dY` in the backward pass (the engine's compute and merge, without transfers).
    #[strum(to_string = "backward aggregation")]
    BackwardAggregation,
    /// Attention's own steps (GAT): the scores, the softmax and its gradient, and the SDDMM of the backward pass
    /// (its compute; its transfers are [`Stage::Transfers`]).
    Attention,
    /// Features, values and gradients to and from the DPUs (the engine's "send X", "send values", "send P and
    /// Q" and "gather").
    Transfers,
    /// GEMMs, biases, ReLU and the loss on the CPU.
    Dense,
    /// The optimiser's update on the CPU.
    #[strum(to_string = "optimiser")]
    Optimizer,
    /// Between the ranks of a distributed run: the halo's feature rows before each forward aggregation, its
    /// gradient rows back after each backward one, and the sum of the gradients (none on one server).
    #[strum(to_string = "between ranks")]
    Communication,
}

impl Stage {
    /// Every stage, in table order.
    pub const ALL: [Stage; 7] = [
        Stage::ForwardAggregation,
        Stage::BackwardAggregation,
        Stage::Attention,
        Stage::Transfers,
        Stage::Dense,
        Stage::Optimizer,
        Stage::Communication,
    ];
}

/// The time spent in one [`Stage`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTime {
    /// Wall time on this machine.
    pub wall: Duration,
    /// Predicted time on UPMEM hardware, for the steps that ran on PIM (none on the CPU backend).
    pub predicted: Option<Duration>,
}

impl StageTime {
    /// The time this stage would take with aggregation on UPMEM hardware: the prediction where there is one,
    /// else the wall time (host-side steps run on the same CPU either way).
    pub fn on_hardware(&self) -> Duration {
        self.predicted.unwrap_or(self.wall)
    }

    fn add(&mut self, wall: Duration, predicted: Option<Duration>) {
        self.wall += wall;
        if let Some(predicted) = predicted {
            self.predicted = Some(self.predicted.unwrap_or_default() + predicted);
        }
    }
}

/// Time per [`Stage`], summed over the steps recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    stages: [StageTime; Stage::ALL.len()],
}

impl Timings {
    /// The time of `stage`.
    pub fn get(&self, stage: Stage) -> StageTime {
        self.stages[stage as usize]
    }

    /// Wall time over every stage.
    pub fn wall(&self) -> Duration {
        self.stages.iter().map(|s| s.wall).sum()
    }

    /// Time over every stage with aggregation on UPMEM hardware ([`StageTime::on_hardware`]), when some
    /// stage ran on PIM (none on the CPU backend).
    pub fn on_hardware(&self) -> Option<Duration> {
        let modelled = self.stages.iter().any(|s| s.predicted.is_some());
        modelled.then(|| self.stages.iter().map(StageTime::on_hardware).sum())
    }

    pub(crate) fn record(&mut self, stage: Stage, wall: Duration, predicted: Option<Duration>) {
        self.stages[stage as usize].add(wall, predicted);
    }

    /// The engine's phases of one aggregation: transfers to [`Stage::Transfers`], the rest to `stage`.
    fn record_phases(&mut self, stage: Stage, phases: &[Phase]) {
        for phase in phases {
            let transfer = matches!(phase.name.as_ref(), "send X" | "send values" | "send P and Q" | "gather");
            let stage = if transfer { Stage::Transfers } else { stage };
            self.record(stage, phase.wall, phase.predicted);
        }
    }
}

/// How the backward aggregation `M^T dY` runs.
enum Transposed {
    /// `M` is symmetric: the forward engine's resident matrix serves both directions.
    Symmetric,
    /// `M^T` resident in an engine of its own.
    Resident(Box<Aggregator>),
    /// The model never needs `M^T dY` (one layer that aggregates before transforming).
    Unneeded,
}

/// Aggregates forward and backward with engines built once, and times every step.
pub struct Propagator {
    forward: Aggregator,
    transposed: Transposed,
    /// On a rank of a distributed run: how the halo's rows come in before `M X` and go back after `M^T dY`.
    halo: Option<Box<dyn HaloExchange>>,
    /// With values per call (attention): for each nonzero of the resident transpose, its nonzero in `M`.
    transpose_order: Option<Vec<u32>>,
    /// The transpose's values of the last backward call, in its nonzero order (reused).
    transposed_values: Vec<f32>,
    timings: Timings,
}

impl Propagator {
    /// Engines for `matrix` and, when `matrix` is not symmetric and `backward_widths` is not empty, for its
    /// transpose, on the backend `options` asks for (two PIM engines share the DPUs it asks for, half each). The widths are those of the calls to come in each
    /// direction (they choose the PIM plan; `options.widths` is ignored). A symmetric matrix (GCN's and GIN's
    /// on an undirected graph) is detected, not assumed, and then one resident matrix serves both directions.
    pub fn new(
        matrix: Csr<f32>,
        forward_widths: &[usize],
        backward_widths: &[usize],
        options: &EngineOptions,
    ) -> Result<Self> {
        let with_widths = |widths: Vec<usize>| EngineOptions { widths, ..options.clone() };
        let (forward, transposed) = if backward_widths.is_empty() {
            (Aggregator::new(matrix, Dtype::F32, &with_widths(forward_widths.to_vec()))?, Transposed::Unneeded)
        } else if is_symmetric(&matrix) {
            let widths = forward_widths.iter().chain(backward_widths).copied().collect();
            (Aggregator::new(matrix, Dtype::F32, &with_widths(widths))?, Transposed::Symmetric)
        } else {
            let transpose = matrix.transpose();
            let (forward_dpus, backward_dpus) = split_dpus(options)?;
            let forward_options = EngineOptions { dpus: forward_dpus, ..with_widths(forward_widths.to_vec()) };
            let backward_options = EngineOptions { dpus: backward_dpus, ..with_widths(backward_widths.to_vec()) };
            let forward = Aggregator::new(matrix, Dtype::F32, &forward_options)?;
            let backward = Aggregator::new(transpose, Dtype::F32, &backward_options)?;
            (forward, Transposed::Resident(Box::new(backward)))
        };
        Ok(Propagator {
            forward,
            transposed,
            halo: None,
            transpose_order: None,
            transposed_values: Vec::new(),
            timings: Timings::default(),
        })
    }

    /// Makes these engines a rank's in distributed training: they hold its block of the aggregation matrix (its
    /// own nodes' rows, over the columns of its own nodes and then its halo's; a block is never square while it
    /// has a halo, so its transpose has an engine of its own). Before each `M X`, `exchange` brings the halo's
    /// rows; after each `M^T dY`, it sends the halo's gradient rows back to their owners and adds those the
    /// other ranks send back. Attention's calls take and give rows over the block's columns instead
    /// ([`Propagator::extend_with_halo`], [`Propagator::return_halo`]).
    pub fn with_halo(mut self, exchange: Box<dyn HaloExchange>) -> Result<Self> {
        if exchange.local_rows() != self.forward.shape().0 {
            return Err(Error::shape("halo exchange: the rank's rows", self.forward.shape().0, exchange.local_rows()));
        }
        self.halo = Some(exchange);
        Ok(self)
    }

    /// Engines for a matrix whose values change at every call (attention's) while its structure stays: `matrix`
    /// and its transpose, each resident with its structure kept on the host ([`Aggregator::weighted`]), sharing
    /// the DPUs asked for. The values are never symmetric, so the transpose always has an engine of its own.
    pub fn weighted(
        matrix: Csr<f32>,
        forward_widths: &[usize],
        backward_widths: &[usize],
        options: &EngineOptions,
    ) -> Result<Self> {
        let with_widths = |widths: &[usize]| EngineOptions { widths: widths.to_vec(), ..options.clone() };
        let (forward_dpus, backward_dpus) = split_dpus(options)?;
        let order = transpose_order(&matrix)?;
        let transpose = matrix.transpose();
        let forward_options = EngineOptions { dpus: forward_dpus, ..with_widths(forward_widths) };
        let backward_options = EngineOptions { dpus: backward_dpus, ..with_widths(backward_widths) };
        let forward = Aggregator::weighted(matrix, Dtype::F32, &forward_options)?;
        let backward = Aggregator::weighted(transpose, Dtype::F32, &backward_options)?;
        Ok(Propagator {
            forward,
            transposed: Transposed::Resident(Box::new(backward)),
            halo: None,
            transpose_order: Some(order),
            transposed_values: Vec::new(),
            timings: Timings::default(),
        })
    }

    /// `M'_h X_h` for every head `h` in one call, for `M'_h` the structure with head `h`'s values
    /// (`values[k * heads + h]`, in its nonzero order) and `X_h` the `h`-th of `heads` groups of `x`'s columns
    /// ([`Aggregator::aggregate_heads`]); see [`Propagator::weighted`]. On a rank, `x` is over the block's
    /// columns ([`Propagator::extend_with_halo`]).
    pub fn aggregate_heads(&mut self, values: &[f32], heads: usize, x: &Dense<f32>) -> Result<Dense<f32>> {
        let y = self.forward.aggregate_heads(values, heads, x)?;
        self.timings.record_phases(Stage::ForwardAggregation, self.forward.last_phases());
        Ok(y)
    }

    /// `M'_h^T dy_h` for every head, with `values` as for [`Propagator::aggregate_heads`] (in `M`'s nonzero
    /// order), on the resident transpose: a row per column of `M` (on a rank, the halo's rows stay: see
    /// [`Propagator::return_halo`]).
    pub fn aggregate_transposed_heads(&mut self, values: &[f32], heads: usize, dy: &Dense<f32>) -> Result<Dense<f32>> {
        let (Some(order), Transposed::Resident(engine)) = (&self.transpose_order, &mut self.transposed) else {
            return Err(Error::invalid("backward aggregation with new values", "the engines were built without them"));
        };
        crate::spmm::check_head_values(order.len(), values.len(), heads)?;
        let started = Instant::now();
        self.transposed_values.resize(values.len(), 0.0);
        self.transposed_values.par_chunks_mut(heads).zip(order.par_iter()).for_each(|(value, &at)| {
            let at = at as usize * heads;
            value.copy_from_slice(&values[at..at + heads]);
        });
        self.timings.record(Stage::Dense, started.elapsed(), None);
        let dx = engine.aggregate_heads(&self.transposed_values, heads, dy)?;
        self.timings.record_phases(Stage::BackwardAggregation, engine.last_phases());
        Ok(dx)
    }

    /// Runs `step` on the forward matrix's structure (see [`Propagator::weighted`]), timed as [`Stage::Attention`].
    pub fn with_structure<T>(&mut self, step: impl FnOnce(&Csr<f32>) -> Result<T>) -> Result<T> {
        let started = Instant::now();
        let result = step(self.forward.structure()?)?;
        self.timings.record(Stage::Attention, started.elapsed(), None);
        Ok(result)
    }

    /// SDDMM over the forward matrix's structure on its engine: for each nonzero `(i, j)`, `<p_i, q_j>`
    /// ([`Aggregator::sddmm`]), timed as [`Stage::Attention`] (its transfers as [`Stage::Transfers`]).
    pub fn sddmm(&mut self, p: &Dense<f32>, q: &Dense<f32>) -> Result<Vec<f32>> {
        let scores = self.forward.sddmm(p, q)?;
        self.timings.record_phases(Stage::Attention, self.forward.last_phases());
        Ok(scores)
    }

    /// `M X` (on a rank, `x` holds its own rows, extended with the halo's first).
    pub fn aggregate(&mut self, x: &Dense<f32>) -> Result<Dense<f32>> {
        let extended = self.extend_with_halo(x)?;
        let y = self.forward.aggregate(extended.as_ref().unwrap_or(x))?;
        self.timings.record_phases(Stage::ForwardAggregation, self.forward.last_phases());
        Ok(y)
    }

    /// On a rank ([`Propagator::with_halo`]), `x` (its own rows) followed by the halo's rows, timed as
    /// [`Stage::Communication`]; `None` elsewhere, where `x` is already every column's. Every rank calls it at
    /// the same time.
    pub fn extend_with_halo(&mut self, x: &Dense<f32>) -> Result<Option<Dense<f32>>> {
        let Some(exchange) = &mut self.halo else { return Ok(None) };
        let started = Instant::now();
        let extended = exchange.extend(x)?;
        self.timings.record(Stage::Communication, started.elapsed(), None);
        Ok(Some(extended))
    }

    /// On a rank, the way back of [`Propagator::extend_with_halo`] for gradients: `extended` holds a row per
    /// column of the block, the halo's rows go back to their owners, and the rank's own rows come back with
    /// what the other ranks returned added ([`HaloExchange::reduce`]), timed as [`Stage::Communication`]; else
    /// `extended` itself. Every rank calls it at the same time.
    pub fn return_halo(&mut self, extended: Dense<f32>) -> Result<Dense<f32>> {
        let Some(exchange) = &mut self.halo else { return Ok(extended) };
        let started = Instant::now();
        let local = exchange.reduce(extended)?;
        self.timings.record(Stage::Communication, started.elapsed(), None);
        Ok(local)
    }

    /// `M^T dy`; an error when the propagator was built for no backward call.
    pub fn aggregate_transposed(&mut self, dy: &Dense<f32>) -> Result<Dense<f32>> {
        let engine = match &mut self.transposed {
            Transposed::Symmetric => &mut self.forward,
            Transposed::Resident(engine) => engine,
            Transposed::Unneeded => {
                return Err(Error::invalid("backward aggregation", "the engines were built for no backward call"))
            }
        };
        let dx = engine.aggregate(dy)?;
        self.timings.record_phases(Stage::BackwardAggregation, engine.last_phases());
        self.return_halo(dx)
    }

    /// Runs `step` on the CPU, timed as [`Stage::Dense`].
    pub fn dense<T>(&mut self, step: impl FnOnce() -> Result<T>) -> Result<T> {
        self.timed(Stage::Dense, step)
    }

    /// Runs `step` on the CPU, timed as `stage`.
    pub fn timed<T>(&mut self, stage: Stage, step: impl FnOnce() -> Result<T>) -> Result<T> {
        let started = Instant::now();
        let result = step()?;
        self.timings.record(stage, started.elapsed(), None);
        Ok(result)
    }

    /// The time of every step so far.
    pub fn timings(&self) -> &Timings {
        &self.timings
    }

    /// Forgets the time recorded so far.
    pub fn reset_timings(&mut self) {
        self.timings = Timings::default();
    }

    /// Whether the backward pass runs on the forward engine's matrix (it is symmetric) rather than on a
    /// resident transpose of its own.
    pub fn shares_matrix(&self) -> bool {
        matches!(self.transposed, Transposed::Symmetric)
    }

    /// The backend aggregation runs on.
    pub fn backend(&self) -> Backend {
        self.forward.backend()
    }

    /// The model's pick for the forward engine's matrix, for [`Backend::Auto`] and [`Backend::Split`].
    pub fn decision(&self) -> Option<&Decision> {
        self.forward.decision()
    }

    /// How the forward engine executes, in one line (and the backward engine's, when it has its own).
    pub fn plan(&self) -> String {
        match &self.transposed {
            Transposed::Resident(backward) => format!("{}; backward: {}", self.forward.plan(), backward.plan()),
            Transposed::Symmetric => {
                format!("{}; backward on the same resident matrix (symmetric)", self.forward.plan())
            }
            Transposed::Unneeded => self.forward.plan().to_owned(),
        }
    }

    /// Nonzeros per DPU of the forward engine, on PIM.
    pub fn balance(&self) -> Option<LoadBalance> {
        self.forward.balance()
    }
}

/// The DPUs of the forward and the backward engine when each holds its own matrix: the DPUs asked for (or
/// [`DEFAULT_DPUS`]) shared between them, so that on hardware the second set finds DPUs the first left free.
fn split_dpus(options: &EngineOptions) -> Result<(Option<u32>, Option<u32>)> {
    if options.backend == Backend::Cpu {
        return Ok((options.dpus, options.dpus));
    }
    let total = options.dpus.unwrap_or(DEFAULT_DPUS);
    if total < 2 {
        return Err(Error::Capacity {
            what: "DPUs for a non-symmetric aggregation matrix and its transpose, each resident on its own DPUs".into(),
            needed: 2,
            limit: u64::from(total),
        });
    }
    Ok((Some(total - total / 2), Some(total / 2)))
}

/// For each nonzero of `matrix`'s transpose (in its row-by-row order), the index of the same entry in `matrix`.
fn transpose_order(matrix: &Csr<f32>) -> Result<Vec<u32>> {
    let nnz = matrix.nnz();
    if i32::try_from(nnz).is_err() {
        return Err(Error::Capacity {
            what: "nonzeros of a matrix with values per call".into(),
            needed: nnz as u64,
            limit: i32::MAX as u64,
        });
    }
    let positions = Csr::new(
        matrix.nrows(),
        matrix.ncols(),
        matrix.row_ptr().to_vec(),
        matrix.col_idx().to_vec(),
        (0..nnz as i32).collect(),
    )?;
    Ok(positions.transpose().values().iter().map(|&at| at as u32).collect())
}

/// Whether `matrix` equals its transpose, entry for entry (repeated entries counted as often as they occur).
pub fn is_symmetric(matrix: &Csr<f32>) -> bool {
    if matrix.nrows() != matrix.ncols() {
        return false;
    }
    let transpose = matrix.transpose();
    let sorted_row = |m: &Csr<f32>, row: usize| {
        let (cols, values) = m.row(row);
        let mut entries: Vec<(u32, u32)> = cols.iter().zip(values).map(|(&c, v)| (c, v.to_bits())).collect();
        entries.sort_unstable();
        entries
    };
    matrix.row_ptr() == transpose.row_ptr()
        && (0..matrix.nrows()).all(|row| sorted_row(matrix, row) == sorted_row(&transpose, row))
}

#[cfg(test)]
mod tests {
    use upmem::BackendKind;

    use super::*;

    #[test]
    fn symmetry_is_detected_entry_for_entry() {
        let csr = |rows: Vec<u32>, cols: Vec<u32>, values: Vec<f32>| {
            crate::sparse::Coo::new(3, 3, rows, cols, values).unwrap().to_csr()
        };
        assert!(is_symmetric(&csr(vec![0, 1, 2, 2], vec![1, 0, 2, 2], vec![0.5, 0.5, 1.0, 1.0])));
        assert!(!is_symmetric(&csr(vec![0, 1], vec![1, 0], vec![0.5, 0.25])));
        assert!(!is_symmetric(&csr(vec![0, 1], vec![1, 2], vec![1.0, 1.0])));
    }

    #[test]
    fn a_matrix_and_its_transpose_share_the_dpus_asked_for() {
        let options = |backend, dpus| EngineOptions { backend, dpus, ..EngineOptions::default() };
        assert_eq!(split_dpus(&options(Backend::Pim(BackendKind::Simulator), Some(5))).unwrap(), (Some(3), Some(2)));
        let half = DEFAULT_DPUS / 2;
        assert_eq!(split_dpus(&options(Backend::Pim(BackendKind::Hardware), None)).unwrap(), (Some(half), Some(half)));
        assert_eq!(split_dpus(&options(Backend::Cpu, None)).unwrap(), (None, None));
        let one = split_dpus(&options(Backend::Pim(BackendKind::Simulator), Some(1)));
        assert!(matches!(one, Err(Error::Capacity { needed: 2, limit: 1, .. })), "{one:?}");
    }
}
