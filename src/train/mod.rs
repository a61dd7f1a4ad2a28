//! Full-batch GNN training with PyTorch's semantics: the sparse aggregation forward (`M X`) and backward
//! (`M^T dY`) on PIM or the CPU with the graph resident for the whole run, the dense layers' GEMMs, the
//! loss and the optimiser on the CPU.
//!
//! ```no_run
//! # fn main() -> pimgnn::Result<()> {
//! use std::path::Path;
//! use pimgnn::gnn::{inputs, EngineOptions, Model};
//! use pimgnn::train::{Adam, OptimizerKind, Targets, Trainer};
//!
//! let model = Model::load(Path::new("cora_gcn_train_init.safetensors"))?;
//! let graph = inputs::read_graph(Path::new("cora/graph.mtx"))?;
//! let features = inputs::read_features(Path::new("cora/features.mtx"), graph.nrows(), model.in_features())?;
//! let labels = inputs::read_labels(Path::new("cora/labels.npy"), graph.nrows(), model.out_features())?;
//! let mask = inputs::read_mask(Path::new("cora/train_mask.npy"), graph.nrows())?;
//! let targets = Targets::new(labels, mask, graph.nrows(), model.out_features())?;
//! let adam = OptimizerKind::Adam(Adam { lr: 0.01, weight_decay: 5e-4, ..Adam::default() });
//! let mut trainer = Trainer::new(model, &graph, features, targets, adam, &EngineOptions::default())?;
//! for _ in 0..200 {
//!     let epoch = trainer.epoch()?;
//!     println!("loss {:.4}", epoch.loss);
//! }
//! # Ok(()) }
//! ```

mod attention;
mod backprop;
mod init;
mod loss;
mod ops;
mod optim;
mod propagate;
mod trainer;

pub use init::{initial_model, GAT_HIDDEN_HEADS};
pub use loss::{cross_entropy, Targets};
pub use optim::{Adam, Optimizer, OptimizerKind, Sgd};
pub use propagate::{is_symmetric, Propagator, Stage, StageTime, Timings};
pub use trainer::{backward_aggregation_widths, Epoch, Pass, Trainer};
