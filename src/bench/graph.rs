//! Features for the benchmark, and its graphs through [`crate::graph`] and [`crate::io`].

use std::path::Path;

use crate::error::Result;
use crate::sparse::{Csr, Dense};

/// splitmix64: a small seeded generator for reproducible inputs.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A dense `rows x features` matrix of values in [-1, 1).
pub(crate) fn features(rows: usize, features: usize, seed: u64) -> Dense<f32> {
    let mut rng = SplitMix(seed);
    let data = (0..rows * features).map(|_| (rng.unit() * 2.0 - 1.0) as f32).collect();
    Dense::from_vec(rows, features, data).expect("rows x features values")
}

/// A graph file as an adjacency matrix: Matrix Market files as stored, CSV edge lists (undirected edges listed
/// once) made symmetric.
pub(crate) fn read_edges(path: &Path) -> Result<Csr<f32>> {
    let coo = crate::io::read_graph(path)?;
    let is_csv = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    Ok(if is_csv { coo.symmetrized()? } else { coo }.to_csr())
}
