//! pimgnn as a library in a few lines: a generated graph, a seeded 2-layer GCN, one forward pass.
//!
//! `cargo run --release --example embed -- --backend cpu`

use pimgnn::gnn::{Aggregator, Backend, Dtype, EngineOptions, Model};

fn main() -> pimgnn::Result<()> {
    let backend: Backend =
        std::env::args().skip_while(|a| a != "--backend").nth(1).as_deref().unwrap_or("auto").parse()?;
    let graph = pimgnn::graph::rmat(10_000, 80_000, 1);
    let features = pimgnn::Dense::from_vec(10_000, 32, (0..320_000).map(|i| (i % 13) as f32 / 13.0).collect())?;
    let model = Model::seeded_gcn(&[32, 16, 4], 1)?;

    let matrix = model.architecture().aggregation().matrix(&graph)?;
    let mut aggregator = Aggregator::new(
        matrix,
        Dtype::F32,
        &EngineOptions { backend, widths: model.aggregation_widths(), ..Default::default() },
    )?;
    let inference = model.forward(&features, &mut aggregator)?;
    let logits = &inference.logits;
    println!("{} x {} logits on {}; node 0: {:?}", logits.rows(), logits.cols(), aggregator.backend(), logits.row(0));
    if let Some(predicted) = inference.predicted() {
        println!("{:?} wall, {predicted:?} predicted on PIM hardware", inference.wall());
    }
    Ok(())
}
