//! Chung-Lu graphs with a power-law degree distribution, at the size of real GNN datasets.
//!
//! Each vertex gets a weight, the `r`-th largest `(r + 1)^-alpha` (ranks assigned to vertices by a seeded
//! permutation, so hubs are spread over the ids as in real graphs), and each edge's endpoints are drawn in
//! proportion to the weights, so a vertex's expected degree is proportional to its weight (Chung and Lu 2002).
//! `alpha` is chosen so that the largest expected degree is `sqrt(edges)`, the structural cutoff of a simple
//! scale-free graph (Boguñá, Pastor-Satorras and Vespignani 2004): above it, the two largest hubs would be
//! expected to share more than one edge. The degrees then follow a power law of exponent `1 + 1 / alpha` up to
//! that cutoff. A graph whose average degree already reaches `sqrt(edges)` gets `alpha = 0`: an Erdős-Rényi
//! graph.
//!
//! Unlike [`rmat`](super::rmat), which keeps its edges in a hash set in draw order, the pairs here are sorted
//! and deduplicated in parallel, so that graphs of hundreds of millions of edges (AmazonProducts: 264 million)
//! take seconds and 8 bytes per undirected edge beyond the result. When a round of draws gives more distinct
//! pairs than asked for, the ones kept are those with the smallest mixed key (a bijection of the pair and the
//! seed), so the graph depends on the seed alone, not on the thread count. The weights are computed with the
//! `libm` crate's `pow` and rounded to integers, and vertices are drawn from them by an integer alias table,
//! so the graph is the same on every platform.

use rand::rngs::ChaCha8Rng;
use rand_distr::weighted::WeightedAliasIndex;
use rand_distr::Distribution;
use rayon::prelude::*;

use super::{check_size, draw_blocks, edges_to_csr, shuffled_ids, MAX_ROUNDS, SAMPLES_PER_BLOCK};
use crate::error::{Error, Result};
use crate::sparse::Csr;

/// Scale of the integer vertex weights: the largest is at most `2^MAX_WEIGHT_BITS`, and their sum below `2^62`.
const MAX_WEIGHT_BITS: u32 = 40;

/// Whether each drawn pair is one directed edge or an undirected one, stored in both directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Edge `(u, v)` is the nonzero at row `u`, column `v` only (a citation graph such as ogbn-arxiv).
    Directed,
    /// Edge `{u, v}` is the nonzeros `(u, v)` and `(v, u)`: the matrix is symmetric and `edges` counts both, as
    /// PyTorch Geometric's `edge_index` of an undirected dataset does.
    Undirected,
}

/// A power-law graph of `nodes` vertices and `edges` nonzeros (for [`Direction::Undirected`], `edges / 2`
/// pairs stored both ways, so an odd count is rounded down), without self-loops or repeated edges, as CSR with
/// values 1.0 and columns ascending in each row. At most every pair of distinct vertices is an edge; a graph
/// so dense that the draws cannot reach the count in 64 rounds has fewer edges and logs a warning.
///
/// ```
/// use pimgnn::graph::{power_law, Direction};
///
/// let graph = power_law(10_000, 200_000, 7, Direction::Undirected)?;
/// assert_eq!((graph.nrows(), graph.nnz()), (10_000, 200_000));
/// assert_eq!(graph, graph.transpose());
/// # Ok::<(), pimgnn::Error>(())
/// ```
pub fn power_law(nodes: usize, edges: usize, seed: u64, direction: Direction) -> Result<Csr<f32>> {
    check_size(nodes, edges)?;
    let possible = (nodes as u64) * (nodes as u64).saturating_sub(1);
    let pairs = match direction {
        Direction::Directed => (edges as u64).min(possible),
        Direction::Undirected => (edges as u64 / 2).min(possible / 2),
    } as usize;
    if pairs == 0 {
        return Ok(edges_to_csr(nodes, &[]));
    }
    let alias = vertex_sampler(nodes, edges, seed)?;
    let drawn = distinct_pairs(pairs, seed, direction, |rng| alias.sample(rng) as u32);
    match direction {
        Direction::Directed => Ok(edges_to_csr(nodes, &drawn)),
        Direction::Undirected => symmetric_csr(nodes, &drawn),
    }
}

/// The exponent `alpha` of rank weights `(r + 1)^-alpha` over `nodes` vertices whose largest expected degree is
/// `sqrt(edges)` (see the module documentation): the `alpha` in `[0, 1)` for which the largest weight is
/// `nodes / sqrt(edges)` times the mean.
pub fn degree_exponent(nodes: usize, edges: usize) -> f64 {
    let n = nodes as f64;
    let hub_to_mean = n / (edges as f64).sqrt();
    if nodes < 2 || hub_to_mean <= 1.0 {
        return 0.0;
    }
    // The largest weight over the mean, n / sum_{r=1}^{n} r^-alpha, grows with alpha from 1 (alpha = 0) to n
    // (alpha -> infinity), so bisection finds it; the sum is Euler-Maclaurin's to well within the bisection's
    // precision.
    let hub_over_mean = |alpha: f64| {
        let integral = if (alpha - 1.0).abs() < 1e-12 { n.ln() } else { (n.powf(1.0 - alpha) - 1.0) / (1.0 - alpha) };
        n / (integral + (1.0 + n.powf(-alpha)) / 2.0 + alpha / 12.0 * (1.0 - n.powf(-alpha - 1.0)))
    };
    let (mut low, mut high) = (0.0f64, 8.0f64);
    for _ in 0..64 {
        let middle = (low + high) / 2.0;
        if hub_over_mean(middle) < hub_to_mean {
            low = middle;
        } else {
            high = middle;
        }
    }
    low
}

/// Draws vertices in proportion to their power-law weights: rank `r`'s weight `(r + 1)^-alpha` as an integer,
/// given to a vertex by a seeded permutation.
fn vertex_sampler(nodes: usize, edges: usize, seed: u64) -> Result<WeightedAliasIndex<u64>> {
    let alpha = degree_exponent(nodes, edges);
    let ranks = shuffled_ids(nodes, seed);
    // n weights of at most 2^bits sum below 2^62, and the smallest, at least 2^bits / n, is at least 1 up to 2^31
    // vertices.
    let bits = MAX_WEIGHT_BITS.min(62 - nodes.next_power_of_two().trailing_zeros());
    let mut weights = vec![0u64; nodes];
    for (rank, &vertex) in ranks.iter().enumerate() {
        let weight = libm::ldexp(libm::pow(rank as f64 + 1.0, -alpha), bits as i32);
        weights[vertex as usize] = (weight.round() as u64).max(1);
    }
    WeightedAliasIndex::new(weights)
        .map_err(|error| Error::invalid("power-law vertex weights", format!("no alias table: {error}")))
}

/// `pairs` distinct pairs `u << 32 | v` (`u < v` for undirected graphs) of distinct vertices from `vertex`,
/// sorted ascending: draws in rounds of parallel blocks, each block from ChaCha8 seeded with `seed` on its own
/// stream, until enough distinct pairs are in hand, then keeps the `pairs` with the smallest mixed keys.
fn distinct_pairs<V>(pairs: usize, seed: u64, direction: Direction, vertex: V) -> Vec<u64>
where
    V: Fn(&mut ChaCha8Rng) -> u32 + Sync,
{
    let mut kept: Vec<u64> = Vec::new();
    let mut next_block = 0u64;
    for _ in 0..MAX_ROUNDS {
        let missing = pairs.saturating_sub(kept.len());
        if missing == 0 {
            break;
        }
        // A margin for self-loops and repeats; later rounds top up what it misses.
        let blocks = (missing + missing / 8 + 1).div_ceil(SAMPLES_PER_BLOCK) as u64;
        let draw = |rng: &mut ChaCha8Rng| {
            let (u, v) = (vertex(rng), vertex(rng));
            match direction {
                _ if u == v => None,
                Direction::Undirected => Some((u.min(v), u.max(v))),
                Direction::Directed => Some((u, v)),
            }
        };
        let fresh = draw_blocks(seed, next_block..next_block + blocks, &draw);
        next_block += blocks;
        kept.reserve(fresh.iter().map(Vec::len).sum());
        kept.extend(fresh.into_iter().flatten());
        kept.par_sort_unstable();
        kept.dedup();
    }
    if kept.len() > pairs {
        keep_smallest_mixed(&mut kept, pairs, seed);
    } else if kept.len() < pairs {
        log::warn!("power-law graph: {} of {pairs} distinct edges after {MAX_ROUNDS} rounds", kept.len());
    }
    kept
}

/// Keeps, in order, the `count` pairs of sorted `pairs` whose [`mix`]es are smallest.
fn keep_smallest_mixed(pairs: &mut Vec<u64>, count: usize, seed: u64) {
    let mut mixed: Vec<u64> = pairs.par_iter().map(|&pair| mix(pair, seed)).collect();
    // `mix` is a bijection, so distinct pairs have distinct keys and exactly `count` are below the threshold.
    let (_, &mut threshold, _) = mixed.select_nth_unstable(count);
    drop(mixed);
    pairs.retain(|&pair| mix(pair, seed) < threshold);
}

/// SplitMix64's finaliser of `pair ^ seed`: a bijection of the pair for a given seed.
fn mix(pair: u64, seed: u64) -> u64 {
    let mut z = pair ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The symmetric CSR, values 1.0, of undirected pairs `u << 32 | v` (`u < v`) sorted ascending.
fn symmetric_csr(nodes: usize, sorted: &[u64]) -> Result<Csr<f32>> {
    let mut row_ptr = vec![0u32; nodes + 1];
    for &pair in sorted {
        row_ptr[(pair >> 32) as usize + 1] += 1;
        row_ptr[(pair as u32) as usize + 1] += 1;
    }
    for r in 1..=nodes {
        row_ptr[r] += row_ptr[r - 1];
    }
    // In sorted order, row v receives its columns u < v (pairs (u, v), ascending u) before any pair starting at
    // v, which give its columns above v in ascending order: every row fills ascending.
    let mut next = row_ptr[..nodes].to_vec();
    let mut col_idx = vec![0u32; 2 * sorted.len()];
    for &pair in sorted {
        let (u, v) = ((pair >> 32) as usize, pair as u32 as usize);
        col_idx[next[u] as usize] = v as u32;
        next[u] += 1;
        col_idx[next[v] as usize] = u as u32;
        next[v] += 1;
    }
    Csr::new(nodes, nodes, row_ptr, col_idx, vec![1.0; 2 * sorted.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn degrees(graph: &Csr<f32>) -> Vec<usize> {
        (0..graph.nrows()).map(|r| graph.row(r).0.len()).collect()
    }

    #[test]
    fn undirected_graphs_are_symmetric_simple_exact_and_seeded() {
        let g = power_law(5_000, 100_000, 3, Direction::Undirected).unwrap();
        assert_eq!((g.nrows(), g.ncols(), g.nnz()), (5_000, 5_000, 100_000));
        for r in 0..g.nrows() {
            let (cols, _) = g.row(r);
            assert!(cols.windows(2).all(|w| w[0] < w[1]), "row {r} sorted without repeats");
            assert!(!cols.contains(&(r as u32)), "row {r} has no self-loop");
        }
        assert_eq!(g, g.transpose());
        assert_eq!(g, power_law(5_000, 100_000, 3, Direction::Undirected).unwrap());
        assert_ne!(g, power_law(5_000, 100_000, 4, Direction::Undirected).unwrap());
        // An odd count is rounded down to whole pairs.
        assert_eq!(power_law(5_000, 100_001, 3, Direction::Undirected).unwrap().nnz(), 100_000);
    }

    #[test]
    fn directed_graphs_are_exact_and_not_symmetric() {
        let g = power_law(5_000, 60_001, 3, Direction::Directed).unwrap();
        assert_eq!(g.nnz(), 60_001);
        assert_ne!(g, g.transpose());
        assert!((0..g.nrows()).all(|r| g.row(r).0.windows(2).all(|w| w[0] < w[1])));
    }

    #[test]
    fn the_same_graph_comes_from_any_thread_count() {
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| power_law(20_000, 400_000, 11, Direction::Undirected).unwrap())
        };
        assert_eq!(on(1), on(3));
    }

    #[test]
    fn the_largest_degree_is_near_the_structural_cutoff() {
        // sqrt(2,000,000) = 1,414; an average degree of 40, so hubs are 35x the mean.
        let g = power_law(50_000, 2_000_000, 5, Direction::Undirected).unwrap();
        let degrees = degrees(&g);
        let largest = *degrees.iter().max().unwrap();
        assert!((1_100..1_800).contains(&largest), "largest degree {largest}");
        // Rank weights (r + 1)^-alpha give the top 1% of ranks about 0.01^(1 - alpha) of the edges (alpha = 0.35
        // here: 5%), and most vertices fall below the mean.
        let mut sorted = degrees.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let top: usize = sorted[..500].iter().sum();
        assert!(top * 25 > g.nnz(), "top 1% hold {top} of {}", g.nnz());
        assert!(sorted[25_000] < 36, "median degree {}", sorted[25_000]);
    }

    #[test]
    fn the_exponent_gives_the_cutoff_and_dense_graphs_are_uniform() {
        for (nodes, edges) in [(232_965usize, 114_615_892usize), (169_343, 1_166_243), (2_449_029, 123_718_280)] {
            let alpha = degree_exponent(nodes, edges);
            let weights: Vec<f64> = (1..=nodes).map(|r| (r as f64).powf(-alpha)).collect();
            let hub_over_mean = nodes as f64 / weights.iter().sum::<f64>();
            let wanted = nodes as f64 / (edges as f64).sqrt();
            assert!((hub_over_mean / wanted - 1.0).abs() < 1e-3, "{nodes}: {hub_over_mean} against {wanted}");
        }
        assert_eq!(degree_exponent(100, 100 * 100), 0.0);
        let complete = power_law(30, 10_000, 1, Direction::Undirected).unwrap();
        assert_eq!(complete.nnz(), 30 * 29);
        assert_eq!(power_law(1, 10, 1, Direction::Directed).unwrap().nnz(), 0);
    }

    #[test]
    fn sizes_beyond_32_bit_indices_are_errors() {
        assert!(matches!(
            power_law(10, u32::MAX as usize + 1, 0, Direction::Directed),
            Err(Error::IndexOutOfRange { .. })
        ));
    }
}
