//! `pimgnn infer|train --distributed` under `mpirun` (OpenMPI, `--oversubscribe` so that 4 ranks run on 2
//! cores): the logits rank 0 gathers and every epoch's training loss are the one-process run's, for 1 to 4
//! ranks, ranges, METIS and a saved partition whose parts are unbalanced and one without edges, on the CPU and
//! the simulator; rank 0 (which reads the inputs) given a bad file, a rank without its DPUs, or one failing
//! between two exchanges stops every rank with its error.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::cli::{pimgnn, run_alone, table_rows};
use common::{largest_difference, random_model, rng, uniform, write_npy, RandomLayers};
use pimgnn::gnn::{Architecture, Model};
use pimgnn::io::{npy, write_matrix_market};
use pimgnn::Coo;

/// Nodes of the test graph: an R-MAT graph's, then [`ISOLATED`] nodes without edges.
const CONNECTED: usize = 240;
const ISOLATED: usize = 12;
const NODES: usize = CONNECTED + ISOLATED;
const FEATURES: usize = 10;

/// Writes `graph.mtx` (R-MAT over the first [`CONNECTED`] nodes, the rest isolated), `features.npy`, a GCN
/// (`gcn.safetensors`), a SAGE (`sage.safetensors`) and a GAT model (`gat.safetensors`, two heads), labels of 5 classes (`labels.npy`), training
/// and test masks (`train.npy`, `test.npy`), and `skewed.partition`: 3 ranks, rank 0 with most of the nodes,
/// rank 1 with a few, rank 2 with the isolated nodes only.
fn write_inputs(dir: &Path) {
    write_graph(&dir.join("graph.mtx"), &[]);
    write_npy(&dir.join("features.npy"), &[NODES as u64, FEATURES as u64], &uniform(&mut rng(6), NODES * FEATURES));
    Model::seeded_gcn(&[FEATURES, 16, 5], 7).unwrap().save(&dir.join("gcn.safetensors"), &[]).unwrap();
    let shape =
        RandomLayers { sage_root_bias: |at| at == 0, gin_hidden: |_, outputs| outputs, gat_heads: |_| (1, true) };
    let sage = random_model(Architecture::Sage, &[FEATURES, 16, 5], &mut rng(8), shape);
    sage.save(&dir.join("sage.safetensors"), &[]).unwrap();
    let shape =
        RandomLayers { sage_root_bias: |_| false, gin_hidden: |_, outputs| outputs, gat_heads: |at| (2, at == 0) };
    let gat = random_model(Architecture::Gat, &[FEATURES, 16, 5], &mut rng(9), shape);
    gat.save(&dir.join("gat.safetensors"), &[]).unwrap();
    let owners = (0..NODES).map(|node| match node {
        node if node >= CONNECTED => 2,
        node if node % 10 == 3 => 1,
        _ => 0,
    });
    let labels: Vec<i64> = (0..NODES).map(|node| (node * 7 % 5) as i64).collect();
    write_npy(&dir.join("labels.npy"), &[NODES as u64], &labels);
    write_npy(&dir.join("train.npy"), &[NODES as u64], &(0..NODES).map(|node| node % 3 == 0).collect::<Vec<_>>());
    write_npy(&dir.join("test.npy"), &[NODES as u64], &(0..NODES).map(|node| node % 3 == 1).collect::<Vec<_>>());
    let lines: Vec<String> = owners.map(|owner: u32| owner.to_string()).collect();
    let text = format!("# pimgnn rank partition\nranks 3\nmethod range\nnodes {NODES}\n{}\n", lines.join("\n"));
    std::fs::write(dir.join("skewed.partition"), text).unwrap();
}

/// Writes an R-MAT graph over the first [`CONNECTED`] nodes, the rest isolated but for the `extra` edges
/// (target, source), to `path`.
fn write_graph(path: &Path, extra: &[(u32, u32)]) {
    let rmat = pimgnn::graph::rmat(CONNECTED, 1200, 5).to_coo();
    let mut targets = rmat.rows().to_vec();
    let mut sources = rmat.cols().to_vec();
    targets.extend(extra.iter().map(|&(target, _)| target));
    sources.extend(extra.iter().map(|&(_, source)| source));
    let values = vec![1.0; targets.len()];
    write_matrix_market(path, &Coo::new(NODES, NODES, targets, sources, values).unwrap()).unwrap();
}

/// The inputs' arguments with `model`.
fn inputs(model: &str) -> Vec<String> {
    ["--graph", "graph.mtx", "--features", "features.npy", "--model", model].map(String::from).to_vec()
}

/// `mpirun` with `options` running each of `programs` (the arguments of `pimgnn` and its process count) in
/// `dir`, alone in its process group, within a minute.
fn mpirun(dir: &Path, options: &[&str], programs: &[(usize, Vec<String>)]) -> Output {
    let mut command = Command::new("timeout");
    command.current_dir(dir).args(["60", "mpirun", "--oversubscribe"]).args(options);
    for (at, (processes, args)) in programs.iter().enumerate() {
        if at > 0 {
            command.arg(":");
        }
        command.args(["-np", &processes.to_string(), env!("CARGO_BIN_EXE_pimgnn")]).args(args);
    }
    // OpenMPI refuses to run as root unless told to (CI runs as root).
    command.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    command.env_remove("UPMEM_BACKEND").env("RUST_BACKTRACE", "0");
    run_alone(&mut command)
}

/// Runs `programs` under `mpirun` as a user would, and checks that they fail within seconds with `error`
/// (naming the failing rank) and no other; then again with mpirun told to let every rank end by itself
/// (OpenMPI 4's `orte_abort_on_non_zero_status`: by default it kills the others once one has failed, perhaps
/// before they print), checking that each of them printed `error`.
#[track_caller]
fn every_rank_stops_with(dir: &Path, programs: &[(usize, Vec<String>)], error: &str) {
    let started = std::time::Instant::now();
    let run = mpirun(dir, &[], programs);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{}", String::from_utf8_lossy(&run.stdout));
    assert_ne!(run.status.code(), Some(124), "mpirun timed out: {stderr}");
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    assert!(stderr.contains(error), "{error}: {stderr}");
    assert_eq!(stderr.matches("Error: ").count(), stderr.matches(error).count(), "no other error: {stderr}");

    let run = mpirun(dir, &["--mca", "orte_abort_on_non_zero_status", "0"], programs);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_ne!(run.status.code(), Some(124), "mpirun timed out: {stderr}");
    let ranks = programs.iter().map(|(processes, _)| processes).sum::<usize>();
    assert_eq!(stderr.matches(error).count(), ranks, "{error} once per rank: {stderr}");
    assert_eq!(stderr.matches("Error: ").count(), ranks, "no other error: {stderr}");
}

/// Runs `infer --distributed --partition <partition>` over `ranks` ranks with `args` (starting with `infer`)
/// and checks that rank 0 printed every rank's nodes and wrote the logits of the one-process run of `args`.
fn same_logits_as_one_process(dir: &Path, ranks: usize, args: &[String], partition: &str) {
    let mut single_args: Vec<&str> = args.iter().map(String::as_str).collect();
    single_args.extend(["--output", "single.npy"]);
    let single = pimgnn(dir, &single_args);
    assert!(single.status.success(), "{args:?}");
    let mut distributed = args.to_vec();
    distributed.extend(["--distributed", "--partition", partition, "--output", "ranks.npy"].map(String::from));
    let run = mpirun(dir, &[], &[(ranks, distributed)]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{ranks} ranks, {partition}, {args:?}");
    let nodes = &table_rows(&stdout, "nodes")[0][1..];
    assert_eq!(nodes.len(), ranks, "{stdout}");
    assert_eq!(nodes.iter().map(|cell| cell.parse::<usize>().unwrap()).sum::<usize>(), NODES, "{stdout}");
    let single = npy::read_dense_f32(&dir.join("single.npy")).unwrap();
    let gathered = npy::read_dense_f32(&dir.join("ranks.npy")).unwrap();
    assert_eq!((gathered.rows(), gathered.cols()), (single.rows(), single.cols()));
    let difference = largest_difference(gathered.as_slice(), single.as_slice());
    assert!(difference <= 1e-5, "{ranks} ranks, {partition}, {args:?}: logits differ by {difference}");
}

/// `infer` on `backend` with `model`.
fn infer_args(backend: &[&str], model: &str) -> Vec<String> {
    let mut args = vec!["infer".to_owned()];
    args.extend(backend.iter().map(|arg| (*arg).to_owned()));
    args.extend(inputs(model));
    args
}

#[test]
fn one_to_four_ranks_give_the_one_process_logits_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    for ranks in 1..=4 {
        for (model, partition) in
            [("gcn.safetensors", "range"), ("sage.safetensors", "metis"), ("gat.safetensors", "metis")]
        {
            same_logits_as_one_process(dir.path(), ranks, &infer_args(&["--backend", "cpu"], model), partition);
        }
    }
}

#[test]
fn unbalanced_parts_and_a_part_without_edges_give_the_one_process_logits() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    for model in ["gcn.safetensors", "sage.safetensors"] {
        same_logits_as_one_process(dir.path(), 3, &infer_args(&["--backend", "cpu"], model), "skewed.partition");
    }
    let sim = ["--backend", "sim", "--dpus", "6", "--tasklets", "4"];
    same_logits_as_one_process(dir.path(), 3, &infer_args(&sim, "gcn.safetensors"), "skewed.partition");
    // Every step after the one before: the halo exchange before the interior rows' aggregation.
    let sequential = [infer_args(&["--backend", "cpu"], "sage.safetensors"), vec!["--no-overlap".into()]].concat();
    same_logits_as_one_process(dir.path(), 3, &sequential, "skewed.partition");
}

#[test]
fn ranks_on_the_simulator_give_the_one_process_logits() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    let sim = ["--backend", "sim", "--dpus", "8", "--tasklets", "4"];
    for (ranks, model, partition) in
        [(2, "gcn.safetensors", "range"), (4, "sage.safetensors", "metis"), (3, "gat.safetensors", "range")]
    {
        same_logits_as_one_process(dir.path(), ranks, &infer_args(&sim, model), partition);
    }
}

#[test]
fn the_reading_rank_given_a_bad_file_stops_every_rank_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    std::fs::write(dir.path().join("bad.npy"), b"not an npy file").unwrap();
    let good = infer_args(&["--backend", "sim", "--dpus", "4"], "gcn.safetensors");
    let mut bad = good.clone();
    let at = bad.iter().position(|arg| arg == "features.npy").unwrap();
    bad[at] = "bad.npy".into();
    let distributed = |args: Vec<String>| [args, vec!["--distributed".into()]].concat();
    // Rank 0 reads the inputs for every rank.
    let programs = [(1, distributed(bad)), (2, distributed(good))];
    every_rank_stops_with(dir.path(), &programs, "Error: rank 0 failed: invalid input: loading the features: bad.npy");
}

#[test]
fn a_rank_without_its_dpus_stops_every_rank_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    let distributed = |backend: &str| {
        [infer_args(&["--backend", backend, "--dpus", "4"], "gcn.safetensors"), vec!["--distributed".into()]].concat()
    };
    // Rank 1 asks for UPMEM hardware, which this machine does not have (nor its SDK's libdpu).
    let programs = [(1, distributed("sim")), (1, distributed("hw")), (1, distributed("cpu"))];
    every_rank_stops_with(dir.path(), &programs, "Error: rank 1 failed: ");
}

#[test]
fn a_rank_failing_between_two_halo_exchanges_stops_every_rank_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    // The largest floats as the features of the last node, which only rank 2 of the skewed partition holds and
    // no other rank's rows reference, but whose row references nodes of rank 0: the first layer's transform
    // overflows them to infinities, which rank 2's first aggregation fails to quantize after the first exchange,
    // while the other ranks go on to the second exchange, expecting rows from rank 2 there.
    let last = NODES as u32 - 1;
    write_graph(&dir.path().join("graph.mtx"), &[(last, 0), (last, 5)]);
    let mut features = uniform(&mut rng(6), NODES * FEATURES);
    features[(NODES - 1) * FEATURES..].fill(f32::MAX);
    write_npy(&dir.path().join("huge.npy"), &[NODES as u64, FEATURES as u64], &features);
    // A first layer that transforms before it aggregates (to fewer features), and two exchanges after it.
    Model::seeded_gcn(&[FEATURES, 4, 8, 5], 9).unwrap().save(&dir.path().join("deep.safetensors"), &[]).unwrap();
    let args = |backend: &str| {
        let mut args = infer_args(&["--backend", backend, "--dpus", "4", "--dtype", "i8"], "deep.safetensors");
        let at = args.iter().position(|arg| arg == "features.npy").unwrap();
        args[at] = "huge.npy".into();
        args.extend(["--distributed", "--partition", "skewed.partition"].map(String::from));
        args
    };
    // Rank 0 reads the features and sends rank 2 its rows. On the CPU, rank 2's interior rows (its isolated
    // nodes) fail to quantize during the exchange.
    for backend in ["sim", "cpu"] {
        let error = "Error: rank 2 failed: feature to quantize to i8 (row-major): value ";
        every_rank_stops_with(dir.path(), &[(3, args(backend))], error);
    }
}

/// `train` for 5 epochs of `arch` with `backend`, writing the history to `history`.
fn train_args(backend: &[&str], arch: &str, history: &str) -> Vec<String> {
    let mut args = ["train", "--graph", "graph.mtx", "--features", "features.npy", "--labels", "labels.npy"]
        .map(String::from)
        .to_vec();
    args.extend(
        ["--train-mask", "train.npy", "--test-mask", "test.npy", "--arch", arch, "--epochs", "5"].map(String::from),
    );
    args.extend(["--history", history].map(String::from));
    args.extend(backend.iter().map(|arg| (*arg).to_owned()));
    args
}

/// The losses of a history file.
fn losses(path: &Path) -> Vec<f32> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().skip(1).map(|line| line.split(',').nth(1).unwrap().parse().unwrap()).collect()
}

/// Trains `arch` on one process and over `ranks` ranks by `partition`, and checks that every epoch's loss is
/// the same within 1e-6, and the final accuracy line too.
fn trains_as_one_process(dir: &Path, backend: &[&str], arch: &str, ranks: usize, partition: &str) {
    let single = train_args(backend, arch, "single.csv");
    let run = pimgnn(dir, &single.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(run.status.success());
    let single_stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let mut distributed = train_args(backend, arch, "ranks.csv");
    distributed.extend(["--distributed", "--partition", partition].map(String::from));
    let run = mpirun(dir, &[], &[(ranks, distributed)]);
    assert!(run.status.success(), "{arch} over {ranks} ranks by {partition}");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let (expected, found) = (losses(&dir.join("single.csv")), losses(&dir.join("ranks.csv")));
    assert_eq!(found.len(), 5);
    for (epoch, (found, expected)) in found.iter().zip(&expected).enumerate() {
        let what = format!("{arch} over {ranks} ranks by {partition}, epoch {epoch}");
        assert!((found - expected).abs() <= 1e-6, "{what}: {found} against {expected}");
    }
    let accuracy = |stdout: &str| stdout.lines().find(|line| line.starts_with("final model")).map(str::to_owned);
    assert_eq!(accuracy(&stdout), accuracy(&single_stdout), "{stdout}");
    assert_eq!(table_rows(&stdout, "nodes")[0].len(), ranks + 1, "{stdout}");
}

#[test]
fn training_over_one_to_four_ranks_gives_the_one_process_losses_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    for ranks in 1..=4 {
        for (arch, partition) in [("gcn", "range"), ("sage", "metis"), ("gin", "range"), ("gat", "metis")] {
            trains_as_one_process(dir.path(), &["--backend", "cpu"], arch, ranks, partition);
        }
    }
}

#[test]
fn training_over_unbalanced_parts_and_on_the_simulator_gives_the_one_process_losses() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    trains_as_one_process(dir.path(), &["--backend", "cpu"], "gcn", 3, "skewed.partition");
    let sim = ["--backend", "sim", "--dpus", "8", "--tasklets", "4"];
    trains_as_one_process(dir.path(), &sim, "sage", 2, "metis");
    trains_as_one_process(dir.path(), &sim, "gat", 3, "range");
}

#[test]
fn the_reading_rank_given_bad_labels_in_training_stops_every_rank_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    write_npy(&dir.path().join("short.npy"), &[NODES as u64 - 1], &vec![0i64; NODES - 1]);
    let good = [train_args(&["--backend", "cpu"], "gcn", "h.csv"), vec!["--distributed".into()]].concat();
    let mut bad = good.clone();
    let at = bad.iter().position(|arg| arg == "labels.npy").unwrap();
    bad[at] = "short.npy".into();
    let error = "Error: rank 0 failed: invalid input: loading the labels: ";
    every_rank_stops_with(dir.path(), &[(1, bad), (2, good)], error);
}
