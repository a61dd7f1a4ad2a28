//! upmem's example runs on the simulator and on the hardware backend over the simulator's libdpu, and says that
//! every sum matched the CPU's.

#[path = "support/built_examples.rs"]
mod built_examples;
mod common;

use std::process::Command;

/// upmem's examples, each run by a test here.
const EXAMPLES: [&str; 1] = ["vector_add"];

#[test]
fn every_example_is_run_here() {
    assert_eq!(
        built_examples::example_sources(env!("CARGO_MANIFEST_DIR")),
        EXAMPLES,
        "a new example needs its test here"
    );
}

/// `vector_add --backend <backend> --dpus 8 --elements 1024` says every sum matched on the backend `name`.
fn vector_add_matches_the_cpu(backend: &str, name: &str) {
    let vector_add = built_examples::example("upmem", env!("CARGO_MANIFEST_DIR"), &EXAMPLES, "vector_add");
    let mut command = Command::new(vector_add);
    command.args(["--backend", backend, "--dpus", "8", "--elements", "1024"]).env_remove("UPMEM_BACKEND");
    if backend == "hw" {
        command.env("UPMEM_LIBDPU", common::simulator_libdpu()).env("UPMEM_PROFILE", "backend=simulator");
    }
    let output = command.output().expect("running vector_add");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "vector_add --backend {backend} failed:\n{stdout}");
    let expected = format!("8 DPUs x 1024 elements on the {name} backend: every sum matches the CPU");
    assert_eq!(stdout.trim_end(), expected);
}

#[test]
fn vector_add_checks_every_sum_on_the_simulator() {
    vector_add_matches_the_cpu("sim", "simulator");
}

#[test]
fn vector_add_checks_every_sum_on_the_hardware_backend_over_the_simulators_libdpu() {
    vector_add_matches_the_cpu("hw", "hardware");
}
