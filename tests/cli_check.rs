//! `pimgnn check` end to end on the simulator: every kernel the build script built runs (the SpMM kernels also
//! with new values and as SDDMM) and matches the CPU,
//! on a simulated machine with disabled DPUs; bad input is refused saying why; no run leaves a simulator
//! worker process behind.

mod common;

use std::process::{Command, Output};

/// Runs `pimgnn args` in a process group of its own, and checks that no process of that group (a simulator
/// worker it started) outlives it.
fn pimgnn(args: &[&str]) -> Output {
    pimgnn_with(args, &[])
}

/// As [`pimgnn`], with the environment variables `env` set.
fn pimgnn_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pimgnn"));
    command.args(args).env_remove("UPMEM_BACKEND").env("RUST_BACKTRACE", "0").envs(env.iter().copied());
    common::cli::run_alone(&mut command)
}

/// The kernels the build script built for the simulator's default v1A DPUs: every `name.dpusim` in the kernel
/// directory (the v1B builds are `name.v1B.dpusim`).
fn built_kernels() -> Vec<String> {
    let mut kernels: Vec<String> = std::fs::read_dir(env!("UPMEM_KERNEL_DIR"))
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.strip_suffix(".dpusim").map(str::to_owned))
        .filter(|name| !name.ends_with(".v1B"))
        .collect();
    kernels.sort();
    kernels
}

/// The table's rows: the cells of every line that starts with a kernel the build script built.
fn rows(stdout: &str) -> Vec<Vec<String>> {
    let kernels = built_kernels();
    stdout
        .lines()
        .map(|line| line.trim_matches('│').split('┆').map(|cell| cell.trim().to_owned()).collect::<Vec<_>>())
        .filter(|cells| kernels.contains(&cells[0]))
        .collect()
}

#[test]
fn every_kernel_matches_the_cpu_on_a_simulated_machine_with_disabled_dpus() {
    let output = pimgnn(&["check", "--backend", "sim"]);
    assert!(output.status.success(), "the check failed");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("backend: simulator (asked for with --backend simulator)"), "{stdout}");
    assert!(stdout.contains("DPUs: 9 in 3 ranks, of a simulated machine of 3 ranks of 4 DPUs with 3 disabled"));
    assert!(stdout.contains("inputs: seed 1"));

    let rows = rows(&stdout);
    let kernels = built_kernels();
    assert!(kernels.len() >= 9, "the build script built {kernels:?}");
    for kernel in &kernels {
        let runs: Vec<&Vec<String>> = rows.iter().filter(|cells| cells[0] == *kernel).collect();
        // An SpMM kernel: 3 scenarios, each as SpMM, with new values, as SDDMM and with 3 heads of values; the f32
        // kernels also make attention weights in order, the i8 kernels also take Y in 16 bits.
        let expected = match kernel.as_str() {
            "spmm_csr_f32" | "spmm_coo_f32" | "spmm_csr_i8" | "spmm_coo_i8" => 13,
            spmm if spmm.starts_with("spmm_") => 12,
            _ => 1,
        };
        assert_eq!(runs.len(), expected, "{kernel}: {runs:?}");
        if kernel.starts_with("spmm_") {
            let cases: Vec<&str> = runs.iter().map(|cells| cells[2].as_str()).collect();
            let asked = ["2D tiles, new values", "in order, SDDMM", "cut rows, 3 heads"];
            assert!(asked.iter().all(|case| cases.contains(case)), "{cases:?}");
            let attention = cases.contains(&"in order, attention weights");
            assert_eq!(attention, kernel.ends_with("_f32"), "{kernel}: {cases:?}");
            assert_eq!(cases.contains(&"16-bit Y"), kernel.ends_with("_i8"), "{kernel}: {cases:?}");
        }
        assert!(runs.iter().all(|cells| cells[6] == "ok"), "{kernel}: {runs:?}");
    }
    assert!(stdout.contains(&format!("all {} kernel runs match the CPU", rows.len())), "{stdout}");
}

/// Without --backend (and UPMEM_BACKEND) on a machine without UPMEM hardware, the check says that is why it runs
/// on the simulator.
#[test]
fn the_dpus_and_the_seed_are_the_ones_asked_for() {
    let auto = !upmem::hardware_present();
    let mut args = vec!["check", "--dpus", "4", "--seed", "2"];
    if !auto {
        args.extend(["--backend", "sim"]);
    }
    let output = pimgnn(&args);
    assert!(output.status.success(), "the check failed");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let reason = "backend: simulator (auto: no UPMEM hardware: the kernel driver exposes no DPU rank on this machine)";
    assert!(!auto || stdout.contains(reason), "{stdout}");
    assert!(stdout.contains("DPUs: 4 in 2 ranks, of a simulated machine of 2 ranks of 4 DPUs with 2 disabled"));
    assert!(stdout.contains("inputs: seed 2"));
    let rows = rows(&stdout);
    assert!(rows.iter().all(|cells| cells[3] == "4"), "{rows:?}");
}

/// Asserts that `args` fail before running anything, saying `reason`, without a panic.
#[track_caller]
fn assert_refused(args: &[&str], reason: &str) {
    assert_refused_with(args, &[], reason);
}

/// As [`assert_refused`], with the environment variables `env` set.
#[track_caller]
fn assert_refused_with(args: &[&str], env: &[(&str, &str)], reason: &str) {
    let output = pimgnn_with(args, env);
    assert!(!output.status.success(), "{args:?} was accepted");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(reason), "{args:?}: `{stderr}` does not say `{reason}`");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(output.stdout.is_empty(), "{args:?} ran before failing");
}

#[test]
fn bad_input_is_refused_saying_why() {
    assert_refused(&["check", "--dpus", "0"], "invalid value '0' for '--dpus <DPUS>'");
    assert_refused(&["check", "--dpus", "2561"], "2561 is not in 1..=2560");
    assert_refused(&["check", "--backend", "cpu"], "the CPU backend runs no DPU kernel, so there is nothing to check");
    assert_refused(&["check", "--backend", "gpu"], "`gpu` is not one of auto, simulator (sim), hardware (hw)");
    let missing = [("UPMEM_LIBDPU", "/nonexistent/libdpu.so")];
    assert_refused_with(
        &["check", "--backend", "hw"],
        &missing,
        "cannot load libdpu: /nonexistent/libdpu.so: cannot open shared object file",
    );
}
