//! `Graph`: a graph's adjacency matrix on the host (row = target node, column = source node, values = edge
//! weights), and the matrices PyTorch Geometric's layers aggregate with, derived from it by the library.

use std::sync::Arc;

use numpy::{PyArray1, PyReadonlyArray1};
use pimgnn::gnn::inputs::read_graph;
use pimgnn::gnn::{gcn_norm, Aggregation};
use pimgnn::{Coo, Csr};
use pyo3::prelude::*;

use crate::errors::{self, to_py};

/// A graph's adjacency matrix `A` (row = target, column = source, as PyG's messages flow source -> target),
/// kept whole: repeated edges stay separate entries, as PyG counts them.
#[pyclass(module = "pimgnn._native", frozen)]
pub struct Graph {
    pub(crate) adjacency: Arc<Csr<f32>>,
}

impl Graph {
    fn of(adjacency: Csr<f32>) -> Self {
        Graph { adjacency: Arc::new(adjacency) }
    }
}

/// `indices` as `u32` node ids, refusing one outside `0..num_nodes` as the `what` of its edge.
fn node_ids<'a>(what: &str, indices: impl Iterator<Item = &'a i64>, num_nodes: usize) -> PyResult<Vec<u32>> {
    indices
        .enumerate()
        .map(|(at, &index)| match u32::try_from(index) {
            Ok(id) if (id as usize) < num_nodes => Ok(id),
            _ if index < 0 => Err(errors::raise(
                "IndexOutOfRangeError",
                format!("{what} node of edge {at}: index {index} is negative"),
            )),
            _ => Err(to_py(pimgnn::Error::IndexOutOfRange {
                what: format!("{what} node of edge {at}"),
                index: index as u64,
                limit: num_nodes as u64,
            })),
        })
        .collect()
}

#[pymethods]
impl Graph {
    /// The graph of `num_nodes` nodes with an edge `sources[k] -> targets[k]` of weight `weights[k]` (1
    /// without weights), for every `k` in order.
    #[new]
    #[pyo3(signature = (num_nodes, sources, targets, weights=None))]
    fn new(
        num_nodes: usize,
        sources: PyReadonlyArray1<'_, i64>,
        targets: PyReadonlyArray1<'_, i64>,
        weights: Option<PyReadonlyArray1<'_, f32>>,
    ) -> PyResult<Self> {
        if num_nodes > u32::MAX as usize {
            return Err(errors::raise(
                "CapacityError",
                format!("graph of {num_nodes} nodes: needs {num_nodes}, limit {} (32-bit node ids)", u32::MAX),
            ));
        }
        let sources = node_ids("source", sources.as_array().iter(), num_nodes)?;
        let targets = node_ids("target", targets.as_array().iter(), num_nodes)?;
        let weights = match weights {
            Some(weights) => weights.as_array().iter().copied().collect(),
            None => vec![1.0; sources.len()],
        };
        let coo = Coo::new(num_nodes, num_nodes, targets, sources, weights).map_err(to_py)?;
        Ok(Graph::of(coo.to_csr()))
    }

    /// The graph of a Matrix Market (`.mtx`, row = target) or CSV edge-list file (`.csv`, undirected), read
    /// by the library (its values, 1 in a pattern file, are the weights).
    #[staticmethod]
    fn read(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Graph> {
        py.detach(|| read_graph(&path)).map(Graph::of).map_err(to_py)
    }

    /// Nodes.
    #[getter]
    fn num_nodes(&self) -> usize {
        self.adjacency.nrows()
    }

    /// Edges (nonzeros of `A`, repeated edges counted).
    #[getter]
    fn num_edges(&self) -> usize {
        self.adjacency.nnz()
    }

    /// `GCNConv`'s matrix `D^-1/2 (A + I) D^-1/2` with the weights as PyG's `gcn_norm` reads them: remaining
    /// self-loops of weight `fill` added when `add_self_loops` (2 for `improved=True`), degrees weighted.
    #[pyo3(signature = (add_self_loops=true, fill=1.0))]
    fn gcn_norm(&self, py: Python<'_>, add_self_loops: bool, fill: f32) -> PyResult<Graph> {
        py.detach(|| gcn_norm(&self.adjacency, add_self_loops.then_some(fill))).map(Graph::of).map_err(to_py)
    }

    /// `SAGEConv`'s mean: each row of `A` over its node's in-degree, every edge of weight 1.
    fn mean_norm(&self, py: Python<'_>) -> PyResult<Graph> {
        self.aggregation(py, Aggregation::Mean)
    }

    /// `GINConv`'s sum: `A` with every edge of weight 1.
    fn unweighted(&self, py: Python<'_>) -> PyResult<Graph> {
        self.aggregation(py, Aggregation::Sum)
    }

    /// `GATConv`'s structure: `A`'s self-loops replaced by one per node, placed last in its row, every value 1
    /// (PyG's `remove_self_loops` then `add_self_loops`); the attention gives it values per call.
    fn attention_structure(&self, py: Python<'_>) -> PyResult<Graph> {
        self.aggregation(py, Aggregation::Attention)
    }

    /// `A^T`: every edge reversed.
    fn transpose(&self, py: Python<'_>) -> Graph {
        Graph::of(py.detach(|| self.adjacency.transpose()))
    }

    /// Whether `A` equals `A^T` (weights included), so that one engine computes both `A X` and `A^T X`.
    fn is_symmetric(&self, py: Python<'_>) -> bool {
        py.detach(|| {
            // The transpose lists each row's entries by column; transposing twice gives A's rows in that order.
            let transposed = self.adjacency.transpose();
            let sorted = transposed.transpose();
            transposed.row_ptr() == sorted.row_ptr()
                && transposed.col_idx() == sorted.col_idx()
                && transposed.values() == sorted.values()
        })
    }

    /// `A` in CSR form: `(indptr, indices, data)` as NumPy arrays (int64, int64, float32), as
    /// `scipy.sparse.csr_array((data, indices, indptr))` takes them.
    #[allow(clippy::type_complexity)]
    fn csr<'py>(
        &self,
        py: Python<'py>,
    ) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>) {
        let widen = |indices: &[u32]| indices.iter().map(|&i| i64::from(i)).collect::<Vec<_>>();
        (
            PyArray1::from_vec(py, widen(self.adjacency.row_ptr())),
            PyArray1::from_vec(py, widen(self.adjacency.col_idx())),
            PyArray1::from_slice(py, self.adjacency.values()),
        )
    }

    fn __repr__(&self) -> String {
        format!("Graph(num_nodes={}, num_edges={})", self.num_nodes(), self.num_edges())
    }
}

impl Graph {
    fn aggregation(&self, py: Python<'_>, aggregation: Aggregation) -> PyResult<Graph> {
        py.detach(|| aggregation.matrix(&self.adjacency)).map(Graph::of).map_err(to_py)
    }
}
