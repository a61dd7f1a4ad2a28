//! Command-line options out of range, and result paths that cannot be written, are refused before anything
//! runs (without inputs, `infer` would otherwise run its generated 100,000-node model first); inputs that cannot
//! be read are refused saying why once.

use std::process::Output;

fn pimgnn(args: &[&str]) -> Output {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_pimgnn")).args(args).output().unwrap();
    println!("{}", String::from_utf8_lossy(&output.stdout));
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Asserts that `args` fail before any work, with an error containing `reason`.
#[track_caller]
fn assert_refused(args: &[&str], reason: &str) {
    let output = pimgnn(args);
    assert!(!output.status.success(), "{args:?} was accepted");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(reason), "{args:?}: `{stderr}` does not say `{reason}`");
    assert!(output.stdout.is_empty(), "{args:?} ran before failing");
}

#[test]
fn dpu_tasklet_and_width_options_out_of_range_are_refused() {
    assert_refused(&["infer", "--dpus", "0"], "invalid value '0' for '--dpus <DPUS>'");
    // More than a server has, which the simulator would otherwise have to invent.
    assert_refused(&["infer", "--dpus", "2561"], "2561 is not in 1..=2560");
    assert_refused(&["bench", "spmm", "--dpus", "3000"], "3000 is not in 1..=2560");
    assert_refused(&["infer", "--tasklets", "0"], "0 is not in 1..=24");
    assert_refused(&["train", "--tasklets", "25", "--graph", "g.mtx"], "25 is not in 1..=24");
    assert_refused(&["bench", "spmm", "--dpus", "0"], "invalid value '0' for '--dpus <DPUS>'");
    assert_refused(&["bench", "spmm", "--tasklets", "25"], "25 is not in 1..=24");
    assert_refused(&["bench", "spmm", "--features", "16,0,64"], "invalid value '0' for '--features <FEATURES>'");
}

#[test]
fn workloads_are_named_from_the_list_and_exclude_input_files() {
    let list = "is not one of reddit, amazon-products, products, proteins, arxiv";
    assert_refused(&["infer", "--workload", "cora"], list);
    assert_refused(&["bench", "spmm", "--workload", "papers100m"], list);
    let conflict = "the argument '--workload <WORKLOAD>' cannot be used with";
    assert_refused(&["infer", "--workload", "reddit", "--graph", "g.mtx", "--features", "f", "--model", "m"], conflict);
    assert_refused(&["bench", "spmm", "--workload", "arxiv", "--graph", "g.mtx"], "cannot be used with");
    assert_refused(&["bench", "train", "--workload", "arxiv", "--classes", "3"], "cannot be used with");
}

#[test]
fn output_paths_that_cannot_be_written_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap();
    assert_refused(&["infer", "--output", folder], "is a directory");
    let missing = dir.path().join("no/such/folder/logits.npy");
    assert_refused(&["infer", "--output", missing.to_str().unwrap()], "does not exist");
}

/// A file the system cannot read is named once with the system's reason, which is not repeated as a cause.
#[test]
fn an_unreadable_input_says_why_once() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap();
    let output = pimgnn(&["infer", "--graph", folder, "--features", folder, "--model", folder]);
    assert!(!output.status.success(), "a directory was read as inputs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("{folder}: Is a directory")), "{stderr}");
    assert_eq!(stderr.matches("Is a directory").count(), 1, "the reason is printed more than once: {stderr}");
}

#[test]
fn distributed_options_need_distributed_and_the_mpi_feature() {
    assert_refused(&["infer", "--partition", "metis"], "the following required arguments were not provided");
    assert_refused(&["infer", "--network-gbps", "25"], "--distributed");
    assert_refused(&["infer", "--distributed", "--labels", "l.npy", "--mask", "m.npy"], "--labels and --mask");
    #[cfg(not(feature = "mpi"))]
    assert_refused(&["infer", "--distributed"], "needs pimgnn built with its `mpi` feature");
}

#[test]
fn a_generated_graph_takes_a_size_but_not_with_a_graph_file() {
    assert_refused(&["infer", "--nodes", "0"], "0 is not in 1..=4294967296");
    assert_refused(&["infer", "--nodes", "10", "--workload", "arxiv"], "cannot be used with");
    assert_refused(&["partition", "--edges", "10", "--graph", "g.mtx"], "cannot be used with");
}
