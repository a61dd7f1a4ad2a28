//! `pimgnn train` end to end: a model trained from files, saved with PyG's `state_dict` names, loaded back by
//! `pimgnn infer` (the round trip), training on the simulator with SGD and momentum, `bench train`, and malformed
//! inputs refused with the file named.

mod common;

use common::cli::{finite, line_after, pimgnn, table_rows, write_dataset, CLASSES, FEATURES, NODES};
use pimgnn::gnn::{accuracy, Activation, Aggregator, Architecture, Backend, Dtype, EngineOptions, Layer, Model};
use pimgnn::io::npy;
use pimgnn::train::{initial_model, OptimizerKind, Sgd, Targets, Trainer};

const INPUTS: [&str; 8] =
    ["--graph", "graph.mtx", "--features", "features.npy", "--labels", "labels.npy", "--train-mask", "train.npy"];

/// The loss each epoch's log line reports.
fn losses(stderr: &str) -> Vec<f32> {
    stderr.lines().filter_map(|line| line.split("loss ").nth(1)?.split(',').next()?.parse().ok()).collect()
}

#[test]
fn trains_saves_and_infers_with_the_saved_model() {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    for arch in ["gcn", "sage", "gin", "gat"] {
        let output_name = format!("{arch}.safetensors");
        let history_name = format!("{arch}.csv");
        let mut args = [&["train"], &INPUTS[..]].concat();
        args.extend(["--test-mask", "test.npy", "--arch", arch, "--hidden", "8", "--epochs", "30", "--lr", "0.05"]);
        args.extend(["--backend", "cpu", "--output", &output_name, "--history", &history_name]);
        if arch == "gin" {
            args.push("--train-eps");
        }
        let trained = pimgnn(dir.path(), &args);
        assert!(trained.status.success(), "{arch}");
        let stdout = String::from_utf8_lossy(&trained.stdout);
        for stage in ["forward aggregation", "backward aggregation", "transfers", "dense", "optimiser"] {
            assert!(stdout.contains(stage), "{arch}: no {stage} row in\n{stdout}");
        }
        let losses = losses(&String::from_utf8_lossy(&trained.stderr));
        assert_eq!(losses.len(), 30, "{arch}: one log line per epoch");
        assert!(losses[29] < 0.8 * losses[0], "{arch}: the loss fell only from {} to {}", losses[0], losses[29]);
        let history = std::fs::read_to_string(dir.path().join(&history_name)).unwrap();
        let mut lines = history.lines();
        assert_eq!(lines.next(), Some("epoch,loss,train,val,test"), "{arch}");
        let rows: Vec<Vec<&str>> = lines.map(|line| line.split(',').collect()).collect();
        assert_eq!(rows.len(), 30, "{arch}: one history line per epoch");
        for (epoch, (row, logged)) in rows.iter().zip(&losses).enumerate() {
            assert_eq!((row.len(), row[0], row[3]), (5, epoch.to_string().as_str(), ""), "{arch}: {row:?}");
            let loss: f32 = row[1].parse().unwrap();
            assert!((loss - logged).abs() <= 5e-7, "{arch} epoch {epoch}: history {loss}, log {logged}");
            let (train, test): (f64, f64) = (row[2].parse().unwrap(), row[4].parse().unwrap());
            assert!((0.0..=1.0).contains(&train) && (0.0..=1.0).contains(&test), "{arch}: {row:?}");
        }

        let model = Model::load(&dir.path().join(&output_name)).unwrap();
        let names: Vec<String> = model.state_dict().into_keys().collect();
        let expected: &[&str] = match arch {
            "gcn" => &["conv1.bias", "conv1.lin.weight", "conv2.bias", "conv2.lin.weight"],
            "gin" => &[
                "conv1.eps",
                "conv1.nn.0.bias",
                "conv1.nn.0.weight",
                "conv1.nn.2.bias",
                "conv1.nn.2.weight",
                "conv2.eps",
                "conv2.nn.0.bias",
                "conv2.nn.0.weight",
                "conv2.nn.2.bias",
                "conv2.nn.2.weight",
            ],
            "gat" => &[
                "conv1.att_dst",
                "conv1.att_src",
                "conv1.bias",
                "conv1.lin.weight",
                "conv2.att_dst",
                "conv2.att_src",
                "conv2.bias",
                "conv2.lin.weight",
            ],
            _ => &[
                "conv1.lin_l.bias",
                "conv1.lin_l.weight",
                "conv1.lin_r.weight",
                "conv2.lin_l.bias",
                "conv2.lin_l.weight",
                "conv2.lin_r.weight",
            ],
        };
        assert_eq!(names, expected, "{arch}");
        assert_eq!((model.in_features(), model.out_features()), (FEATURES, CLASSES as usize));
        if arch == "gin" {
            // Trained from 0, and saved as trained.
            let eps = &model.state_dict()["conv1.eps"].data;
            assert!(eps[0] != 0.0, "eps stayed {eps:?}");
            assert!(matches!(&model.layers()[0].1, Layer::Gin(conv) if conv.train_eps()));
        }
        if arch == "gat" {
            // PyG's Cora GAT's shape at this width: 8 heads of 1 concatenated, then one head averaged; ELU.
            let heads: Vec<(usize, bool)> = model
                .layers()
                .iter()
                .map(|(_, layer)| match layer {
                    Layer::Gat(conv) => (conv.heads(), conv.concat()),
                    other => panic!("not a GAT layer: {other:?}"),
                })
                .collect();
            assert_eq!((heads, model.activation()), (vec![(8, true), (1, false)], Activation::Elu));
        }

        let inferred = pimgnn(
            dir.path(),
            &[
                "infer",
                "--graph",
                "graph.mtx",
                "--features",
                "features.npy",
                "--model",
                &output_name,
                "--backend",
                "cpu",
                "--output",
                "logits.npy",
            ],
        );
        assert!(inferred.status.success(), "{arch}");
        let logits = npy::read_dense_f32(&dir.path().join("logits.npy")).unwrap();
        let graph = pimgnn::gnn::inputs::read_graph(&dir.path().join("graph.mtx")).unwrap();
        let features = pimgnn::gnn::inputs::read_features(&dir.path().join("features.npy"), NODES, FEATURES).unwrap();
        let matrix = model.architecture().aggregation().matrix(&graph).unwrap();
        let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
        let aggregation = model.architecture().aggregation();
        let mut aggregator = Aggregator::for_aggregation(aggregation, matrix, Dtype::F32, &options).unwrap();
        let expected = model.forward(&features, &mut aggregator).unwrap();
        assert_eq!(logits.as_slice(), expected.logits.as_slice(), "{arch}");
    }
}

#[test]
fn malformed_inputs_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    let mut args = INPUTS.to_vec();
    args[7] = "short.npy";
    args.extend(["--backend", "cpu", "--epochs", "1"]);
    let failed = pimgnn(dir.path(), &[&["train"], &args[..]].concat());
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains("short.npy") && stderr.contains(&format!("{NODES}")), "{stderr}");

    let mut args = INPUTS.to_vec();
    args.extend(["--backend", "cpu", "--epochs", "1", "--hidden", "4"]);
    args.extend(["--model", "missing.safetensors"]);
    let conflicting = pimgnn(dir.path(), &[&["train"], &args[..]].concat());
    assert!(!conflicting.status.success());
    assert!(String::from_utf8_lossy(&conflicting.stderr).contains("cannot be used with"));

    let empty: Vec<bool> = vec![false; NODES];
    common::write_npy(&dir.path().join("empty.npy"), &[NODES as u64], &empty);
    let mut args = INPUTS.to_vec();
    args.extend(["--backend", "cpu", "--epochs", "1", "--val-mask", "empty.npy"]);
    let unselective = pimgnn(dir.path(), &[&["train"], &args[..]].concat());
    assert!(!unselective.status.success());
    let stderr = String::from_utf8_lossy(&unselective.stderr);
    assert!(stderr.contains("empty.npy: mask selects no node"), "{stderr}");
    assert!(!String::from_utf8_lossy(&unselective.stdout).contains("backend:"), "refused only after the setup");
}

#[test]
fn csv_features_may_leave_out_the_last_nodes() {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    let features = npy::read_dense_f32(&dir.path().join("features.npy")).unwrap();
    let mut triples = String::from("node_id,feature_id,value\n");
    for node in 0..NODES - 1 {
        for (feature, value) in features.row(node).iter().enumerate() {
            triples += &format!("{node},{feature},{value}\n");
        }
    }
    std::fs::write(dir.path().join("features.csv"), triples).unwrap();
    let mut args = INPUTS.to_vec();
    args[3] = "features.csv";
    args.extend(["--backend", "cpu", "--epochs", "1"]);
    assert!(pimgnn(dir.path(), &[&["train"], &args[..]].concat()).status.success());
}

/// Runs `train` for one CPU epoch on the test dataset with `extra` options, which must make it fail; returns what
/// it printed to stderr and stdout.
fn refused_training(extra: &[&str]) -> (String, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    let mut args = INPUTS.to_vec();
    args.extend(["--backend", "cpu", "--epochs", "1"]);
    args.extend(extra);
    let refused = pimgnn(dir.path(), &[&["train"], &args[..]].concat());
    assert!(!refused.status.success(), "train accepted {extra:?}");
    (String::from_utf8_lossy(&refused.stderr).into_owned(), refused.stdout)
}

#[test]
fn a_model_too_large_for_the_host_memory_is_refused() {
    let (stderr, _) = refused_training(&["--hidden", "100000000000"]);
    assert!(
        stderr.contains("host memory (bytes) for the weights of a gcn model of widths [12, 100000000000, 4]"),
        "{stderr}"
    );
}

#[test]
fn an_output_path_that_cannot_be_written_is_refused_before_training() {
    let (stderr, stdout) = refused_training(&["--output", "missing/model.safetensors"]);
    assert!(stderr.contains("--output missing/model.safetensors: the directory missing does not exist"), "{stderr}");
    assert!(stdout.is_empty(), "trained before refusing");
    let (stderr, stdout) = refused_training(&["--history", "missing/history.csv"]);
    assert!(stderr.contains("--history missing/history.csv: the directory missing does not exist"), "{stderr}");
    assert!(stdout.is_empty(), "trained before refusing");
}

#[test]
fn train_eps_is_refused_for_a_model_without_eps() {
    let (stderr, _) = refused_training(&["--arch", "sage", "--train-eps"]);
    assert!(stderr.contains("--train-eps") && stderr.contains("a sage model has no eps to train"), "{stderr}");
}

#[test]
fn bench_train_times_the_cpu_and_the_simulator() {
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    for arch in ["gcn", "gat"] {
        let mut args = vec!["bench", "train", "--arch", arch];
        args.extend(&INPUTS);
        args.extend(["--hidden", "8", "--epochs", "1", "--pim", "sim", "--dpus", "8", "--python", "no-such-python"]);
        let bench = pimgnn(dir.path(), &args);
        assert!(bench.status.success(), "{arch}");
        let stdout = String::from_utf8_lossy(&bench.stdout);
        let model = format!("2-layer {arch}");
        for line in [model.as_str(), "PyTorch Geometric comparison skipped", "graph resident", "peak memory"] {
            assert!(stdout.contains(line), "{arch}: no `{line}` in\n{stdout}");
        }
        let cpu = table_rows(&stdout, "pimgnn, CPU backend");
        let pim = table_rows(&stdout, "pimgnn, PIM backend (simulator, 1 epoch(s))");
        assert!(cpu.len() == 1 && pim.len() == 1, "{stdout}");
        for row in [&cpu[0], &pim[0]] {
            assert!(finite(row[1]) > 0.0 && finite(row[2]) >= 0.0, "{arch}: seconds per epoch: {row:?}");
        }
        assert_eq!(cpu[0][4], "-", "the CPU backend is not predicted");
        assert!(finite(pim[0][4]) > 0.0, "{arch}: the PIM backend's predicted epoch: {:?}", pim[0]);
        // A GAT's attention values are never symmetric: its transpose has an engine of its own.
        assert!(arch != "gat" || stdout.contains("backward (transpose) engine"), "{arch}:\n{stdout}");
    }
}

/// Training on the simulator with SGD and momentum takes the CPU's steps: the loss of every epoch is the one the
/// library computes on the CPU for the same options (to the 6 decimals printed), and the accuracy printed at the
/// end is the saved model's.
#[test]
fn trains_on_the_simulator_with_sgd_and_momentum_as_on_the_cpu() {
    const EPOCHS: usize = 10;
    let dir = tempfile::tempdir().unwrap();
    write_dataset(dir.path());
    let mut args = [&["train"], &INPUTS[..]].concat();
    args.extend(["--test-mask", "test.npy", "--hidden", "8", "--epochs", "10", "--optimizer", "sgd"]);
    args.extend(["--lr", "0.1", "--momentum", "0.9", "--backend", "sim", "--dpus", "8", "--tasklets", "4"]);
    args.extend(["--output", "trained.safetensors"]);
    let trained = pimgnn(dir.path(), &args);
    assert!(trained.status.success());
    let stdout = String::from_utf8_lossy(&trained.stdout);
    assert_eq!(line_after(&stdout, "backend: "), "simulator (asked for simulator)");
    let plan = line_after(&stdout, "plan: PIM SpMM on ");
    assert!(plan.contains(",tasklets=4 (predicted ") && plan.contains("; backward: PIM SpMM on "), "{plan}");
    // With train's default weight decay, PyG's usual 5e-4.
    let sgd = Sgd { lr: 0.1, momentum: 0.9, weight_decay: 5e-4, ..Sgd::default() };
    assert_eq!(line_after(&stdout, "optimiser: "), format!("{:?}", OptimizerKind::Sgd(sgd)));

    let graph = pimgnn::gnn::inputs::read_graph(&dir.path().join("graph.mtx")).unwrap();
    let features = pimgnn::gnn::inputs::read_features(&dir.path().join("features.npy"), NODES, FEATURES).unwrap();
    let labels = npy::read_labels(&dir.path().join("labels.npy")).unwrap();
    let read_mask = |name: &str| pimgnn::gnn::inputs::read_mask(&dir.path().join(name), NODES).unwrap();
    let targets = Targets::new(labels.clone(), read_mask("train.npy"), NODES, CLASSES as usize).unwrap();
    let model = initial_model(Architecture::Gcn, &[FEATURES, 8, CLASSES as usize], 0).unwrap();
    let options = EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() };
    let mut trainer =
        Trainer::new(model, &graph, features.clone(), targets, OptimizerKind::Sgd(sgd), &options).unwrap();
    let expected: Vec<f32> = (0..EPOCHS).map(|_| trainer.epoch().unwrap().loss).collect();
    let printed = losses(&String::from_utf8_lossy(&trained.stderr));
    assert_eq!(printed.len(), EPOCHS, "one log line per epoch");
    // Printed to 6 decimals, from sums in another order than the CPU's.
    let difference = common::largest_difference(&printed, &expected);
    assert!(difference <= 1e-6, "losses {printed:?}, on the CPU {expected:?}");
    assert!(expected[EPOCHS - 1] < expected[0], "the run learns: {expected:?}");

    let saved = Model::load(&dir.path().join("trained.safetensors")).unwrap();
    let matrix = saved.architecture().aggregation().matrix(&graph).unwrap();
    let logits = saved.forward(&features, &mut Aggregator::new(matrix, Dtype::F32, &options).unwrap()).unwrap().logits;
    let score = |mask: &str| accuracy(&logits, &labels, &read_mask(mask)).unwrap();
    let final_line = format!("accuracy train {:.4}, test {:.4}", score("train.npy"), score("test.npy"));
    assert_eq!(line_after(&stdout, &format!("final model after {EPOCHS} epochs: ")), final_line);
}
