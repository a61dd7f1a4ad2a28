//! The runtime's test suite, written once and run on every backend: the simulator directly, and the hardware
//! backend pointed at the simulator's libdpu-compatible library (everything but the DPU silicon).

use std::path::Path;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

mod common;

use common::simulator_libdpu;
use upmem::{BackendKind, DpuSet, DpuSetBuilder, Error, Kernel, LoadedSet};

/// The two ways of running the suite.
#[derive(Clone, Copy, Debug)]
enum Backend {
    Simulator,
    HardwareOverSimulatorLibdpu,
}

/// Builds a test kernel once per test run (builds are serialised, so no test sees a binary being replaced).
fn kernel(name: &str) -> Kernel {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static BUILDING: Mutex<()> = Mutex::new(());
    let _building = BUILDING.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("temporary directory"));
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("dpu").join(format!("{name}.c"));
    let built = dir.path().join(format!("{name}.dpusim"));
    if built.exists() {
        return Kernel::new(name, Some(built), None);
    }
    let mut builder = upmem::build::KernelBuilder::new();
    builder.source(source).nr_tasklets(16).flag("-O2").flag("-Werror");
    upmem::build::kernel_into(name, &builder, dir.path()).expect("building the test kernel")
}

/// The hardware backend over the simulator's libdpu. The profile names the simulator: without a backend in it,
/// the hardware backend asks libdpu for `backend=hw`, which the simulator's libdpu refuses as the SDK's does on
/// a machine without DPUs.
fn over_simulator_libdpu(builder: &mut DpuSetBuilder) -> &mut DpuSetBuilder {
    builder.backend(BackendKind::Hardware).libdpu(simulator_libdpu()).profile("backend=simulator")
}

impl Backend {
    fn builder(self) -> DpuSetBuilder {
        let mut builder = DpuSet::builder();
        match self {
            Backend::Simulator => builder.backend(BackendKind::Simulator),
            Backend::HardwareOverSimulatorLibdpu => over_simulator_libdpu(&mut builder),
        };
        builder
    }

    fn allocate(self, nr_dpus: u32) -> upmem::Result<DpuSet> {
        self.builder().dpus(nr_dpus).allocate()
    }

    fn loaded(self, nr_dpus: u32, name: &str) -> LoadedSet {
        self.allocate(nr_dpus).expect("allocating").load(&kernel(name)).expect("loading")
    }
}

fn allocation_counts_dpus_and_ranks(backend: Backend) {
    let set = backend.allocate(100).unwrap();
    assert_eq!(set.nr_dpus(), 100);
    assert_eq!(set.nr_ranks(), 2, "100 DPUs take two ranks of 64");
    let ranks: Vec<_> = set.ranks().collect();
    assert_eq!(ranks, [0..64, 64..100]);
    let dpus: Vec<_> = set.dpus().collect();
    assert_eq!(dpus.len(), 100);
    assert!(dpus.iter().enumerate().all(|(i, dpu)| dpu.index == i && dpu.rank == usize::from(i >= 64)));
    let expected = match backend {
        Backend::Simulator => BackendKind::Simulator,
        Backend::HardwareOverSimulatorLibdpu => BackendKind::Hardware,
    };
    assert_eq!(set.backend(), expected);
}

fn whole_ranks_and_binaries_from_memory(backend: Backend) {
    let set = backend.builder().ranks(2).allocate().unwrap();
    assert_eq!((set.nr_ranks(), set.nr_dpus()), (2, 128));
    let binary = std::fs::read(kernel("echo").simulator_binary(upmem::ChipVersion::V1A).unwrap()).unwrap();
    let mut set = set.load_from_memory(&binary).unwrap();
    set.broadcast("input", 0, &[3u32; 8]).unwrap();
    set.launch().unwrap();
    assert_eq!(set.gather::<u32>("output", 0, 8).unwrap()[127], [6; 8]);
    assert_eq!(set.symbol(upmem::MRAM_HEAP).unwrap().size % 8, 0);
}

fn vector_addition_with_per_dpu_buffers(backend: Backend) {
    const ELEMENTS: usize = 4096;
    let mut set = backend.loaded(64, "vector_add");
    let inputs: Vec<Vec<u32>> =
        (0..64u32).map(|dpu| (0..2 * ELEMENTS as u32).map(|i| i.wrapping_mul(2654435761) ^ dpu).collect()).collect();
    set.broadcast("nr_elements", 0, &[ELEMENTS as u32]).unwrap();
    set.push(upmem::MRAM_HEAP, 0, &inputs).unwrap();
    set.launch().unwrap();
    let sums: Vec<Vec<u32>> = set.gather(upmem::MRAM_HEAP, (8 * ELEMENTS) as u32, ELEMENTS).unwrap();
    for (dpu, (input, sum)) in inputs.iter().zip(&sums).enumerate() {
        let expected: Vec<u32> = (0..ELEMENTS).map(|i| input[i].wrapping_add(input[ELEMENTS + i])).collect();
        assert_eq!(*sum, expected, "DPU {dpu}");
    }
}

fn every_transfer_and_launch_is_on_the_timeline(backend: Backend) {
    use upmem::timeline::Operation;
    const ELEMENTS: usize = 4096;
    let mut set = backend.loaded(100, "vector_add");
    let inputs = vec![vec![1u32; 2 * ELEMENTS]; 100];
    set.broadcast("nr_elements", 0, &[ELEMENTS as u32]).unwrap();
    set.push(upmem::MRAM_HEAP, 0, &inputs).unwrap();
    set.launch().unwrap();
    let _: Vec<Vec<u32>> = set.gather(upmem::MRAM_HEAP, (8 * ELEMENTS) as u32, ELEMENTS).unwrap();
    let mut one = [0u32; ELEMENTS];
    set.copy_from(99, upmem::MRAM_HEAP, (8 * ELEMENTS) as u32, &mut one).unwrap();

    let timeline = set.take_timeline();
    let operations: Vec<_> = timeline.events().iter().map(|event| event.operation).collect();
    let expected = [Operation::Broadcast, Operation::Push, Operation::Launch, Operation::Gather, Operation::CopyFrom];
    assert_eq!(operations, expected);
    let push = &timeline.events()[1];
    assert_eq!((push.bytes_per_dpu, push.dpus), (8 * ELEMENTS as u64, 100));
    // 100 DPUs x 32 KiB over the bandwidth of the 2 ranks they span, 5.04 + 2 x 0.259 GB/s.
    let expected = 100.0 * 8.0 * ELEMENTS as f64 / (5.042768e9 + 2.0 * 0.258673e9);
    assert!((push.predicted.unwrap().as_secs_f64() - expected).abs() < 1e-9, "{timeline}");
    let launch = timeline.events()[2].predicted;
    match backend {
        Backend::Simulator => {
            let stats = set.launch_stats().unwrap().expect("the simulator's statistics");
            assert_eq!(stats.dpus, 100);
            assert_eq!(launch, Some(set.transfer_model().launch_time(stats.cycles, upmem::CLOCK_HZ)));
            assert_eq!(stats.dma_bytes, 100 * 12 * ELEMENTS as u64, "two inputs read, one sum written per DPU");
            assert_eq!(stats.instructions_by_class.iter().sum::<u64>(), stats.instructions);
        }
        Backend::HardwareOverSimulatorLibdpu => {
            assert_eq!(launch, None, "hardware does not say its cycles");
            assert_eq!(set.launch_stats().unwrap(), None);
        }
    }
    assert!(timeline.predicted() >= timeline.predicted_of(Operation::Push));
    assert!(set.timeline().events().is_empty(), "taken");
}

fn symbols_logs_and_single_dpu_copies(backend: Backend) {
    let mut set = backend.loaded(8, "echo");
    for dpu in 0..8 {
        set.copy_to(dpu, "id", 0, &[dpu as u32 * 10]).unwrap();
    }
    set.broadcast("input", 0, &[1u32, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    set.broadcast("mram_in", 0, &[100u64; 8]).unwrap();
    set.launch().unwrap();
    let mut output = [0u32; 8];
    set.copy_from(3, "output", 0, &mut output).unwrap();
    assert_eq!(output, [2, 4, 6, 8, 10, 12, 14, 16]);
    let mram: Vec<Vec<u64>> = set.gather("mram_out", 0, 8).unwrap();
    assert!(mram.iter().enumerate().all(|(dpu, words)| words.iter().all(|&w| w == 100 + dpu as u64 * 10)));
    assert_eq!(set.log(5).unwrap(), "DPU 50 says hello after 1 launches\n");
    let symbol = set.symbol("mram_in").unwrap();
    assert!(symbol.is_mram() && symbol.size == 64);
    assert!(!set.symbol("input").unwrap().is_mram());
}

fn asynchronous_launch_and_reload(backend: Backend) {
    let mut set = backend.loaded(16, "echo");
    let mut launch = set.launch_async().unwrap();
    while !launch.poll().unwrap() {
        std::thread::yield_now();
    }
    launch.wait().unwrap();
    set.launch().unwrap();
    assert_eq!(set.gather::<u32>("launches", 0, 1).unwrap()[7], [2]);
    set.load(&kernel("echo")).unwrap();
    set.launch().unwrap();
    assert_eq!(set.gather::<u32>("launches", 0, 1).unwrap()[7], [1], "reloading resets WRAM");
}

/// Rounds of `echo`'s busy loop that keep a DPU busy for about a second on the simulator.
const SPIN_ROUNDS: u32 = 500_000_000;

/// Polling returns at once, long before the launch ends (the SDK's `dpu_status` would wait for it).
fn polling_a_launch_does_not_wait_for_it(backend: Backend) {
    let mut set = backend.loaded(4, "echo");
    set.copy_to(1, "spin", 0, &[SPIN_ROUNDS]).unwrap();
    let mut launch = set.launch_async().unwrap();
    let started = Instant::now();
    let first = launch.poll().unwrap();
    let first_polled = started.elapsed();
    let mut polls = 1;
    while !launch.poll().unwrap() {
        polls += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    let finished = started.elapsed();
    launch.wait().unwrap();
    assert!(!first, "the first poll, {first_polled:?} after the launch, found it done");
    assert!(first_polled * 4 < finished, "polled in {first_polled:?}, finished after {finished:?}");
    assert!(polls > 1, "one poll");
    assert_eq!(set.gather::<u32>("launches", 0, 1).unwrap(), [[1]; 4]);
}

fn queued_transfers_and_launches_run_in_order(backend: Backend) {
    const ELEMENTS: usize = 1024;
    let mut set = backend.loaded(16, "vector_add");
    let first: Vec<Vec<u32>> = (0..16u32).map(|dpu| vec![dpu; 2 * ELEMENTS]).collect();
    let second: Vec<Vec<u32>> = (0..16u32).map(|dpu| vec![dpu * 7; 2 * ELEMENTS]).collect();
    let count = [ELEMENTS as u32];
    let offset = (8 * ELEMENTS) as u32;
    let mut sums: Vec<Vec<Vec<u32>>> = Vec::new();
    for inputs in [&first, &second] {
        set.async_scope(|scope| {
            scope.broadcast("nr_elements", 0, &count)?;
            scope.push(upmem::MRAM_HEAP, 0, inputs)?;
            scope.launch()
        })
        .unwrap();
        sums.push(set.gather(upmem::MRAM_HEAP, offset, ELEMENTS).unwrap());
    }
    for dpu in 0..16u32 {
        assert!(sums[0][dpu as usize].iter().all(|&sum| sum == 2 * dpu), "DPU {dpu}, first scope");
        assert!(sums[1][dpu as usize].iter().all(|&sum| sum == 14 * dpu), "DPU {dpu}, second scope");
    }
}

fn a_panicking_async_scope_still_waits_for_what_it_queued(backend: Backend) {
    const ELEMENTS: usize = 1024;
    let mut set = backend.loaded(16, "vector_add");
    let inputs: Vec<Vec<u32>> = (0..16u32).map(|dpu| vec![dpu; 2 * ELEMENTS]).collect();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        set.async_scope(|scope| -> upmem::Result<()> {
            scope.broadcast("nr_elements", 0, &[ELEMENTS as u32])?;
            scope.push(upmem::MRAM_HEAP, 0, &inputs)?;
            scope.launch()?;
            panic!("the scope's body panics with work queued");
        })
    }));
    assert!(outcome.is_err(), "the panic propagates");
    // The queued launch was waited for while unwinding: the set is idle and the launch's results are there.
    let sums: Vec<Vec<u32>> = set.gather(upmem::MRAM_HEAP, (8 * ELEMENTS) as u32, ELEMENTS).unwrap();
    for (dpu, sums) in sums.iter().enumerate() {
        assert!(sums.iter().all(|&sum| sum == 2 * dpu as u32), "DPU {dpu}");
    }
    set.launch().unwrap();
}

fn faults_are_reported_and_the_next_launch_works(backend: Backend) {
    let mut set = backend.loaded(4, "echo");
    set.copy_to(2, "halt_please", 0, &[1u32]).unwrap();
    match set.launch() {
        Err(Error::Fault(faults)) => {
            assert_eq!(faults.len(), 1);
            assert_eq!(faults[0].dpu, 2);
            assert!(faults[0].reason.contains("halt"), "{}", faults[0].reason);
        }
        other => panic!("expected a fault, got {other:?}"),
    }
    assert_eq!(set.faults().unwrap().len(), 1);
    set.copy_to(2, "halt_please", 0, &[0u32]).unwrap();
    set.launch().unwrap();
    assert!(set.faults().unwrap().is_empty());
}

/// Misuse is reported by the safe layer with its own errors, before any backend is called (a backend would
/// answer with `Error::Dpu` or `Error::Simulator`).
fn misuse_is_caught_before_the_backend(backend: Backend) {
    let mut set = backend.loaded(4, "echo");
    let error = set.broadcast("no_such_symbol", 0, &[0u32]).unwrap_err();
    assert!(matches!(error, Error::UnknownSymbol(ref name) if name == "no_such_symbol"), "{error}");
    let error = set.broadcast("input", 4, &[0u32; 8]).unwrap_err();
    assert!(matches!(error, Error::OutOfBounds { offset: 4, length: 32, size: 32, .. }), "{error}");
    let error = set.broadcast("mram_in", 4, &[0u32; 2]).unwrap_err();
    assert!(matches!(error, Error::Misaligned { required: 8, .. }), "{error}");
    let error = set.broadcast("mram_in", 0, &[0u32; 3]).unwrap_err();
    assert!(matches!(error, Error::Misaligned { memory: "MRAM", length: 12, .. }), "{error}");
    let error = set.broadcast("input", 2, &[0u16; 2]).unwrap_err();
    assert!(matches!(error, Error::Misaligned { memory: "WRAM", required: 4, .. }), "{error}");
    let error = set.push("input", 0, &[[0u32; 8]; 3]).unwrap_err();
    assert!(matches!(error, Error::BufferCount { expected: 4, found: 3 }), "{error}");
    let error = set.push("input", 0, &[vec![0u32; 8], vec![0; 8], vec![0; 4], vec![0; 8]]).unwrap_err();
    assert!(matches!(error, Error::BufferLength { index: 2, found: 16, expected: 32 }), "{error}");
    let error = set.copy_to(4, "id", 0, &[0u32]).unwrap_err();
    assert!(matches!(error, Error::NoSuchDpu { index: 4, count: 4 }), "{error}");
    // Launching a set with no program, or using a set after it is freed, does not compile: `DpuSet` has no
    // `launch`, and `load` consumes the set.
}

macro_rules! on_every_backend {
    ($($test:ident),* $(,)?) => {
        mod simulator {
            $( #[test] fn $test() { super::$test(super::Backend::Simulator) } )*
        }
        mod hardware_over_simulator_libdpu {
            $( #[test] fn $test() { super::$test(super::Backend::HardwareOverSimulatorLibdpu) } )*
        }
    };
}

on_every_backend!(
    allocation_counts_dpus_and_ranks,
    whole_ranks_and_binaries_from_memory,
    vector_addition_with_per_dpu_buffers,
    every_transfer_and_launch_is_on_the_timeline,
    symbols_logs_and_single_dpu_copies,
    asynchronous_launch_and_reload,
    polling_a_launch_does_not_wait_for_it,
    queued_transfers_and_launches_run_in_order,
    a_panicking_async_scope_still_waits_for_what_it_queued,
    faults_are_reported_and_the_next_launch_works,
    misuse_is_caught_before_the_backend,
);

#[test]
fn an_explicit_hardware_request_never_falls_back() {
    let error = DpuSet::builder()
        .dpus(1)
        .backend(BackendKind::Hardware)
        .libdpu("/nonexistent/libdpu.so")
        .allocate()
        .err()
        .expect("no libdpu there");
    assert!(matches!(error, Error::LibraryNotFound { .. }), "{error}");
    assert!(error.to_string().contains("/nonexistent/libdpu.so"), "{error}");
}

/// Without a backend in its profile, libdpu would run a set on the SDK's simulator when it finds no DPU: the
/// hardware backend names `backend=hw`, which the simulator's libdpu refuses as the SDK's does without DPUs, and
/// the error says what the kernel driver has.
#[test]
fn a_hardware_set_is_asked_of_the_hardware() {
    let mut builder = DpuSet::builder();
    builder.dpus(4).backend(BackendKind::Hardware).libdpu(simulator_libdpu());
    let error = builder.allocate().err().expect("the simulator's libdpu allocated a set asked for backend=hw");
    assert!(
        matches!(&error, Error::HardwareAllocation { requested, profile, .. } if requested == "4 DPUs" && profile == "backend=hw"),
        "{error:?}"
    );
    if !upmem::hardware_present() {
        assert!(error.to_string().contains("no UPMEM device found"), "{error}");
    }
    builder.profile("nrThreadsPerRank=1");
    let Err(Error::HardwareAllocation { profile, .. }) = builder.allocate() else { panic!("allocated") };
    assert_eq!(profile, "nrThreadsPerRank=1,backend=hw");
}

#[test]
fn backend_names_parse() {
    assert_eq!("hw".parse::<BackendKind>().unwrap(), BackendKind::Hardware);
    assert_eq!("sim".parse::<BackendKind>().unwrap(), BackendKind::Simulator);
    assert_eq!("auto".parse::<BackendKind>().unwrap(), BackendKind::Auto);
    assert_eq!("Simulator".parse::<BackendKind>().unwrap(), BackendKind::Simulator);
    assert_eq!("HW".parse::<BackendKind>().unwrap(), BackendKind::Hardware);
    assert!(matches!("fpga".parse::<BackendKind>(), Err(Error::InvalidBackend(_))));
    let names = [BackendKind::Auto, BackendKind::Hardware, BackendKind::Simulator].map(|kind| kind.to_string());
    assert_eq!(names, ["auto", "hardware", "simulator"]);
}

/// Only the modelled schedule's cycles are the hardware's: under the fast and the shuffle schedule no launch is
/// predicted from them.
#[test]
fn only_the_modelled_schedule_predicts_launches() {
    use upmem::sim::Schedule;
    for (schedule, predicted) in
        [(Schedule::Modelled, true), (Schedule::Fast, false), (Schedule::Shuffle { seed: 3 }, false)]
    {
        let mut config = upmem::sim::SimConfig::new(upmem::Topology::new(1, 4));
        config.schedule = schedule;
        let mut builder = DpuSet::builder();
        builder.dpus(4).backend(BackendKind::Simulator).simulator(config);
        let mut set = builder.allocate().expect("allocating").load(&kernel("vector_add")).expect("loading");
        set.broadcast("nr_elements", 0, &[16u32]).unwrap();
        set.launch().unwrap();
        assert_eq!(set.models_hardware_cycles(), predicted, "{schedule}");
        let timeline = set.take_timeline();
        let launch = timeline.events().last().expect("the launch");
        assert_eq!(launch.operation, upmem::timeline::Operation::Launch);
        assert_eq!(launch.predicted.is_some(), predicted, "{schedule}: {timeline}");
        assert!(timeline.events()[0].predicted.is_some(), "{schedule}: transfers are always predicted: {timeline}");
    }
}

#[test]
fn a_set_of_no_dpus_is_refused_saying_so() {
    let Err(error) = DpuSet::builder().backend(BackendKind::Simulator).dpus(0).allocate() else {
        panic!("0 DPUs allocated");
    };
    assert!(matches!(error, Error::Allocation { requested: 0, .. }), "{error:?}");
    assert!(error.to_string().contains("a set has at least 1"), "{error}");
}

/// A server has 2,560 DPUs: the simulator's default machine refuses more, as the hardware does, and a larger
/// simulated machine must be asked for explicitly.
#[test]
fn a_set_larger_than_a_server_is_refused_unless_the_machine_is_larger() {
    for error in [
        DpuSet::builder().backend(BackendKind::Simulator).dpus(2561).allocate().err(),
        DpuSet::builder().backend(BackendKind::Simulator).ranks(41).allocate().err(),
    ] {
        let error = error.expect("a set larger than a server allocated");
        assert!(matches!(error, Error::Allocation { available: 2560, .. }), "{error:?}");
        assert!(error.to_string().contains("2560 are available"), "{error}");
    }
    let larger = upmem::sim::SimConfig::new(upmem::Topology::new(41, 64));
    let set = DpuSet::builder().backend(BackendKind::Simulator).simulator(larger).dpus(2561).allocate().unwrap();
    assert_eq!(set.nr_dpus(), 2561);
}
