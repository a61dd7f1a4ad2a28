//! Generated graphs for benchmarks and default runs.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::sparse::{Coo, Csr};

/// Graph500's R-MAT quadrant probabilities (a, b, c; d = 1 - a - b - c).
const RMAT_PROBABILITIES: [f64; 3] = [0.57, 0.19, 0.19];

/// A directed R-MAT graph (Chakrabarti et al. 2004, Graph500's parameters) of `nodes` nodes and `edges`
/// edges, as its adjacency matrix (row = target, column = source, value 1.0). Edges are drawn in a
/// `2^k x 2^k` matrix with `2^k >= nodes` and redrawn when they fall outside `nodes`; self-loops and repeated
/// edges are kept, as R-MAT draws them. The same seed gives the same graph.
pub fn rmat(nodes: usize, edges: usize, seed: u64) -> Csr<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let levels = nodes.max(1).next_power_of_two().trailing_zeros();
    let [a, b, c] = RMAT_PROBABILITIES;
    let (mut rows, mut cols) = (Vec::with_capacity(edges), Vec::with_capacity(edges));
    while rows.len() < edges && nodes > 0 {
        let (mut row, mut col) = (0usize, 0usize);
        for level in 0..levels {
            let bit = 1 << level;
            let draw: f64 = rng.random();
            let (lower, right) = if draw < a {
                (false, false)
            } else if draw < a + b {
                (false, true)
            } else {
                (true, draw >= a + b + c)
            };
            row |= usize::from(lower) * bit;
            col |= usize::from(right) * bit;
        }
        if row < nodes && col < nodes {
            rows.push(row as u32);
            cols.push(col as u32);
        }
    }
    let values = vec![1.0; rows.len()];
    match Coo::new(nodes, nodes, rows, cols, values) {
        Ok(coo) => coo.to_csr(),
        Err(error) => unreachable!("R-MAT draws indices below `nodes`: {error}"),
    }
}
