//! `pimgnn bench infer`: end-to-end inference on the CPU backend and on PIM (the simulator, with the predicted
//! hardware time), and PyTorch on the same workload in the same run when `python3` with `torch` is available.

use std::io::BufWriter;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use clap::Args;
use npyz::WriterBuilder;
use pimgnn::gnn::{
    accuracy, predicted_class, Aggregator, Architecture, Backend, Dtype, EngineOptions, Layer, LayerReport, Overlap,
};
use pimgnn::io::npy;
use pimgnn::{compare, Dense};
use upmem::BackendKind;

use crate::cli::comparison::{Comparison, Times};
use crate::cli::pim_args::{AttentionArgs, PimArgs};
use crate::cli::progress;
use crate::cli::python::{self, peak_memory_bytes, process_cpu_time};
use crate::cli::table;
use crate::cli::timings;
use crate::cli::workload::{Workload, WorkloadArgs};

/// The PyTorch side of the benchmark.
const TORCH_SCRIPT: &str = include_str!("infer_torch.py");

/// Arguments of `pimgnn bench infer`.
#[derive(Args, Debug)]
pub struct BenchInferArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Timed runs of each path (the median is reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Untimed runs of each path before the timed ones (0 for a full-size workload, where one run takes
    /// minutes on the simulator).
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Value types of aggregation, comma-separated: each runs on the CPU and the PIM backend, and each integer
    /// type's logits are compared with f32's (f32 runs first whether listed or not).
    #[arg(long, value_delimiter = ',', default_value = "f32")]
    dtype: Vec<Dtype>,
    /// The Python interpreter with torch (and optionally torch_geometric).
    #[arg(long, default_value = "python3")]
    python: String,
    /// The PIM backend timed next to the CPU: simulator (sim), hardware (hw) or auto.
    #[arg(long, default_value = "simulator")]
    pim: BackendKind,
    #[command(flatten)]
    pim_args: PimArgs,
    #[command(flatten)]
    attention: AttentionArgs,
}

/// Runs `pimgnn bench infer`.
pub fn run(args: &BenchInferArgs) -> anyhow::Result<()> {
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let workload = args.workload.load()?;
    println!("workload: {}", workload.description);
    let aggregation = workload.model.architecture().aggregation();
    let matrix = progress::step("building the aggregation matrix", || aggregation.matrix(&workload.graph))?;
    let pim_options = EngineOptions {
        attention: args.attention.attention,
        ..args.pim_args.engine_options(Backend::Pim(args.pim), workload.model.aggregation_widths())
    };
    let cpu_options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let mut dtypes = vec![Dtype::F32];
    dtypes.extend(args.dtype.iter().copied().filter(|&dtype| dtype != Dtype::F32));

    let mut paths: Vec<TimedPath> = Vec::new();
    for &dtype in &dtypes {
        let suffix = if dtype == Dtype::F32 { String::new() } else { format!(", {dtype}") };
        let mut cpu = Aggregator::for_aggregation(aggregation, matrix.clone(), dtype, &cpu_options)?;
        let run = time_forward(&format!("the CPU backend in {dtype}"), &workload, &mut cpu, args)?;
        drop(cpu);
        paths.push(TimedPath { name: format!("pimgnn, CPU backend{suffix}"), dtype, run });

        let started = Instant::now();
        let mut pim = progress::step(&format!("loading the graph onto the DPUs ({dtype})"), || {
            Aggregator::for_aggregation(aggregation, matrix.clone(), dtype, &pim_options)
        })?;
        println!("PIM plan ({dtype}): {}", pim.plan());
        println!("PIM engine ({dtype}): plan chosen and graph resident in {:.1} s", started.elapsed().as_secs_f64());
        let run = time_forward(&format!("the PIM backend in {dtype}"), &workload, &mut pim, args)?;
        paths.push(TimedPath { name: format!("pimgnn, PIM backend ({}){suffix}", pim.backend()), dtype, run });
    }
    let (cpu, pim) = (&paths[0].run.logits, &paths[1].run.logits);
    let difference = compare::max_abs_difference("the PIM backend's logits, against the CPU's", pim, cpu)?;
    println!("largest difference between the CPU and PIM backends' f32 outputs: {difference:.2e}");

    let mut table = Comparison::new("", &paths[0].run.times);
    for path in &paths[1..] {
        table.add(&path.name, &path.run.times);
    }
    match torch_timings(args, &workload, &matrix, Some(cpu)) {
        Ok(results) => {
            for (name, times) in results {
                match times {
                    Ok(times) => table.add(&name, &times),
                    Err(reason) => table.add_unavailable(&name, &reason),
                }
            }
        }
        Err(error) => println!("PyTorch comparison skipped: {error:#}"),
    }
    println!("{table}");
    println!(
        "(medians of {} runs after {} warm-up run(s); CPU time is the whole process's, all threads; the PIM \
         prediction counts the modelled PIM phases and the host steps at their wall time)",
        args.runs, args.warmup
    );
    println!("{}", layer_table(&paths));
    if dtypes.len() > 1 {
        println!("{}", quantization_table(&paths)?);
    }
    let peak = peak_memory_bytes(libc::RUSAGE_SELF)? as f64 / f64::from(1u32 << 30);
    println!("peak memory: {peak:.2} GiB in this process");
    Ok(())
}

/// One timed path: pimgnn on a backend in a value type.
struct TimedPath {
    name: String,
    dtype: Dtype,
    run: TimedRun,
}

/// A path's median times, and its last run's logits and layers.
struct TimedRun {
    times: Times,
    logits: Dense<f32>,
    layers: Vec<LayerReport>,
}

/// Times `--runs` forward passes through `aggregator` after `--warmup` untimed ones, each under a bar over
/// the layers saying which `path` runs.
fn time_forward(
    path: &str,
    workload: &Workload,
    aggregator: &mut Aggregator,
    args: &BenchInferArgs,
) -> anyhow::Result<TimedRun> {
    let forward = |aggregator: &mut Aggregator, what: String| {
        let layers = progress::LayerBar::new(&what, &workload.model);
        workload.model.forward_reporting(&workload.features, aggregator, Overlap::Overlapped, |_| layers.done())
    };
    for run in 1..=args.warmup {
        forward(aggregator, format!("{path}, warm-up {run} of {}", args.warmup))?;
    }
    let (mut walls, mut cpus, mut predictions) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = None;
    for run in 1..=args.runs {
        let (wall, cpu) = (Instant::now(), process_cpu_time()?);
        let inference = forward(aggregator, format!("{path}, run {run} of {}", args.runs))?;
        walls.push(wall.elapsed().as_secs_f64());
        cpus.push((process_cpu_time()? - cpu).as_secs_f64());
        let phases: Vec<_> = inference.layers.iter().flat_map(|layer| layer.phases.iter().cloned()).collect();
        predictions.extend(timings::predicted(&phases).map(|p| p.as_secs_f64()));
        last = Some(inference);
    }
    let Some(last) = last else { bail!("--runs must be at least 1") };
    let predicted = (!predictions.is_empty()).then(|| Duration::from_secs_f64(median(predictions)));
    let times = Times { wall: median(walls), cpu: median(cpus), predicted };
    Ok(TimedRun { times, logits: last.logits, layers: last.layers })
}

pub(super) fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Each layer on each path (its last timed run): wall time here and predicted time on PIM hardware.
fn layer_table(paths: &[TimedPath]) -> comfy_table::Table {
    let mut table = table::with_header(["layer", "path", "wall (ms)", "predicted on PIM hardware (ms)"]);
    let ms = |time: Duration| format!("{:.2}", time.as_secs_f64() * 1e3);
    for path in paths {
        for layer in &path.run.layers {
            let predicted = timings::predicted(&layer.phases).map_or("-".to_owned(), ms);
            let name = format!("{} {} {} -> {}", layer.name, layer.kind, layer.widths.0, layer.widths.1);
            table.add_row([name, path.name.clone(), ms(layer.wall()), predicted]);
        }
    }
    table::fit_to_terminal(&mut table);
    table
}

/// What quantized aggregation costs: each integer type's logits against the CPU backend's in f32.
fn quantization_table(paths: &[TimedPath]) -> anyhow::Result<comfy_table::Table> {
    let mut table = table::with_header([
        "path",
        "largest |logit - f32 logit| / largest |f32 logit| (CPU, f32)",
        "nodes whose class (arg-max) is f32's (CPU, f32)",
    ]);
    let reference = &paths[0].run.logits;
    let classes: Vec<i64> = (0..reference.rows()).map(|node| predicted_class(reference.row(node)) as i64).collect();
    for path in &paths[2..] {
        let what = format!("{} logits, against f32's", path.dtype);
        let error = compare::max_relative_difference(&what, &path.run.logits, reference)?;
        let agreement = accuracy(&path.run.logits, &classes, &vec![true; classes.len()])?;
        table.add_row([path.name.clone(), format!("{error:.2e}"), format!("{:.2}%", agreement * 1e2)]);
    }
    table::fit_to_terminal(&mut table);
    Ok(table)
}

/// Writes the workload for the Python script, runs it, and checks its output against `ours`.
fn torch_timings(
    args: &BenchInferArgs,
    workload: &Workload,
    matrix: &pimgnn::Csr<f32>,
    ours: Option<&Dense<f32>>,
) -> anyhow::Result<Vec<(String, Result<Times, String>)>> {
    if workload.model.architecture() != Architecture::Gcn {
        bail!("the PyTorch paths run GCN models only");
    }
    let dir = tempfile::tempdir().context("creating a directory for the PyTorch inputs")?;
    progress::step("writing the workload for PyTorch", || export(dir.path(), workload, matrix))?;
    let stdout = python::run_script(
        &args.python,
        &["torch", "numpy"],
        dir.path(),
        ("infer_torch.py", TORCH_SCRIPT),
        &[args.runs.to_string()],
        "running PyTorch",
    )?;
    if let Some(ours) = ours {
        let theirs = npy::read_dense_f32(&dir.path().join("logits.npy"))?;
        let difference = compare::max_abs_difference("pimgnn's logits, against PyTorch's", ours, &theirs)?;
        println!("largest difference between pimgnn's and PyTorch's outputs: {difference:.2e}");
    }
    let results = python::result_lines(&stdout)
        .filter_map(|(name, fields)| {
            let label = match name {
                "csr_sparse_mm_linear" => "PyTorch CSR sparse.mm + Linear",
                "pyg_gcnconv" => "PyTorch Geometric GCNConv",
                _ => return None,
            };
            let times = fields.and_then(|fields| match fields[..] {
                [wall, cpu] => match (wall.parse(), cpu.parse()) {
                    (Ok(wall), Ok(cpu)) => Ok(Times::measured(wall, cpu)),
                    _ => Err(format!("unreadable times `{wall} {cpu}`")),
                },
                _ => Err(format!("unreadable line `{name} {}`", fields.join(" "))),
            });
            Some((label.to_owned(), times))
        })
        .collect();
    Ok(results)
}

/// The inputs of the Python script: the aggregation matrix (CSR), the graph's edges (for PyG), the features,
/// and each layer's weight and bias.
fn export(dir: &Path, workload: &Workload, matrix: &pimgnn::Csr<f32>) -> anyhow::Result<()> {
    let widen = |v: &[u32]| v.iter().map(|&i| i64::from(i)).collect::<Vec<_>>();
    write_npy(dir, "row_ptr", &[matrix.row_ptr().len()], &widen(matrix.row_ptr()))?;
    write_npy(dir, "col_idx", &[matrix.nnz()], &widen(matrix.col_idx()))?;
    write_npy(dir, "values", &[matrix.nnz()], matrix.values())?;
    let coo = workload.graph.to_coo();
    write_npy(dir, "edge_row", &[coo.nnz()], &widen(coo.rows()))?;
    write_npy(dir, "edge_col", &[coo.nnz()], &widen(coo.cols()))?;
    write_npy(dir, "features", &[workload.features.rows(), workload.features.cols()], workload.features.as_slice())?;
    let layers = workload.model.layers();
    for (at, (_, layer)) in layers.iter().enumerate() {
        let Layer::Gcn(conv) = layer else { bail!("layer {at} is not a GCNConv") };
        let lin = conv.lin();
        let zeros = vec![0.0; lin.out_features()];
        write_npy(dir, &format!("weight{at}"), &[lin.out_features(), lin.in_features()], lin.weight().as_slice())?;
        write_npy(dir, &format!("bias{at}"), &[lin.out_features()], lin.bias().unwrap_or(&zeros))?;
    }
    std::fs::write(dir.join("layers"), layers.len().to_string())?;
    Ok(())
}

pub(super) fn write_npy<T: npyz::AutoSerialize + Copy>(
    dir: &Path,
    name: &str,
    shape: &[usize],
    data: &[T],
) -> anyhow::Result<()> {
    let path = dir.join(format!("{name}.npy"));
    let file = std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    let mut writer = npyz::WriteOptions::new().default_dtype().shape(&shape).writer(BufWriter::new(file)).begin_nd()?;
    writer.extend(data.iter().copied())?;
    writer.finish()?;
    Ok(())
}
