//! `pimgnn infer`: one forward pass, with the timing of every layer and phase.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context as _};
use clap::Args;
use pimgnn::gnn::{accuracy, inputs, Aggregator, Dtype, EngineOptions, Overlap};
use pimgnn::io::npy;
use pimgnn::Phase;

use super::output;
use super::pim_args::{self, AttentionArgs, BackendArgs, PimArgs};
use super::progress;
use super::timings;
use super::workload::WorkloadArgs;

/// Arguments of `pimgnn infer`.
#[derive(Args, Debug)]
pub struct InferArgs {
    #[command(flatten)]
    pub(super) workload: WorkloadArgs,
    #[command(flatten)]
    pub(super) backend: BackendArgs,
    #[command(flatten)]
    pub(super) pim_args: PimArgs,
    #[command(flatten)]
    attention: AttentionArgs,
    /// Value type of aggregation: f32 (exact) or quantized i32, i16, i8.
    #[arg(long, default_value = "f32")]
    pub(super) dtype: Dtype,
    /// Run each layer's dense steps after its whole aggregation instead of overlapping them with the merge,
    /// and with `--distributed` the halo exchange before the aggregation instead of during the interior rows'
    /// (same logits; the timeline without the overlaps).
    #[arg(long)]
    pub(super) no_overlap: bool,
    /// Write the final layer's output as float32 .npy [nodes, classes].
    #[arg(long)]
    pub(super) output: Option<PathBuf>,
    #[command(flatten)]
    pub(super) distributed: super::distributed::DistributedArgs,
    #[command(flatten)]
    pub(super) network: super::distributed::NetworkArgs,
    /// Class labels (.npy, int64), to report accuracy over --mask.
    #[arg(long, requires = "mask")]
    labels: Option<PathBuf>,
    /// Nodes to report accuracy on (.npy, bool).
    #[arg(long, requires = "labels")]
    mask: Option<PathBuf>,
}

/// Runs `pimgnn infer`.
pub fn run(args: &InferArgs) -> anyhow::Result<()> {
    if args.distributed.distributed {
        if args.labels.is_some() {
            bail!("--labels and --mask are not taken with --distributed yet");
        }
        return super::distributed::infer(args);
    }
    if args.labels.is_some() && args.workload.graph.is_none() {
        bail!("--labels and --mask need the --graph they label");
    }
    if let Some(output) = &args.output {
        output::check_writable("--output", output)?;
    }
    let started = Instant::now();
    let workload = args.workload.load()?;
    let mut setup = vec![Phase { name: "inputs (read or generated)".into(), wall: started.elapsed(), predicted: None }];
    let nodes = workload.graph.nrows();
    let labelled = match (&args.labels, &args.mask) {
        (Some(labels), Some(mask)) => {
            Some((inputs::read_labels(labels, nodes, workload.model.out_features())?, inputs::read_mask(mask, nodes)?))
        }
        _ => None,
    };
    println!("workload: {}", workload.description);

    let backend = args.backend.backend;
    let options = EngineOptions {
        attention: args.attention.attention,
        ..args.pim_args.engine_options(backend, workload.model.aggregation_widths())
    };
    let started = Instant::now();
    let aggregation = workload.model.architecture().aggregation();
    let matrix = aggregation.matrix(&workload.graph)?;
    setup.push(Phase { name: "aggregation matrix".into(), wall: started.elapsed(), predicted: None });
    let started = Instant::now();
    let mut aggregator = progress::step("loading the graph into the engine", || {
        Aggregator::for_aggregation(aggregation, matrix, args.dtype, &options)
    })
    .context("building the aggregation engine")?;
    setup.push(Phase { name: "engine (graph resident)".into(), wall: started.elapsed(), predicted: None });

    pim_args::print_backend(args.backend.backend, aggregator.backend(), aggregator.decision());
    if let Some(balance) = aggregator.balance() {
        println!(
            "load balance: nonzeros per DPU min {} / median {} / max {}",
            balance.min, balance.median, balance.max
        );
    }
    println!(
        "plan: {aggregation} aggregation in {}, the matrix resident for every layer: {}",
        aggregator.dtype(),
        aggregator.plan()
    );

    let overlap = if args.no_overlap { Overlap::Sequential } else { Overlap::Overlapped };
    let layers = progress::LayerBar::new("running the model", &workload.model);
    let inference =
        workload.model.forward_reporting(&workload.features, &mut aggregator, overlap, |_| layers.done())?;
    drop(layers);
    println!("{}", timings::timings(&setup, &inference.layers));
    let phases: Vec<Phase> = inference.layers.iter().flat_map(|layer| layer.phases.iter().cloned()).collect();
    if let Some(predicted) = timings::predicted(&phases) {
        let wall: std::time::Duration = inference.layers.iter().map(|layer| layer.wall()).sum();
        println!(
            "model: {:.2} ms predicted on PIM hardware (host steps at wall time), {:.2} ms wall on backend `{}`",
            predicted.as_secs_f64() * 1e3,
            wall.as_secs_f64() * 1e3,
            aggregator.backend()
        );
    }

    if let Some((labels, mask)) = &labelled {
        let score = accuracy(&inference.logits, labels, mask)?;
        println!("accuracy: {score:.4} over {} nodes", mask.iter().filter(|&&m| m).count());
    }
    if let Some(output) = &args.output {
        npy::write_dense_f32(output, &inference.logits)?;
        println!("logits: {} ({} x {} float32)", output.display(), inference.logits.rows(), inference.logits.cols());
    }
    Ok(())
}
