//! What a [`super::PimSpmm`] tells its caller: per-phase wall and predicted times, the load balance across
//! DPUs, the simulator's modelled cycles and what it executed, printable as a small table.

use std::fmt;
use std::time::Duration;

use crate::pim::cost::{CallLayout, Prediction};
use crate::pim::plan::Plan;
use crate::spmm::Phase;

/// Nonzeros per DPU over the DPUs a plan uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadBalance {
    /// Fewest nonzeros on a DPU.
    pub min: usize,
    /// Median.
    pub median: usize,
    /// Most nonzeros on a DPU (it bounds the kernel time).
    pub max: usize,
}

impl LoadBalance {
    /// The balance of these per-DPU nonzero counts.
    pub fn of(counts: impl Iterator<Item = usize>) -> Self {
        let mut counts: Vec<usize> = counts.collect();
        counts.sort_unstable();
        match counts.len() {
            0 => LoadBalance::default(),
            n => LoadBalance { min: counts[0], median: counts[n / 2], max: counts[n - 1] },
        }
    }
}

/// The report of a [`super::PimSpmm`]: its plan, loading `A`, and the last call.
#[derive(Clone, Debug)]
pub struct PimReport {
    /// The plan run.
    pub plan: Plan,
    /// DPUs in the set (the plan may leave some idle).
    pub nr_dpus: usize,
    /// Nonzeros per DPU.
    pub balance: LoadBalance,
    /// Loading `A` onto the DPUs (once).
    pub load: Phase,
    /// Features of the last call (0 before the first).
    pub features: usize,
    /// Phases of the last call with their predicted hardware times: the kernel's from the simulator's modelled
    /// cycles when it ran there, the others from the cost model.
    pub phases: Vec<Phase>,
    /// The cost model's predicted hardware time of the last call (what the plan was chosen by).
    pub predicted: Prediction,
    /// The slowest DPU's modelled cycles and DMA cycles in the last call, on the simulator under a schedule that
    /// predicts the hardware's.
    pub modelled_cycles: Option<(u64, u64)>,
    /// What the simulator executed for the last call's launch, on the simulator under any schedule.
    pub simulated: Option<SimulatedWork>,
    /// Whether the last call took `Y` back in 16 bits ([`super::PimSpmm::y_in_16_bits`]).
    pub y_in_16_bits: bool,
    /// Whether the last call sent X as one row per nonzero ([`super::PimSpmm::x_per_nonzero`]).
    pub x_per_nonzero: bool,
}

/// What the simulator executed for one launch, over every DPU with work: what a call costs to simulate, whatever
/// the plan (feature groups repeat a tile's nonzero walk on several DPUs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimulatedWork {
    /// DPU instructions the tasklets executed.
    pub instructions: u64,
    /// DMA transfers (`mram_read` and `mram_write` calls).
    pub transfers: u64,
    /// The simulator's workers' wall time on the DPUs, summed: the simulation's CPU time, workers running in
    /// parallel.
    pub native: Duration,
}

impl SimulatedWork {
    /// Adds one DPU's launch.
    #[cfg(feature = "simulator")]
    pub(crate) fn add(&mut self, stats: &upmem::sim::DpuStats) {
        self.instructions += stats.instructions;
        self.transfers += stats.dma_transfers();
        self.native += stats.native_time;
    }

    /// The simulation's CPU time per transfer, the unit of the simulator's work on gather kernels such as SpMM.
    pub fn native_per_transfer(&self) -> Option<Duration> {
        (self.transfers > 0).then(|| self.native.div_f64(self.transfers as f64))
    }
}

impl PimReport {
    pub(crate) fn new(plan: Plan, nr_dpus: usize, balance: LoadBalance, load: Phase) -> Self {
        PimReport {
            plan,
            nr_dpus,
            balance,
            load,
            features: 0,
            phases: Vec::new(),
            predicted: Prediction::default(),
            modelled_cycles: None,
            simulated: None,
            y_in_16_bits: false,
            x_per_nonzero: false,
        }
    }

    pub(crate) fn record_call(
        &mut self,
        features: usize,
        phases: &[Phase],
        predicted: Prediction,
        cycles: Option<(u64, u64)>,
        simulated: Option<SimulatedWork>,
        layout: CallLayout,
    ) {
        self.y_in_16_bits = layout.y_16;
        self.x_per_nonzero = layout.x_per_nonzero;
        self.features = features;
        self.phases = phases.to_vec();
        self.predicted = predicted;
        self.modelled_cycles = cycles;
        self.simulated = simulated;
    }
}

impl fmt::Display for PimReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        writeln!(
            f,
            "plan {} on {} DPUs ({} used), F = {}{}{}",
            self.plan,
            self.nr_dpus,
            self.plan.dpus_used(),
            self.features,
            if self.x_per_nonzero { ", X per nonzero" } else { "" },
            if self.y_in_16_bits { ", Y in 16 bits" } else { "" }
        )?;
        writeln!(f, "  {:<8} {:>12} {:>16}", "phase", "wall ms", "predicted hw ms")?;
        for phase in std::iter::once(&self.load).chain(&self.phases) {
            let predicted = phase.predicted.map_or("-".to_owned(), |p| format!("{:.3}", ms(p)));
            writeln!(f, "  {:<8} {:>12.3} {:>16}", phase.name, ms(phase.wall), predicted)?;
        }
        writeln!(
            f,
            "  nonzeros per DPU: min {} / median {} / max {}",
            self.balance.min, self.balance.median, self.balance.max
        )?;
        if let Some(work) = self.simulated {
            writeln!(
                f,
                "  simulated: {} DPU instructions, {} DMA transfers, {:.3} ms of the workers' time",
                work.instructions,
                work.transfers,
                ms(work.native)
            )?;
        }
        match self.modelled_cycles {
            Some((cycles, dma)) => {
                writeln!(f, "  slowest DPU (simulator model): {cycles} cycles, {dma} of them DMA")?;
                // The kernel row above is the simulator's count; the cost model's estimate chose the plan.
                write!(f, "  kernel predicted by the cost model: {:.3} ms", ms(self.predicted.kernel))
            }
            None => write!(f, "  no modelled cycles (hardware, or a schedule that does not model them)"),
        }
    }
}
