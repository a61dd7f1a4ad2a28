//! `pimgnn bench train`: milliseconds per full-batch training epoch on the CPU backend, on the simulator (with the
//! predicted hardware time), and PyTorch Geometric's own epoch in the same run when `python3` has
//! `torch_geometric`; with the predicted effect of GNNear's optimisations (hub splitting, partitions balanced
//! by edges, the graph resident for the whole run).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use clap::Args;
use pimgnn::gnn::{
    inputs, Aggregation, Architecture, Backend, EngineOptions, Layer, Model, DEFAULT_DPUS, DEFAULT_TASKLETS,
};
use pimgnn::pim::cost::{self, HardwareModel, Target};
use pimgnn::pim::plan::Plan;
use pimgnn::train::{
    backward_aggregation_widths, initial_model, is_symmetric, Adam, OptimizerKind, Stage, Targets, Trainer,
};
use pimgnn::{Csr, Dense};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use upmem::BackendKind;

use super::infer::{median, write_npy};
use crate::cli::comparison::{Comparison, Times};
use crate::cli::pim_args::PimArgs;
use crate::cli::progress;
use crate::cli::python::{self, peak_memory_bytes, process_cpu_time};
use crate::cli::table;
use crate::cli::workload;

/// The PyTorch Geometric side of the benchmark.
const TORCH_SCRIPT: &str = include_str!("train_torch.py");

/// Nodes, edges and feature width of the generated workload (the inference benchmark's).
const DEFAULT_NODES: usize = 100_000;
const DEFAULT_EDGES: usize = 1_000_000;
const DEFAULT_WIDTH: usize = 256;
/// Classes of the generated labels, unless --classes says.
const DEFAULT_CLASSES: usize = 16;

/// PyG's usual training run: `torch.optim.Adam(lr=0.01, weight_decay=5e-4)`.
const ADAM: Adam = Adam { lr: 0.01, betas: (0.9, 0.999), eps: 1e-8, weight_decay: 5e-4 };

/// Arguments of `pimgnn bench train`.
#[derive(Args, Debug)]
pub struct BenchTrainArgs {
    /// Graph: Matrix Market or CSV edge list. Default: R-MAT, 100,000 nodes, 1,000,000 edges, 256 uniform
    /// features, random labels and half the nodes in the training mask.
    #[arg(long, requires_all = ["features", "labels", "train_mask"])]
    graph: Option<PathBuf>,
    /// Node features (.npy, .mtx or .csv).
    #[arg(long, requires = "graph")]
    features: Option<PathBuf>,
    /// Class labels (.npy, int64).
    #[arg(long, requires = "graph")]
    labels: Option<PathBuf>,
    /// Training mask (.npy, bool).
    #[arg(long, requires = "graph")]
    train_mask: Option<PathBuf>,
    /// Instead of the default R-MAT graph, a generated graph of a published dataset's size (see `pimgnn infer
    /// --workload`): its nodes, edges, feature width and classes, with uniform features and labels.
    #[arg(long, conflicts_with_all = ["graph", "classes"], value_name = "DATASET")]
    workload: Option<pimgnn::graph::Dataset>,
    /// Classes of the generated labels (default 16; a --workload has its dataset's).
    #[arg(long)]
    classes: Option<usize>,
    /// Architecture of the 2-layer model, initialised as PyG does (see `pimgnn train --arch`).
    #[arg(long, default_value = "gcn")]
    arch: Architecture,
    /// Hidden width of the 2-layer model.
    #[arg(long, default_value_t = 256)]
    hidden: usize,
    /// Seed of the generated workload and the initial weights.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed epochs on the CPU and in PyG (the median is reported), after one warm-up epoch.
    #[arg(long, default_value_t = 3)]
    epochs: usize,
    /// Timed epochs on PIM (without warm-up: the graph is loaded once before them).
    #[arg(long, default_value_t = 1)]
    pim_epochs: usize,
    /// The PIM backend timed next to the CPU: simulator (sim), hardware (hw) or auto.
    #[arg(long, default_value = "simulator")]
    pim: BackendKind,
    #[command(flatten)]
    pim_args: PimArgs,
    /// The Python interpreter with torch and torch_geometric.
    #[arg(long, default_value = "python3")]
    python: String,
}

/// The training inputs.
struct Dataset {
    description: String,
    graph: Csr<f32>,
    features: Dense<f32>,
    labels: Vec<i64>,
    train_mask: Vec<bool>,
    classes: usize,
}

/// Runs `pimgnn bench train`.
pub fn run(args: &BenchTrainArgs) -> anyhow::Result<()> {
    if args.epochs == 0 || args.pim_epochs == 0 {
        bail!("--epochs and --pim-epochs must be at least 1");
    }
    let dataset = load(args)?;
    let widths = [dataset.features.cols(), args.hidden, dataset.classes];
    let model = initial_model(args.arch, &widths, args.seed)?;
    println!("workload: {}; 2-layer {} {widths:?}, Adam (lr 0.01, weight decay 5e-4)", dataset.description, args.arch);

    let (cpu, first_loss) = progress::step("timing the CPU backend", || time_cpu(args, &dataset, &model))?;
    let mut table = Comparison::new(" per epoch", &cpu);

    let pim = progress::step("timing the PIM backend", || time_pim(args, &dataset, &model))?;
    table.add(&format!("pimgnn, PIM backend ({}, {} epoch(s))", args.pim, args.pim_epochs), &pim);

    match torch_epochs(args, &dataset, &model) {
        Ok(results) => {
            for (name, result) in results {
                match result {
                    Ok((times, loss)) => {
                        println!("{name}: epoch-0 loss {loss:.6} (pimgnn: {first_loss:.6})");
                        table.add(&name, &times);
                    }
                    Err(reason) => table.add_unavailable(&name, &reason),
                }
            }
        }
        Err(error) => println!("PyTorch Geometric comparison skipped: {error:#}"),
    }
    println!("{table}");
    println!(
        "(medians of {} epochs after a warm-up on the CPU and in PyG; CPU time is the whole process's, all threads; \
         the PIM prediction counts the modelled PIM phases and the host stages at their wall time)",
        args.epochs
    );
    optimisations(args, &dataset, &model)?;
    let gib = |bytes: u64| bytes as f64 / f64::from(1u32 << 30);
    println!(
        "peak memory: {:.2} GiB in this process, {:.2} GiB in its largest finished child process (PyTorch)",
        gib(peak_memory_bytes(libc::RUSAGE_SELF)?),
        gib(peak_memory_bytes(libc::RUSAGE_CHILDREN)?)
    );
    Ok(())
}

fn load(args: &BenchTrainArgs) -> anyhow::Result<Dataset> {
    let (Some(graph_path), Some(features), Some(labels), Some(mask)) =
        (&args.graph, &args.features, &args.labels, &args.train_mask)
    else {
        return match args.workload {
            Some(dataset) => dataset_shaped(dataset, args.seed),
            None => Ok(progress::step("generating the default workload", || {
                generated(args.seed, args.classes.unwrap_or(DEFAULT_CLASSES))
            })),
        };
    };
    progress::step("reading the inputs", || {
        let graph = inputs::read_graph(graph_path).context("loading the graph")?;
        let nodes = graph.nrows();
        let labels = pimgnn::io::npy::read_labels(labels).context("loading the labels")?;
        let classes = labels.iter().copied().max().map_or(1, |max| max + 1).max(1) as usize;
        let features = match pimgnn::io::npy::read_dense_f32(features) {
            Ok(dense) => dense,
            Err(_) => {
                let width = pimgnn::io::read_graph(features).context("loading the features")?.ncols();
                inputs::read_features(features, nodes, width).context("loading the features")?
            }
        };
        let train_mask = inputs::read_mask(mask, nodes).context("loading the training mask")?;
        let description = format!("{} ({nodes} nodes, {} edges), {classes} classes", graph_path.display(), graph.nnz());
        Ok(Dataset { description, graph, features, labels, train_mask, classes })
    })
}

/// The R-MAT graph of the inference benchmark, uniform features in [-1, 1), uniform labels, every other
/// node in the training mask.
fn generated(seed: u64, classes: usize) -> Dataset {
    let graph = pimgnn::graph::rmat(DEFAULT_NODES, DEFAULT_EDGES, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7ea1_0001);
    let values = (0..DEFAULT_NODES * DEFAULT_WIDTH).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let features = match Dense::from_vec(DEFAULT_NODES, DEFAULT_WIDTH, values) {
        Ok(features) => features,
        Err(error) => unreachable!("{DEFAULT_NODES} x {DEFAULT_WIDTH} values: {error}"),
    };
    let classes = classes.max(1);
    let (labels, train_mask) = uniform_labels(DEFAULT_NODES, classes, &mut rng);
    let description = format!(
        "generated: R-MAT graph of {} nodes and {} edges (seed {seed}), {DEFAULT_WIDTH} features, {classes} classes",
        graph.nrows(),
        graph.nnz()
    );
    Dataset { description, graph, features, labels, train_mask, classes }
}

/// A graph of `dataset`'s size and feature width, uniform labels of its classes, every other node in the
/// training mask.
fn dataset_shaped(dataset: pimgnn::graph::Dataset, seed: u64) -> anyhow::Result<Dataset> {
    let shape = dataset.shape();
    let (graph, features) = workload::dataset_graph_and_features(dataset, seed)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7ea1_0001);
    let (labels, train_mask) = uniform_labels(shape.nodes, shape.classes, &mut rng);
    let description = format!(
        "generated: {dataset} ({}), power-law graph of {} nodes and {} edges (seed {seed}), {} features, {} classes",
        shape.source,
        graph.nrows(),
        graph.nnz(),
        shape.features,
        shape.classes
    );
    Ok(Dataset { description, graph, features, labels, train_mask, classes: shape.classes })
}

/// Labels drawn uniformly from `0..classes`, and a training mask of every other node.
fn uniform_labels(nodes: usize, classes: usize, rng: &mut ChaCha8Rng) -> (Vec<i64>, Vec<bool>) {
    let labels = (0..nodes).map(|_| rng.random_range(0..classes as i64)).collect();
    (labels, (0..nodes).map(|node| node % 2 == 0).collect())
}

fn trainer(dataset: &Dataset, model: &Model, options: &EngineOptions) -> anyhow::Result<Trainer> {
    let nodes = dataset.graph.nrows();
    let targets = Targets::new(dataset.labels.clone(), dataset.train_mask.clone(), nodes, dataset.classes)?;
    Ok(Trainer::new(
        model.clone(),
        &dataset.graph,
        dataset.features.clone(),
        targets,
        OptimizerKind::Adam(ADAM),
        options,
    )?)
}

/// Median seconds per epoch on the CPU backend after a warm-up epoch, and the warm-up's loss.
fn time_cpu(args: &BenchTrainArgs, dataset: &Dataset, model: &Model) -> anyhow::Result<(Times, f32)> {
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let mut trainer = trainer(dataset, model, &options)?;
    let first_loss = trainer.epoch()?.loss;
    trainer.reset_timings();
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    for _ in 0..args.epochs {
        let (wall, cpu) = (Instant::now(), process_cpu_time()?);
        trainer.epoch()?;
        walls.push(wall.elapsed().as_secs_f64());
        cpus.push((process_cpu_time()? - cpu).as_secs_f64());
    }
    print_stages("CPU backend", trainer.timings(), args.epochs);
    Ok((Times::measured(median(walls), median(cpus)), first_loss))
}

/// Seconds per epoch on PIM and the predicted hardware time per epoch.
fn time_pim(args: &BenchTrainArgs, dataset: &Dataset, model: &Model) -> anyhow::Result<Times> {
    let options = args.pim_args.engine_options(Backend::Pim(args.pim), Vec::new());
    let started = Instant::now();
    let mut trainer = trainer(dataset, model, &options)?;
    println!(
        "PIM: graph loaded into the engines in {:.2} s; plan: {}",
        started.elapsed().as_secs_f64(),
        trainer.propagator().plan()
    );
    let (wall, cpu) = (Instant::now(), process_cpu_time()?);
    for _ in 0..args.pim_epochs {
        trainer.epoch()?;
    }
    let epochs = args.pim_epochs as f64;
    let wall = wall.elapsed().as_secs_f64() / epochs;
    let cpu = (process_cpu_time()? - cpu).as_secs_f64() / epochs;
    print_stages(&format!("PIM backend ({})", trainer.propagator().backend()), trainer.timings(), args.pim_epochs);
    let predicted = trainer.timings().on_hardware().map(|total| total.div_f64(epochs));
    Ok(Times { wall, cpu, predicted })
}

/// One line per stage: wall and predicted milliseconds per epoch.
fn print_stages(path: &str, timings: &pimgnn::train::Timings, epochs: usize) {
    let per_epoch = |d: Duration| d.as_secs_f64() * 1e3 / epochs as f64;
    let stages: Vec<String> = Stage::ALL
        .iter()
        .filter(|&&stage| stage != Stage::Communication)
        .map(|&stage| {
            let time = timings.get(stage);
            match time.predicted {
                Some(predicted) => {
                    format!("{stage} {:.1} ms (predicted {:.1})", per_epoch(time.wall), per_epoch(predicted))
                }
                None => format!("{stage} {:.1} ms", per_epoch(time.wall)),
            }
        })
        .collect();
    println!("{path} per epoch: {}", stages.join(", "));
}

/// The predicted aggregation time per epoch on hardware with and without each of GNNear's optimisations that
/// fit UPMEM, from the cost model on this graph and the epoch's calls, with the plans the trainer's engines
/// choose on hardware (one engine when the matrix is symmetric, else one for it and one for its transpose).
fn optimisations(args: &BenchTrainArgs, dataset: &Dataset, model: &Model) -> anyhow::Result<()> {
    let aggregation = model.architecture().aggregation();
    let matrix = aggregation.matrix(&dataset.graph)?;
    let forward = model.aggregation_widths();
    let backward = backward_aggregation_widths(model);
    // As the trainer builds them: one engine on all the DPUs, or two sharing them half and half.
    let total = args.pim_args.dpus.unwrap_or(DEFAULT_DPUS);
    // Attention's values are never symmetric: its transpose always has an engine of its own.
    let engines = if aggregation != Aggregation::Attention && is_symmetric(&matrix) {
        vec![("forward and backward", [forward, backward].concat(), matrix, total)]
    } else {
        let transpose = matrix.transpose();
        vec![("forward", forward, matrix, total - total / 2), ("backward (transpose)", backward, transpose, total / 2)]
    };
    let tasklets = args.pim_args.tasklets.unwrap_or(DEFAULT_TASKLETS);
    let hardware = HardwareModel::configured()?;
    // Predicted aggregation per epoch: all optimisations, without hub splitting, PyGim's plan, reloading.
    let (mut all, mut unsplit, mut pygim, mut reloaded) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for (name, widths, matrix, dpus) in engines.iter().filter(|(_, widths, _, dpus)| !widths.is_empty() && *dpus > 0) {
        let dpus = *dpus;
        let choice = cost::choose_for_calls(&hardware, matrix, widths, dpus, tasklets, Target::Hardware)?;
        let chosen = choice.fastest.plan;
        let over_calls = |plan: &Plan| -> Duration {
            widths.iter().map(|&width| cost::predict(&hardware, matrix, plan, width, dpus as usize).total()).sum()
        };
        let with_all = over_calls(&chosen);
        all += with_all;
        unsplit += over_calls(&Plan { split_rows: false, ..chosen });
        pygim += choice.pygim.map_or(with_all, |costed| over_calls(&costed.plan));
        let resident_bytes = cost::mram_per_dpu(&hardware, matrix, &chosen, 0) as usize;
        reloaded += with_all + hardware.load_time(chosen.dpus_used() as usize, resident_bytes);
        println!("{name} engine on {dpus} DPUs: plan {chosen} for calls of width {widths:?}");
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut table = table::with_header([
        "GNNear optimisation (predicted aggregation per epoch on hardware)",
        "without it (ms)",
        "with it (ms)",
        "speed-up",
    ]);
    for (name, without) in [
        ("hot vertices split across DPUs (rows cut inside; without: cuts between rows only)", unsplit),
        ("plan chosen by the cost model, against PyGim's default plan", pygim),
        ("graph resident for the whole run, against loading it every epoch", reloaded),
    ] {
        table.add_row([
            name.to_owned(),
            format!("{:.2}", ms(without)),
            format!("{:.2}", ms(all)),
            format!("{:.2}x", ms(without) / ms(all)),
        ]);
    }
    table::fit_to_terminal(&mut table);
    println!("{table}");
    Ok(())
}

/// Writes the workload for the Python script, runs it, and reads its timings.
#[allow(clippy::type_complexity)]
fn torch_epochs(
    args: &BenchTrainArgs,
    dataset: &Dataset,
    model: &Model,
) -> anyhow::Result<Vec<(String, Result<(Times, f32), String>)>> {
    let dir = tempfile::tempdir().context("creating a directory for the PyTorch inputs")?;
    progress::step("writing the workload for PyTorch", || export(dir.path(), dataset, model))?;
    let stdout = python::run_script(
        &args.python,
        &["torch", "numpy", "torch_geometric"],
        dir.path(),
        ("train_torch.py", TORCH_SCRIPT),
        &[args.epochs.to_string()],
        "running PyTorch Geometric",
    )?;
    let results = python::result_lines(&stdout)
        .filter_map(|(name, fields)| {
            let label = match name {
                "pyg_gcnconv" => "PyTorch Geometric GCNConv (normalises every epoch)",
                "pyg_gcnconv_cached" => "PyTorch Geometric GCNConv(cached=True)",
                "pyg_sageconv" => "PyTorch Geometric SAGEConv",
                "pyg_ginconv" => "PyTorch Geometric GINConv",
                "pyg_gatconv" => "PyTorch Geometric GATConv",
                _ => return None,
            };
            let parsed = fields.and_then(|fields| match fields[..] {
                [wall, cpu, loss] => match (wall.parse(), cpu.parse(), loss.parse()) {
                    (Ok(wall), Ok(cpu), Ok(loss)) => Ok((Times::measured(wall, cpu), loss)),
                    _ => Err(format!("unreadable figures `{wall} {cpu} {loss}`")),
                },
                _ => Err(format!("unreadable line `{name} {}`", fields.join(" "))),
            });
            Some((label.to_owned(), parsed))
        })
        .collect();
    Ok(results)
}

/// The inputs of the Python script: edges, features, labels, mask, the initial model's `state_dict` (one
/// `state.<name>.npy` per tensor) and `model.txt`, which describes the model for the script to build it as PyG
/// does: a first line `<architecture> <activation>`, then per layer `<name> <in> <out> <heads> <concat>
/// <hidden> <train_eps>` (GAT's heads and whether they are concatenated, GIN's MLP inner width and whether its
/// `eps` is trained; 1, true, 0 and false otherwise).
fn export(dir: &Path, dataset: &Dataset, model: &Model) -> anyhow::Result<()> {
    let widen = |v: &[u32]| v.iter().map(|&i| i64::from(i)).collect::<Vec<_>>();
    let coo = dataset.graph.to_coo();
    write_npy(dir, "edge_row", &[coo.nnz()], &widen(coo.rows()))?;
    write_npy(dir, "edge_col", &[coo.nnz()], &widen(coo.cols()))?;
    let features = &dataset.features;
    write_npy(dir, "features", &[features.rows(), features.cols()], features.as_slice())?;
    write_npy(dir, "labels", &[dataset.labels.len()], &dataset.labels)?;
    write_npy(dir, "train_mask", &[dataset.train_mask.len()], &dataset.train_mask)?;
    for (name, tensor) in model.state_dict() {
        write_npy(dir, &format!("state.{name}"), &tensor.shape, &tensor.data)?;
    }
    let mut description = format!("{} {}\n", model.architecture(), model.activation());
    for (name, layer) in model.layers() {
        let (heads, concat, hidden, train_eps) = match layer {
            Layer::Gat(conv) => (conv.heads(), conv.concat(), 0, false),
            Layer::Gin(conv) => (1, true, conv.mlp()[0].out_features(), conv.train_eps()),
            Layer::Gcn(_) | Layer::Sage(_) => (1, true, 0, false),
        };
        let (inputs, outputs) = (layer.in_features(), layer.out_features());
        description.push_str(&format!("{name} {inputs} {outputs} {heads} {concat} {hidden} {train_eps}\n"));
    }
    let path = dir.join("model.txt");
    std::fs::write(&path, description).with_context(|| format!("writing {}", path.display()))
}
