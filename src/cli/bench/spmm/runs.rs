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

use pimgnn::gnn::quantize::{dequantize, quantize, quantize_matrix, Quantized, QuantizedMatrix};
use pimgnn::gnn::{Decision, Dtype};
use pimgnn::graph::Dataset;
use pimgnn::pim::auto;
use pimgnn::pim::cost::{self, Costed, HardwareModel, Prediction, Target};
use pimgnn::pim::plan::Plan;
use pimgnn::pim::{self, PimElement, PimReport, PimSpmm};
use pimgnn::{compare, CpuSpmm, Csr, Dense, Element, Error, Result, SpmmEngine};

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
    /// Without `graph`, a generated graph of this dataset's size instead of the R-MAT graph.
    pub workload: Option<Dataset>,
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
    /// The value types the PIM SpMM runs in, one row each: `f32` exactly, or quantized as aggregation does.
    pub dtypes: Vec<Dtype>,
}

/// One feature width's results.
#[derive(Clone, Debug)]
pub struct SpmmBenchRow {
    /// Features.
    pub features: usize,
    /// The value type the PIM SpMM ran in.
    pub dtype: Dtype,
    /// Quantizing `X` and taking `Y` back to `f32` on the host (integer types), at wall time here.
    pub conversions: Option<Duration>,
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
    /// Largest difference from the CPU's `f32` result, relative to its largest value
    /// ([`compare::max_relative_difference`]: a NaN or an infinity in either fails the run instead).
    pub max_relative_error: f32,
}

/// Loads the graph the configuration names, or generates the default R-MAT graph.
pub fn load_graph(config: &SpmmBenchConfig) -> Result<Csr<f32>> {
    match &config.graph {
        Some(path) => graph::read_edges(path),
        None => match config.workload {
            Some(dataset) => dataset.graph(42),
            None => Ok(pimgnn::graph::rmat(100_000, 1_000_000, 42)),
        },
    }
}

/// Runs the benchmark on `a` at each feature width, in each value type, under each schedule.
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
        let width = Width { features, x: &x, expected: &expected };
        let decision = auto::decide(&model, a, &[features], config.dpus, config.tasklets)?;
        for &dtype in &config.dtypes {
            let runs = match dtype {
                Dtype::F32 => run_type(config, &model, &width, Exact(a.clone()))?,
                Dtype::I32 => run_type(config, &model, &width, Levels::<i32>::new(a)?)?,
                Dtype::I16 => run_type(config, &model, &width, Levels::<i16>::new(a)?)?,
                Dtype::I8 => run_type(config, &model, &width, Levels::<i8>::new(a)?)?,
            };
            rows.extend(runs.into_iter().map(|run| SpmmBenchRow {
                features,
                dtype,
                conversions: run.conversions,
                #[cfg(feature = "simulator")]
                schedule: run.schedule,
                cpu: cpu_best,
                pim: run.pim,
                pygim: run.pygim,
                fastest: run.fastest,
                report: run.report,
                decision: decision.clone(),
                max_relative_error: run.max_relative_error,
            }));
        }
    }
    Ok(rows)
}

/// One feature width's input and the CPU's `f32` result.
struct Width<'a> {
    features: usize,
    x: &'a Dense<f32>,
    expected: &'a Dense<f32>,
}

/// How a value type's PIM SpMM gets its matrix and features and gives `f32` back.
trait ValueType {
    type Element: PimElement;
    /// The matrix the DPUs hold.
    fn matrix(&self) -> &Csr<Self::Element>;
    /// `Y = A X` in `f32` through `engine`, and the host's conversions' wall time (`None` for `f32`).
    fn spmm(&self, engine: &mut PimSpmm<Self::Element>, x: &Dense<f32>) -> Result<(Dense<f32>, Option<Duration>)>;
}

/// `f32`, exactly.
struct Exact(Csr<f32>);

impl ValueType for Exact {
    type Element = f32;
    fn matrix(&self) -> &Csr<f32> {
        &self.0
    }
    fn spmm(&self, engine: &mut PimSpmm<f32>, x: &Dense<f32>) -> Result<(Dense<f32>, Option<Duration>)> {
        Ok((engine.spmm(x)?, None))
    }
}

/// Quantized to `T` as aggregation quantizes ([`quantize_matrix`], then `X` per call).
struct Levels<T: Quantized>(QuantizedMatrix<T>);

impl<T: Quantized> Levels<T> {
    fn new(a: &Csr<f32>) -> Result<Self> {
        Ok(Levels(quantize_matrix(a)?))
    }
}

impl<T: Quantized> ValueType for Levels<T> {
    type Element = T;
    fn matrix(&self) -> &Csr<T> {
        &self.0.matrix
    }
    fn spmm(&self, engine: &mut PimSpmm<T>, x: &Dense<f32>) -> Result<(Dense<f32>, Option<Duration>)> {
        let started = Instant::now();
        let scales = self.0.scales;
        let feature_scale = scales.feature_scale_of::<T>(x.as_slice())?;
        let levels = Dense::from_vec(x.rows(), x.cols(), quantize::<T>(x.as_slice(), feature_scale))?;
        let quantizing = started.elapsed();
        let y = engine.spmm(&levels)?;
        let started = Instant::now();
        let (rows, cols) = (y.rows(), y.cols());
        let y = Dense::from_vec(rows, cols, dequantize(y.into_vec(), 1.0 / (scales.matrix_scale * feature_scale)))?;
        Ok((y, Some(quantizing + started.elapsed())))
    }
}

/// One PIM run of a value type.
struct TypeRun {
    #[cfg(feature = "simulator")]
    schedule: Option<Schedule>,
    pim: Duration,
    conversions: Option<Duration>,
    pygim: Option<Prediction>,
    fastest: Costed,
    report: PimReport,
    max_relative_error: f32,
}

/// The PIM SpMM of `values` at one width under each schedule: the plan chosen for its element type, the second
/// call timed (A resident), compared with the CPU's `f32` result.
fn run_type<V: ValueType>(
    config: &SpmmBenchConfig,
    model: &HardwareModel,
    width: &Width<'_>,
    values: V,
) -> Result<Vec<TypeRun>> {
    let mut runs = Vec::new();
    let mut chosen = None;
    for schedule in schedules(config) {
        let set = allocate(config, schedule)?;
        let on_simulator = set.backend() == BackendKind::Simulator;
        let (plan, pygim, fastest) = match chosen {
            Some(chosen) => chosen,
            None => *chosen.insert(choose_plan(config, values.matrix(), width.features, &set, model)?),
        };
        let mut engine = PimSpmm::new(set, values.matrix().clone(), plan)?;
        values.spmm(&mut engine, width.x)?;
        let started = Instant::now();
        let (y, conversions) = values.spmm(&mut engine, width.x)?;
        let pim = started.elapsed() - conversions.unwrap_or_default();
        runs.push(TypeRun {
            #[cfg(feature = "simulator")]
            schedule: on_simulator.then_some(schedule),
            pim,
            conversions,
            pygim,
            fastest,
            report: engine.report().clone(),
            max_relative_error: compare::max_relative_difference(
                &format!(
                    "PIM SpMM result at {} features in {}, against the CPU's f32",
                    width.features,
                    V::Element::NAME
                ),
                &y,
                width.expected,
            )?,
        });
        if !on_simulator {
            break;
        }
    }
    Ok(runs)
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
fn choose_plan<T: PimElement>(
    config: &SpmmBenchConfig,
    a: &Csr<T>,
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
        "type",
        "CPU ms (f32)",
        "PIM ms",
        "PIM / CPU",
        "sim schedule",
        "plan run",
        "predicted hw ms (host conversions at wall)",
        "hardware choice (if not run), predicted ms",
        "PyGim default predicted ms",
        "auto's pick: CPU (sampled) / PIM / split ms",
        "phases wall ms (predicted hw); load A once",
        "nnz per DPU min / median / max",
        "slowest DPU cycles (sim); simulated over all DPUs: instructions, DMAs, workers' time per DMA",
        "max rel. error (against f32)",
    ]);
    for row in rows {
        let report = &row.report;
        let mut phases = std::iter::once(&report.load)
            .chain(&report.phases)
            .map(|phase| {
                let layout = match phase.name.as_ref() {
                    "gather" if report.y_in_16_bits => ", Y in 16 bits",
                    "send X" if report.x_per_nonzero => " per nonzero",
                    _ => "",
                };
                format!("{}{layout} {} ({})", phase.name, ms(phase.wall), phase.predicted.map_or("-".into(), ms))
            })
            .collect::<Vec<_>>();
        phases.extend(row.conversions.map(|host| format!("quantize X, Y to f32 {} (host)", ms(host))));
        let phases = phases.join("\n");
        let predicted = report.predicted.total() + row.conversions.unwrap_or_default();
        let balance = report.balance;
        table.add_row([
            row.features.to_string(),
            row.dtype.to_string(),
            ms(row.cpu),
            ms(row.pim),
            format!("{:.2}", row.pim.as_secs_f64() / row.cpu.as_secs_f64()),
            schedule_cell(row),
            report.plan.to_string().replace(',', "\n"),
            format!("{:.3}", predicted.as_secs_f64() * 1e3),
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
            simulation_cell(report),
            format!("{:.1e}", row.max_relative_error),
        ]);
    }
    table::fit_to_terminal(&mut table);
    table
}

/// The slowest DPU's modelled cycles, and what the simulator executed over all DPUs: its speed in the unit of its
/// work (a gather kernel's DMA transfers each cost a tasklet switch and the timing model's bookkeeping).
fn simulation_cell(report: &PimReport) -> String {
    let cycles = report.modelled_cycles.map_or("-".into(), |(cycles, dma)| format!("{cycles}\n({dma} DMA)"));
    let Some(work) = report.simulated else { return cycles };
    let per_transfer = work.native_per_transfer().map_or("-".into(), |d| format!("{:.0}", d.as_secs_f64() * 1e9));
    format!(
        "{cycles}\n{:.1} M instr.\n{:.2} M DMA\n{per_transfer} ns / DMA",
        work.instructions as f64 / 1e6,
        work.transfers as f64 / 1e6
    )
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
            workload: None,
            graph: Some(graph),
            features: vec![3, 20],
            dpus: 16,
            tasklets: 11,
            plan: PlanChoice::Auto,
            backend: BackendKind::Simulator,
            schedules: vec![Schedule::Modelled, Schedule::Fast],
            dtypes: vec![Dtype::F32],
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
        for row in &rows {
            let work = row.report.simulated.expect("the simulator's work under every schedule");
            // Every nonzero's X row is a transfer, on one DPU or several.
            assert!(work.transfers >= 1996 && work.instructions > work.transfers, "{work:?}");
        }
        let table = table(&rows).to_string();
        assert!(table.contains("tasklets=11") && table.contains("kernel") && table.contains("fast"), "{table}");
        assert!(table.contains("ns / DMA"), "{table}");
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
            workload: None,
            graph: Some(graph),
            features: vec![1],
            dpus: 1,
            tasklets: 1,
            plan: PlanChoice::Auto,
            backend: BackendKind::Simulator,
            schedules: vec![Schedule::Modelled, Schedule::Fast],
            dtypes: vec![Dtype::F32],
        };
        let message = load_graph(&config).unwrap_err().to_string();
        assert!(message.contains("bad.csv:3") && message.contains("`x`"), "{message}");
    }
}
