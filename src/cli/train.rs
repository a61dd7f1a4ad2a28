//! `pimgnn train`: full-batch training with aggregation forward and backward on PIM (or the CPU), a line per
//! epoch, and where the time went.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use clap::{Args, ValueEnum};
use comfy_table::{Cell, CellAlignment, Table};
use indicatif::{ProgressBar, ProgressStyle};
use pimgnn::gnn::{accuracy, inputs, Architecture, Model};
use pimgnn::train::{initial_model, Adam, OptimizerKind, Sgd, Stage, Targets, Timings, Trainer};
use pimgnn::{Csr, Dense};

use super::history::History;
use super::output;
use super::pim_args::{self, BackendArgs, PimArgs};
use super::progress;
use crate::cli::table;

/// The optimiser to train with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OptimizerChoice {
    /// torch.optim.Adam (betas 0.9, 0.999; eps 1e-8).
    Adam,
    /// torch.optim.SGD, with --momentum.
    Sgd,
}

/// Arguments of `pimgnn train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Graph: Matrix Market (.mtx, row = target, column = source) or CSV edge list (.csv).
    #[arg(long)]
    graph: PathBuf,
    /// Node features: .npy (dense float32), .mtx (sparse) or .csv (node,feature,value triples).
    #[arg(long)]
    features: PathBuf,
    /// Class labels (.npy, int64), one per node.
    #[arg(long)]
    labels: PathBuf,
    /// Nodes the loss is computed on (.npy, bool).
    #[arg(long)]
    train_mask: PathBuf,
    /// Nodes to report validation accuracy on (.npy, bool).
    #[arg(long)]
    val_mask: Option<PathBuf>,
    /// Nodes to report test accuracy on (.npy, bool).
    #[arg(long)]
    test_mask: Option<PathBuf>,
    /// Initial model: a PyTorch Geometric state_dict saved with safetensors.
    #[arg(long, conflicts_with_all = ["arch", "hidden"])]
    model: Option<PathBuf>,
    /// Architecture of a new 2-layer model (features -> hidden -> classes), initialised as PyG does (gat: 8 heads
    /// of hidden/8 concatenated, or one head when hidden does not divide by 8, then one head averaged, ELU).
    #[arg(long, default_value = "gcn")]
    arch: Architecture,
    /// Hidden width of a new model.
    #[arg(long, default_value_t = 16)]
    hidden: usize,
    /// Seed of a new model's weights.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Train GIN's eps (PyG's train_eps=True) in every layer; a loaded model's `train_eps` metadata says so
    /// otherwise (default: eps stays fixed).
    #[arg(long)]
    train_eps: bool,
    /// Epochs (full-batch steps).
    #[arg(long, default_value_t = 200)]
    pub(super) epochs: usize,
    /// Optimiser.
    #[arg(long, value_enum, default_value = "adam")]
    optimizer: OptimizerChoice,
    /// Learning rate.
    #[arg(long, default_value_t = 0.01)]
    lr: f32,
    /// L2 weight decay added to the gradient (torch's weight_decay).
    #[arg(long, default_value_t = 5e-4)]
    weight_decay: f32,
    /// SGD momentum.
    #[arg(long, default_value_t = 0.0)]
    momentum: f32,
    #[command(flatten)]
    pub(super) backend: BackendArgs,
    #[command(flatten)]
    pub(super) pim_args: PimArgs,
    /// Save the trained model as a PyG state_dict in safetensors (loadable by `pimgnn infer` and PyG).
    #[arg(long)]
    pub(super) output: Option<PathBuf>,
    /// Write each epoch's loss and accuracies to this CSV file (epoch,loss,train,val,test; the figures of the
    /// parameters before the epoch's step).
    #[arg(long)]
    pub(super) history: Option<PathBuf>,
    #[command(flatten)]
    pub(super) distributed: super::distributed::DistributedArgs,
}

/// The accuracies of one set of logits over the masks given.
pub(super) struct Accuracies {
    pub(super) train: f64,
    pub(super) val: Option<f64>,
    pub(super) test: Option<f64>,
}

impl std::fmt::Display for Accuracies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "train {:.4}", self.train)?;
        if let Some(val) = self.val {
            write!(f, ", val {val:.4}")?;
        }
        if let Some(test) = self.test {
            write!(f, ", test {test:.4}")?;
        }
        Ok(())
    }
}

/// Labels and the masks accuracy is reported on.
pub(super) struct Evaluation {
    pub(super) labels: Vec<i64>,
    pub(super) train: Vec<bool>,
    pub(super) val: Option<Vec<bool>>,
    pub(super) test: Option<Vec<bool>>,
}

impl Evaluation {
    fn of(&self, logits: &Dense<f32>) -> anyhow::Result<Accuracies> {
        let score = |mask: &Option<Vec<bool>>| mask.as_ref().map(|m| accuracy(logits, &self.labels, m)).transpose();
        Ok(Accuracies {
            train: accuracy(logits, &self.labels, &self.train)?,
            val: score(&self.val)?,
            test: score(&self.test)?,
        })
    }
}

/// What a training run starts from: the inputs read and checked, the model and the optimiser.
pub(super) struct Inputs {
    pub(super) graph: Csr<f32>,
    pub(super) model: Model,
    pub(super) features: Dense<f32>,
    pub(super) labels: Vec<i64>,
    pub(super) train_mask: Vec<bool>,
    pub(super) evaluation: Evaluation,
    pub(super) optimizer: OptimizerKind,
}

/// Checks the output paths, then reads the inputs and makes or loads the model.
pub(super) fn load_inputs(args: &TrainArgs) -> anyhow::Result<Inputs> {
    if args.epochs == 0 {
        bail!("--epochs must be at least 1");
    }
    if let Some(output) = &args.output {
        output::check_writable("--output", output)?;
    }
    if let Some(history) = &args.history {
        output::check_writable("--history", history)?;
    }
    let graph = progress::step("loading the graph", || inputs::read_graph(&args.graph)).context("loading the graph")?;
    let nodes = graph.nrows();
    let raw_labels = pimgnn::io::npy::read_labels(&args.labels).context("loading the labels")?;
    let model = match &args.model {
        Some(path) => Model::load(path).context("loading the initial model")?,
        None => {
            // As PyG's `dataset.num_classes`: one more than the largest label.
            let classes = raw_labels.iter().copied().max().map_or(0, |max| max + 1).max(1) as usize;
            let width = feature_width(&args.features, nodes)?;
            initial_model(args.arch, &[width, args.hidden, classes], args.seed)?
        }
    };
    let model = if args.train_eps { model.with_train_eps(&[true]).context("--train-eps")? } else { model };
    let classes = model.out_features();
    let features =
        progress::step("loading the features", || inputs::read_features(&args.features, nodes, model.in_features()))
            .context("loading the features")?;
    let labels = inputs::read_labels(&args.labels, nodes, classes).context("loading the labels")?;
    let read_mask =
        |path: &PathBuf| inputs::read_mask(path, nodes).with_context(|| format!("loading {}", path.display()));
    let train_mask = read_mask(&args.train_mask)?;
    let evaluation = Evaluation {
        labels: labels.clone(),
        train: train_mask.clone(),
        val: args.val_mask.as_ref().map(read_mask).transpose()?,
        test: args.test_mask.as_ref().map(read_mask).transpose()?,
    };
    Ok(Inputs { graph, model, features, labels, train_mask, evaluation, optimizer: optimizer(args) })
}

/// The optimiser the arguments ask for.
pub(super) fn optimizer(args: &TrainArgs) -> OptimizerKind {
    match args.optimizer {
        OptimizerChoice::Adam => {
            OptimizerKind::Adam(Adam { lr: args.lr, weight_decay: args.weight_decay, ..Adam::default() })
        }
        OptimizerChoice::Sgd => OptimizerKind::Sgd(Sgd {
            lr: args.lr,
            momentum: args.momentum,
            weight_decay: args.weight_decay,
            ..Sgd::default()
        }),
    }
}

/// One line saying what is trained on what.
pub(super) fn describe(args: &TrainArgs, inputs: &Inputs) -> String {
    let model = &inputs.model;
    let layers: Vec<String> = model
        .layers()
        .iter()
        .map(|(name, l)| format!("{name} {} {} -> {}", l.kind(), l.in_features(), l.out_features()))
        .collect();
    format!(
        "workload: {} ({} nodes, {} edges), {} features, {} training nodes; model {} ({})",
        args.graph.display(),
        inputs.graph.nrows(),
        inputs.graph.nnz(),
        model.in_features(),
        inputs.train_mask.iter().filter(|&&m| m).count(),
        model.architecture(),
        layers.join(", ")
    )
}

/// Runs `pimgnn train`.
pub fn run(args: &TrainArgs) -> anyhow::Result<()> {
    if args.distributed.distributed {
        return super::distributed::train(args);
    }
    let inputs = load_inputs(args)?;
    println!("{}", describe(args, &inputs));
    let Inputs { graph, model, features, labels, train_mask, evaluation, optimizer } = inputs;
    let targets = Targets::new(labels, train_mask, graph.nrows(), model.out_features())?;
    let options = args.pim_args.engine_options(args.backend.backend, Vec::new());
    let started = Instant::now();
    let mut trainer = progress::step("loading the graph into the engines", || {
        Trainer::new(model, &graph, features, targets, optimizer, &options)
    })
    .context("building the training engines")?;
    let setup = started.elapsed();
    drop(graph);
    let propagator = trainer.propagator();
    pim_args::print_backend(args.backend.backend, propagator.backend(), propagator.decision());
    if let Some(balance) = propagator.balance() {
        println!(
            "load balance: nonzeros per DPU min {} / median {} / max {}",
            balance.min, balance.median, balance.max
        );
    }
    println!("plan: {}", propagator.plan());
    println!("optimiser: {:?}", trainer.optimizer().kind());

    let mut history = args.history.as_deref().map(History::create).transpose()?;
    let bar = epoch_bar(args.epochs);
    for epoch in 0..args.epochs {
        let result = trainer.epoch().with_context(|| format!("epoch {epoch}"))?;
        let accuracies = evaluation.of(&result.logits)?;
        if let Some(history) = &mut history {
            history.record(epoch, result.loss, &accuracies)?;
        }
        let line = format!("epoch {epoch:>4}: loss {:.6}, accuracy {accuracies}", result.loss);
        match &bar {
            Some(bar) => {
                bar.set_message(line);
                bar.inc(1);
            }
            None => log::info!("{line}"),
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let timings = trainer.timings().clone();
    let logits = trainer.logits()?;
    println!("{}", timing_table(setup, &timings, args.epochs));
    let per_epoch = |d: Duration| millis(d) / args.epochs as f64;
    print!("per epoch: {:.2} ms wall on backend `{}`", per_epoch(timings.wall()), trainer.propagator().backend());
    match timings.on_hardware() {
        Some(predicted) => println!(", {:.2} ms predicted with aggregation on PIM hardware", per_epoch(predicted)),
        None => println!(),
    }
    finish(args, &trainer, &evaluation.of(&logits)?)
}

/// Prints the final accuracies and where the history went, and writes the trained model to --output.
pub(super) fn finish(args: &TrainArgs, trainer: &Trainer, accuracies: &Accuracies) -> anyhow::Result<()> {
    println!("final model after {} epochs: accuracy {accuracies}", args.epochs);
    if let Some(history) = &args.history {
        println!("history: {}", history.display());
    }
    match &args.output {
        Some(output) => save_trained(output, trainer, args.epochs, accuracies),
        None => Ok(()),
    }
}

/// Writes `trainer`'s model to `output` with what produced it and its accuracies as metadata.
fn save_trained(output: &Path, trainer: &Trainer, epochs: usize, accuracies: &Accuracies) -> anyhow::Result<()> {
    let mut extra = vec![
        ("framework", format!("pimgnn {}", env!("CARGO_PKG_VERSION"))),
        ("stage", format!("final, after step {epochs}")),
        ("epochs", epochs.to_string()),
        ("optimizer", format!("{:?}", trainer.optimizer().kind())),
        ("train_accuracy", format!("{:.4}", accuracies.train)),
    ];
    extra.extend(accuracies.val.map(|v| ("val_accuracy", format!("{v:.4}"))));
    extra.extend(accuracies.test.map(|t| ("test_accuracy", format!("{t:.4}"))));
    trainer.model().save(output, &extra)?;
    println!("model: {}", output.display());
    Ok(())
}

/// The feature width of a file, for a model made to fit it.
fn feature_width(path: &Path, nodes: usize) -> anyhow::Result<usize> {
    let is_npy = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if is_npy {
        return Ok(pimgnn::io::npy::read_dense_f32(path).context("loading the features")?.cols());
    }
    let coo = pimgnn::io::read_graph(path)
        .or_else(|_| pimgnn::io::read_triples_csv(path))
        .context("reading the feature width")?;
    // CSV triples may leave out the last nodes (their features are 0), as `inputs::read_features` allows.
    let is_triples = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if coo.nrows() > nodes || (!is_triples && coo.nrows() != nodes) {
        bail!("{}: {} feature rows for a graph of {nodes} nodes", path.display(), coo.nrows());
    }
    Ok(coo.ncols())
}

/// A bar over the epochs, on a terminal only (elsewhere each epoch is a log line).
fn epoch_bar(epochs: usize) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(epochs as u64);
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} ({elapsed}, {eta} left) {msg}") {
        bar.set_style(style);
    }
    Some(bar)
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// Wall and predicted time per stage, in total and per epoch.
fn timing_table(setup: Duration, timings: &Timings, epochs: usize) -> Table {
    let mut table = table::with_header([
        "stage",
        "wall (ms)",
        "wall per epoch (ms)",
        "predicted on PIM hardware per epoch (ms; host stages at wall time)",
    ]);
    let per_epoch = |d: Duration| format!("{:.2}", millis(d) / epochs as f64);
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    table.add_row([
        Cell::new("setup (graph into the engines, once)"),
        right(format!("{:.2}", millis(setup))),
        right("-".to_owned()),
        right("-".to_owned()),
    ]);
    let mut row = |stage: String, wall: Duration, predicted: Option<Duration>| {
        table.add_row([
            Cell::new(stage),
            right(format!("{:.2}", millis(wall))),
            right(per_epoch(wall)),
            right(predicted.map_or_else(|| "-".to_owned(), per_epoch)),
        ]);
    };
    for stage in Stage::ALL {
        let time = timings.get(stage);
        // One server has no communication between ranks.
        if stage != Stage::Communication || !time.wall.is_zero() {
            row(stage.to_string(), time.wall, time.predicted);
        }
    }
    row(format!("all {epochs} epochs"), timings.wall(), timings.on_hardware());
    table::fit_to_terminal(&mut table);
    table
}
