//! Running the `pimgnn` command in tests, on a small dataset written for it.

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use pimgnn::gnn::Model;
use pimgnn::io::write_matrix_market;

/// Nodes, features and classes of [`write_dataset`]'s dataset.
pub const NODES: usize = 300;
pub const FEATURES: usize = 12;
pub const CLASSES: i64 = 4;

/// An undirected R-MAT graph (`graph.mtx`), features (`features.npy`), labels that depend on the features, so
/// that there is something to learn (`labels.npy`), a training mask of every other node (`train.npy`), the
/// others as the test mask (`test.npy`), a mask one node short (`short.npy`), and a seeded 2-layer GCN over them
/// (`gcn.safetensors`).
pub fn write_dataset(dir: &Path) {
    let graph = pimgnn::graph::rmat(NODES, 1500, 3).to_coo();
    write_matrix_market(&dir.join("graph.mtx"), &graph).unwrap();
    let features = super::uniform(&mut super::rng(4), NODES * FEATURES);
    let labels: Vec<i64> = features
        .chunks(FEATURES)
        .map(|row| (0..CLASSES as usize).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap() as i64)
        .collect();
    super::write_npy(&dir.join("features.npy"), &[NODES as u64, FEATURES as u64], &features);
    super::write_npy(&dir.join("labels.npy"), &[NODES as u64], &labels);
    let train: Vec<bool> = (0..NODES).map(|node| node % 2 == 0).collect();
    let test: Vec<bool> = train.iter().map(|t| !t).collect();
    super::write_npy(&dir.join("train.npy"), &[NODES as u64], &train);
    super::write_npy(&dir.join("test.npy"), &[NODES as u64], &test);
    super::write_npy(&dir.join("short.npy"), &[NODES as u64 - 1], &train[1..]);
    let model = Model::seeded_gcn(&[FEATURES, 8, CLASSES as usize], 2).unwrap();
    model.save(&dir.join("gcn.safetensors"), &[]).unwrap();
}

/// Runs `pimgnn args` in `dir`, in a process group of its own, and checks that no process of that group (a
/// simulator worker it started) outlives it.
pub fn pimgnn(dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pimgnn"));
    command.current_dir(dir).args(args).env_remove("UPMEM_BACKEND").env("RUST_BACKTRACE", "0");
    run_alone(&mut command)
}

/// Runs `command` in a process group of its own, prints what it printed, and checks that no process of that
/// group (a simulator worker it started) outlives it.
pub fn run_alone(command: &mut Command) -> Output {
    let child = command.process_group(0).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let group = child.id();
    let output = child.wait_with_output().unwrap();
    println!("{}", String::from_utf8_lossy(&output.stdout));
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    let left = processes_in_group(group);
    assert!(left.is_empty(), "{command:?} left processes behind: {left:?}");
    output
}

/// The processes whose process group is `group`, as "pid command".
fn processes_in_group(group: u32) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        // A process may end between listing /proc and reading its stat.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // "pid (command) state ppid pgrp ...": the command may hold spaces and parentheses.
        let Some((head, rest)) = stat.rsplit_once(')') else { continue };
        if rest.split_whitespace().nth(2) == Some(group.to_string().as_str()) {
            found.push(head.replace(" (", " "));
        }
    }
    found
}

/// The cells of the table rows of `stdout` (comfy-table's UTF-8 preset) whose first cell is `first`: each row's
/// first line only, which holds the first line of every cell.
pub fn table_rows<'a>(stdout: &'a str, first: &str) -> Vec<Vec<&'a str>> {
    table_cells(stdout).into_iter().filter(|cells| cells[0] == first).collect()
}

/// The trimmed cells of every table row in `stdout`.
pub fn table_cells(stdout: &str) -> Vec<Vec<&str>> {
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix('│')?.strip_suffix('│'))
        .map(|line| line.split('┆').map(str::trim).collect::<Vec<_>>())
        .collect()
}

/// The text after `prefix` on the line of `stdout` that starts with it.
pub fn line_after<'a>(stdout: &'a str, prefix: &str) -> &'a str {
    let found = stdout.lines().find_map(|line| line.strip_prefix(prefix));
    found.unwrap_or_else(|| panic!("no line starting `{prefix}` in\n{stdout}"))
}

/// `text` parsed as a number, which must be finite.
pub fn finite(text: &str) -> f64 {
    let value: f64 = text.trim().parse().unwrap_or_else(|error| panic!("`{text}` is not a number: {error}"));
    assert!(value.is_finite(), "`{text}` is not finite");
    value
}
