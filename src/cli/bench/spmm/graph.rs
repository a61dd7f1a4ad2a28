//! Features for the benchmark, and its graphs through [`pimgnn::graph`] and [`pimgnn::io`].

use std::path::Path;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use pimgnn::{Csr, Dense, Result};

/// A dense `rows x features` matrix of values in [-1, 1).
pub fn features(rows: usize, features: usize, seed: u64) -> Dense<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let data = (0..rows * features).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    Dense::from_vec(rows, features, data).expect("rows x features values")
}

/// A graph file as an adjacency matrix: Matrix Market files as stored, CSV edge lists (undirected edges listed
/// once) made symmetric.
pub fn read_edges(path: &Path) -> Result<Csr<f32>> {
    let coo = pimgnn::io::read_graph(path)?;
    let is_csv = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    Ok(if is_csv { coo.symmetrized()? } else { coo }.to_csr())
}
