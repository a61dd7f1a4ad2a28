//! R-MAT (Chakrabarti, Zhan, Faloutsos 2004), with Graph500's parameters by default.

use rand::Rng;

use super::{check_size, distinct_edges, shuffled_ids};
use crate::error::{Error, Result};
use crate::sparse::Csr;

/// The quadrant probabilities of R-MAT: at each of the `log2(n)` levels an edge falls in the top-left
/// quadrant with probability `a`, top-right `b`, bottom-left `c` and bottom-right `1 - a - b - c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RmatParams {
    /// Top-left (both endpoints in the lower half of the id range).
    pub a: f64,
    /// Top-right.
    pub b: f64,
    /// Bottom-left.
    pub c: f64,
    /// Whether vertex ids are shuffled (by a permutation drawn from the seed) after generation, as Graph500
    /// does. Without it the hubs are the lowest ids and the matrix is far more cache-friendly than real
    /// graphs.
    pub permute: bool,
}

impl Default for RmatParams {
    /// Graph500: a = 0.57, b = 0.19, c = 0.19 (d = 0.05), ids permuted.
    fn default() -> Self {
        RmatParams { a: 0.57, b: 0.19, c: 0.19, permute: true }
    }
}

/// An R-MAT graph with Graph500's parameters ([`RmatParams::default`]): `edges` distinct directed edges (no
/// self-loops, at most `nodes * (nodes - 1)`) between `nodes` vertices, as CSR with values 1.0.
///
/// Vertices are drawn from the next power of two at or above `nodes` and draws at or above `nodes` are
/// rejected, so `nodes` need not be a power of two and the degree distribution keeps R-MAT's shape; self-loops
/// and repeated edges are rejected too and drawn again until there are `edges`. Graph500's per-level noise is
/// not applied.
///
/// # Panics
///
/// If `nodes` exceeds 2^32 or `edges` exceeds `u32::MAX` ([`try_rmat`] returns an error instead).
pub fn rmat(nodes: usize, edges: usize, seed: u64) -> Csr<f32> {
    try_rmat(nodes, edges, seed, &RmatParams::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// [`rmat`] with other parameters, and an error for invalid probabilities or sizes beyond 32-bit indices.
pub fn try_rmat(nodes: usize, edges: usize, seed: u64, params: &RmatParams) -> Result<Csr<f32>> {
    check_size(nodes, edges)?;
    let quadrants = Quadrants::new(params)?;
    let levels = nodes.max(1).next_power_of_two().trailing_zeros();
    let permutation = params.permute.then(|| shuffled_ids(nodes, seed));
    let n = nodes as u64;
    let graph = distinct_edges(nodes, edges, seed, |rng| {
        let (mut row, mut col) = (0u64, 0u64);
        for _ in 0..levels {
            let (down, right) = quadrants.pick(rng.next_u32());
            row = row << 1 | u64::from(down);
            col = col << 1 | u64::from(right);
        }
        if row >= n || col >= n || row == col {
            return None;
        }
        Some(match &permutation {
            Some(ids) => (ids[row as usize], ids[col as usize]),
            None => (row as u32, col as u32),
        })
    });
    Ok(graph)
}

/// The quadrant probabilities as cumulative thresholds on 32-bit random words, so that picking a quadrant is
/// integer arithmetic and gives the same graph on every platform.
struct Quadrants {
    a: u32,
    ab: u32,
    abc: u32,
}

impl Quadrants {
    fn new(params: &RmatParams) -> Result<Self> {
        let RmatParams { a, b, c, .. } = *params;
        let valid = |p: f64| (0.0..=1.0).contains(&p);
        if !(valid(a) && valid(b) && valid(c) && valid(a + b + c)) {
            return Err(Error::invalid(
                "R-MAT parameters",
                format!("a, b, c and a + b + c must lie in [0, 1], found a = {a}, b = {b}, c = {c}"),
            ));
        }
        let threshold = |p: f64| (p * 2f64.powi(32)).round().min(f64::from(u32::MAX)) as u32;
        Ok(Quadrants { a: threshold(a), ab: threshold(a + b), abc: threshold(a + b + c) })
    }

    /// The quadrant a random word falls in, as (lower half of rows?, right half of columns?), computed without
    /// branches, which R-MAT's random choices would mispredict half the time.
    fn pick(&self, word: u32) -> (bool, bool) {
        let (past_a, past_ab, past_abc) = (word >= self.a, word >= self.ab, word >= self.abc);
        // a: (0, 0, 0), b: (1, 0, 0), c: (1, 1, 0), d: (1, 1, 1); the right half is b and d.
        (past_ab, past_a ^ past_ab ^ past_abc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_exact_and_seeded() {
        let g = rmat(5000, 50_000, 42);
        assert_eq!((g.nrows(), g.nnz()), (5000, 50_000));
        for r in 0..g.nrows() {
            let (cols, _) = g.row(r);
            assert!(cols.windows(2).all(|w| w[0] < w[1]), "row {r} sorted without repeats");
            assert!(!cols.contains(&(r as u32)), "row {r} has no self-loop");
        }
        assert_eq!(g, rmat(5000, 50_000, 42));
        assert_ne!(g, rmat(5000, 50_000, 43));
    }

    #[test]
    fn degrees_are_skewed_and_ids_shuffled() {
        let plain = RmatParams { permute: false, ..RmatParams::default() };
        let g = try_rmat(1 << 12, 1 << 16, 5, &plain).unwrap();
        let degree = |r: usize| g.row(r).0.len();
        let max_degree = (0..g.nrows()).map(degree).max().unwrap();
        // The average degree is 16; R-MAT's hubs are far above it, and unshuffled the biggest is vertex 0.
        assert!(max_degree > 400, "max degree {max_degree}");
        assert_eq!(degree(0), max_degree);
        let shuffled = try_rmat(1 << 12, 1 << 16, 5, &RmatParams::default()).unwrap();
        let shuffled_max = (0..shuffled.nrows()).map(|r| shuffled.row(r).0.len()).max().unwrap();
        assert!(shuffled_max > 400);
        assert_ne!(shuffled.row(0).0.len(), shuffled_max);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        let refusal = |params: &RmatParams| match try_rmat(100, 100, 0, params) {
            Err(Error::Invalid { what, reason }) if what == "R-MAT parameters" => reason,
            other => panic!("{params:?}: {other:?}"),
        };
        let rule = "a, b, c and a + b + c must lie in [0, 1], found";
        let over_one = RmatParams { a: 0.9, b: 0.2, ..RmatParams::default() };
        assert_eq!(refusal(&over_one), format!("{rule} a = 0.9, b = 0.2, c = 0.19"));
        let negative = RmatParams { c: -0.1, ..RmatParams::default() };
        assert_eq!(refusal(&negative), format!("{rule} a = 0.57, b = 0.19, c = -0.1"));
    }

    #[test]
    fn odd_sizes_stay_in_range() {
        for nodes in [1, 2, 3, 1000, 1025] {
            let g = rmat(nodes, 3 * nodes, 9);
            assert_eq!(g.nrows(), nodes);
            assert_eq!(g.nnz(), (3 * nodes).min(nodes * (nodes - 1)));
        }
    }
}
