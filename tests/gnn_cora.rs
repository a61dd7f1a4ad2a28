//! The Cora GCN trained with PyTorch Geometric reproduces PyG's logits and test accuracy, exactly in f32 and
//! within a stated tolerance with quantized aggregation.

mod common;

use pimgnn::gnn::{accuracy, inputs, Aggregator, Backend, Dtype, EngineOptions, Model};
use pimgnn::io::npy;
use pimgnn::Dense;

struct Cora {
    model: Model,
    graph: pimgnn::Csr<f32>,
    features: Dense<f32>,
    labels: Vec<i64>,
    test_mask: Vec<bool>,
    expected: Dense<f32>,
}

fn cora() -> Cora {
    let root = common::datasets();
    let model = Model::load(&root.join("models/cora_gcn.safetensors")).expect("model");
    let graph = inputs::read_graph(&root.join("cora/graph.mtx")).expect("graph");
    let features =
        inputs::read_features(&root.join("cora/features.mtx"), graph.nrows(), model.in_features()).expect("features");
    let labels =
        inputs::read_labels(&root.join("cora/labels.npy"), graph.nrows(), model.out_features()).expect("labels");
    let test_mask = inputs::read_mask(&root.join("cora/test_mask.npy"), graph.nrows()).expect("mask");
    let expected = npy::read_dense_f32(&root.join("models/cora_gcn_logits.npy")).expect("logits");
    Cora { model, graph, features, labels, test_mask, expected }
}

/// DPUs of the simulator backend: tens, so that the tests stay fast while the graph spreads over many DPUs.
const SIMULATED_DPUS: u32 = 32;

fn run(cora: &Cora, backend: Backend, dtype: Dtype) -> Dense<f32> {
    let matrix = cora.model.architecture().aggregation().matrix(&cora.graph).expect("aggregation matrix");
    let options = EngineOptions {
        backend,
        dpus: (backend == Backend::Simulator).then_some(SIMULATED_DPUS),
        widths: cora.model.aggregation_widths(),
        ..EngineOptions::default()
    };
    let mut aggregator = Aggregator::new(matrix, dtype, &options).expect("aggregator");
    assert_eq!(aggregator.backend(), backend);
    cora.model.forward(&cora.features, &mut aggregator).expect("forward").logits
}

fn largest_difference(a: &Dense<f32>, b: &Dense<f32>) -> f32 {
    assert_eq!((a.rows(), a.cols()), (b.rows(), b.cols()));
    a.as_slice().iter().zip(b.as_slice()).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn reproduces_pyg_logits_and_accuracy(backend: Backend) {
    let cora = cora();
    assert_eq!((cora.model.in_features(), cora.model.out_features(), cora.model.layers().len()), (1433, 7, 2));
    let logits = run(&cora, backend, Dtype::F32);
    let difference = largest_difference(&logits, &cora.expected);
    assert!(difference <= 1e-4, "{backend}: largest difference from PyG's logits: {difference}");
    let test = accuracy(&logits, &cora.labels, &cora.test_mask).unwrap();
    assert_eq!(format!("{test:.4}"), "0.8090", "{backend}");
}

fn quantized_aggregation_reports_its_accuracy(backend: Backend) {
    let cora = cora();
    let exact = accuracy(&run(&cora, backend, Dtype::F32), &cora.labels, &cora.test_mask).unwrap();
    for (dtype, tolerance) in [(Dtype::I32, 0.002), (Dtype::I16, 0.01), (Dtype::I8, 0.05)] {
        let logits = run(&cora, backend, dtype);
        let test = accuracy(&logits, &cora.labels, &cora.test_mask).unwrap();
        let difference = largest_difference(&logits, &cora.expected);
        println!(
            "{backend} {dtype}: test accuracy {test:.4} ({:+.4} against f32), largest logit difference {difference:.2e}",
            test - exact
        );
        assert!((test - exact).abs() <= tolerance, "{backend} {dtype}: accuracy {test} against {exact} in f32");
    }
}

#[test]
fn f32_reproduces_pyg_logits_and_accuracy_on_the_cpu() {
    reproduces_pyg_logits_and_accuracy(Backend::Cpu);
}

#[test]
fn f32_reproduces_pyg_logits_and_accuracy_on_the_simulator() {
    reproduces_pyg_logits_and_accuracy(Backend::Simulator);
}

#[test]
fn quantized_aggregation_reports_its_accuracy_on_the_cpu() {
    quantized_aggregation_reports_its_accuracy(Backend::Cpu);
}

#[test]
fn quantized_aggregation_reports_its_accuracy_on_the_simulator() {
    quantized_aggregation_reports_its_accuracy(Backend::Simulator);
}
