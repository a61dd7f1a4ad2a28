//! Each layer's backward pass against finite differences of the loss computed by the inference path
//! (`Model::forward`), on directed graphs (so the backward pass runs on a resident transpose) and undirected
//! ones (where one symmetric matrix serves both directions), in both aggregation orders; and malformed
//! training inputs refused with clear errors.

mod common;

use pimgnn::gnn::{Activation, Aggregator, Architecture, Backend, Dtype, EngineOptions, Model};
use pimgnn::io::safetensors::TensorFile;
use pimgnn::train::{cross_entropy, Adam, OptimizerKind, Targets, Trainer};
use pimgnn::{compare, Coo, Csr, Dense, Error};
use upmem::BackendKind;

const NODES: usize = 12;
const CLASSES: usize = 3;

/// A random graph of `NODES` nodes with some isolated nodes' rows empty; made undirected when `symmetric`.
fn graph(seed: u64, symmetric: bool) -> Csr<f32> {
    use rand::RngExt;
    let mut rng = common::rng(seed);
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for _ in 0..30 {
        let (source, target) = (rng.random_range(0..NODES as u32 - 1), rng.random_range(0..NODES as u32 - 1));
        rows.push(target);
        cols.push(source);
    }
    let values = vec![1.0; rows.len()];
    let coo = Coo::new(NODES, NODES, rows, cols, values).unwrap();
    if symmetric {
        coo.symmetrized().unwrap().to_csr()
    } else {
        coo.to_csr()
    }
}

/// A model of `architecture` over `widths`, random weights from `seed`.
fn model(architecture: Architecture, widths: &[usize], seed: u64) -> Model {
    // GAT: two heads concatenated, then three averaged.
    let shape = common::RandomLayers {
        sage_root_bias: |_| false,
        gin_hidden: |_, _| 5,
        gat_heads: |at| if at == 0 { (2, true) } else { (3, false) },
    };
    common::random_model(architecture, widths, &mut common::rng(seed), shape)
}

/// `model` with its `state_dict` tensor `name` changed at `index` by `delta`.
fn perturbed(model: &Model, name: &str, index: usize, delta: f32) -> Model {
    let mut tensors = model.state_dict();
    tensors.get_mut(name).unwrap_or_else(|| panic!("no tensor {name}")).data[index] += delta;
    let file = TensorFile { path: "perturbed".into(), metadata: model.metadata(), tensors };
    Model::from_tensors(&file).unwrap()
}

/// The loss of `model` by the inference path, in f64 from f32 logits.
fn loss(model: &Model, graph: &Csr<f32>, features: &Dense<f32>, targets: &Targets) -> f64 {
    let matrix = model.architecture().aggregation().matrix(graph).unwrap();
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let aggregation = model.architecture().aggregation();
    let mut aggregator = Aggregator::for_aggregation(aggregation, matrix, Dtype::F32, &options).unwrap();
    let logits = model.forward(features, &mut aggregator).unwrap().logits;
    f64::from(cross_entropy(&logits, targets).unwrap().0)
}

fn targets(seed: u64) -> Targets {
    use rand::RngExt;
    let mut rng = common::rng(seed);
    let labels = (0..NODES).map(|_| rng.random_range(0..CLASSES as i64)).collect();
    let mask = (0..NODES).map(|node| node % 4 != 3).collect();
    Targets::new(labels, mask, NODES, CLASSES).unwrap()
}

/// The parameter tensors of a model from [`model`] over `widths`, counted from PyG's layers: GCNConv has a
/// weight and a bias, SAGEConv a weight and a bias for the neighbours and a weight (no bias) for the root, and
/// GINConv a weight and a bias in each of its MLP's two maps, and `eps` when it is trained, GATConv a weight, the
/// two attention vectors and a bias.
fn parameter_tensors(architecture: Architecture, widths: &[usize], train_eps: bool) -> usize {
    let per_layer = match architecture {
        Architecture::Gcn => 2,
        Architecture::Sage => 3,
        Architecture::Gin => 4 + usize::from(train_eps),
        Architecture::Gat => 4,
    };
    per_layer * (widths.len() - 1)
}

fn gradients_match_finite_differences(architecture: Architecture, widths: &[usize], symmetric: bool, train_eps: bool) {
    let seed = widths.iter().sum::<usize>() as u64 + u64::from(symmetric);
    let graph = graph(seed, symmetric);
    let model = model(architecture, widths, seed + 1);
    let model = if train_eps { model.with_train_eps(&[true]).unwrap() } else { model };
    // GAT with ELU between its layers, as PyG's GAT examples have it.
    let model = if architecture == Architecture::Gat { model.with_activation(Activation::Elu) } else { model };
    let features =
        Dense::from_vec(NODES, widths[0], common::uniform(&mut common::rng(seed + 2), NODES * widths[0])).unwrap();
    let targets = targets(seed + 3);
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let adam = OptimizerKind::Adam(Adam::default());
    let mut trainer = Trainer::new(model.clone(), &graph, features.clone(), targets.clone(), adam, &options).unwrap();
    // GCN's and GIN's matrices are symmetric on an undirected graph, SAGE's mean (rows over in-degrees) is not,
    // and GAT's attention values never are.
    let shares = symmetric && matches!(architecture, Architecture::Gcn | Architecture::Gin);
    assert_eq!(trainer.propagator().shares_matrix(), shares, "{}", trainer.propagator().plan());
    let pass = trainer.pass().unwrap();
    assert!((f64::from(pass.loss) - loss(&model, &graph, &features, &targets)).abs() < 1e-5);
    // Differences in f32 arithmetic with steps of 1e-3: rounding noise near 1e-4. A step can cross one of
    // ReLU's kinks, where the loss has a gradient on each side; the backward pass must then match one of the
    // one-sided differences (and elsewhere, all three agree).
    let step = 1e-3f32;
    let names = trainer.parameter_names();
    let tensors = parameter_tensors(architecture, widths, train_eps);
    assert_eq!((names.len(), pass.gradients.len()), (tensors, tensors), "{architecture} {widths:?}: {names:?}");
    // In the trainer's order: each map's weight, then its bias, then a trained eps; each named as in the state_dict.
    let state_dict = model.state_dict();
    let sizes: Vec<usize> = names.iter().map(|name| state_dict[name].data.len()).collect();
    assert_eq!(pass.gradients.iter().map(Vec::len).collect::<Vec<_>>(), sizes, "{architecture} {widths:?}");
    let at_init = loss(&model, &graph, &features, &targets);
    for (tensor, gradient) in pass.gradients.iter().enumerate() {
        for (index, &analytic) in gradient.iter().enumerate() {
            let up = loss(&perturbed(&model, &names[tensor], index, step), &graph, &features, &targets);
            let down = loss(&perturbed(&model, &names[tensor], index, -step), &graph, &features, &targets);
            let step = f64::from(step);
            let differences = [(up - down) / (2.0 * step), (up - at_init) / step, (at_init - down) / step];
            let analytic = f64::from(analytic);
            assert!(
                differences.iter().any(|numeric| (numeric - analytic).abs() <= 2e-3 + 2e-2 * numeric.abs()),
                "{architecture} {widths:?} symmetric {symmetric}: d loss / d {}[{index}]: backward {analytic}, \
                 finite differences (central, forward, backward) {differences:?}",
                names[tensor]
            );
        }
    }
}

#[test]
fn gcn_backward_matches_finite_differences() {
    // 6 -> 4 transforms first, 4 -> 7 aggregates first (its input gradient goes through M^T), 7 -> 3 first again.
    for symmetric in [false, true] {
        gradients_match_finite_differences(Architecture::Gcn, &[6, 4, 7, CLASSES], symmetric, false);
    }
}

#[test]
fn sage_backward_matches_finite_differences() {
    for symmetric in [false, true] {
        gradients_match_finite_differences(Architecture::Sage, &[2, 4, CLASSES], symmetric, false);
    }
}

#[test]
fn gin_backward_matches_finite_differences() {
    for symmetric in [false, true] {
        gradients_match_finite_differences(Architecture::Gin, &[4, 6, CLASSES], symmetric, false);
    }
}

/// GIN with `eps` trained: its gradient in both aggregation orders (the MLPs' inner width is 5, so conv1's first
/// map, 4 -> 5, aggregates first and conv2's, 8 -> 5, transforms first).
/// Attention: every node's softmax over its incoming edges and self-loop (a node without edges attends only to
/// itself), heads concatenated then averaged, ELU between the layers.
#[test]
fn gat_backward_matches_finite_differences() {
    for symmetric in [false, true] {
        gradients_match_finite_differences(Architecture::Gat, &[3, 4, CLASSES], symmetric, false);
    }
}

#[test]
fn gin_backward_with_trained_eps_matches_finite_differences() {
    for symmetric in [false, true] {
        gradients_match_finite_differences(Architecture::Gin, &[4, 8, CLASSES], symmetric, true);
    }
}

#[test]
fn malformed_training_inputs_are_refused() {
    let graph = graph(1, false);
    let model = model(Architecture::Gcn, &[4, CLASSES], 2);
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let adam = OptimizerKind::Adam(Adam::default());
    let features = Dense::zeros(NODES, 4);
    let new = |features: Dense<f32>, targets: Targets, model: Model| {
        Trainer::new(model, &graph, features, targets, adam, &options).map(|_| ())
    };
    let wrong_width = new(Dense::zeros(NODES, 5), targets(1), model.clone());
    assert!(matches!(&wrong_width, Err(Error::Shape { what, .. }) if what.contains("columns")), "{wrong_width:?}");
    let wrong_rows = new(Dense::zeros(NODES + 1, 4), targets(1), model.clone());
    assert!(matches!(&wrong_rows, Err(Error::Shape { what, .. }) if what.contains("rows")), "{wrong_rows:?}");
    let other_graph = Targets::new(vec![0; NODES + 1], vec![true; NODES + 1], NODES + 1, CLASSES).unwrap();
    let wrong_nodes = new(features.clone(), other_graph, model.clone());
    assert!(matches!(&wrong_nodes, Err(Error::Shape { what, .. }) if what.contains("labels")), "{wrong_nodes:?}");
    let other_classes = Targets::new(vec![0; NODES], vec![true; NODES], NODES, CLASSES + 1).unwrap();
    let wrong_classes = new(features.clone(), other_classes, model.clone());
    assert!(matches!(&wrong_classes, Err(Error::Shape { what, .. }) if what.contains("classes")), "{wrong_classes:?}");
    let short_mask = Targets::new(vec![0; NODES], vec![true; NODES - 1], NODES, CLASSES);
    assert!(matches!(&short_mask, Err(Error::Shape { what, .. }) if what.contains("mask")), "{short_mask:?}");
    let mut labels = vec![0; NODES];
    labels[5] = CLASSES as i64;
    let label = Targets::new(labels, vec![true; NODES], NODES, CLASSES);
    assert!(matches!(&label, Err(Error::IndexOutOfRange { index: 3, limit: 3, .. })), "{label:?}");
    let message = label.unwrap_err().to_string();
    assert!(message.contains("node 5"), "{message}");
}

/// The backward aggregation on PIM: a directed graph's transpose resident on DPUs of its own (SAGE's mean is
/// never symmetric), GCN's symmetric matrix serving both directions, or GAT's transpose taking the attention
/// values at every call, gives the CPU's gradients.
#[test]
fn gradients_on_the_simulator_equal_the_cpus() {
    for (architecture, widths, symmetric) in [
        (Architecture::Sage, [5, 9, CLASSES], false),
        (Architecture::Gcn, [9, 4, CLASSES], true),
        (Architecture::Gat, [5, 6, CLASSES], true),
    ] {
        let graph = graph(7, symmetric);
        let model = model(architecture, &widths, 8);
        let features =
            Dense::from_vec(NODES, widths[0], common::uniform(&mut common::rng(9), NODES * widths[0])).unwrap();
        let adam = OptimizerKind::Adam(Adam::default());
        let gradients = |backend: Backend| {
            let options = EngineOptions { backend, dpus: Some(4), ..EngineOptions::default() };
            let mut trainer =
                Trainer::new(model.clone(), &graph, features.clone(), targets(10), adam, &options).unwrap();
            assert_eq!(trainer.propagator().backend(), backend);
            let shares = symmetric && architecture != Architecture::Gat;
            assert_eq!(trainer.propagator().shares_matrix(), shares, "{}", trainer.propagator().plan());
            trainer.pass().unwrap().gradients
        };
        let (cpu, simulated) = (gradients(Backend::Cpu), gradients(Backend::Pim(BackendKind::Simulator)));
        let tensors = parameter_tensors(architecture, &widths, false);
        assert_eq!((cpu.len(), simulated.len()), (tensors, tensors), "{architecture}: gradient tensors");
        for (tensor, (cpu, simulated)) in cpu.iter().zip(&simulated).enumerate() {
            let what = format!("{architecture} gradient tensor {tensor}, simulator against CPU");
            let difference = compare::max_abs_difference(&what, simulated, cpu).unwrap();
            println!("{what}: largest difference {difference:.2e}");
            // Achieved 3.0e-8, about one f32 rounding of these gradients (the simulator's kernel sums in
            // another order); bound 2e-7, some 7 times that.
            assert!(difference <= 2e-7, "{architecture}: gradient tensor {tensor} differs by {difference}");
        }
    }
}
