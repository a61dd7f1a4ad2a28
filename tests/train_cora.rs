//! Training the Cora GCN from PyG's initial weights reproduces PyG's run (`models/cora_gcn_train_*`): the
//! epoch-0 gradients, the loss of every one of 200 Adam epochs, the final test accuracy, and (loosely, as the
//! datasets README explains) the final parameters and logits, on the CPU and on the simulator.

mod common;

use pimgnn::gnn::{accuracy, inputs, Backend, EngineOptions, Model};
use pimgnn::io::{npy, safetensors::read_safetensors};
use pimgnn::train::{Adam, OptimizerKind, Targets, Trainer};
use pimgnn::Dense;

/// DPUs of the simulator backend: tens, so that 200 epochs stay fast while the graph spreads over many DPUs.
const SIMULATED_DPUS: u32 = 16;

/// PyG's run: `torch.optim.Adam(lr=0.01, weight_decay=5e-4)`.
const ADAM: Adam = Adam { lr: 0.01, betas: (0.9, 0.999), eps: 1e-8, weight_decay: 5e-4 };

struct Cora {
    trainer: Trainer,
    labels: Vec<i64>,
    test_mask: Vec<bool>,
}

fn cora(backend: Backend) -> Cora {
    let root = common::datasets();
    let model = Model::load(&root.join("models/cora_gcn_train_init.safetensors")).expect("initial model");
    let graph = inputs::read_graph(&root.join("cora/graph.mtx")).expect("graph");
    let nodes = graph.nrows();
    let features =
        inputs::read_features(&root.join("cora/features.mtx"), nodes, model.in_features()).expect("features");
    let labels = inputs::read_labels(&root.join("cora/labels.npy"), nodes, model.out_features()).expect("labels");
    let train_mask = inputs::read_mask(&root.join("cora/train_mask.npy"), nodes).expect("train mask");
    let test_mask = inputs::read_mask(&root.join("cora/test_mask.npy"), nodes).expect("test mask");
    let targets = Targets::new(labels.clone(), train_mask, nodes, model.out_features()).expect("targets");
    let options = EngineOptions {
        backend,
        dpus: (backend == Backend::Simulator).then_some(SIMULATED_DPUS),
        ..EngineOptions::default()
    };
    let trainer = Trainer::new(model, &graph, features, targets, OptimizerKind::Adam(ADAM), &options).expect("trainer");
    assert_eq!(trainer.propagator().backend(), backend);
    // Cora's graph is undirected, so GCN's matrix is symmetric and serves the backward pass too.
    assert!(trainer.propagator().shares_matrix(), "{}", trainer.propagator().plan());
    Cora { trainer, labels, test_mask }
}

fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// `|a - b| / |b|` in the Euclidean norm.
fn relative_difference(a: &[f32], b: &[f32]) -> f64 {
    let norm = |v: &mut dyn Iterator<Item = f64>| v.map(|x| x * x).sum::<f64>().sqrt();
    norm(&mut a.iter().zip(b).map(|(x, y)| f64::from(x - y))) / norm(&mut b.iter().map(|&y| f64::from(y)))
}

fn epoch_zero_gradients_match_pyg(backend: Backend) {
    let mut cora = cora(backend);
    let expected = read_safetensors(&common::datasets().join("models/cora_gcn_train_grads0.safetensors")).unwrap();
    let pass = cora.trainer.pass().expect("pass");
    let names = cora.trainer.parameter_names();
    assert_eq!(names.len(), expected.tensors.len(), "{names:?}");
    for (name, gradient) in names.iter().zip(&pass.gradients) {
        let reference = &expected.tensors[name];
        let difference = largest_difference(gradient, &reference.data);
        assert!(difference <= 1e-5, "{backend}: gradient of {name} differs from PyG's by {difference}");
    }
}

fn two_hundred_adam_epochs_follow_pyg(backend: Backend) {
    let root = common::datasets();
    let mut cora = cora(backend);
    let losses_file = std::fs::File::open(root.join("models/cora_gcn_train_losses.npy")).expect("losses");
    let losses: Vec<f32> = npyz::NpyFile::new(losses_file).unwrap().into_vec().unwrap();
    assert_eq!(losses.len(), 200);
    let mut worst = (0, 0.0f32);
    for (epoch, &expected) in losses.iter().enumerate() {
        let loss = cora.trainer.epoch().expect("epoch").loss;
        let difference = (loss - expected).abs();
        assert!(difference <= 1e-3, "{backend}: epoch {epoch}: loss {loss}, PyG's {expected}");
        if difference > worst.1 {
            worst = (epoch, difference);
        }
    }
    println!("{backend}: largest loss difference from PyG's {:.2e} at epoch {}", worst.1, worst.0);

    let logits = cora.trainer.logits().expect("final logits");
    let test = accuracy(&logits, &cora.labels, &cora.test_mask).unwrap();
    assert!((test - 0.8150).abs() <= 0.005, "{backend}: final test accuracy {test}, PyG's 0.8150");

    let expected_logits = npy::read_dense_f32(&root.join("models/cora_gcn_train_final_logits.npy")).unwrap();
    let logits_difference = relative_difference(logits.as_slice(), expected_logits.as_slice());
    assert!(logits_difference <= 1e-2, "{backend}: final logits differ from PyG's by {logits_difference} (relative)");
    assert_eq!(argmax(&logits), argmax(&expected_logits), "{backend}: predicted classes");
    let final_model = read_safetensors(&root.join("models/cora_gcn_train_final.safetensors")).unwrap();
    let trained = cora.trainer.model();
    for ((prefix, layer), names) in trained.layers().iter().zip(parameter_names_by_layer(trained)) {
        for (named, (weight, bias)) in layer.linears().iter().zip(names) {
            let difference = relative_difference(named.linear.weight().as_slice(), &final_model.tensors[&weight].data);
            assert!(difference <= 1e-2, "{backend}: {prefix}: {weight} differs from PyG's by {difference} (relative)");
            let trained_bias = named.linear.bias().expect("GCNConv has a bias");
            let difference = relative_difference(trained_bias, &final_model.tensors[&bias].data);
            assert!(difference <= 1e-2, "{backend}: {prefix}: {bias} differs from PyG's by {difference} (relative)");
        }
    }
}

/// Each layer's `(weight, bias)` full names.
fn parameter_names_by_layer(model: &Model) -> Vec<Vec<(String, String)>> {
    model
        .layers()
        .iter()
        .map(|(prefix, layer)| {
            layer.linears().iter().map(|n| (format!("{prefix}.{}", n.weight), format!("{prefix}.{}", n.bias))).collect()
        })
        .collect()
}

fn argmax(logits: &Dense<f32>) -> Vec<usize> {
    (0..logits.rows())
        .map(|node| {
            let row = logits.row(node);
            row.iter().enumerate().fold(0, |best, (c, &v)| if v > row[best] { c } else { best })
        })
        .collect()
}

#[test]
fn epoch_zero_gradients_match_pyg_on_the_cpu() {
    epoch_zero_gradients_match_pyg(Backend::Cpu);
}

#[test]
fn epoch_zero_gradients_match_pyg_on_the_simulator() {
    epoch_zero_gradients_match_pyg(Backend::Simulator);
}

#[test]
fn two_hundred_adam_epochs_follow_pyg_on_the_cpu() {
    two_hundred_adam_epochs_follow_pyg(Backend::Cpu);
}

#[test]
fn two_hundred_adam_epochs_follow_pyg_on_the_simulator() {
    two_hundred_adam_epochs_follow_pyg(Backend::Simulator);
}
