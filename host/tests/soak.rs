//! A long-running process that allocates 64 DPUs, loads a kernel, transfers, launches, reads back and drops the
//! set, cycle after cycle, on every backend (the simulator directly, and the hardware backend over the
//! simulator's libdpu): after a warm-up, the memory it allocated, its file descriptors and its threads stay flat.
//!
//! `UPMEM_SOAK_CYCLES` sets the measured cycles per backend (default 100). One test, so that no other test's
//! threads or memory are counted.

use std::path::Path;

mod common;

use common::simulator_libdpu;
use upmem::{BackendKind, DpuSet, Kernel};

const NR_DPUS: u32 = 64;
const DEFAULT_CYCLES: usize = 100;
const WARMUP_CYCLES: usize = 10;
/// Allocated memory may move by allocator noise after the warm-up, never by a per-cycle amount (leak-free runs
/// measure 4-24 KiB over 100 to 600 cycles; libdpu's timeline, before it started anew with each allocation,
/// grew by 7 KB a cycle here).
const GROWTH_LIMIT_KIB: i64 = 64;

/// What the process holds: resident memory it allocated (heap, stacks, shared memories, not libraries' code,
/// which the kernel drops and reads back as memory pressure varies), open descriptors, threads.
#[derive(Clone, Copy, Debug)]
struct Usage {
    allocated_kib: i64,
    fds: usize,
    threads: i64,
}

fn status_field(status: &str, name: &str) -> i64 {
    status
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /proc/self/status"))
}

fn measure() -> Usage {
    let status = std::fs::read_to_string("/proc/self/status").expect("reading /proc/self/status");
    Usage {
        allocated_kib: status_field(&status, "RssAnon") + status_field(&status, "RssShmem"),
        fds: std::fs::read_dir("/proc/self/fd").expect("listing /proc/self/fd").count(),
        threads: status_field(&status, "Threads"),
    }
}

fn echo_kernel(dir: &Path) -> Kernel {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("dpu/echo.c");
    let mut builder = upmem::build::KernelBuilder::new();
    builder.source(source).nr_tasklets(4).flag("-O2").flag("-Werror");
    upmem::build::kernel_into("echo", &builder, dir).expect("building the echo kernel")
}

/// One service request on `backend`: allocate, load, send (each DPU its id, and broadcasts), launch, read back
/// (from each DPU, and gathered) and check, drop.
fn cycle(backend: BackendKind, kernel: &Kernel, number: u32) {
    let mut builder = DpuSet::builder();
    builder.backend(backend).dpus(NR_DPUS);
    if backend == BackendKind::Hardware {
        builder.libdpu(simulator_libdpu()).profile("backend=simulator");
    }
    let mut set = builder.allocate().expect("allocating").load(kernel).expect("loading");
    let id = |dpu: usize| number * 1000 + dpu as u32;
    for dpu in 0..NR_DPUS as usize {
        set.copy_to(dpu, "id", 0, &[id(dpu)]).expect("sending a DPU its id");
    }
    set.broadcast("input", 0, &[number; 8]).expect("broadcasting the input");
    set.broadcast("mram_in", 0, &[u64::from(number); 8]).expect("broadcasting the MRAM input");
    set.launch().expect("launching");
    for dpu in 0..NR_DPUS as usize {
        let mut output = [0u32; 8];
        set.copy_from(dpu, "output", 0, &mut output).expect("reading a DPU's output");
        assert_eq!(output, [2 * number; 8], "cycle {number}: DPU {dpu}'s output");
    }
    let mram: Vec<Vec<u64>> = set.gather("mram_out", 0, 8).expect("gathering the MRAM outputs");
    for (dpu, words) in mram.iter().enumerate() {
        let want = u64::from(number) + u64::from(id(dpu));
        assert!(words.iter().all(|&word| word == want), "cycle {number}: DPU {dpu}: {words:?}, expected {want}");
    }
}

fn soak(backend: BackendKind, kernel: &Kernel, cycles: usize) {
    for number in 0..WARMUP_CYCLES {
        cycle(backend, kernel, number as u32);
    }
    let start = measure();
    for number in WARMUP_CYCLES..WARMUP_CYCLES + cycles {
        cycle(backend, kernel, number as u32);
    }
    let end = measure();
    let grown_kib = end.allocated_kib - start.allocated_kib;
    println!(
        "{backend:?}: {cycles} cycles of allocate / load / copy_to and broadcast / launch / copy_from and gather / drop on {NR_DPUS} DPUs after \
         {WARMUP_CYCLES} warm-up: allocated {} -> {} KiB ({:+.1} bytes per cycle), fds {} -> {}, threads {} -> {}",
        start.allocated_kib,
        end.allocated_kib,
        grown_kib as f64 * 1024.0 / cycles as f64,
        start.fds,
        end.fds,
        start.threads,
        end.threads
    );
    assert!(
        grown_kib <= GROWTH_LIMIT_KIB,
        "{backend:?}: allocated memory grew by {grown_kib} KiB over {cycles} cycles"
    );
    assert_eq!(end.fds, start.fds, "{backend:?}: open file descriptors");
    assert_eq!(end.threads, start.threads, "{backend:?}: threads");
}

#[test]
fn repeated_lifecycles_hold_no_more_memory_descriptors_or_threads() {
    let cycles = std::env::var("UPMEM_SOAK_CYCLES")
        .ok()
        .map(|value| value.parse().unwrap_or_else(|_| panic!("UPMEM_SOAK_CYCLES={value} is not a number of cycles")))
        .unwrap_or(DEFAULT_CYCLES);
    let dir = tempfile::tempdir().expect("temporary directory");
    let kernel = echo_kernel(dir.path());
    for backend in [BackendKind::Simulator, BackendKind::Hardware] {
        soak(backend, &kernel, cycles);
    }
}
