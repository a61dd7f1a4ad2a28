//! The Cora GAT trained with PyTorch Geometric (`GATConv(1433, 8, heads=8)`, ELU, `GATConv(64, 7, heads=1,
//! concat=False)`) reproduces PyG's logits and test accuracy on the CPU backend and on the simulated DPUs, which
//! take the attention's values at every call; quantized attention reports what it costs against f32.

mod common;

use pimgnn::attention::AttentionSite;
use pimgnn::gnn::{
    accuracy, inputs, Activation, Aggregator, Architecture, Backend, Dtype, EngineOptions, Layer, Model,
};
use pimgnn::io::npy;
use pimgnn::{compare, Error};
use upmem::BackendKind;

fn load() -> (Model, pimgnn::Csr<f32>, pimgnn::Dense<f32>) {
    let root = common::datasets();
    let model = Model::load(&root.join("models/cora_gat.safetensors")).expect("model");
    let graph = inputs::read_graph(&root.join("cora/graph.mtx")).expect("graph");
    let features =
        inputs::read_features(&root.join("cora/features.mtx"), graph.nrows(), model.in_features()).expect("features");
    (model, graph, features)
}

fn aggregator(model: &Model, graph: &pimgnn::Csr<f32>, backend: Backend, dtype: Dtype) -> Aggregator {
    aggregator_computing_attention(model, graph, backend, dtype, AttentionSite::Host)
}

fn aggregator_computing_attention(
    model: &Model,
    graph: &pimgnn::Csr<f32>,
    backend: Backend,
    dtype: Dtype,
    attention: AttentionSite,
) -> Aggregator {
    let matrix = model.architecture().aggregation().matrix(graph).expect("attention structure");
    let widths = model.aggregation_widths();
    let options = EngineOptions { backend, dpus: Some(8), widths, attention, ..EngineOptions::default() };
    Aggregator::weighted(matrix, dtype, &options).expect("aggregator")
}

/// PyG's logits, the Cora labels and test mask.
fn expected() -> (pimgnn::Dense<f32>, Vec<i64>, Vec<bool>) {
    let root = common::datasets();
    let logits = npy::read_dense_f32(&root.join("models/cora_gat_logits.npy")).expect("logits");
    let labels = inputs::read_labels(&root.join("cora/labels.npy"), logits.rows(), 7).unwrap();
    let test_mask = inputs::read_mask(&root.join("cora/test_mask.npy"), logits.rows()).unwrap();
    (logits, labels, test_mask)
}

#[test]
fn the_cora_gat_reproduces_pygs_logits_and_accuracy_on_the_cpu_and_the_simulator() {
    let (model, graph, features) = load();
    assert_eq!((model.architecture(), model.activation()), (Architecture::Gat, Activation::Elu));
    let shapes: Vec<(usize, bool, usize)> = model
        .layers()
        .iter()
        .map(|(_, layer)| match layer {
            Layer::Gat(conv) => (conv.heads(), conv.concat(), conv.out_features()),
            other => panic!("not a GAT layer: {other:?}"),
        })
        .collect();
    assert_eq!(shapes, [(8, true, 64), (1, false, 7)]);
    let (expected, labels, test_mask) = expected();
    // The host's f32 softmax: achieved 1.9e-6 on both backends (the softmax's exp and the sums in other orders
    // than PyG's), bound 1e-5. The engine's fixed-point weights (the DPUs' kernels on the simulator, the same bits
    // on the CPU): achieved 2.9e-6 on the CPU and 3.3e-6 on the simulator, bound the 1e-4.
    for (site, bound, sent) in
        [(AttentionSite::Host, 1e-5, "send values"), (AttentionSite::Engine, 1e-4, "send scores")]
    {
        for backend in [Backend::Cpu, Backend::Pim(BackendKind::Simulator)] {
            let mut aggregator = aggregator_computing_attention(&model, &graph, backend, Dtype::F32, site);
            let inference = model.forward(&features, &mut aggregator).expect("forward");
            let difference =
                compare::max_abs_difference("GAT logits against PyG's", &inference.logits, &expected).unwrap();
            println!("{backend}, attention on the {site}: largest difference from PyG's logits {difference:.2e}");
            assert!(difference <= bound, "{backend}, {site}: largest difference from PyG's logits: {difference}");
            let accuracy = accuracy(&inference.logits, &labels, &test_mask).unwrap();
            assert_eq!(format!("{accuracy:.4}"), "0.8150", "{backend}, {site}");
            if backend != Backend::Cpu {
                let phases: Vec<&str> =
                    inference.layers.iter().flat_map(|layer| layer.phases.iter().map(|p| p.name.as_ref())).collect();
                assert!(phases.contains(&sent) && phases.contains(&"kernel"), "{site}: {phases:?}");
            }
        }
    }
    // Integer aggregation takes its weights from the host only.
    let mut quantized = aggregator_computing_attention(&model, &graph, Backend::Cpu, Dtype::I16, AttentionSite::Engine);
    let error = model.forward(&features, &mut quantized).unwrap_err();
    assert!(matches!(error, Error::Invalid { .. }) && error.to_string().contains("f32"), "{error}");
}

/// Attention quantized per call with scales of its own: the accuracy i16 and i8 cost against f32, on the CPU
/// and on the simulated DPUs (the same integers on both).
#[test]
fn quantized_attention_reports_its_accuracy_against_f32() {
    let (model, graph, features) = load();
    let (_, labels, test_mask) = expected();
    let exact = model.forward(&features, &mut aggregator(&model, &graph, Backend::Cpu, Dtype::F32)).unwrap().logits;
    let f32_accuracy = accuracy(&exact, &labels, &test_mask).unwrap();
    for (dtype, bound) in [(Dtype::I16, 0.005), (Dtype::I8, 0.03)] {
        let mut on_cpu = None;
        for backend in [Backend::Cpu, Backend::Pim(BackendKind::Simulator)] {
            let logits = model.forward(&features, &mut aggregator(&model, &graph, backend, dtype)).unwrap().logits;
            let accuracy = accuracy(&logits, &labels, &test_mask).unwrap();
            let difference = compare::max_abs_difference("quantized GAT logits", &logits, &exact).unwrap();
            println!(
                "{dtype} on {backend}: accuracy {accuracy:.4} (f32 {f32_accuracy:.4}), logits within {difference:.3e}"
            );
            assert!((accuracy - f32_accuracy).abs() <= bound, "{dtype} on {backend}: accuracy {accuracy}");
            match &on_cpu {
                None => on_cpu = Some(logits),
                Some(cpu) => assert_eq!(&logits, cpu, "{dtype}: integer sums are the same on the DPUs"),
            }
        }
    }
}

#[test]
fn a_saved_gat_loads_back_the_same() {
    let (model, _, _) = load();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gat.safetensors");
    model.save(&path, &[]).unwrap();
    assert_eq!(Model::load(&path).unwrap(), model);
}

#[test]
fn an_aggregator_without_the_structure_on_the_host_refuses_attention_naming_what_to_use() {
    let (model, graph, features) = load();
    let matrix = model.architecture().aggregation().matrix(&graph).unwrap();
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let mut plain = Aggregator::new(matrix, Dtype::F32, &options).unwrap();
    let error = model.forward(&features, &mut plain).unwrap_err();
    assert!(matches!(&error, Error::Invalid { .. }) && error.to_string().contains("Aggregator::weighted"), "{error}");
    let mut weighted = aggregator(&model, &graph, Backend::Cpu, Dtype::F32);
    let error = weighted.aggregate_weighted(&[0.5; 3], &features).unwrap_err();
    assert!(matches!(&error, Error::Shape { .. }), "{error}");
}

/// `pimgnn infer` with the Cora GAT on the CPU and the simulator, in f32 with PyG's accuracy and in i16, the
/// timing table naming the attention's steps and the values sent.
#[cfg(feature = "cli")]
#[test]
fn infer_runs_a_gat_on_every_backend_and_type() {
    let root = common::datasets();
    let path = |name: &str| root.join(name).to_str().unwrap().to_owned();
    let (graph, features, model) =
        (path("cora/graph.mtx"), path("cora/features.mtx"), path("models/cora_gat.safetensors"));
    let (labels, mask) = (path("cora/labels.npy"), path("cora/test_mask.npy"));
    let dir = tempfile::tempdir().unwrap();
    let base =
        ["infer", "--graph", &graph, "--features", &features, "--model", &model, "--labels", &labels, "--mask", &mask];
    let runs: [(&[&str], &[&str]); 3] = [
        (&["--backend", "cpu"], &["accuracy: 0.8150", "cpu spmm"]),
        (&["--backend", "sim", "--dpus", "16"], &["accuracy: 0.8150", "send values", "kernel"]),
        (&["--backend", "sim", "--dpus", "16", "--dtype", "i16"], &["accuracy: 0.8", "quantize values"]),
    ];
    for (extra, says) in runs {
        let ran = common::cli::pimgnn(dir.path(), &[&base[..], extra].concat());
        let stdout = String::from_utf8_lossy(&ran.stdout);
        assert!(ran.status.success(), "{extra:?}: {stdout}{}", String::from_utf8_lossy(&ran.stderr));
        for step in ["attention scores", "softmax", "combine heads"].iter().chain(says) {
            assert!(stdout.contains(step), "{extra:?}: no `{step}` in\n{stdout}");
        }
    }
}
