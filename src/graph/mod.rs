//! Seeded random graphs for tests and benchmarks: R-MAT ([`rmat`], Graph500-style power-law graphs),
//! Erdos-Renyi G(n, m) ([`erdos_renyi`]) and G(n, p) ([`erdos_renyi_gnp`]), Chung-Lu power-law graphs at the
//! size of real datasets ([`power_law`]), and the shapes of the datasets GNN papers evaluate ([`Dataset`]).
//!
//! R-MAT and G(n, m) return simple directed graphs as `n x n` CSR adjacency matrices with values 1.0: exactly
//! the number of edges asked for (up to all `n (n - 1)` pairs), each distinct and none a self-loop, columns
//! ascending within each row. Use [`crate::Coo::symmetrized`] for an undirected graph and
//! [`Csr::with_self_loops`] for GCN's `A + I`.
//!
//! The same `(nodes, edges, seed)` gives the same graph on every platform and thread count: samples are drawn
//! in fixed-size blocks, block `b` from ChaCha8 seeded with `seed` on stream `b`, only integer arithmetic turns
//! random words into vertices, and the graph is the first `edges` distinct pairs in block order. Blocks run in
//! parallel (about 0.2 s for the default benchmark graph, 100,000 nodes and 1,000,000 edges, on one core).

mod dataset;
mod gnp;
mod power_law;
mod rmat;

pub use dataset::{Dataset, DatasetShape};
pub use gnp::erdos_renyi_gnp;
pub use power_law::{degree_exponent, power_law, Direction};
pub use rmat::{rmat, try_rmat, RmatParams};

use rand::rngs::ChaCha8Rng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use rustc_hash::FxHashSet;

use crate::error::{Error, Result};
use crate::sparse::Csr;

/// Samples per block: the unit of parallel work and of the random streams.
const SAMPLES_PER_BLOCK: usize = 1 << 16;

/// Rounds of top-up sampling before giving up on reaching the edge count (see [`distinct_edges`]).
const MAX_ROUNDS: usize = 64;

/// Erdos-Renyi G(n, m): `edges` distinct directed edges between `nodes` vertices, drawn uniformly among the
/// `nodes * (nodes - 1)` pairs without self-loops (at most that many).
///
/// # Panics
///
/// If `nodes` exceeds 2^32 or `edges` exceeds `u32::MAX`: 32-bit CSR indices cannot hold that graph
/// ([`try_erdos_renyi`] returns an error instead).
pub fn erdos_renyi(nodes: usize, edges: usize, seed: u64) -> Csr<f32> {
    try_erdos_renyi(nodes, edges, seed).unwrap_or_else(|e| panic!("{e}"))
}

/// [`erdos_renyi`], with an error for sizes beyond 32-bit CSR indices.
pub fn try_erdos_renyi(nodes: usize, edges: usize, seed: u64) -> Result<Csr<f32>> {
    check_size(nodes, edges)?;
    let n = nodes as u64;
    Ok(distinct_edges(nodes, edges, seed, |rng| {
        let word = rng.next_u64();
        let (row, col) = (below(word as u32, n), below((word >> 32) as u32, n));
        (row != col).then_some((row as u32, col as u32))
    }))
}

/// Rejects an adjacency matrix that is not square (nodes x nodes).
pub(crate) fn check_adjacency(graph: &Csr<f32>) -> Result<()> {
    if graph.nrows() == graph.ncols() {
        Ok(())
    } else {
        Err(Error::shape(
            "graph adjacency matrix (nodes x nodes)",
            "a square matrix",
            format!("{} x {}", graph.nrows(), graph.ncols()),
        ))
    }
}

/// Rejects graphs that 32-bit CSR indices cannot hold.
fn check_size(nodes: usize, edges: usize) -> Result<()> {
    if nodes as u64 > 1 << 32 {
        return Err(Error::IndexOutOfRange { what: "graph nodes".into(), index: nodes as u64, limit: (1 << 32) + 1 });
    }
    if edges as u64 > u64::from(u32::MAX) {
        return Err(Error::IndexOutOfRange {
            what: "graph edges (CSR row pointers are 32-bit)".into(),
            index: edges as u64,
            limit: u64::from(u32::MAX) + 1,
        });
    }
    Ok(())
}

/// A uniform value in `0..n` from 32 random bits (`n <= 2^32`; Lemire's multiply-shift, bias below
/// `n / 2^32`, negligible next to sampling noise for the graph sizes this serves).
fn below(random: u32, n: u64) -> u64 {
    (u64::from(random) * n) >> 32
}

/// A graph of `min(edges, nodes * (nodes - 1))` distinct edges drawn by `sample` (which returns `None` for a
/// draw to reject), as CSR with values 1.0.
///
/// Draws come in rounds of parallel blocks until enough distinct pairs are in hand; the pairs drawn first (in
/// block order) are kept. When the count is close to every possible pair and `sample` makes the last ones
/// unlikely (R-MAT's corners), it stops after [`MAX_ROUNDS`] rounds with fewer edges and logs a warning.
fn distinct_edges<S>(nodes: usize, edges: usize, seed: u64, sample: S) -> Csr<f32>
where
    S: Fn(&mut ChaCha8Rng) -> Option<(u32, u32)> + Sync,
{
    let possible = (nodes as u64) * (nodes as u64).saturating_sub(1);
    let target = (edges as u64).min(possible) as usize;
    // Each edge as `row << 32 | col`, in the order first drawn.
    let mut kept: Vec<u64> = Vec::with_capacity(target);
    let mut seen = FxHashSet::with_capacity_and_hasher(target, Default::default());
    let mut next_block = 0u64;
    for _ in 0..MAX_ROUNDS {
        let missing = target - kept.len();
        if missing == 0 {
            break;
        }
        // A margin for rejections and repeats; later rounds top up what it misses.
        let blocks = (missing + missing / 4 + 1).div_ceil(SAMPLES_PER_BLOCK) as u64;
        let fresh = draw_blocks(seed, next_block..next_block + blocks, &sample);
        next_block += blocks;
        for edge in fresh.into_iter().flatten() {
            if kept.len() == target {
                break;
            }
            if seen.insert(edge) {
                kept.push(edge);
            }
        }
    }
    if kept.len() < target {
        log::warn!("random graph: {} of {target} distinct edges after {MAX_ROUNDS} rounds", kept.len());
    }
    kept.par_sort_unstable();
    edges_to_csr(nodes, &kept)
}

/// A permutation of `0..nodes` drawn from `seed` (Fisher-Yates on a stream of its own).
fn shuffled_ids(nodes: usize, seed: u64) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(u64::MAX);
    let mut ids: Vec<u32> = (0..nodes as u64).map(|id| id as u32).collect();
    for i in (1..nodes).rev() {
        let j = below(rng.next_u32(), i as u64 + 1) as usize;
        ids.swap(i, j);
    }
    ids
}

/// The draws of `blocks`, made in parallel: block `b`'s `SAMPLES_PER_BLOCK` draws from ChaCha8 seeded with
/// `seed` on stream `b`, each edge kept as `row << 32 | col` (`None`: a rejected draw), in block order.
fn draw_blocks<S>(seed: u64, blocks: std::ops::Range<u64>, sample: &S) -> Vec<Vec<u64>>
where
    S: Fn(&mut ChaCha8Rng) -> Option<(u32, u32)> + Sync,
{
    blocks
        .into_par_iter()
        .map(|block| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(block);
            (0..SAMPLES_PER_BLOCK)
                .filter_map(|_| sample(&mut rng))
                .map(|(row, col)| u64::from(row) << 32 | u64::from(col))
                .collect()
        })
        .collect()
}

/// CSR with values 1.0 from edges `row << 32 | col` sorted ascending.
fn edges_to_csr(nodes: usize, sorted: &[u64]) -> Csr<f32> {
    let mut row_ptr = vec![0u32; nodes + 1];
    for &edge in sorted {
        row_ptr[(edge >> 32) as usize + 1] += 1;
    }
    for r in 1..=nodes {
        row_ptr[r] += row_ptr[r - 1];
    }
    let col_idx = sorted.iter().map(|&edge| edge as u32).collect();
    Csr::new(nodes, nodes, row_ptr, col_idx, vec![1.0; sorted.len()]).expect("sampled edges are in range")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erdos_renyi_is_simple_exact_and_seeded() {
        let g = erdos_renyi(1000, 20_000, 7);
        assert_eq!((g.nrows(), g.ncols(), g.nnz()), (1000, 1000, 20_000));
        for r in 0..g.nrows() {
            let (cols, _) = g.row(r);
            assert!(cols.windows(2).all(|w| w[0] < w[1]), "row {r} sorted without repeats");
            assert!(!cols.contains(&(r as u32)), "row {r} has no self-loop");
        }
        assert_eq!(g, erdos_renyi(1000, 20_000, 7));
        assert_ne!(g, erdos_renyi(1000, 20_000, 8));
    }

    #[test]
    fn erdos_renyi_degrees_are_even() {
        let g = erdos_renyi(5_000, 50_000, 1);
        let max_degree = (0..g.nrows()).map(|r| g.row(r).0.len()).max().unwrap();
        // Binomial(~5,000, 2e-3): mean 10, standard deviation about 3; 40 is far out.
        assert!(max_degree < 40, "max degree {max_degree}");
    }

    #[test]
    fn a_complete_graph_is_reachable_and_more_is_capped() {
        let g = erdos_renyi(20, 1000, 3);
        assert_eq!(g.nnz(), 20 * 19);
        assert_eq!(erdos_renyi(1, 10, 3).nnz(), 0);
        assert_eq!(erdos_renyi(0, 10, 3).nrows(), 0);
    }

    #[test]
    fn sizes_beyond_32_bit_indices_are_errors() {
        match try_erdos_renyi(10, u32::MAX as usize + 1, 0) {
            Err(Error::IndexOutOfRange { what, index, limit }) => {
                assert_eq!(what, "graph edges (CSR row pointers are 32-bit)");
                assert_eq!((index, limit), (u64::from(u32::MAX) + 1, u64::from(u32::MAX) + 1));
            }
            other => panic!("{other:?}"),
        }
        match try_erdos_renyi((1 << 32) + 1, 0, 0) {
            Err(Error::IndexOutOfRange { what, index, limit }) => {
                assert_eq!((what.as_str(), index, limit), ("graph nodes", (1 << 32) + 1, (1 << 32) + 1));
            }
            other => panic!("{other:?}"),
        }
    }
}
