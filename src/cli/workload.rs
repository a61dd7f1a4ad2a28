//! What `infer` and `bench` run: a model, a graph and its features from files, or the generated default.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::Args;
use pimgnn::gnn::{inputs, Model};
use pimgnn::graph::Dataset;
use pimgnn::{Csr, Dense};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::progress;

/// Nodes of the generated graph when not given.
const DEFAULT_NODES: usize = 100_000;
/// Edges of the generated graph when not given.
const DEFAULT_EDGES: usize = 1_000_000;
/// Feature width of the generated graph and of every layer of the generated GCN.
const DEFAULT_WIDTH: usize = 256;
/// Layers of the generated GCN.
const DEFAULT_LAYERS: usize = 3;
/// Hidden width of the GCN of a dataset-shaped workload: that of PyTorch Geometric's examples on Reddit and
/// ogbn-products.
const DATASET_HIDDEN: usize = 256;

/// Where the inputs come from.
#[derive(Args, Clone, Debug)]
pub struct WorkloadArgs {
    /// Graph: Matrix Market (.mtx, row = target, column = source) or CSV edge list (.csv). Default: a generated
    /// R-MAT graph (--nodes, --edges).
    #[arg(long, requires_all = ["features", "model"])]
    pub graph: Option<PathBuf>,
    /// Node features: .npy (dense float32), .mtx (sparse) or .csv (node,feature,value triples).
    #[arg(long, requires = "graph")]
    pub features: Option<PathBuf>,
    /// Model: a PyTorch Geometric state_dict saved with safetensors.
    #[arg(long, requires = "graph")]
    pub model: Option<PathBuf>,
    /// Instead of the default R-MAT graph, a generated graph of a published dataset's size: reddit,
    /// amazon-products, products (ogbn-products), proteins (ogbn-proteins) or arxiv (ogbn-arxiv). Its nodes,
    /// edges (power-law degrees), feature width and classes, uniform features and a seeded 2-layer GCN of
    /// hidden width 256.
    #[arg(long, conflicts_with = "graph")]
    pub workload: Option<Dataset>,
    /// Seed of the generated graph, features and weights.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub rmat: RmatArgs,
}

/// The size of the generated R-MAT graph (used without --graph and --workload).
#[derive(Args, Clone, Copy, Debug)]
pub struct RmatArgs {
    /// Nodes of the generated R-MAT graph.
    #[arg(long, default_value_t = DEFAULT_NODES, value_parser = nodes(), conflicts_with_all = ["graph", "workload"])]
    pub nodes: usize,
    /// Edges of the generated R-MAT graph (distinct, without self-loops).
    #[arg(long, default_value_t = DEFAULT_EDGES, conflicts_with_all = ["graph", "workload"])]
    pub edges: usize,
}

/// The node counts a generated graph can have: 1 to 2^32 (node ids are 32-bit).
fn nodes() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..=1 << 32)
}

impl RmatArgs {
    /// The R-MAT graph of this size from `seed`, under a spinner.
    pub fn generate(&self, seed: u64) -> anyhow::Result<Csr<f32>> {
        let what = format!("generating an R-MAT graph of {} nodes and {} edges", self.nodes, self.edges);
        let graph = progress::step(&what, || {
            pimgnn::graph::try_rmat(self.nodes, self.edges, seed, &pimgnn::graph::RmatParams::default())
        })?;
        Ok(graph)
    }
}

/// A model and its inputs.
pub struct Workload {
    /// One line saying what it is.
    pub description: String,
    /// The model.
    pub model: Model,
    /// The graph's adjacency matrix.
    pub graph: Csr<f32>,
    /// Node features.
    pub features: Dense<f32>,
}

impl WorkloadArgs {
    /// Loads or generates the workload, each step under a spinner.
    pub fn load(&self) -> anyhow::Result<Workload> {
        let Some(graph_path) = &self.graph else {
            return match self.workload {
                Some(dataset) => dataset_shaped(dataset, self.seed),
                None => generated(self.rmat, self.seed),
            };
        };
        let (Some(features_path), Some(model_path)) = (&self.features, &self.model) else {
            bail!("--graph needs --features and --model");
        };
        let model = Model::load(model_path).context("loading the model")?;
        let graph =
            progress::step("reading the graph", || inputs::read_graph(graph_path)).context("loading the graph")?;
        let features = progress::step("reading the features", || {
            inputs::read_features(features_path, graph.nrows(), model.in_features())
        })
        .context("loading the features")?;
        let description = format!(
            "{} ({} nodes, {} edges), features {}, model {}",
            graph_path.display(),
            graph.nrows(),
            graph.nnz(),
            features_path.display(),
            model_path.display()
        );
        Ok(Workload { description, model, graph, features })
    }
}

/// R-MAT graph, uniform features in [-1, 1) and a seeded GCN, as PyGim evaluates.
fn generated(size: RmatArgs, seed: u64) -> anyhow::Result<Workload> {
    let graph = size.generate(seed)?;
    pimgnn::host_memory::check(
        || format!("host memory (bytes) for {} x {DEFAULT_WIDTH} float32 features", size.nodes),
        (size.nodes as u64).saturating_mul(DEFAULT_WIDTH as u64 * 4),
    )?;
    let features = progress::step(&format!("generating {} x {DEFAULT_WIDTH} features", size.nodes), || {
        uniform_features(size.nodes, DEFAULT_WIDTH, seed ^ 0x5eed_f00d)
    });
    let model = Model::seeded_gcn(&[DEFAULT_WIDTH; DEFAULT_LAYERS + 1], seed)?;
    let description = format!(
        "generated: R-MAT graph of {} nodes and {} edges (seed {seed}), {DEFAULT_WIDTH} features, \
         {DEFAULT_LAYERS}-layer GCN of width {DEFAULT_WIDTH} with seeded weights",
        graph.nrows(),
        graph.nnz()
    );
    Ok(Workload { description, model, graph, features })
}

/// A graph of `dataset`'s size, uniform features of its width and a seeded 2-layer GCN to its classes.
fn dataset_shaped(dataset: Dataset, seed: u64) -> anyhow::Result<Workload> {
    let shape = dataset.shape();
    let widths = [shape.features, DATASET_HIDDEN, shape.classes];
    let model = Model::seeded_gcn(&widths, seed)?;
    let (graph, features) = dataset_graph_and_features(dataset, seed)?;
    let description = format!(
        "generated: {} ({}), power-law graph of {} nodes and {} edges (seed {seed}), {} features; 2-layer GCN \
         {widths:?} with seeded weights",
        dataset,
        shape.source,
        graph.nrows(),
        graph.nnz(),
        shape.features
    );
    Ok(Workload { description, model, graph, features })
}

/// `dataset`'s generated graph and uniform features in [-1, 1), each under a spinner.
pub fn dataset_graph_and_features(dataset: Dataset, seed: u64) -> anyhow::Result<(Csr<f32>, Dense<f32>)> {
    let shape = dataset.shape();
    let graph = progress::step(
        &format!("generating a {dataset}-shaped graph ({} nodes, {} edges)", shape.nodes, shape.edges),
        || dataset.graph(seed),
    )?;
    pimgnn::host_memory::check(
        || format!("host memory (bytes) for {} x {} float32 features", shape.nodes, shape.features),
        (shape.nodes as u64).saturating_mul(shape.features as u64 * 4),
    )?;
    let features = progress::step(&format!("generating {} x {} features", shape.nodes, shape.features), || {
        uniform_features(shape.nodes, shape.features, seed ^ 0x5eed_f00d)
    });
    Ok((graph, features))
}

/// `rows x width` features drawn uniformly from [-1, 1) by ChaCha8 seeded with `seed`.
pub fn uniform_features(rows: usize, width: usize, seed: u64) -> Dense<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let values = (0..rows * width).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    match Dense::from_vec(rows, width, values) {
        Ok(features) => features,
        Err(error) => unreachable!("{rows} x {width} values: {error}"),
    }
}
