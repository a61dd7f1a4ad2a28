//! What the simulator holds on to and shares: `dpu_free` gives back the memory of the DPUs it frees and the
//! worker processes of programs no allocated DPU runs any more, so that after the last set is freed the process
//! is back where it started; one host buffer prepared for several DPUs is never written by two threads at once;
//! a program loaded from memory leaves no file behind, even in a process that ends without freeing anything.
//!
//! The tests share the process's one simulated server and measure the process, so they take turns.

use std::ffi::{c_char, c_void, CString};
use std::path::Path;
use std::process::Command;

use dpu::types::{
    dpu_error_t, dpu_set_dpu_iterator_t, dpu_set_t, SetParts, DPU_XFER_DEFAULT, DPU_XFER_FROM_DPU, DPU_XFER_TO_DPU,
};
use upmem_sim::{KernelBuilder, SimulatedBuild as _};

extern "C" {
    fn dpu_alloc(nr_dpus: u32, profile: *const c_char, set: *mut dpu_set_t) -> dpu_error_t;
    fn dpu_free(set: dpu_set_t) -> dpu_error_t;
    fn dpu_load(set: dpu_set_t, path: *const c_char, program: *mut *mut c_void) -> dpu_error_t;
    fn dpu_load_from_memory(set: dpu_set_t, buffer: *mut u8, size: usize, program: *mut *mut c_void) -> dpu_error_t;
    fn dpu_launch(set: dpu_set_t, policy: u32) -> dpu_error_t;
    fn dpu_prepare_xfer(set: dpu_set_t, buffer: *mut c_void) -> dpu_error_t;
    fn dpu_broadcast_to(
        set: dpu_set_t,
        symbol: *const c_char,
        offset: u32,
        source: *const c_void,
        length: usize,
        flags: u32,
    ) -> dpu_error_t;
    fn dpu_copy_from(
        set: dpu_set_t,
        symbol: *const c_char,
        offset: u32,
        destination: *mut c_void,
        length: usize,
    ) -> dpu_error_t;
    fn dpu_push_xfer(
        set: dpu_set_t,
        xfer: u32,
        symbol: *const c_char,
        offset: u32,
        length: usize,
        flags: u32,
    ) -> dpu_error_t;
    fn dpu_set_dpu_iterator_from(set: *mut dpu_set_t) -> dpu_set_dpu_iterator_t;
    fn dpu_set_dpu_iterator_next(iterator: *mut dpu_set_dpu_iterator_t);
}

/// Set in the child process of a test that runs this binary again: the kernel the child loads.
const CHILD_KERNEL: &str = "UPMEM_SIM_SDK_TEST_CHILD_KERNEL";

/// Held by each test: they measure the whole process (and its children).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

const NR_DPUS: u32 = 64;
const BYTES_PER_DPU: usize = 16 << 20;
/// How far above its starting point the process's shared memory may stay after the last free.
const SLACK_KIB: u64 = 8 << 10;
const DPU_SYNCHRONOUS: u32 = 1;
const PROFILE: &str = "nrRanks=2,nrDpusPerRank=64";

fn check(status: dpu_error_t, what: &str) {
    assert_eq!(status, 0, "{what} failed with DPU error {status}");
}

/// This process's resident shared memory (`RssShmem`), where the simulated DPUs' memories live.
fn resident_shared_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("reading /proc/self/status");
    let line = status.lines().find(|line| line.starts_with("RssShmem:")).expect("RssShmem in /proc/self/status");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("RssShmem in kB")
}

/// Live child processes of this process (the simulator's workers).
fn children() -> usize {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .expect("listing /proc")
        .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path().join("stat")).ok())
        // Field 4 is the parent's pid; the command (field 2) is in parentheses and may contain spaces.
        .filter(|stat| stat.rsplit_once(") ").and_then(|(_, rest)| rest.split(' ').nth(1)) == Some(me.as_str()))
        .count()
}

fn dpus_of(mut set: dpu_set_t) -> Vec<dpu_set_t> {
    let mut dpus = Vec::new();
    // SAFETY: iterating a live set with the library's own iterator functions, as DPU_FOREACH does.
    unsafe {
        let mut iterator = dpu_set_dpu_iterator_from(&mut set);
        while iterator.has_next {
            dpus.push(iterator.next);
            dpu_set_dpu_iterator_next(&mut iterator);
        }
    }
    dpus
}

/// The path, for `dpu_load`, of a kernel named `name` that does nothing.
fn empty_kernel(name: &str) -> CString {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let source = dir.join(format!("{name}.c"));
    std::fs::write(&source, "#include <defs.h>\nint main(void) { return 0; }\n").expect("writing the kernel");
    let kernel = KernelBuilder::new().source(&source).build(dir.join(name)).expect("building");
    CString::new(kernel.to_str().expect("UTF-8 path")).expect("no NUL")
}

#[test]
fn dpu_free_gives_back_memory_and_worker_processes() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let kernel = empty_kernel("resources-kernel");
    let heap = CString::new(upmem_sim::MRAM_HEAP).expect("no NUL");
    let profile = CString::new(PROFILE).expect("no NUL");
    let sources: Vec<Vec<u8>> = (0..NR_DPUS).map(|dpu| vec![dpu as u8 | 1; BYTES_PER_DPU]).collect();

    let before = resident_shared_kib();
    let mut set = <dpu_set_t as SetParts>::empty();
    // SAFETY: the library's C API, called as a C program would; every prepared buffer holds BYTES_PER_DPU
    // bytes and outlives the push.
    unsafe {
        check(dpu_alloc(NR_DPUS, profile.as_ptr(), &mut set), "dpu_alloc");
        check(dpu_load(set, kernel.as_ptr(), std::ptr::null_mut()), "dpu_load");
        for (dpu, buffer) in dpus_of(set).iter().zip(&sources) {
            check(dpu_prepare_xfer(*dpu, buffer.as_ptr().cast_mut().cast()), "dpu_prepare_xfer");
        }
        check(dpu_push_xfer(set, DPU_XFER_TO_DPU, heap.as_ptr(), 0, BYTES_PER_DPU, DPU_XFER_DEFAULT), "dpu_push_xfer");
        check(dpu_launch(set, DPU_SYNCHRONOUS), "dpu_launch");
    }
    let pushed = (NR_DPUS as u64 * BYTES_PER_DPU as u64) >> 10;
    let allocated = resident_shared_kib();
    assert!(allocated >= before + pushed, "{pushed} KiB pushed, resident shared memory {before} -> {allocated} KiB");
    assert!(children() > 0, "the launch started worker processes");

    // SAFETY: the set came from dpu_alloc and is freed once.
    check(unsafe { dpu_free(set) }, "dpu_free");
    let after = resident_shared_kib();
    assert!(
        after <= before + SLACK_KIB,
        "after dpu_free the process still holds {after} KiB of shared memory (it started with {before} KiB)"
    );
    assert_eq!(children(), 0, "worker processes left after the last dpu_free");
}

/// A push out of every DPU into one buffer prepared for all of them leaves the last DPU's bytes there (the last
/// copy of a sequential libdpu), never a mix written by several threads.
#[test]
fn one_buffer_prepared_for_several_dpus_receives_the_last_dpu() {
    const WORDS: usize = 1 << 16;
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let profile = CString::new(PROFILE).expect("no NUL");
    let heap = CString::new(upmem_sim::MRAM_HEAP).expect("no NUL");
    let kernel = empty_kernel("aliasing-kernel");
    let mut set = <dpu_set_t as SetParts>::empty();
    let sources: Vec<Vec<u64>> = (0..NR_DPUS).map(|dpu| vec![u64::from(dpu) + 1; WORDS]).collect();
    let mut shared = vec![0u64; WORDS];
    let bytes = WORDS * 8;
    // SAFETY: the library's C API, called as a C program would; every prepared buffer holds `bytes` bytes and
    // outlives its push.
    unsafe {
        check(dpu_alloc(NR_DPUS, profile.as_ptr(), &mut set), "dpu_alloc");
        check(dpu_load(set, kernel.as_ptr(), std::ptr::null_mut()), "dpu_load");
        let dpus = dpus_of(set);
        for (dpu, buffer) in dpus.iter().zip(&sources) {
            check(dpu_prepare_xfer(*dpu, buffer.as_ptr().cast_mut().cast()), "dpu_prepare_xfer");
        }
        check(dpu_push_xfer(set, DPU_XFER_TO_DPU, heap.as_ptr(), 0, bytes, DPU_XFER_DEFAULT), "dpu_push_xfer to");
        for dpu in &dpus {
            check(dpu_prepare_xfer(*dpu, shared.as_mut_ptr().cast()), "dpu_prepare_xfer");
        }
        check(dpu_push_xfer(set, DPU_XFER_FROM_DPU, heap.as_ptr(), 0, bytes, DPU_XFER_DEFAULT), "dpu_push_xfer from");
        check(dpu_free(set), "dpu_free");
    }
    assert!(shared.iter().all(|word| *word == u64::from(NR_DPUS)), "the buffer holds the last DPU's words only");
}

/// The same bytes to every DPU, by `dpu_broadcast_to` or by a push whose DPUs all name one buffer, are stored
/// once: memory grows by the bytes, not by the bytes times the DPUs, and every DPU reads them back.
#[test]
fn broadcasts_are_stored_once() {
    const BYTES: usize = 4 << 20;
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let profile = CString::new(PROFILE).expect("no NUL");
    let heap = CString::new(upmem_sim::MRAM_HEAP).expect("no NUL");
    let kernel = empty_kernel("broadcast-kernel");
    let features: Vec<u8> = (0..BYTES).map(|i| (i % 253) as u8).collect();
    let mut set = <dpu_set_t as SetParts>::empty();
    let before = resident_shared_kib();
    // SAFETY: the library's C API, called as a C program would; the buffers hold BYTES bytes for each call.
    let dpus = unsafe {
        check(dpu_alloc(NR_DPUS, profile.as_ptr(), &mut set), "dpu_alloc");
        check(dpu_load(set, kernel.as_ptr(), std::ptr::null_mut()), "dpu_load");
        check(
            dpu_broadcast_to(set, heap.as_ptr(), 0, features.as_ptr().cast(), BYTES, DPU_XFER_DEFAULT),
            "dpu_broadcast_to",
        );
        let dpus = dpus_of(set);
        for dpu in &dpus {
            check(dpu_prepare_xfer(*dpu, features.as_ptr().cast_mut().cast()), "dpu_prepare_xfer");
        }
        let second = BYTES as u32;
        check(dpu_push_xfer(set, DPU_XFER_TO_DPU, heap.as_ptr(), second, BYTES, DPU_XFER_DEFAULT), "dpu_push_xfer");
        dpus
    };
    let grown = resident_shared_kib().saturating_sub(before);
    let copies = 2 * NR_DPUS as u64 * (BYTES as u64 >> 10);
    assert!(grown < 3 * (BYTES as u64 >> 10), "two broadcasts grew memory by {grown} KiB ({copies} KiB as copies)");
    let mut read = vec![0u8; 2 * BYTES];
    // SAFETY: as above.
    unsafe {
        for dpu in [dpus[0], dpus[dpus.len() - 1]] {
            check(dpu_prepare_xfer(dpu, read.as_mut_ptr().cast()), "dpu_prepare_xfer");
            check(dpu_push_xfer(dpu, DPU_XFER_FROM_DPU, heap.as_ptr(), 0, 2 * BYTES, DPU_XFER_DEFAULT), "read back");
            assert!(read[..BYTES] == features[..] && read[BYTES..] == features[..], "the DPU reads both broadcasts");
        }
        check(dpu_free(set), "dpu_free");
    }
}

/// Reading back MRAM nothing wrote, with `dpu_push_xfer` from every DPU and `dpu_copy_from`, returns zeroes and
/// takes no memory: read through the shared mapping, each page read would be committed as a zeroed page.
#[test]
fn reading_mram_nothing_wrote_takes_no_memory() {
    const BYTES: usize = 4 << 20;
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let profile = CString::new(PROFILE).expect("no NUL");
    let heap = CString::new(upmem_sim::MRAM_HEAP).expect("no NUL");
    let kernel = empty_kernel("unwritten-kernel");
    let mut buffers: Vec<Vec<u8>> = (0..NR_DPUS).map(|_| vec![0xAA; BYTES]).collect();
    let mut set = <dpu_set_t as SetParts>::empty();
    // SAFETY: the library's C API, called as a C program would.
    let dpus = unsafe {
        check(dpu_alloc(NR_DPUS, profile.as_ptr(), &mut set), "dpu_alloc");
        check(dpu_load(set, kernel.as_ptr(), std::ptr::null_mut()), "dpu_load");
        dpus_of(set)
    };
    let before = resident_shared_kib();
    // SAFETY: every prepared buffer holds BYTES writable bytes and outlives the push; the last one receives
    // `dpu_copy_from`'s BYTES bytes.
    unsafe {
        for (dpu, buffer) in dpus.iter().zip(&mut buffers) {
            check(dpu_prepare_xfer(*dpu, buffer.as_mut_ptr().cast()), "dpu_prepare_xfer");
        }
        check(dpu_push_xfer(set, DPU_XFER_FROM_DPU, heap.as_ptr(), 0, BYTES, DPU_XFER_DEFAULT), "dpu_push_xfer from");
        let last = buffers.last_mut().expect("a buffer per DPU");
        last.fill(0xAA);
        check(dpu_copy_from(dpus[0], heap.as_ptr(), BYTES as u32, last.as_mut_ptr().cast(), BYTES), "dpu_copy_from");
    }
    let grown = resident_shared_kib().saturating_sub(before);
    // SAFETY: the set came from dpu_alloc and is freed once.
    check(unsafe { dpu_free(set) }, "dpu_free");
    let zeroes = vec![0u8; BYTES];
    assert!(buffers.iter().all(|buffer| *buffer == zeroes), "MRAM nothing wrote reads as zeroes");
    let read = (NR_DPUS as u64 + 1) * (BYTES as u64 >> 10);
    assert!(grown < SLACK_KIB, "reading {read} KiB that nothing wrote grew shared memory by {grown} KiB");
}

/// The names in a directory.
fn entries(dir: &Path) -> Vec<String> {
    let listing = std::fs::read_dir(dir).unwrap_or_else(|error| panic!("listing {}: {error}", dir.display()));
    listing.map(|entry| entry.expect("a directory entry").file_name().to_string_lossy().into_owned()).collect()
}

/// A process that loads a program from memory and ends without `dpu_free` (libdpu's server, and the program
/// with it, is never dropped) leaves nothing in `TMPDIR`; nor does any file exist while the program runs, so a
/// crash would leave none either.
#[test]
fn a_program_loaded_from_memory_leaves_no_file_behind() {
    const NAME: &str = "a_program_loaded_from_memory_leaves_no_file_behind";
    if let Some(kernel) = std::env::var_os(CHILD_KERNEL) {
        load_from_memory_and_exit(Path::new(&kernel));
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let kernel = empty_kernel("from-memory-kernel");
    let tmpdir = tempfile::tempdir().expect("a temporary directory");
    let child = Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD_KERNEL, kernel.to_str().expect("UTF-8 path"))
        .env("TMPDIR", tmpdir.path())
        .output()
        .expect("running this test binary again");
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(child.status.success(), "the child failed ({}):\n{stderr}", child.status);
    assert_eq!(entries(tmpdir.path()), Vec::<String>::new(), "left in TMPDIR by a process that loaded from memory");
}

/// The child of [`a_program_loaded_from_memory_leaves_no_file_behind`]: loads `kernel` from memory into 64
/// DPUs, launches it, checks that `TMPDIR` is empty while the workers run it, and exits with the set allocated.
fn load_from_memory_and_exit(kernel: &Path) -> ! {
    let mut bytes = std::fs::read(kernel).unwrap_or_else(|error| panic!("reading {}: {error}", kernel.display()));
    let profile = CString::new(PROFILE).expect("no NUL");
    let mut set = <dpu_set_t as SetParts>::empty();
    // SAFETY: the library's C API, called as a C program would; `bytes` holds the program for the load.
    unsafe {
        check(dpu_alloc(NR_DPUS, profile.as_ptr(), &mut set), "dpu_alloc");
        check(dpu_load_from_memory(set, bytes.as_mut_ptr(), bytes.len(), std::ptr::null_mut()), "dpu_load_from_memory");
        check(dpu_launch(set, DPU_SYNCHRONOUS), "dpu_launch");
    }
    let named = entries(&std::env::temp_dir());
    if !named.is_empty() {
        eprintln!("while the program runs, TMPDIR holds {named:?}");
        std::process::exit(1);
    }
    std::process::exit(0);
}
