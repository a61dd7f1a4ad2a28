//! `pimgnn bench infer`: end-to-end inference on the CPU backend and on PIM (the simulator, with the predicted
//! hardware time), and PyTorch on the same workload in the same run when `python3` with `torch` is available.

use std::io::BufWriter;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use clap::Args;
use npyz::WriterBuilder;
use pimgnn::gnn::{Aggregator, Architecture, Backend, Dtype, EngineOptions, Layer};
use pimgnn::io::npy;
use pimgnn::{compare, Dense};
use upmem::BackendKind;

use crate::cli::comparison::{Comparison, Times};
use crate::cli::pim_args::{AttentionArgs, PimArgs};
use crate::cli::progress;
use crate::cli::python::{self, process_cpu_time};
use crate::cli::timings;
use crate::cli::workload::{Workload, WorkloadArgs};

/// The PyTorch side of the benchmark.
const TORCH_SCRIPT: &str = include_str!("infer_torch.py");

/// Arguments of `pimgnn bench infer`.
#[derive(Args, Debug)]
pub struct BenchInferArgs {
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Timed runs of each path (the median is reported), after one warm-up run.
    #[arg(long, default_value_t = 3)]
    runs: usize,
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
    let workload = progress::step("loading the inputs", || args.workload.load())?;
    println!("workload: {}", workload.description);
    let aggregation = workload.model.architecture().aggregation();
    let matrix = aggregation.matrix(&workload.graph)?;
    let cpu_options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let mut cpu = Aggregator::for_aggregation(aggregation, matrix.clone(), Dtype::F32, &cpu_options)?;
    let (ours, logits) = progress::step("timing the CPU backend", || time_forward(&workload, &mut cpu, args.runs))?;
    drop(cpu);

    let pim_options = EngineOptions {
        attention: args.attention.attention,
        ..args.pim_args.engine_options(Backend::Pim(args.pim), workload.model.aggregation_widths())
    };
    let mut pim = progress::step("loading the graph onto the DPUs", || {
        Aggregator::for_aggregation(aggregation, matrix.clone(), Dtype::F32, &pim_options)
    })?;
    println!("PIM plan: {}", pim.plan());
    let (pim_times, pim_logits) =
        progress::step("timing the PIM backend", || time_forward(&workload, &mut pim, args.runs))?;
    let difference = compare::max_abs_difference("the PIM backend's logits, against the CPU's", &pim_logits, &logits)?;
    println!("largest difference between the CPU and PIM backends' outputs: {difference:.2e}");

    let mut table = Comparison::new("", &ours);
    table.add(&format!("pimgnn, PIM backend ({})", pim.backend()), &pim_times);
    let logits = Some(logits);

    match torch_timings(args, &workload, &matrix, logits.as_ref()) {
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
        "(medians of {} runs after a warm-up; CPU time is the whole process's, all threads; the PIM prediction \
         counts the modelled PIM phases and the host steps at their wall time)",
        args.runs
    );
    Ok(())
}

/// Times `runs` forward passes through `aggregator` after a warm-up; returns the medians and the last output.
fn time_forward(workload: &Workload, aggregator: &mut Aggregator, runs: usize) -> anyhow::Result<(Times, Dense<f32>)> {
    let mut logits = workload.model.forward(&workload.features, aggregator)?.logits;
    let (mut walls, mut cpus, mut predictions) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (wall, cpu) = (Instant::now(), process_cpu_time()?);
        let inference = workload.model.forward(&workload.features, aggregator)?;
        walls.push(wall.elapsed().as_secs_f64());
        cpus.push((process_cpu_time()? - cpu).as_secs_f64());
        let phases: Vec<_> = inference.layers.iter().flat_map(|layer| layer.phases.iter().cloned()).collect();
        predictions.extend(timings::predicted(&phases).map(|p| p.as_secs_f64()));
        logits = inference.logits;
    }
    let predicted = (!predictions.is_empty()).then(|| Duration::from_secs_f64(median(predictions)));
    Ok((Times { wall: median(walls), cpu: median(cpus), predicted }, logits))
}

pub(super) fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
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
