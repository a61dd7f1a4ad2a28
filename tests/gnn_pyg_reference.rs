//! GraphSAGE and GIN against outputs PyTorch Geometric produced itself, on the CPU and on the simulator: an
//! oracle that shares no code or reading of the formulas with pimgnn.
//!
//! - A generated graph with a repeated edge, a self-loop, a node without incoming edges and an isolated node,
//!   and 2-layer SAGE (mean) and GIN (eps 0.3) models with PyG's initialisation, their outputs from PyG 2.8.1
//!   (`tests/reference/make_reference.py` wrote every file of `tests/reference/`).
//! - GIN trained on Cora with PyG (`models/cora_gin_train_final.safetensors` of the shared datasets): the final
//!   weights, and the final model's logits PyG computed for every node.
//!
//! Bounds: pimgnn sums in float32 in another order than PyTorch (its own GEMM and SpMM), so the outputs agree to
//! float32 rounding, scaled by the outputs' size: each bound is the largest difference measured on the two
//! backends (in the comments) with a margin of about 4, far below what a wrong formula gives (a SAGE mean that
//! also counts the node itself differs by 5e-1, a GIN without its `eps` by 1.2e-1).

mod common;

use std::path::{Path, PathBuf};

use pimgnn::gnn::{accuracy, inputs, Aggregator, Backend, Dtype, EngineOptions, Model};
use pimgnn::io::npy;
use pimgnn::{compare, Csr, Dense};
use upmem::BackendKind;

/// DPUs of the simulator backend: several, so that the generated graph is cut into blocks.
const SIMULATED_DPUS: u32 = 8;

/// The files `make_reference.py` wrote.
fn reference(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference").join(name)
}

/// `model`'s output for `features` on `graph`, aggregating on `backend` in f32.
fn logits(model: &Model, graph: &Csr<f32>, features: &Dense<f32>, backend: Backend) -> Dense<f32> {
    let matrix = model.architecture().aggregation().matrix(graph).expect("aggregation matrix");
    let options = EngineOptions {
        backend,
        dpus: (backend == Backend::Pim(BackendKind::Simulator)).then_some(SIMULATED_DPUS),
        widths: model.aggregation_widths(),
        ..EngineOptions::default()
    };
    let mut aggregator = Aggregator::new(matrix, Dtype::F32, &options).expect("aggregator");
    assert_eq!(aggregator.backend(), backend);
    model.forward(features, &mut aggregator).expect("forward").logits
}

/// The generated model `name` (sage or gin) on both backends: within `bound` of PyG's output.
fn generated_model_matches_pyg(name: &str, bound: f32) {
    let model = Model::load(&reference(&format!("generated_{name}.safetensors"))).expect("model");
    assert_eq!(model.architecture().to_string(), name);
    let graph = inputs::read_graph(&reference("generated_graph.mtx")).expect("graph");
    let features = inputs::read_features(&reference("generated_features.npy"), graph.nrows(), model.in_features())
        .expect("features");
    let expected = npy::read_dense_f32(&reference(&format!("generated_{name}_logits.npy"))).expect("logits");
    for backend in [Backend::Cpu, Backend::Pim(BackendKind::Simulator)] {
        let found = logits(&model, &graph, &features, backend);
        let difference = compare::max_abs_difference(name, &found, &expected).expect("finite logits of one shape");
        println!("{name} on {backend}: largest difference from PyG {difference:.2e}");
        assert!(difference <= bound, "{name} on {backend}: largest difference from PyG's output {difference}");
    }
}

#[test]
fn graphsage_mean_matches_pyg_on_a_generated_graph() {
    // Measured: 1.2e-7 on the CPU and on the simulator; the outputs are at most 1.5 in size.
    generated_model_matches_pyg("sage", 5e-7);
}

#[test]
fn gin_matches_pyg_on_a_generated_graph() {
    // Measured: 1.2e-7 on the CPU, 1.3e-7 on the simulator; the outputs are at most 0.83 in size.
    generated_model_matches_pyg("gin", 5e-7);
}

#[test]
fn gin_trained_on_cora_reproduces_pygs_logits_and_accuracy() {
    let root = common::datasets();
    let model = Model::load(&root.join("models/cora_gin_train_final.safetensors")).expect("model");
    let graph = inputs::read_graph(&root.join("cora/graph.mtx")).expect("graph");
    let features =
        inputs::read_features(&root.join("cora/features.mtx"), graph.nrows(), model.in_features()).expect("features");
    let labels =
        inputs::read_labels(&root.join("cora/labels.npy"), graph.nrows(), model.out_features()).expect("labels");
    let test_mask = inputs::read_mask(&root.join("cora/test_mask.npy"), graph.nrows()).expect("mask");
    let expected = npy::read_dense_f32(&root.join("models/cora_gin_train_final_logits.npy")).expect("logits");
    for backend in [Backend::Cpu, Backend::Pim(BackendKind::Simulator)] {
        let found = logits(&model, &graph, &features, backend);
        // Sum aggregation makes the logits grow into the hundreds (up to 349): the difference relative to the
        // largest. Measured: 1.8e-7 on the CPU, 3.5e-7 on the simulator.
        let difference = compare::max_relative_difference("GIN logits", &found, &expected).expect("finite logits");
        println!("GIN on Cora on {backend}: largest difference from PyG {difference:.2e} of the largest logit");
        assert!(difference <= 1.5e-6, "{backend}: largest difference from PyG's logits {difference} of the largest");
        let test = accuracy(&found, &labels, &test_mask).unwrap();
        // The final model's test accuracy, as PyG measured it (the file's metadata).
        assert_eq!(format!("{test:.4}"), "0.7220", "{backend}");
    }
}
