//! Reading a GNN's inputs by file type, checked against each other: the graph, node features of the width the
//! model takes, labels and masks of one entry per node. Every error names the file and the reason.

use std::path::Path;

use crate::error::{Error, Result};
use crate::host_memory;
use crate::io;
use crate::sparse::{Coo, Csr, Dense};

fn extension(path: &Path) -> String {
    path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase()
}

fn bad(path: &Path, reason: impl Into<String>) -> Error {
    Error::Parse { path: path.to_path_buf(), line: None, reason: reason.into() }
}

/// A graph's adjacency matrix (row = target, column = source) from Matrix Market (`.mtx`) or a CSV edge list
/// (`.csv`, undirected, each edge once: both directions are kept). A graph whose CSR would need more than the
/// host's memory is an [`Error::Capacity`], refused before it is built.
pub fn read_graph(path: &Path) -> Result<Csr<f32>> {
    let coo = match extension(path).as_str() {
        "mtx" => io::read_matrix_market(path)?,
        "csv" => io::read_edge_list_csv(path)?.symmetrized()?,
        other => return Err(bad(path, format!("unknown graph format `.{other}` (expected .mtx or .csv)"))),
    };
    if coo.nrows() != coo.ncols() {
        return Err(bad(
            path,
            format!("a graph's adjacency matrix must be square, found {} x {}", coo.nrows(), coo.ncols()),
        ));
    }
    // The conversion holds two arrays of row pointers and the CSR's column indices and values.
    let words = 2 * (coo.nrows() as u64 + 1) + 2 * coo.nnz() as u64;
    check_host_memory(path, &format!("the CSR of a graph of {} nodes", coo.nrows()), words.saturating_mul(4))?;
    Ok(coo.to_csr())
}

/// Node features, one row per node of `nodes` and `width` columns, from `.npy` (dense float32, exactly that
/// shape), Matrix Market (`.mtx`, sparse, exactly that shape) or CSV triples (`.csv`, `node,feature,value`,
/// within that shape; absent entries are 0).
pub fn read_features(path: &Path, nodes: usize, width: usize) -> Result<Dense<f32>> {
    let check = |rows: usize, cols: usize, exact: bool| {
        let fits = if exact { rows == nodes && cols == width } else { rows <= nodes && cols <= width };
        if fits {
            Ok(())
        } else {
            Err(bad(
                path,
                format!("features are {rows} x {cols}; the graph has {nodes} nodes and the model takes {width} input features"),
            ))
        }
    };
    match extension(path).as_str() {
        "npy" => {
            let dense = io::npy::read_dense_f32(path)?;
            check(dense.rows(), dense.cols(), true)?;
            Ok(dense)
        }
        "mtx" => {
            let coo = io::read_matrix_market(path)?;
            check(coo.nrows(), coo.ncols(), true)?;
            densify(path, &coo, nodes, width)
        }
        "csv" => {
            let coo = io::read_triples_csv(path)?;
            check(coo.nrows(), coo.ncols(), false)?;
            densify(path, &coo, nodes, width)
        }
        other => Err(bad(path, format!("unknown feature format `.{other}` (expected .npy, .mtx or .csv)"))),
    }
}

/// `coo`, read from `path`, as a dense `rows x cols` matrix (which holds it), duplicates added up.
fn densify(path: &Path, coo: &Coo<f32>, rows: usize, cols: usize) -> Result<Dense<f32>> {
    let bytes = (rows as u64).saturating_mul(cols as u64).saturating_mul(std::mem::size_of::<f32>() as u64);
    check_host_memory(path, &format!("{rows} x {cols} dense float32 features"), bytes)?;
    let mut dense = Dense::zeros(rows, cols);
    for ((&r, &c), &v) in coo.rows().iter().zip(coo.cols()).zip(coo.values()) {
        dense.row_mut(r as usize)[c as usize] += v;
    }
    Ok(dense)
}

/// Refuses to build `what` from `path` when it needs more `bytes` than the host has memory.
fn check_host_memory(path: &Path, what: &str, bytes: u64) -> Result<()> {
    host_memory::check(|| format!("{}: host memory (bytes) for {what}", path.display()), bytes)
}

/// Class labels (`.npy`, int64), one per node, each in `0..classes`.
pub fn read_labels(path: &Path, nodes: usize, classes: usize) -> Result<Vec<i64>> {
    let labels = io::npy::read_labels(path)?;
    if labels.len() != nodes {
        return Err(bad(path, format!("{} labels for a graph of {nodes} nodes", labels.len())));
    }
    if let Some((node, label)) = labels.iter().enumerate().find(|(_, &l)| l < 0) {
        return Err(bad(path, format!("label {label} of node {node} is negative: classes are numbered from 0")));
    }
    if let Some((node, label)) = labels.iter().enumerate().find(|(_, &l)| l as u64 >= classes as u64) {
        return Err(bad(path, format!("label {label} of node {node} is outside the model's {classes} classes")));
    }
    Ok(labels)
}

/// A node mask (`.npy`, bool), one entry per node, selecting at least one node (the loss and the accuracy
/// over a mask that selects none are undefined).
pub fn read_mask(path: &Path, nodes: usize) -> Result<Vec<bool>> {
    let mask = io::npy::read_mask(path)?;
    if mask.len() != nodes {
        return Err(bad(path, format!("mask has {} entries for a graph of {nodes} nodes", mask.len())));
    }
    if !mask.contains(&true) {
        return Err(bad(path, format!("mask selects no node (all {nodes} entries are false)")));
    }
    Ok(mask)
}
