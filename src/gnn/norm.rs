//! The sparse matrices GNN layers aggregate with, built once per model from the graph's adjacency matrix
//! (row = target node, column = source node, as PyG's `edge_index` flows source -> target).
//!
//! Edges count as PyG counts the columns of `edge_index`: every stored entry is one edge of weight 1 (repeated
//! entries are repeated edges) and the stored values are ignored, as in `conv(x, edge_index)`.

use rayon::prelude::*;

use crate::error::{Error, Result};
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
        if graph.nrows() != graph.ncols() {
            return Err(Error::shape(
                "graph adjacency matrix (nodes x nodes)",
                "a square matrix",
                format!("{} x {}", graph.nrows(), graph.ncols()),
            ));
        }
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
