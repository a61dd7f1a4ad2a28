//! A 2-layer GraphSAGE (mean) on a generated R-MAT graph, with seeded weights: prints each layer's time.
//!
//! `cargo run --release --example sage_generated -- --backend sim --nodes 50000 --edges 500000`

use clap::Parser;
use pimgnn::gnn::{Aggregator, Architecture, Backend, Dtype, EngineOptions, Layer, Linear, Model, SageConv};
use pimgnn::Dense;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// The command line's table style, so that the example prints as `pimgnn` does.
#[path = "../src/cli/table.rs"]
mod table;

#[derive(Parser)]
struct Args {
    /// Where aggregation runs: auto, simulator (sim), hardware (hw) or cpu.
    #[arg(long, default_value = "auto")]
    backend: Backend,
    /// Nodes of the graph.
    #[arg(long, default_value_t = 50_000)]
    nodes: usize,
    /// Edges of the graph.
    #[arg(long, default_value_t = 500_000)]
    edges: usize,
    /// Widths: input, hidden, output.
    #[arg(long, num_args = 3, default_values_t = [128, 64, 16])]
    widths: Vec<usize>,
}

fn random(rng: &mut ChaCha8Rng, rows: usize, cols: usize) -> anyhow::Result<Dense<f32>> {
    Ok(Dense::from_vec(rows, cols, (0..rows * cols).map(|_| rng.random_range(-0.5f32..0.5)).collect())?)
}

fn millis(duration: std::time::Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1e3)
}

fn main() -> anyhow::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = Args::parse();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let graph = pimgnn::graph::rmat(args.nodes, args.edges, 3);
    let features = random(&mut rng, args.nodes, args.widths[0])?;

    let mut layers = Vec::new();
    for (at, pair) in args.widths.windows(2).enumerate() {
        let (inputs, outputs) = (pair[0], pair[1]);
        let lin_l = Linear::new(random(&mut rng, outputs, inputs)?, Some(vec![0.1; outputs]))?;
        let lin_r = Linear::new(random(&mut rng, outputs, inputs)?, None)?;
        layers.push((format!("convs.{at}"), Layer::Sage(SageConv::new(lin_l, lin_r)?)));
    }
    let model = Model::new(Architecture::Sage, layers)?;

    // One resident matrix for both layers: the graph's rows scaled to means.
    let matrix = model.architecture().aggregation().matrix(&graph)?;
    let options =
        EngineOptions { backend: args.backend, widths: model.aggregation_widths(), ..EngineOptions::default() };
    let mut aggregator = Aggregator::new(matrix, Dtype::F32, &options)?;
    let inference = model.forward(&features, &mut aggregator)?;

    println!("GraphSAGE on {} nodes, {} edges, backend {}", graph.nrows(), graph.nnz(), aggregator.backend());
    let mut table = table::with_header(["layer", "wall", "predicted hardware (host steps at wall time)"]);
    for layer in &inference.layers {
        let name = format!("{} {} -> {} ({})", layer.name, layer.widths.0, layer.widths.1, layer.order);
        table.add_row([name, millis(layer.wall()), layer.predicted().map_or_else(|| "-".to_owned(), millis)]);
    }
    table.add_row([
        "forward pass".to_owned(),
        millis(inference.wall()),
        inference.predicted().map_or_else(|| "-".to_owned(), millis),
    ]);
    table::fit_to_terminal(&mut table);
    println!("{table}");
    println!("output: {} x {}", inference.logits.rows(), inference.logits.cols());
    Ok(())
}
