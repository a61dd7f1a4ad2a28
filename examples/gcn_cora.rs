//! The 2-layer GCN trained with PyTorch Geometric on Cora, run by pimgnn: prints the test accuracy and how far
//! the logits are from PyG's.
//!
//! `cargo run --release --example gcn_cora -- --backend sim [--datasets ../shared/datasets] [--dtype i8]`

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;
use pimgnn::compare;
use pimgnn::gnn::{accuracy, inputs, Aggregator, Backend, Dtype, EngineOptions, Model};
use pimgnn::io::npy;

#[derive(Parser)]
struct Args {
    /// The datasets folder (default: $PIMGNN_DATASETS, else ../shared/datasets beside the workspace).
    #[arg(long)]
    datasets: Option<PathBuf>,
    /// Where aggregation runs: auto, simulator (sim), hardware (hw) or cpu.
    #[arg(long, default_value = "auto")]
    backend: Backend,
    /// Aggregation value type: f32, i32, i16 or i8.
    #[arg(long, default_value = "f32")]
    dtype: Dtype,
}

fn main() -> anyhow::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = Args::parse();
    let root = args
        .datasets
        .or_else(|| std::env::var_os("PIMGNN_DATASETS").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets"));

    let model = Model::load(&root.join("models/cora_gcn.safetensors")).context("the Cora model")?;
    let graph = inputs::read_graph(&root.join("cora/graph.mtx"))?;
    let features = inputs::read_features(&root.join("cora/features.mtx"), graph.nrows(), model.in_features())?;
    let labels = inputs::read_labels(&root.join("cora/labels.npy"), graph.nrows(), model.out_features())?;
    let test_mask = inputs::read_mask(&root.join("cora/test_mask.npy"), graph.nrows())?;

    let matrix = model.architecture().aggregation().matrix(&graph)?;
    let options =
        EngineOptions { backend: args.backend, widths: model.aggregation_widths(), ..EngineOptions::default() };
    let mut aggregator = Aggregator::new(matrix, args.dtype, &options)?;
    let inference = model.forward(&features, &mut aggregator)?;
    let logits = &inference.logits;

    let expected = npy::read_dense_f32(&root.join("models/cora_gcn_logits.npy"))?;
    let difference = compare::max_abs_difference("logits, against PyG's", logits, &expected)?;
    println!("backend {}, aggregation in {}", aggregator.backend(), aggregator.dtype());
    println!("test accuracy {:.4} (PyG: 0.8090)", accuracy(logits, &labels, &test_mask)?);
    println!("largest difference from PyG's logits: {difference:.2e}");
    let millis = |duration: std::time::Duration| format!("{:.2} ms", duration.as_secs_f64() * 1e3);
    let predicted = inference.predicted().map_or_else(|| "-".to_owned(), millis);
    println!(
        "forward pass: {} wall, {predicted} predicted on PIM hardware (host steps at wall time)",
        millis(inference.wall())
    );
    Ok(())
}
