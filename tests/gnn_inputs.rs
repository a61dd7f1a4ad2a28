//! Every malformed or mismatched input is a clear error that names the file and the reason, never a panic.

mod common;

use std::path::{Path, PathBuf};

use common::NamedTensor;
use pimgnn::gnn::{accuracy, inputs, Layer, Model};
use pimgnn::{io, Dense};

struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Self {
        Scratch(tempfile::tempdir().unwrap())
    }

    fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

/// Asserts that `result` failed with a message naming `path` and containing `reason`.
#[track_caller]
fn assert_error<T: std::fmt::Debug>(result: pimgnn::Result<T>, path: &Path, reason: &str) {
    let message = result.expect_err("malformed input was accepted").to_string();
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(message.contains(name), "`{message}` does not name {name}");
    assert!(message.contains(reason), "`{message}` does not say `{reason}`");
}

fn gcn_tensors() -> Vec<NamedTensor> {
    vec![
        ("conv1.lin.weight".into(), vec![4, 3], vec![0.5; 12]),
        ("conv1.bias".into(), vec![4], vec![0.0; 4]),
        ("conv2.lin.weight".into(), vec![2, 4], vec![0.5; 8]),
        ("conv2.bias".into(), vec![2], vec![0.0; 2]),
    ]
}

fn model_error(tensors: &[NamedTensor], metadata: &[(&str, &str)], reason: &str) {
    let scratch = Scratch::new();
    let path = scratch.path("model.safetensors");
    common::write_safetensors(&path, tensors, metadata);
    assert_error(Model::load(&path), &path, reason);
}

#[test]
fn a_well_formed_model_loads() {
    let scratch = Scratch::new();
    let path = scratch.path("model.safetensors");
    common::write_safetensors(&path, &gcn_tensors(), &[("architecture", "gcn"), ("layers", "2")]);
    let model = Model::load(&path).unwrap();
    assert_eq!((model.in_features(), model.out_features(), model.layers().len()), (3, 2, 2));
}

#[test]
fn model_errors() {
    let mut unknown = gcn_tensors();
    unknown.push(("conv1.lin.bias_typo".into(), vec![4], vec![0.0; 4]));
    model_error(&unknown, &[], "unknown tensor `conv1.lin.bias_typo`");

    let missing: Vec<NamedTensor> = gcn_tensors().into_iter().filter(|t| t.0 != "conv2.lin.weight").collect();
    model_error(&missing, &[("architecture", "gcn")], "`conv2.lin.weight`: missing");

    let mut flat = gcn_tensors();
    flat[0] = ("conv1.lin.weight".into(), vec![12], vec![0.5; 12]);
    model_error(&flat, &[], "conv1.lin.weight");

    let mut short_bias = gcn_tensors();
    short_bias[1] = ("conv1.bias".into(), vec![3], vec![0.0; 3]);
    model_error(&short_bias, &[], "conv1.bias");

    let mut chain = gcn_tensors();
    chain[2] = ("conv2.lin.weight".into(), vec![2, 5], vec![0.5; 10]);
    model_error(&chain, &[], "layer `conv2` takes 5 features but `conv1` gives 4");

    model_error(&gcn_tensors(), &[("architecture", "transformer")], "`transformer` is not one of gcn, sage, gin");
    model_error(&gcn_tensors(), &[("layers", "3")], "metadata says layers=3, the tensors give 2");
    model_error(&[("weights".into(), vec![1], vec![0.0])], &[], "no `architecture` metadata");

    let gin = vec![
        ("conv1.nn.0.weight".to_owned(), vec![2, 3], vec![0.5; 6]),
        ("conv1.nn.0.bias".to_owned(), vec![2], vec![0.0; 2]),
    ];
    model_error(&gin, &[], "`conv1.eps`: missing");
}

/// A GIN layer as PyG's `Sequential(Linear(3, 2), ReLU, Linear(2, 2))` names it: `nn.0` and `nn.2`.
fn gin_tensors() -> Vec<NamedTensor> {
    vec![
        ("conv1.eps".into(), vec![1], vec![0.5]),
        ("conv1.nn.0.weight".into(), vec![2, 3], vec![0.5; 6]),
        ("conv1.nn.0.bias".into(), vec![2], vec![0.0; 2]),
        ("conv1.nn.2.weight".into(), vec![2, 2], vec![0.25; 4]),
        ("conv1.nn.2.bias".into(), vec![2], vec![0.1; 2]),
    ]
}

/// A GIN model keeps its MLP's `state_dict` names and whether it trains `eps` through a save and a load.
#[test]
fn a_gin_model_saves_as_it_was_loaded() {
    let scratch = Scratch::new();
    let path = scratch.path("gin.safetensors");
    common::write_safetensors(&path, &gin_tensors(), &[("train_eps", "true")]);
    let model = Model::load(&path).unwrap();
    let Layer::Gin(conv) = &model.layers()[0].1 else { panic!("not a GIN layer") };
    assert!(conv.train_eps());
    let names: Vec<String> = model.state_dict().into_keys().collect();
    let mut expected: Vec<String> = gin_tensors().into_iter().map(|(name, _, _)| name).collect();
    expected.sort();
    assert_eq!(names, expected);
    let saved = scratch.path("saved.safetensors");
    model.save(&saved, &[]).unwrap();
    assert_eq!(Model::load(&saved).unwrap(), model);
    // As bytes sent to another process.
    let bytes = model.to_safetensors_bytes().unwrap();
    assert_eq!(Model::from_safetensors_bytes(&bytes, "sent").unwrap(), model);
    let error = Model::from_safetensors_bytes(&bytes[..10], "sent").unwrap_err().to_string();
    assert!(error.contains("sent") && error.contains("not a valid safetensors file"), "{error}");
    assert!(!Model::load(&saved)
        .unwrap()
        .with_train_eps(&[false])
        .unwrap()
        .layers()
        .iter()
        .any(|(_, layer)| matches!(layer, Layer::Gin(conv) if conv.train_eps())));
}

#[test]
fn train_eps_errors() {
    model_error(&gin_tensors(), &[("train_eps", "yes")], "metadata train_eps=yes: `yes` is not true or false");
    model_error(&gin_tensors(), &[("train_eps", "true,false")], "train_eps flags (one, or one per layer)");
    model_error(&gcn_tensors(), &[("train_eps", "true")], "a gcn model has no eps to train");
    let scratch = Scratch::new();
    let path = scratch.path("gin.safetensors");
    common::write_safetensors(&path, &gin_tensors(), &[]);
    let no_flag = Model::load(&path).unwrap().with_train_eps(&[]);
    assert!(matches!(&no_flag, Err(pimgnn::Error::Shape { .. })), "{no_flag:?}");
}

#[test]
fn model_file_errors() {
    let scratch = Scratch::new();
    let garbage = scratch.file("garbage.safetensors", "not a safetensors file at all");
    assert_error(Model::load(&garbage), &garbage, "not a valid safetensors file");
    let absent = scratch.path("absent.safetensors");
    assert_error(Model::load(&absent), &absent, "No such file");

    let half = scratch.path("half.safetensors");
    let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F16, vec![2], &[0u8; 4]).unwrap();
    safetensors::serialize_to_file([("conv1.lin.weight", view)], None, &half).unwrap();
    assert_error(Model::load(&half), &half, "only F32 is supported");
}

#[test]
fn graph_errors() {
    let scratch = Scratch::new();
    let header = "%%MatrixMarket matrix coordinate pattern general\n";
    let cases = [
        ("rect.mtx", format!("{header}3 4 1\n1 2\n"), "must be square, found 3 x 4"),
        ("range.mtx", format!("{header}3 3 1\n1 4\n"), ":3: column index 4 out of range 1..=3"),
        ("fields.mtx", format!("{header}3 3 1\n1 2 3\n"), ":3: entry has more than 2 fields"),
        ("count.mtx", format!("{header}3 3 2\n1 2\n"), "declares 2 entries, the file has 1"),
        ("banner.mtx", "hello\n".to_owned(), "bad banner"),
        (
            "array.mtx",
            "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n".to_owned(),
            "unsupported format `array`",
        ),
        ("edges.csv", "id_1,id_2\n0,1\n1,x\n".to_owned(), ":3: id_2: `x` is not a non-negative integer"),
        ("edges.tsv", "0\t1\n".to_owned(), "unknown graph format `.tsv`"),
    ];
    for (name, contents, reason) in cases {
        let path = scratch.file(name, &contents);
        assert_error(inputs::read_graph(&path), &path, reason);
    }
}

#[test]
fn feature_errors() {
    let scratch = Scratch::new();
    let narrow = scratch.path("narrow.npy");
    common::write_npy(&narrow, &[5, 2], &[0.0f32; 10]);
    assert_error(
        inputs::read_features(&narrow, 5, 3),
        &narrow,
        "features are 5 x 2; the graph has 5 nodes and the model takes 3",
    );

    let doubles = scratch.path("doubles.npy");
    common::write_npy(&doubles, &[5, 3], &[0.0f64; 15]);
    assert_error(inputs::read_features(&doubles, 5, 3), &doubles, "must have dtype <f4, found <f8");

    let flat = scratch.path("flat.npy");
    common::write_npy(&flat, &[15], &[0.0f32; 15]);
    assert_error(inputs::read_features(&flat, 5, 3), &flat, "must have 2 dimension(s)");

    // A header can declare a shape whose element count overflows (npyz then reads no value at all).
    let mut header = String::from("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let overflowing = scratch.path("overflowing.npy");
    let length = (header.len() as u16).to_le_bytes();
    std::fs::write(&overflowing, [b"\x93NUMPY\x01\x00".as_slice(), &length, header.as_bytes()].concat()).unwrap();
    assert_error(inputs::read_features(&overflowing, 5, 3), &overflowing, "holds more values than memory can address");

    let truncated = scratch.path("truncated.npy");
    common::write_npy(&truncated, &[5, 3], &[0.0f32; 15]);
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 8]).unwrap();
    assert_error(inputs::read_features(&truncated, 5, 3), &truncated, "truncated or unreadable");

    let tall = scratch.file("tall.mtx", "%%MatrixMarket matrix coordinate real general\n6 3 1\n1 1 0.5\n");
    assert_error(inputs::read_features(&tall, 5, 3), &tall, "features are 6 x 3");

    let triples = scratch.file("triples.csv", "node_id,feature_id,value\n0,7,1.0\n");
    assert_error(inputs::read_features(&triples, 5, 3), &triples, "features are 1 x 8");

    let value = scratch.file("value.csv", "node_id,feature_id,value\n0,1,abc\n");
    assert_error(inputs::read_features(&value, 5, 3), &value, ":2: value: `abc` is not a number");

    let text = scratch.file("features.txt", "1 2 3\n");
    assert_error(inputs::read_features(&text, 5, 3), &text, "unknown feature format `.txt`");
}

#[test]
fn label_and_mask_errors() {
    let scratch = Scratch::new();
    let short = scratch.path("short_mask.npy");
    common::write_npy(&short, &[4], &[true; 4]);
    assert_error(inputs::read_mask(&short, 5), &short, "mask has 4 entries for a graph of 5 nodes");

    let float_labels = scratch.path("float_labels.npy");
    common::write_npy(&float_labels, &[5], &[0.0f32; 5]);
    assert_error(inputs::read_labels(&float_labels, 5, 3), &float_labels, "labels must have dtype <i8, found <f4");

    let out_of_range = scratch.path("labels.npy");
    common::write_npy(&out_of_range, &[5], &[0i64, 1, 2, 3, 0]);
    assert_error(
        inputs::read_labels(&out_of_range, 5, 3),
        &out_of_range,
        "label 3 of node 3 is outside the model's 3 classes",
    );

    let not_npy = scratch.file("mask.npy", "plain text");
    assert_error(io::npy::read_mask(&not_npy), &not_npy, "not a valid .npy file");

    let negative = scratch.path("negative_labels.npy");
    common::write_npy(&negative, &[5], &[0i64, 1, -1, 2, 0]);
    assert_error(
        inputs::read_labels(&negative, 5, 3),
        &negative,
        "label -1 of node 2 is negative: classes are numbered from 0",
    );

    // Accuracy and loss over no node are undefined: refused when the file is read, not after the run.
    let empty = scratch.path("empty_mask.npy");
    common::write_npy(&empty, &[5], &[false; 5]);
    assert_error(inputs::read_mask(&empty, 5), &empty, "mask selects no node (all 5 entries are false)");
}

/// The library's `accuracy` checks the labels it scores as the loaders do: a selected node's label outside the
/// logits' classes is an error, not a wrong prediction; unselected nodes may be unlabelled (-1).
#[test]
fn accuracy_refuses_labels_outside_the_classes() {
    let logits = Dense::from_vec(3, 2, vec![0.9, 0.1, 0.2, 0.8, 0.6, 0.4]).unwrap();
    let all = [true; 3];
    assert_eq!(accuracy(&logits, &[0, 1, 1], &all).unwrap(), 2.0 / 3.0);
    assert_eq!(accuracy(&logits, &[0, -1, 0], &[true, false, true]).unwrap(), 1.0);
    for (labels, message) in [
        ([0, 2, 0], "label 2 of node 1 (the logits' classes): index 2 out of range (limit 2)"),
        ([0, 1, -1], "label -1 of node 2 (the logits' classes)"),
    ] {
        let error = accuracy(&logits, &labels, &all).unwrap_err().to_string();
        assert!(error.contains(message), "{error}");
    }
    let error = accuracy(&logits, &[0, 1], &all).unwrap_err().to_string();
    assert!(error.contains("labels (one per node)"), "{error}");
}

#[test]
fn non_finite_features_and_weights_are_refused() {
    let scratch = Scratch::new();
    let features = scratch.path("features.npy");
    let mut values = [0.5f32; 15];
    values[7] = f32::NAN;
    common::write_npy(&features, &[5, 3], &values);
    assert_error(inputs::read_features(&features, 5, 3), &features, "value NaN at row 2, column 1 is not finite");

    let mut tensors = gcn_tensors();
    tensors[2].2[3] = f32::INFINITY;
    model_error(&tensors, &[], "tensor `conv2.lin.weight` holds inf at flat index 3: weights must be finite");
}

#[test]
fn layers_without_features_are_refused() {
    let mut tensors = gcn_tensors();
    tensors[0] = ("conv1.lin.weight".into(), vec![0, 3], Vec::new());
    tensors[1] = ("conv1.bias".into(), vec![0], Vec::new());
    tensors[2] = ("conv2.lin.weight".into(), vec![2, 0], Vec::new());
    model_error(&tensors, &[], "layer `conv1`: maps 3 to 0 features: every width must be at least 1");
    let error = Model::seeded_gcn(&[3, 0, 2], 1).expect_err("a hidden width of 0 was accepted");
    assert!(error.to_string().contains("maps 3 to 0 features"), "{error}");
}

/// A features file whose declared shape needs more memory than any host has is refused before anything is
/// allocated for it.
#[cfg(target_os = "linux")]
#[test]
fn features_larger_than_the_host_memory_are_refused() {
    let scratch = Scratch::new();
    let huge =
        scratch.file("huge.mtx", "%%MatrixMarket matrix coordinate real general\n4294967295 4294967295 1\n1 1 1\n");
    let error = inputs::read_features(&huge, 4294967295, 4294967295).expect_err("accepted");
    match &error {
        // (2^32 - 1)^2 f32 values: more bytes than a u64 counts, so the need saturates.
        pimgnn::Error::Capacity { what, needed, .. } => {
            assert!(what.contains("huge.mtx") && what.contains("4294967295 x 4294967295 dense float32"), "{what}");
            assert!(what.contains("host memory"), "{what}");
            assert_eq!(*needed, u64::MAX, "{error}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn wrong_width_for_the_model_is_an_error() {
    let scratch = Scratch::new();
    let path = scratch.path("model.safetensors");
    common::write_safetensors(&path, &gcn_tensors(), &[]);
    let model = Model::load(&path).unwrap();
    let features = pimgnn::Dense::zeros(5, 4);
    let graph = pimgnn::Csr::<f32>::new(5, 5, vec![0; 6], Vec::new(), Vec::new()).unwrap();
    let matrix = model.architecture().aggregation().matrix(&graph).unwrap();
    let options = pimgnn::gnn::EngineOptions { backend: pimgnn::gnn::Backend::Cpu, ..Default::default() };
    let mut aggregator = pimgnn::gnn::Aggregator::new(matrix, pimgnn::gnn::Dtype::F32, &options).unwrap();
    let error = model.forward(&features, &mut aggregator).unwrap_err().to_string();
    assert!(error.contains("expected 3, found 4"), "{error}");
}
