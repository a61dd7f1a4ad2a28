//! The sparse matrices GNN layers aggregate with, built once per model from the graph's adjacency matrix
//! (row = target node, column = source node, as PyG's `edge_index` flows source -> target).
//!
//! Edges count as PyG counts the columns of `edge_index`: every stored entry is one edge of weight 1 (repeated
//! entries are repeated edges) and the stored values are ignored, as in `conv(x, edge_index)`.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::graph::check_adjacency;
use crate::sparse::Csr;

/// Rows per unit of parallel work when building a matrix with self-loops.
const ROWS_PER_BLOCK: usize = 4096;

/// Which matrix a model's layers aggregate with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::Display)]
pub enum Aggregation {
    /// `GCNConv`: `D^-1/2 (A + I) D^-1/2`, existing self-loops replaced by one of weight 1 (PyG's
    /// `add_remaining_self_loops`), `D` the in-degrees counted with the self-loop.
    #[strum(to_string = "GCN-normalised D^-1/2 (A + I) D^-1/2")]
    GcnNormalized,
    /// `SAGEConv`'s mean: row `i` of `A` divided by the in-degree of `i` (a node without neighbours gets 0).
    #[strum(to_string = "mean (rows of A over in-degrees)")]
    Mean,
    /// `GINConv`'s sum: `A` itself, every edge weight 1.
    #[strum(to_string = "sum (A)")]
    Sum,
    /// `GATConv`'s structure: `A + I`, existing self-loops replaced by one per node (PyG's `remove_self_loops`
    /// then `add_self_loops`), every value 1 until the attention gives each call its own.
    #[strum(to_string = "attention over A + I (values per call)")]
    Attention,
}

impl Aggregation {
    /// The aggregation matrix of `graph`, which must be square.
    pub fn matrix(self, graph: &Csr<f32>) -> Result<Csr<f32>> {
        check_adjacency(graph)?;
        match self {
            Aggregation::GcnNormalized => {
                let inv_sqrt_degree: Vec<f32> = (0..graph.nrows())
                    .map(|row| {
                        let neighbours = graph.row(row).0.iter().filter(|&&col| col as usize != row).count();
                        1.0 / ((neighbours + 1) as f32).sqrt()
                    })
                    .collect();
                with_self_loops(graph, |row, col| inv_sqrt_degree[row] * inv_sqrt_degree[col])
            }
            Aggregation::Mean => Ok(reweighted(graph, |row| 1.0 / in_degree(graph, row) as f32)),
            Aggregation::Sum => Ok(reweighted(graph, |_| 1.0)),
            Aggregation::Attention => with_self_loops(graph, |_, _| 1.0),
        }
    }
}

/// PyTorch Geometric's `gcn_norm` of a weighted graph, the matrix `GCNConv(normalize=True)` aggregates with
/// when given `edge_weight`: `graph`'s stored values are the edge weights (row = target, column = source), and
/// each entry becomes `d_j^-1/2 w d_i^-1/2` for `d` the weighted in-degrees (a node of degree 0 gets 0).
///
/// `self_loops` is PyG's `add_self_loops`: `Some(fill)` adds the remaining self-loops first (`fill` is 1, or 2
/// for `improved=True`): each row's self-loops go, and one takes the last one's weight, or `fill` where the row
/// had none, placed last in its row. `None` normalises the graph's entries as they are. Unlike
/// [`Aggregation::GcnNormalized`], which counts every entry as an edge of weight 1, the values are read.
pub fn gcn_norm(graph: &Csr<f32>, self_loops: Option<f32>) -> Result<Csr<f32>> {
    check_adjacency(graph)?;
    let mut matrix = match self_loops {
        Some(fill) => with_remaining_self_loops(graph, fill)?,
        None => graph.clone(),
    };
    let inv_sqrt_degree: Vec<f32> = (0..matrix.nrows())
        .into_par_iter()
        .map(|row| {
            let degree: f32 = matrix.row(row).1.iter().sum();
            if degree == 0.0 {
                0.0
            } else {
                1.0 / degree.sqrt()
            }
        })
        .collect();
    let row_ptr = matrix.row_ptr().to_vec();
    let col_idx = matrix.col_idx().to_vec();
    for (row, bounds) in row_ptr.windows(2).enumerate() {
        let entries = bounds[0] as usize..bounds[1] as usize;
        for (weight, &col) in matrix.values_mut()[entries.clone()].iter_mut().zip(&col_idx[entries]) {
            *weight = inv_sqrt_degree[col as usize] * *weight * inv_sqrt_degree[row];
        }
    }
    Ok(matrix)
}

/// `graph` with its self-loops replaced by one per row, placed last, weighted as the row's last self-loop or
/// `fill` (PyG's `add_remaining_self_loops`).
fn with_remaining_self_loops(graph: &Csr<f32>, fill: f32) -> Result<Csr<f32>> {
    let n = graph.nrows();
    let capacity = graph.nnz() + n;
    let (mut row_ptr, mut col_idx, mut values) =
        (Vec::with_capacity(n + 1), Vec::with_capacity(capacity), Vec::with_capacity(capacity));
    row_ptr.push(0u32);
    for row in 0..n {
        let mut loop_weight = fill;
        let (cols, weights) = graph.row(row);
        for (&col, &weight) in cols.iter().zip(weights) {
            if col as usize == row {
                loop_weight = weight;
            } else {
                col_idx.push(col);
                values.push(weight);
            }
        }
        col_idx.push(row as u32);
        values.push(loop_weight);
        let end = u32::try_from(col_idx.len())
            .map_err(|_| Error::invalid("adjacency matrix with self-loops", "more than 2^32 - 1 nonzeros"))?;
        row_ptr.push(end);
    }
    Csr::new(n, n, row_ptr, col_idx, values)
}

fn in_degree(graph: &Csr<f32>, row: usize) -> usize {
    (graph.row_ptr()[row + 1] - graph.row_ptr()[row]) as usize
}

/// `graph`'s pattern with the value `weight(row)` at every entry of a row.
fn reweighted(graph: &Csr<f32>, weight: impl Fn(usize) -> f32) -> Csr<f32> {
    let values = (0..graph.nrows()).flat_map(|row| std::iter::repeat_n(weight(row), in_degree(graph, row))).collect();
    match Csr::new(graph.nrows(), graph.ncols(), graph.row_ptr().to_vec(), graph.col_idx().to_vec(), values) {
        Ok(matrix) => matrix,
        Err(error) => unreachable!("new values on a valid CSR pattern keep it valid: {error}"),
    }
}

/// `graph`'s entries without its self-loops, plus one self-loop per node placed last in its row, the entry at
/// `(row, col)` valued `value(row, col)`. Rows are filled in parallel, in blocks of [`ROWS_PER_BLOCK`].
fn with_self_loops(graph: &Csr<f32>, value: impl Fn(usize, usize) -> f32 + Sync) -> Result<Csr<f32>> {
    let n = graph.nrows();
    let off_diagonal = |row: usize| graph.row(row).0.iter().copied().filter(move |&col| col as usize != row);
    let lengths: Vec<usize> = (0..n).into_par_iter().map(|row| off_diagonal(row).count() + 1).collect();
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0u32);
    let mut end = 0u32;
    for length in lengths {
        end = u32::try_from(length)
            .ok()
            .and_then(|length| end.checked_add(length))
            .ok_or_else(|| Error::invalid("adjacency matrix with self-loops", "more than 2^32 - 1 nonzeros"))?;
        row_ptr.push(end);
    }
    let mut col_idx = vec![0u32; end as usize];
    let mut values = vec![0f32; end as usize];
    // Each block of rows gets its own slices of the outputs, cut in order.
    let mut blocks = Vec::with_capacity(n.div_ceil(ROWS_PER_BLOCK));
    let (mut cols_left, mut values_left) = (col_idx.as_mut_slice(), values.as_mut_slice());
    for first in (0..n).step_by(ROWS_PER_BLOCK) {
        let rows = first..(first + ROWS_PER_BLOCK).min(n);
        let size = (row_ptr[rows.end] - row_ptr[rows.start]) as usize;
        let (cols, cols_rest) = std::mem::take(&mut cols_left).split_at_mut(size);
        let (vals, values_rest) = std::mem::take(&mut values_left).split_at_mut(size);
        (cols_left, values_left) = (cols_rest, values_rest);
        blocks.push((rows, cols, vals));
    }
    blocks.into_par_iter().for_each(|(rows, cols, vals)| {
        let mut at = 0;
        for row in rows {
            for col in off_diagonal(row).chain(std::iter::once(row as u32)) {
                cols[at] = col;
                vals[at] = value(row, col as usize);
                at += 1;
            }
        }
    });
    Csr::new(n, n, row_ptr, col_idx, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Node 0 <- 1 (weight 2), node 1 <- 0 (weight 3) and a self-loop of weight 5 on node 1.
    fn weighted() -> Csr<f32> {
        Csr::new(2, 2, vec![0, 1, 3], vec![1, 1, 0], vec![2.0, 5.0, 3.0]).unwrap()
    }

    #[test]
    fn gcn_norm_of_unit_weights_is_gcns_matrix() {
        let graph = crate::graph::rmat(64, 300, 3);
        let ones = graph.map_values(|_| 1.0f32);
        let expected = Aggregation::GcnNormalized.matrix(&graph).unwrap();
        let found = gcn_norm(&ones, Some(1.0)).unwrap();
        assert_eq!((found.row_ptr(), found.col_idx()), (expected.row_ptr(), expected.col_idx()));
        for (a, b) in found.values().iter().zip(expected.values()) {
            assert!((a - b).abs() <= 1e-6 * b.abs(), "{a} against {b}");
        }
    }

    #[test]
    fn gcn_norm_keeps_a_self_loops_weight_and_fills_the_others() {
        let matrix = gcn_norm(&weighted(), Some(2.0)).unwrap();
        assert_eq!(matrix.row_ptr(), &[0, 2, 4]);
        assert_eq!(matrix.col_idx(), &[1, 0, 0, 1]);
        // Degrees: node 0 has 2 + the filled loop 2 = 4; node 1 has 3 + its own loop 5 = 8.
        let (d0, d1) = (4f32.sqrt().recip(), 8f32.sqrt().recip());
        let expected = [d1 * 2.0 * d0, d0 * 2.0 * d0, d0 * 3.0 * d1, d1 * 5.0 * d1];
        assert_eq!(matrix.values(), &expected);
    }

    #[test]
    fn gcn_norm_without_self_loops_normalises_the_entries_as_they_are() {
        let matrix = gcn_norm(&weighted(), None).unwrap();
        assert_eq!((matrix.row_ptr(), matrix.col_idx()), (weighted().row_ptr(), weighted().col_idx()));
        let (d0, d1) = (2f32.sqrt().recip(), 8f32.sqrt().recip());
        assert_eq!(matrix.values(), &[d1 * 2.0 * d0, d1 * 5.0 * d1, d0 * 3.0 * d1]);
        let isolated = Csr::new(2, 2, vec![0, 0, 1], vec![0], vec![1.0f32]).unwrap();
        assert_eq!(gcn_norm(&isolated, None).unwrap().values(), &[0.0], "node 0's degree is 0");
    }

    #[test]
    fn gcn_norm_refuses_a_rectangular_matrix() {
        let rectangular = Csr::new(1, 2, vec![0, 1], vec![1], vec![1.0f32]).unwrap();
        assert!(matches!(gcn_norm(&rectangular, Some(1.0)), Err(Error::Shape { .. })));
    }
}
