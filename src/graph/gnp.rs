//! Erdos-Renyi G(n, p): every ordered pair of distinct vertices is an edge with probability `p`.

use rand::rngs::ChaCha8Rng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use super::check_size;
use crate::error::{Error, Result};
use crate::sparse::Csr;

/// Rows per block: the unit of parallel work and of the random streams.
const ROWS_PER_BLOCK: usize = 1024;

/// Erdos-Renyi G(n, p): each of the `nodes * (nodes - 1)` directed pairs without self-loops is an edge with
/// probability `p`, independently; CSR with values 1.0, columns ascending.
///
/// Each row skips from edge to edge by geometric jumps (Batagelj and Brandes 2005), so the time is linear in
/// the edges drawn. Rows come in blocks of 1,024, block `b` drawing from ChaCha8 seeded with `seed` on stream
/// `b`; the jumps use a software logarithm, so the graph is the same on every platform and thread count.
///
/// Errors: `p` outside `[0, 1]`, or a graph whose expected size exceeds 32-bit CSR indices.
pub fn erdos_renyi_gnp(nodes: usize, p: f64, seed: u64) -> Result<Csr<f32>> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::invalid("G(n, p) edge probability", format!("must lie in [0, 1], found {p}")));
    }
    let pairs = nodes as f64 * nodes.saturating_sub(1) as f64;
    check_size(nodes, (pairs * p).ceil().min(usize::MAX as f64) as usize)?;
    let log_miss = libm::log1p(-p);
    let blocks: Vec<(Vec<u32>, Vec<u32>)> = (0..nodes.div_ceil(ROWS_PER_BLOCK))
        .into_par_iter()
        .map(|block| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(block as u64);
            let rows = block * ROWS_PER_BLOCK..((block + 1) * ROWS_PER_BLOCK).min(nodes);
            let mut degrees = Vec::with_capacity(rows.len());
            let mut cols = Vec::new();
            for row in rows {
                let before = cols.len();
                // Candidate k is column k below the diagonal and k + 1 from it on.
                let mut candidate: Option<u64> = None;
                while let Some(k) = next_candidate(candidate, p, log_miss, &mut rng, nodes as u64 - 1) {
                    cols.push(if k < row as u64 { k as u32 } else { k as u32 + 1 });
                    candidate = Some(k);
                }
                degrees.push((cols.len() - before) as u32);
            }
            (degrees, cols)
        })
        .collect();
    let edges: usize = blocks.iter().map(|(_, cols)| cols.len()).sum();
    check_size(nodes, edges)?;
    let mut row_ptr = Vec::with_capacity(nodes + 1);
    row_ptr.push(0u32);
    let mut col_idx = Vec::with_capacity(edges);
    for (degrees, cols) in blocks {
        for degree in degrees {
            row_ptr.push(row_ptr.last().expect("starts with 0") + degree);
        }
        col_idx.extend(cols);
    }
    Csr::new(nodes, nodes, row_ptr, col_idx, vec![1.0; edges])
}

/// The next edge among candidates `0..count` after `previous`: a geometric jump of mean `1 / p`.
fn next_candidate(previous: Option<u64>, p: f64, log_miss: f64, rng: &mut ChaCha8Rng, count: u64) -> Option<u64> {
    let start = previous.map_or(0, |k| k + 1);
    let skip = if p >= 1.0 {
        0.0
    } else if p <= 0.0 {
        return None;
    } else {
        // Uniform in (0, 1], from 53 random bits.
        let uniform = ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
        (libm::log(uniform) / log_miss).floor()
    };
    // A skip too large for u64 means no further edge in this row.
    let next = start as f64 + skip;
    (next < count as f64).then_some(start + skip as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_count_is_near_its_expectation() {
        let g = erdos_renyi_gnp(2_000, 0.005, 3).unwrap();
        // Expectation 2,000 * 1,999 * 0.005 = 19,990; standard deviation about 141.
        assert!((19_000..21_000).contains(&g.nnz()), "{} edges", g.nnz());
        for r in 0..g.nrows() {
            let (cols, _) = g.row(r);
            assert!(cols.windows(2).all(|w| w[0] < w[1]), "row {r} sorted without repeats");
            assert!(!cols.contains(&(r as u32)), "row {r} has no self-loop");
        }
        assert_eq!(g, erdos_renyi_gnp(2_000, 0.005, 3).unwrap());
    }

    #[test]
    fn extreme_probabilities() {
        assert_eq!(erdos_renyi_gnp(30, 0.0, 1).unwrap().nnz(), 0);
        assert_eq!(erdos_renyi_gnp(30, 1.0, 1).unwrap().nnz(), 30 * 29);
        assert_eq!(erdos_renyi_gnp(0, 0.5, 1).unwrap().nrows(), 0);
        for (p, shown) in [(1.5, "1.5"), (-0.5, "-0.5"), (f64::NAN, "NaN")] {
            match erdos_renyi_gnp(30, p, 1) {
                Err(Error::Invalid { what, reason }) => {
                    assert_eq!(
                        (what.as_str(), reason),
                        ("G(n, p) edge probability", format!("must lie in [0, 1], found {shown}"))
                    );
                }
                other => panic!("p = {p}: {other:?}"),
            }
        }
        // 2^20 (2^20 - 1) expected edges, beyond 32-bit row pointers.
        match erdos_renyi_gnp(1 << 20, 1.0, 1) {
            Err(Error::IndexOutOfRange { what, index, limit }) => {
                assert_eq!(what, "graph edges (CSR row pointers are 32-bit)");
                assert_eq!((index, limit), ((1 << 20) * ((1 << 20) - 1), 1 << 32));
            }
            other => panic!("{other:?}"),
        }
    }
}
