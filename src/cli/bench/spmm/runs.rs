//! `pimgnn bench spmm`: the CPU SpMM against PIM SpMM on the simulator (or hardware) at several feature
//! widths, with the chosen plan, its predicted hardware time next to PyGim's default plan's, the phase
//! breakdown and the load balance. On the simulator each width runs once per requested tasklet schedule
//! (the modelled default, and `fast` for raw speed), one row each.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use comfy_table::Table;
#[cfg(feature = "simulator")]
use upmem::sim::{Schedule, SimConfig};
#[cfg(feature = "simulator")]
use upmem::Topology;
use upmem::{BackendKind, DpuSet};

use pimgnn::gnn::Decision;
use pimgnn::pim::auto;
use pimgnn::pim::cost::{self, Costed, HardwareModel, Prediction, Target};
use pimgnn::pim::plan::Plan;
use pimgnn::pim::{self, PimReport, PimSpmm};
use pimgnn::{compare, CpuSpmm, Csr, Error, Result, SpmmEngine};

use super::graph;
use crate::cli::table;

/// The plan a benchmark runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanChoice {
    /// The cost model's choice at each feature width.
    Auto,
    /// PyGim's default: [`Plan::pygim`] with the fewest groups that fit.
    PyGim,
    /// This plan at every width.
    Fixed(Plan),
}

impl std::str::FromStr for PlanChoice {
    type Err = Error;

    /// `auto`, `pygim`, or a plan as [`Plan`] displays it.
    fn from_str(text: &str) -> Result<Self> {
        match text {
            "auto" => Ok(PlanChoice::Auto),
            "pygim" => Ok(PlanChoice::PyGim),
            plan => plan.parse().map(PlanChoice::Fixed),
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct SpmmBenchConfig {
    /// A Matrix Market file or a CSV edge list; `None`: an R-MAT graph of 100,000 nodes and 1,000,000 edges.
    pub graph: Option<PathBuf>,
    /// Feature widths.
    pub features: Vec<usize>,
    /// DPUs to allocate.
    pub dpus: u32,
    /// Tasklets per DPU.
    pub tasklets: u32,
    /// The plan.
    pub plan: PlanChoice,
    /// Where the DPUs are.
    pub backend: BackendKind,
    /// The simulator's tasklet schedules, one row each per width (on hardware, one row: the first).
    #[cfg(feature = "simulator")]
    pub schedules: Vec<Schedule>,
}

/// One feature width's results.
#[derive(Clone, Debug)]
pub struct SpmmBenchRow {
    /// Features.
    pub features: usize,
    /// The simulator's schedule (`None` on hardware).
    #[cfg(feature = "simulator")]
    pub schedule: Option<Schedule>,
    /// The CPU SpMM's wall time (best of three).
    pub cpu: Duration,
    /// The PIM call's wall time (second call: A already resident).
    pub pim: Duration,
    /// PyGim's default plan's predicted hardware time on the same input, when it fits.
    pub pygim: Option<Prediction>,
    /// The fastest predicted plan for hardware (the one run unless the simulator's memory budget forbids it).
    pub fastest: Costed,
    /// The PIM engine's report of that call.
    pub report: PimReport,
    /// What `--backend auto` picks at this width on the modelled server, with the CPU timed on its sample.
    pub decision: Decision,
    /// Largest difference from the CPU result, relative to the largest CPU value
    /// ([`compare::max_relative_difference`]: a NaN or an infinity in either fails the run instead).
    pub max_relative_error: f32,
}

/// Loads the graph the configuration names, or generates the default R-MAT graph.
pub fn load_graph(config: &SpmmBenchConfig) -> Result<Csr<f32>> {
    match &config.graph {
        Some(path) => graph::read_edges(path),
        None => Ok(pimgnn::graph::rmat(100_000, 1_000_000, 42)),
    }
}

/// Runs the benchmark on `a` at each feature width.
pub fn run(config: &SpmmBenchConfig, a: &Csr<f32>) -> Result<Vec<SpmmBenchRow>> {
    let model = HardwareModel::configured()?;
    let mut cpu = CpuSpmm::new(a.clone());
    let mut rows = Vec::new();
    for &features in &config.features {
        let x = graph::features(a.ncols(), features, 7);
        let mut cpu_best = Duration::MAX;
        let mut expected = None;
        for _ in 0..3 {
            let started = Instant::now();
            expected = Some(cpu.spmm(&x)?);
            cpu_best = cpu_best.min(started.elapsed());
        }
        let expected = expected.expect("three CPU runs");
        let decision = auto::decide(&model, a, &[features], config.dpus, config.tasklets)?;
        let mut chosen = None;
        for schedule in schedules(config) {
            let set = allocate(config, schedule)?;
            let on_simulator = set.backend() == BackendKind::Simulator;
            let (plan, pygim, fastest) = match chosen {
                Some(chosen) => chosen,
                None => *chosen.insert(choose_plan(config, a, features, &set, &model)?),
            };
            let mut engine = PimSpmm::new(set, a.clone(), plan)?;
            engine.spmm(&x)?;
            let started = Instant::now();
            let y = engine.spmm(&x)?;
            let pim = started.elapsed();
            rows.push(SpmmBenchRow {
                features,
                #[cfg(feature = "simulator")]
                schedule: on_simulator.then_some(schedule),
                cpu: cpu_best,
                pim,
                pygim,
                fastest,
                report: engine.report().clone(),
                decision: decision.clone(),
                max_relative_error: compare::max_relative_difference(
                    &format!("PIM SpMM result at {features} features, against the CPU's"),
                    &y,
                    &expected,
                )?,
            });
            if !on_simulator {
                break;
            }
        }
    }
    Ok(rows)
}

/// The schedules each width runs under: the configuration's.
#[cfg(feature = "simulator")]
fn schedules(config: &SpmmBenchConfig) -> Vec<Schedule> {
    config.schedules.clone()
}

/// Without the simulator each width runs once, on hardware.
#[cfg(not(feature = "simulator"))]
fn schedules(_config: &SpmmBenchConfig) -> [(); 1] {
    [()]
}

/// The configuration's DPUs; on the simulator, a machine of ranks of 64 DPUs running `schedule`, at most a full
/// server (a larger set is refused, as on the hardware).
#[cfg(feature = "simulator")]
fn allocate(config: &SpmmBenchConfig, schedule: Schedule) -> Result<DpuSet> {
    let machine = SimConfig { schedule, ..SimConfig::new(Topology::server_ranks_for(config.dpus)) };
    Ok(DpuSet::builder().dpus(config.dpus).backend(config.backend).simulator(machine).allocate()?)
}

/// The configuration's DPUs.
#[cfg(not(feature = "simulator"))]
fn allocate(config: &SpmmBenchConfig, _schedule: ()) -> Result<DpuSet> {
    Ok(DpuSet::builder().dpus(config.dpus).backend(config.backend).allocate()?)
}

/// The table's cell for the row's simulator schedule.
#[cfg(feature = "simulator")]
fn schedule_cell(row: &SpmmBenchRow) -> String {
    row.schedule.map_or("- (hardware)".into(), |schedule| schedule.to_string())
}

/// Without the simulator every row ran on hardware.
#[cfg(not(feature = "simulator"))]
fn schedule_cell(_row: &SpmmBenchRow) -> String {
    "- (hardware)".into()
}

/// The plan to run at `features` (checked against the simulator's memory budget), PyGim's default plan's
/// prediction, and the fastest plan for hardware.
fn choose_plan(
    config: &SpmmBenchConfig,
    a: &Csr<f32>,
    features: usize,
    set: &DpuSet,
    model: &HardwareModel,
) -> Result<(Plan, Option<Prediction>, Costed)> {
    let target = pim::plan_target(set.backend());
    let choice = cost::choose(model, a, features, set.nr_dpus() as u32, config.tasklets, target)?;
    let plan = match config.plan {
        PlanChoice::Auto => choice.best.plan,
        PlanChoice::PyGim => choice.pygim.map(|costed| costed.plan).ok_or_else(|| {
            Error::invalid("plan pygim", format!("no PyGim plan fits the DPUs' MRAM at {features} features"))
        })?,
        PlanChoice::Fixed(plan) => plan,
    };
    if let Target::Simulator { host_budget: budget, .. } = target {
        let needed = cost::simulator_host_bytes(model, a, &plan, features, config.dpus);
        if needed > budget {
            return Err(Error::Capacity {
                what: format!("host memory for the simulated DPUs' MRAM under plan {plan} at {features} features"),
                needed,
                limit: budget,
            });
        }
    }
    Ok((plan, choice.pygim.map(|costed| costed.prediction), choice.fastest))
}

/// The results as a table, one row per feature width.
pub fn table(rows: &[SpmmBenchRow]) -> Table {
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
    let mut table = table::with_header([
        "F",
        "CPU ms",
        "PIM ms",
        "PIM / CPU",
        "sim schedule",
        "plan run",
        "predicted hw ms",
        "hardware choice (if not run), predicted ms",
        "PyGim default predicted ms",
        "auto's pick: CPU (sampled) / PIM / split ms",
        "phases wall ms (predicted hw); load A once",
        "nnz per DPU min / median / max",
        "slowest DPU cycles (sim)",
        "max rel. error",
    ]);
    for row in rows {
        let report = &row.report;
        let phases = std::iter::once(&report.load)
            .chain(&report.phases)
            .map(|phase| format!("{} {} ({})", phase.name, ms(phase.wall), phase.predicted.map_or("-".into(), ms)))
            .collect::<Vec<_>>()
            .join("\n");
        let balance = report.balance;
        table.add_row([
            row.features.to_string(),
            ms(row.cpu),
            ms(row.pim),
            format!("{:.2}", row.pim.as_secs_f64() / row.cpu.as_secs_f64()),
            schedule_cell(row),
            report.plan.to_string().replace(',', "\n"),
            format!("{:.3}", report.predicted.total().as_secs_f64() * 1e3),
            if row.fastest.plan == report.plan {
                "the plan run".to_owned()
            } else {
                format!(
                    "{}\n{:.3}",
                    row.fastest.plan.to_string().replace(',', "\n"),
                    row.fastest.prediction.total().as_secs_f64() * 1e3
                )
            },
            row.pygim.map_or("does not fit".into(), |p| format!("{:.3}", p.total().as_secs_f64() * 1e3)),
            pick_cell(&row.decision),
            phases,
            format!("{} / {} / {}", balance.min, balance.median, balance.max),
            report.modelled_cycles.map_or("-".into(), |(cycles, dma)| format!("{cycles}\n({dma} DMA)")),
            format!("{:.1e}", row.max_relative_error),
        ]);
    }
    table::fit_to_terminal(&mut table);
    table
}

/// What `auto` picks and the three predictions it chose from, the split's with the DPUs' share of the nonzeros.
fn pick_cell(decision: &Decision) -> String {
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
    let split = decision
        .split
        .map_or("no split".to_owned(), |split| format!("{} ({:.0}% PIM)", ms(split.total()), split.pim_share * 1e2));
    format!("{}\n{} / {} / {split}", decision.pick_name(), ms(decision.cpu.predicted), ms(decision.pim))
}

/// The benchmark's runs on a small graph: every feature width gives a row whose PIM result matches the CPU, whose
/// plan beats or equals PyGim's default in prediction, and the table prints them.
#[cfg(all(test, feature = "simulator"))]
mod tests {
    use super::*;

    #[test]
    fn bench_rows_match_the_cpu_and_print() {
        let dir = tempfile::tempdir().unwrap();
        let graph = dir.path().join("edges.csv");
        let edges: String = (0..500).map(|i| format!("{},{}\n{},{}\n", i, (i * 37) % 500, i, (i + 1) % 500)).collect();
        std::fs::write(&graph, format!("id_1,id_2\n{edges}")).unwrap();
        let config = SpmmBenchConfig {
            graph: Some(graph),
            features: vec![3, 20],
            dpus: 16,
            tasklets: 11,
            plan: PlanChoice::Auto,
            backend: BackendKind::Simulator,
            schedules: vec![Schedule::Modelled, Schedule::Fast],
        };
        let a = load_graph(&config).unwrap();
        // Each listed edge goes both ways, except the four self-loops (36 i = 0 mod 500).
        assert_eq!((a.nrows(), a.nnz()), (500, 1996));
        let rows = run(&config, &a).unwrap();
        let widths_and_schedules: Vec<_> = rows.iter().map(|row| (row.features, row.schedule)).collect();
        let (modelled, fast) = (Some(Schedule::Modelled), Some(Schedule::Fast));
        assert_eq!(widths_and_schedules, [(3, modelled), (3, fast), (20, modelled), (20, fast)]);
        for row in &rows {
            assert!(row.max_relative_error < 1e-5, "F = {}: error {}", row.features, row.max_relative_error);
            let pygim = row.pygim.expect("PyGim's default fits").total();
            assert!(row.fastest.prediction.total() <= pygim);
        }
        let table = table(&rows).to_string();
        assert!(table.contains("tasklets=11") && table.contains("kernel") && table.contains("fast"), "{table}");
        for row in &rows {
            assert_eq!(row.decision.nr_dpus, 16);
            assert!(row.decision.predicted() <= row.decision.cpu.predicted.min(row.decision.pim));
        }
    }

    #[test]
    fn malformed_graph_files_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let graph = dir.path().join("bad.csv");
        std::fs::write(&graph, "id_1,id_2\n0,1\n2,x\n").unwrap();
        let config = SpmmBenchConfig {
            graph: Some(graph),
            features: vec![1],
            dpus: 1,
            tasklets: 1,
            plan: PlanChoice::Auto,
            backend: BackendKind::Simulator,
            schedules: vec![Schedule::Modelled, Schedule::Fast],
        };
        let message = load_graph(&config).unwrap_err().to_string();
        assert!(message.contains("bad.csv:3") && message.contains("`x`"), "{message}");
    }
}
