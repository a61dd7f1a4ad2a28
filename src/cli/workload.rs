//! What `infer` and `bench` run: a model, a graph and its features from files, or the generated default.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::Args;
use pimgnn::gnn::{inputs, Model};
use pimgnn::{Csr, Dense};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// Nodes of the generated graph.
const DEFAULT_NODES: usize = 100_000;
/// Edges of the generated graph.
const DEFAULT_EDGES: usize = 1_000_000;
/// Feature width of the generated graph and of every layer of the generated GCN.
const DEFAULT_WIDTH: usize = 256;
/// Layers of the generated GCN.
const DEFAULT_LAYERS: usize = 3;

/// Where the inputs come from.
#[derive(Args, Clone, Debug)]
pub struct WorkloadArgs {
    /// Graph: Matrix Market (.mtx, row = target, column = source) or CSV edge list (.csv). Default: R-MAT,
    /// 100,000 nodes, 1,000,000 edges.
    #[arg(long, requires_all = ["features", "model"])]
    pub graph: Option<PathBuf>,
    /// Node features: .npy (dense float32), .mtx (sparse) or .csv (node,feature,value triples).
    #[arg(long, requires = "graph")]
    pub features: Option<PathBuf>,
    /// Model: a PyTorch Geometric state_dict saved with safetensors.
    #[arg(long, requires = "graph")]
    pub model: Option<PathBuf>,
    /// Seed of the generated graph, features and weights.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
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
    /// Loads or generates the workload.
    pub fn load(&self) -> anyhow::Result<Workload> {
        let Some(graph_path) = &self.graph else {
            return Ok(generated(self.seed));
        };
        let (Some(features_path), Some(model_path)) = (&self.features, &self.model) else {
            bail!("--graph needs --features and --model");
        };
        let model = Model::load(model_path).context("loading the model")?;
        let graph = inputs::read_graph(graph_path).context("loading the graph")?;
        let features =
            inputs::read_features(features_path, graph.nrows(), model.in_features()).context("loading the features")?;
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
fn generated(seed: u64) -> Workload {
    let graph = pimgnn::graph::rmat(DEFAULT_NODES, DEFAULT_EDGES, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_f00d);
    let values = (0..DEFAULT_NODES * DEFAULT_WIDTH).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let features = match Dense::from_vec(DEFAULT_NODES, DEFAULT_WIDTH, values) {
        Ok(features) => features,
        Err(error) => unreachable!("{DEFAULT_NODES} x {DEFAULT_WIDTH} values: {error}"),
    };
    let model = match Model::seeded_gcn(&[DEFAULT_WIDTH; DEFAULT_LAYERS + 1], seed) {
        Ok(model) => model,
        Err(error) => unreachable!("a GCN of {DEFAULT_LAYERS} layers of width {DEFAULT_WIDTH}: {error}"),
    };
    let description = format!(
        "generated: R-MAT graph of {} nodes and {} edges (seed {seed}), {DEFAULT_WIDTH} features, \
         {DEFAULT_LAYERS}-layer GCN of width {DEFAULT_WIDTH} with seeded weights",
        graph.nrows(),
        graph.nnz()
    );
    Workload { description, model, graph, features }
}
