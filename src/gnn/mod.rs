//! GNN inference with PyTorch Geometric's layers and `state_dict` names, in hybrid execution: dense transforms
//! on the CPU, sparse aggregation through an [`SpmmEngine`](crate::SpmmEngine) on PIM or the CPU.
//!
//! ```no_run
//! # fn main() -> pimgnn::Result<()> {
//! use std::path::Path;
//! use pimgnn::gnn::{inputs, Aggregator, Dtype, EngineOptions, Model};
//!
//! let model = Model::load(Path::new("cora_gcn.safetensors"))?;
//! let graph = inputs::read_graph(Path::new("cora/graph.mtx"))?;
//! let features = inputs::read_features(Path::new("cora/features.mtx"), graph.nrows(), model.in_features())?;
//! // The graph goes into the engine once, as the matrix this architecture aggregates with.
//! let matrix = model.architecture().aggregation().matrix(&graph)?;
//! let mut aggregator = Aggregator::new(matrix, Dtype::F32, &EngineOptions::default())?;
//! let logits = model.forward(&features, &mut aggregator)?.logits;
//! # Ok(()) }
//! ```

mod aggregate;
pub(crate) mod dense;
pub(crate) mod gat;
pub mod inputs;
mod layer;
mod model;
mod norm;
pub mod quantize;
mod state_dict;

pub use crate::pim::auto::{Decision, Pick};
pub use crate::pim::placement::{
    spmm_engine, Backend, Engine, EngineOptions, DEFAULT_DPUS, DEFAULT_PLAN_WIDTH, DEFAULT_TASKLETS,
};
pub use aggregate::{Aggregator, Dtype, INTERIOR_PHASE};
pub use dense::{Activation, Linear};
pub use gat::{GatConv, DEFAULT_NEGATIVE_SLOPE};
pub use layer::{GcnConv, GinConv, Layer, NamedLinear, Order, Overlap, SageConv};
pub(crate) use model::check_weights_fit;
pub use model::{Architecture, Inference, LayerReport, Model, TRAIN_EPS_METADATA};
pub use norm::{gcn_norm, Aggregation};
pub use quantize::Quantization;

use crate::error::{Error, Result};
use crate::sparse::Dense;

/// The class a row of logits predicts: the index of its largest value (the first of equal ones).
pub fn predicted_class(row: &[f32]) -> usize {
    row.iter().enumerate().fold(0, |best, (c, &v)| if v > row[best] { c } else { best })
}

/// The fraction of nodes in `mask` whose arg-max over `logits`' row is their label. Every selected node's label
/// must be one of the logits' classes (`0..logits.cols()`); unselected nodes' labels are not read (they may be
/// `-1` for "unlabelled").
pub fn accuracy(logits: &Dense<f32>, labels: &[i64], mask: &[bool]) -> Result<f64> {
    if labels.len() != logits.rows() {
        return Err(Error::shape("labels (one per node)", logits.rows(), labels.len()));
    }
    if mask.len() != logits.rows() {
        return Err(Error::shape("mask (one per node)", logits.rows(), mask.len()));
    }
    let classes = logits.cols();
    let (mut selected, mut correct) = (0usize, 0usize);
    for (node, _) in mask.iter().enumerate().filter(|(_, &m)| m) {
        let label = labels[node];
        if !(0..classes as i64).contains(&label) {
            return Err(Error::IndexOutOfRange {
                what: format!("label {label} of node {node} (the logits' classes)"),
                index: label as u64,
                limit: classes as u64,
            });
        }
        selected += 1;
        correct += usize::from(predicted_class(logits.row(node)) as i64 == label);
    }
    if selected == 0 {
        return Err(Error::invalid("mask", "selects no node"));
    }
    Ok(correct as f64 / selected as f64)
}
