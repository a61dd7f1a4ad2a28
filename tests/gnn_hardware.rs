//! pimgnn on the hardware backend without hardware: its engine, inference and training with
//! [`Backend::Pim(BackendKind::Hardware)`], over the simulator's libdpu-compatible library (as `upmem`'s backend tests run the
//! hardware backend), each checked against the CPU; and the errors a server gives, each checked for its variant
//! and what it names: no libdpu, a libdpu error code, more DPUs than the machine has, a libdpu lacking a
//! function.
//!
//! pimgnn's engines find libdpu as a program on a server does, through `UPMEM_LIBDPU` and `UPMEM_PROFILE`. A
//! running test binary's environment is shared by its threads, so it is never changed here: each test runs
//! again in a child process started with the environment it needs (see [`in_environment`]).

mod common;

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use common::{largest_difference, simulator_libdpu};
use pimgnn::gnn::{spmm_engine, Aggregator, Architecture, Backend, Dtype, EngineOptions, Model, DEFAULT_DPUS};
use pimgnn::pim::cost::{self, HardwareModel, Target};
use pimgnn::train::{initial_model, OptimizerKind, Sgd, Targets, Trainer};
use pimgnn::{Csr, Dense, Error};
use upmem::BackendKind;
use upmem_sys::{DPU_ERR_ALLOCATION, DPU_ERR_INVALID_PROFILE};

/// Set in the child process a test runs in.
const CHILD: &str = "PIMGNN_HARDWARE_TEST_CHILD";

/// The profile that runs the hardware backend's sets on the simulator's libdpu: without it, the hardware backend
/// asks libdpu for `backend=hw`, which the simulator's libdpu refuses as the SDK's does on a machine without DPUs.
const ON_THE_SIMULATOR: &str = "backend=simulator";

/// The environment of a program on a server whose libdpu is `libdpu`, with `profile` in `UPMEM_PROFILE` when
/// given.
fn server(libdpu: &Path, profile: Option<&str>) -> Vec<(&'static str, Option<OsString>)> {
    vec![
        ("UPMEM_LIBDPU", Some(libdpu.into())),
        ("UPMEM_PROFILE", profile.map(Into::into)),
        ("UPMEM_PROFILE_BASE", None),
        ("UPMEM_BACKEND", None),
    ]
}

/// Runs `body` with the environment `env` (a variable set, or removed for `None`): in the child process, `body`
/// itself; here, the calling test again in a child process started with `env`, which must pass. A test calls it
/// once: its child runs the whole test again.
fn in_environment(env: &[(&str, Option<OsString>)], body: impl FnOnce()) {
    if std::env::var_os(CHILD).is_some() {
        return body();
    }
    // libtest names each test's thread after the test.
    let test = std::thread::current().name().expect("the test's name").to_owned();
    let mut child = Command::new(std::env::current_exe().expect("the test binary"));
    child.args(["--exact", &test, "--nocapture", "--test-threads=1"]).env(CHILD, "1");
    for (name, value) in env {
        match value {
            Some(value) => child.env(name, value),
            None => child.env_remove(name),
        };
    }
    let output = child.output().expect("running the test binary");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{test} failed in its environment {env:?}");
    assert!(stdout.contains("test result: ok. 1 passed"), "the child process ran no test {test}");
}

/// An undirected R-MAT graph of `nodes` nodes (so GCN's matrix is symmetric).
fn undirected_graph(nodes: usize, edges: usize) -> Csr<f32> {
    pimgnn::graph::rmat(nodes, edges, 11).to_coo().symmetrized().expect("a square graph").to_csr()
}

/// `rows x cols` features from `seed`, uniform in [-1, 1).
fn features(rows: usize, cols: usize, seed: u64) -> Dense<f32> {
    Dense::from_vec(rows, cols, common::uniform(&mut common::rng(seed), rows * cols)).expect("features")
}

/// `rows x cols` small integers as `f32`: every sum of their products with a graph's 1.0 entries is exact, in
/// any order.
fn integer_valued(rows: usize, cols: usize) -> Dense<f32> {
    Dense::from_vec(rows, cols, (0..rows * cols).map(|i| (i % 9) as f32 - 4.0).collect()).expect("features")
}

/// Engine options on `backend` for `dpus` DPUs of 8 tasklets, planned for calls of `widths`.
fn options(backend: Backend, dpus: Option<u32>, widths: Vec<usize>) -> EngineOptions {
    EngineOptions { backend, dpus, tasklets: Some(8), widths, ..EngineOptions::default() }
}

/// `A X` on the hardware backend equals the CPU's (integer-valued `f32`, so that every sum is exact in any order,
/// and `i32`), with the plan predicted fastest on hardware rather than the one the simulator backend would run.
#[test]
fn the_engine_multiplies_as_the_cpu_on_the_plan_chosen_for_hardware() {
    in_environment(&server(&simulator_libdpu(), Some(ON_THE_SIMULATOR)), || {
        let (nodes, width, dpus) = (600, 64, 16);
        let graph = undirected_graph(nodes, 4000);
        let model = HardwareModel::default();
        let choose = |target| cost::choose_for_calls(&model, &graph, &[width], dpus, 8, target).expect("a plan");
        let for_hardware = choose(Target::Hardware).best.plan;
        let for_simulator = choose(Target::simulator(pimgnn::pim::simulator_mram_budget())).best.plan;
        assert_ne!(for_hardware, for_simulator, "this input tells the two targets apart");

        let engine =
            spmm_engine(graph.clone(), &options(Backend::Pim(BackendKind::Hardware), Some(dpus), vec![width])).unwrap();
        assert_eq!(engine.backend, Backend::Pim(BackendKind::Hardware));
        assert!(engine.plan.contains(&format!("hardware DPUs ({} used)", for_hardware.dpus_used())), "{}", engine.plan);
        assert!(engine.plan.contains(&format!(", plan {for_hardware} (predicted")), "{}", engine.plan);
        assert!(!engine.plan.contains("hardware's choice"), "{}", engine.plan);
        assert_eq!(engine.allocated_dpus, Some(for_hardware.dpus_used() as usize), "the DPUs the plan gives work to");

        let mut spmm = engine.spmm;
        let x = integer_valued(nodes, width);
        let expected = pimgnn::cpu::spmm(&graph, &x).unwrap();
        assert_eq!(spmm.spmm(&x).unwrap(), expected, "f32");
        assert_eq!(spmm.spmm(&x).unwrap(), expected, "f32, the matrix still resident");

        let integers = graph.map_values(|_| 3i32);
        let x = Dense::from_vec(nodes, width, (0..nodes * width).map(|i| i as i32 * 7919 - 1_000_000).collect());
        let x = x.unwrap();
        let mut engine =
            spmm_engine(integers.clone(), &options(Backend::Pim(BackendKind::Hardware), Some(dpus), vec![width]))
                .unwrap();
        assert_eq!(engine.spmm.spmm(&x).unwrap(), pimgnn::cpu::spmm(&integers, &x).unwrap(), "i32");
    });
}

/// Without `--dpus`, the hardware backend takes whole ranks for the free DPUs the kernel driver counts, up to
/// [`DEFAULT_DPUS`] (without a driver, as in CI, that many), and plans for the DPUs they hold: a server's ranks
/// hold a few disabled DPUs, so a count of DPUs asked of libdpu would take more ranks, or fail.
#[test]
fn without_a_dpu_count_the_engine_takes_whole_ranks_with_the_dpus_they_hold() {
    const DISABLED: [u32; 2] = [3, 700];
    let profile =
        format!("{ON_THE_SIMULATOR},nrRanks=32,nrDpusPerRank=64,disabledDpus={}:{}", DISABLED[0], DISABLED[1]);
    in_environment(&server(&simulator_libdpu(), Some(&profile)), || {
        let free = upmem::RankInventory::of_this_machine().free_dpus().filter(|&free| free > 0);
        let ranks = free.map_or(DEFAULT_DPUS, |free| free.min(DEFAULT_DPUS)).div_ceil(64);
        let expected = ranks * 64 - DISABLED.iter().filter(|&&dpu| dpu < ranks * 64).count() as u32;
        let (nodes, width) = (300, 16);
        let graph = undirected_graph(nodes, 1500);
        let mut engine =
            spmm_engine(graph.clone(), &options(Backend::Pim(BackendKind::Hardware), None, vec![width])).unwrap();
        assert_eq!(engine.allocated_dpus, Some(expected as usize), "{}", engine.plan);
        assert!(engine.plan.starts_with(&format!("PIM SpMM on {expected} hardware DPUs")), "{}", engine.plan);
        let x = integer_valued(nodes, width);
        assert_eq!(engine.spmm.spmm(&x).unwrap(), pimgnn::cpu::spmm(&graph, &x).unwrap());
    });
}

/// A 2-layer GCN on the hardware backend gives the CPU's logits, in `f32` (to rounding) and quantized to `i8`
/// (exactly: integer sums), with each layer's dense steps overlapped with the merge and after it.
#[test]
fn inference_on_the_hardware_backend_gives_the_cpus_logits() {
    in_environment(&server(&simulator_libdpu(), Some(ON_THE_SIMULATOR)), || {
        let (nodes, widths) = (400, [24, 12, 5]);
        let graph = undirected_graph(nodes, 2400);
        let model = Model::seeded_gcn(&widths, 3).unwrap();
        let x = features(nodes, widths[0], 4);
        let matrix = model.architecture().aggregation().matrix(&graph).unwrap();
        let logits = |backend, dtype, schedule| {
            let options = options(
                backend,
                (backend == Backend::Pim(BackendKind::Hardware)).then_some(12),
                model.aggregation_widths(),
            );
            let mut aggregator = Aggregator::new(matrix.clone(), dtype, &options).unwrap();
            assert_eq!(aggregator.backend(), backend);
            model.forward_with(&x, &mut aggregator, schedule).unwrap().logits
        };
        for schedule in [pimgnn::gnn::Overlap::Overlapped, pimgnn::gnn::Overlap::Sequential] {
            let cpu = logits(Backend::Cpu, Dtype::F32, schedule);
            let hardware = logits(Backend::Pim(BackendKind::Hardware), Dtype::F32, schedule);
            // Sums in another order: 9e-8 here, bound with a tenfold margin.
            let difference = largest_difference(hardware.as_slice(), cpu.as_slice());
            assert!(difference <= 1e-6, "f32, {schedule:?}: {difference:e}");
            let cpu = logits(Backend::Cpu, Dtype::I8, schedule);
            assert_eq!(logits(Backend::Pim(BackendKind::Hardware), Dtype::I8, schedule), cpu, "i8, {schedule:?}");
        }
    });
}

/// Training on the hardware backend follows the CPU's run epoch by epoch: a GCN (one resident matrix for both
/// directions) and a GraphSAGE model (its transpose resident on DPUs of its own), with SGD and momentum.
#[test]
fn training_on_the_hardware_backend_follows_the_cpus_run() {
    in_environment(&server(&simulator_libdpu(), Some(ON_THE_SIMULATOR)), || {
        const EPOCHS: usize = 5;
        let (nodes, classes) = (300, 4);
        let graph = undirected_graph(nodes, 1500);
        let x = features(nodes, 10, 6);
        let labels: Vec<i64> = (0..nodes as i64).map(|node| node % classes as i64).collect();
        let train: Vec<bool> = (0..nodes).map(|node| node % 3 != 0).collect();
        let sgd = OptimizerKind::Sgd(Sgd { lr: 0.2, momentum: 0.9, ..Sgd::default() });
        for architecture in [Architecture::Gcn, Architecture::Sage] {
            let run = |backend| {
                let model = initial_model(architecture, &[10, 8, classes], 1).unwrap();
                let targets = Targets::new(labels.clone(), train.clone(), nodes, classes).unwrap();
                let dpus = (backend == Backend::Pim(BackendKind::Hardware)).then_some(8);
                let options = options(backend, dpus, Vec::new());
                let mut trainer = Trainer::new(model, &graph, x.clone(), targets, sgd, &options).unwrap();
                assert_eq!(trainer.propagator().backend(), backend, "{architecture}");
                assert_eq!(trainer.propagator().shares_matrix(), architecture == Architecture::Gcn, "{architecture}");
                let losses: Vec<f32> = (0..EPOCHS).map(|_| trainer.epoch().unwrap().loss).collect();
                (losses, trainer.logits().unwrap())
            };
            let (cpu_losses, cpu_logits) = run(Backend::Cpu);
            let (losses, logits) = run(Backend::Pim(BackendKind::Hardware));
            assert!(cpu_losses[EPOCHS - 1] < cpu_losses[0], "{architecture}: the CPU's run learns: {cpu_losses:?}");
            // The same losses here and logits within 1.2e-7, bound with a tenfold margin.
            let difference = largest_difference(&losses, &cpu_losses);
            assert!(difference <= 1e-6, "{architecture} losses: {losses:?} against the CPU's {cpu_losses:?}");
            let difference = largest_difference(logits.as_slice(), cpu_logits.as_slice());
            assert!(difference <= 1e-6, "{architecture} final logits: {difference:e}");
        }
    });
}

/// The error of building an engine on the hardware backend for a small graph with `dpus` DPUs.
fn hardware_engine_error(dpus: Option<u32>) -> Error {
    let graph = undirected_graph(200, 1000);
    match spmm_engine(graph, &options(Backend::Pim(BackendKind::Hardware), dpus, vec![16])) {
        Ok(engine) => panic!("an engine was built on {:?} DPUs: {}", engine.allocated_dpus, engine.plan),
        Err(error) => error,
    }
}

#[test]
fn without_libdpu_the_hardware_backend_is_refused_naming_where_it_looked() {
    let missing = Path::new("/nonexistent/libdpu.so");
    in_environment(&server(missing, None), || {
        let error = hardware_engine_error(Some(4));
        let Error::Upmem(upmem::Error::LibraryNotFound { attempts, .. }) = &error else { panic!("{error:?}") };
        assert_eq!(attempts.iter().map(|attempt| attempt.candidate.as_path()).collect::<Vec<_>>(), [missing]);
        assert!(attempts[0].error.contains("cannot open shared object file"), "{:?}", attempts[0]);
        assert!(error.to_string().contains("cannot load libdpu: /nonexistent/libdpu.so"), "{error}");
        assert!(error.to_string().contains("Set UPMEM_LIBDPU"), "{error}");
    });
}

/// libdpu's own error code comes back with its text: here a profile libdpu cannot read.
#[test]
fn a_libdpu_error_code_is_kept_with_its_text() {
    in_environment(&server(&simulator_libdpu(), Some("backend=simulator,nrRanks=many")), || {
        let error = hardware_engine_error(Some(4));
        let Error::Upmem(upmem::Error::Dpu { call, code, message }) = &error else { panic!("{error:?}") };
        assert_eq!((*call, *code, message.as_str()), ("dpu_alloc", DPU_ERR_INVALID_PROFILE, "invalid profile"));
        assert_eq!(
            error.to_string(),
            format!("dpu_alloc failed: invalid profile (DPU error {DPU_ERR_INVALID_PROFILE})")
        );
    });
}

/// On a machine without DPUs, DPUs asked of the hardware are refused with what was asked, the profile, and what
/// the kernel driver lists.
#[test]
fn dpus_asked_of_a_machine_without_any_are_refused_saying_what_was_asked() {
    in_environment(&server(&simulator_libdpu(), None), || {
        let error = hardware_engine_error(Some(4));
        let Error::Upmem(upmem::Error::HardwareAllocation { requested, profile, .. }) = &error else {
            panic!("{error:?}")
        };
        assert_eq!((requested.as_str(), profile.as_str()), ("4 DPUs", "backend=hw"));
        let text = error.to_string();
        assert!(
            text.starts_with("cannot allocate 4 DPUs on UPMEM hardware (libdpu says: dpu allocation error"),
            "{text}"
        );
    });
}

/// More DPUs than the machine has (a simulated machine of 2 DPUs), by count or by the ranks the engine takes
/// without one, are refused with libdpu's allocation error.
#[test]
fn more_dpus_than_the_machine_has_are_refused_with_libdpus_allocation_error() {
    in_environment(&server(&simulator_libdpu(), Some("backend=simulator,nrRanks=1,nrDpusPerRank=2")), || {
        for dpus in [Some(16), None] {
            let error = hardware_engine_error(dpus);
            let Error::Upmem(upmem::Error::Dpu { call, code, .. }) = &error else { panic!("{dpus:?}: {error:?}") };
            let expected_call = if dpus.is_some() { "dpu_alloc" } else { "dpu_alloc_ranks" };
            assert_eq!((*call, *code), (expected_call, DPU_ERR_ALLOCATION), "{dpus:?}: {error}");
        }
    });
}

/// A libdpu that allocates but has none of the functions that list a set's DPUs (as one of an SDK older than the
/// runtime's might) is refused naming the first one missing.
#[test]
fn a_libdpu_lacking_a_function_is_refused_naming_it() {
    // Where the parent builds it and the child process finds it.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("libdpu-lacking-the-set-iterators");
    let library = dir.join("libdpu.so");
    if std::env::var_os(CHILD).is_none() {
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("libdpu.c");
        std::fs::write(
            &source,
            "struct dpu_set_t;\nint dpu_alloc(unsigned n, const char *p, struct dpu_set_t *s) { return 0; }\n",
        )
        .unwrap();
        let status = Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&library).arg(&source).status();
        assert!(status.expect("running cc").success(), "building the stand-in libdpu");
    }
    in_environment(&server(&library, None), || {
        let error = hardware_engine_error(Some(4));
        let Error::Upmem(upmem::Error::MissingFunction(name)) = &error else { panic!("{error:?}") };
        assert_eq!(*name, "dpu_set_rank_iterator_from");
        let text = error.to_string();
        assert_eq!(text, "the loaded libdpu has no `dpu_set_rank_iterator_from` (an SDK older than 2025.1?)");
    });
}
