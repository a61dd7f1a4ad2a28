//! libdpu over the simulator: `dpu_push_xfer` of 1 MiB to each of 2,048 DPUs next to the host's `memcpy` of the
//! same bytes (the first push, into fresh memory, also next to a `memcpy` into fresh shared memory), the same
//! bytes read back, and 1 MiB of MRAM nothing wrote read from each DPU (its time and resident memory), the rate of
//! small `dpu_copy_to` calls, and a 48 MiB `dpu_broadcast_to` to 2,048 DPUs, first and repeated with new bytes
//! (its resident memory and time next to one `memcpy` of 48 MiB). Run with
//! `cargo bench -p upmem-sim-sdk --bench libdpu`. With `PIMGNN_BENCH_QUICK=1`, the same with 256 KiB to each of
//! 128 DPUs, 1,000 small calls, a 4 MiB broadcast and one timing each.

#[path = "../../benches/support/quick.rs"]
mod quick;
/// The command line's table style, so that every benchmark prints as `pimgnn` does.
#[path = "../../../src/cli/table.rs"]
mod table;

use std::ffi::{c_char, c_void, CString};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use dpu::types::{
    dpu_error_t, dpu_set_dpu_iterator_t, dpu_set_t, SetParts, DPU_XFER_DEFAULT, DPU_XFER_FROM_DPU, DPU_XFER_TO_DPU,
};
use rayon::prelude::*;
use upmem_sim::{KernelBuilder, SimulatedBuild as _};

extern "C" {
    fn dpu_alloc(nr_dpus: u32, profile: *const c_char, set: *mut dpu_set_t) -> dpu_error_t;
    fn dpu_free(set: dpu_set_t) -> dpu_error_t;
    fn dpu_load(set: dpu_set_t, path: *const c_char, program: *mut *mut c_void) -> dpu_error_t;
    fn dpu_prepare_xfer(set: dpu_set_t, buffer: *mut c_void) -> dpu_error_t;
    fn dpu_push_xfer(
        set: dpu_set_t,
        xfer: u32,
        symbol: *const c_char,
        offset: u32,
        length: usize,
        flags: u32,
    ) -> dpu_error_t;
    fn dpu_broadcast_to(
        set: dpu_set_t,
        symbol: *const c_char,
        offset: u32,
        source: *const c_void,
        length: usize,
        flags: u32,
    ) -> dpu_error_t;
    fn dpu_copy_to(
        set: dpu_set_t,
        symbol: *const c_char,
        offset: u32,
        source: *const c_void,
        length: usize,
    ) -> dpu_error_t;
    fn dpu_set_dpu_iterator_from(set: *mut dpu_set_t) -> dpu_set_dpu_iterator_t;
    fn dpu_set_dpu_iterator_next(iterator: *mut dpu_set_dpu_iterator_t);
}

/// DPUs of the pushes and broadcasts (in ranks of 64).
fn nr_dpus() -> u32 {
    quick::pick(2048, 128)
}

/// Bytes pushed to and read from each DPU.
fn bytes_per_dpu() -> usize {
    quick::pick(1 << 20, 256 << 10)
}

/// Calls of `dpu_copy_to` to one DPU.
fn small_copies() -> u32 {
    quick::pick(10_000, 1_000)
}

/// Timings of each measurement (the median is reported).
fn repeats() -> usize {
    quick::pick(3, 1)
}

/// Bytes of the broadcast.
fn broadcast_bytes() -> usize {
    quick::pick(48 << 20, 4 << 20)
}

/// `bytes` for a table: `96 GiB`, `1 MiB`, `256 KiB`.
fn size(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

fn check(status: dpu_error_t, what: &str) {
    assert_eq!(status, 0, "{what} failed with DPU error {status}");
}

fn median(mut run: impl FnMut() -> Duration) -> Duration {
    let repeats = repeats();
    let mut times: Vec<Duration> = (0..repeats).map(|_| run()).collect();
    times.sort();
    times[repeats / 2]
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

fn main() -> anyhow::Result<()> {
    let (nr_dpus, bytes_per_dpu, small_copies, broadcast_bytes) =
        (nr_dpus(), bytes_per_dpu(), small_copies(), broadcast_bytes());
    let kernel = Path::new(env!("CARGO_TARGET_TMPDIR")).join("libdpu-bench-kernel");
    let source = Path::new(env!("CARGO_TARGET_TMPDIR")).join("libdpu-bench-kernel.c");
    std::fs::write(
        &source,
        "#include <stdint.h>\n#include <defs.h>\n__host uint64_t value;\nint main(void) { return 0; }\n",
    )?;
    KernelBuilder::new().source(&source).build(&kernel)?;
    let kernel = CString::new(kernel.to_str().expect("UTF-8 path"))?;
    let heap = CString::new(upmem_sim::MRAM_HEAP)?;
    let value = CString::new("value")?;
    let profile = CString::new(format!("nrRanks={},nrDpusPerRank=64", nr_dpus.div_ceil(64)))?;

    let mut set = <dpu_set_t as SetParts>::empty();
    // SAFETY: the library's C API, called as a C program would.
    unsafe {
        check(dpu_alloc(nr_dpus, profile.as_ptr(), &mut set), "dpu_alloc");
        check(dpu_load(set, kernel.as_ptr(), std::ptr::null_mut()), "dpu_load");
    }
    let dpus = dpus_of(set);
    assert_eq!(dpus.len() as u32, nr_dpus);
    let sources: Vec<Vec<u8>> = (0..nr_dpus).map(|dpu| vec![dpu as u8; bytes_per_dpu]).collect();
    let push = || {
        let started = Instant::now();
        // SAFETY: each prepared buffer holds bytes_per_dpu bytes and outlives the push.
        unsafe {
            for (dpu, buffer) in dpus.iter().zip(&sources) {
                check(dpu_prepare_xfer(*dpu, buffer.as_ptr().cast_mut().cast()), "dpu_prepare_xfer");
            }
            check(
                dpu_push_xfer(set, DPU_XFER_TO_DPU, heap.as_ptr(), 0, bytes_per_dpu, DPU_XFER_DEFAULT),
                "dpu_push_xfer",
            );
        }
        started.elapsed()
    };
    eprintln!("[1/5] dpu_push_xfer of {} to each of {nr_dpus} DPUs...", size(bytes_per_dpu));
    let cold = push();
    let warm = median(push);

    eprintln!("[2/5] dpu_push_xfer of {} from each of {nr_dpus} DPUs...", size(bytes_per_dpu));
    let mut read_back: Vec<Vec<u8>> = (0..nr_dpus).map(|_| vec![1u8; bytes_per_dpu]).collect();
    let pull = |buffers: &mut [Vec<u8>], offset: u32| {
        let started = Instant::now();
        // SAFETY: each prepared buffer holds bytes_per_dpu writable bytes and outlives the push.
        unsafe {
            for (dpu, buffer) in dpus.iter().zip(buffers) {
                check(dpu_prepare_xfer(*dpu, buffer.as_mut_ptr().cast()), "dpu_prepare_xfer");
            }
            check(
                dpu_push_xfer(set, DPU_XFER_FROM_DPU, heap.as_ptr(), offset, bytes_per_dpu, DPU_XFER_DEFAULT),
                "dpu_push_xfer",
            );
        }
        started.elapsed()
    };
    let pulled = median(|| pull(&mut read_back, 0));
    assert!(read_back == sources, "the bytes pushed read back");
    // Once: the pages of MRAM nothing wrote are not that any more if a read commits them.
    let before_unwritten = resident_shared_mib();
    let unwritten = pull(&mut read_back, bytes_per_dpu as u32);
    let grown_unwritten = resident_shared_mib() - before_unwritten;
    assert!(read_back.iter().all(|bytes| bytes.iter().all(|&byte| byte == 0)), "MRAM nothing wrote reads as zeroes");
    drop(read_back);

    eprintln!("[3/5] memcpy of the same bytes...");
    // Into shared memory the process has not touched yet, as the first push's is: each fresh page costs the
    // kernel's work to commit it, whoever copies.
    let fresh_shared = {
        let length = bytes_per_dpu * nr_dpus as usize;
        // SAFETY: a new shared anonymous mapping, unmapped below; nothing else refers to it.
        let mapping = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                length,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(mapping, libc::MAP_FAILED, "mapping {length} bytes of shared memory");
        // SAFETY: the mapping is `length` writable bytes, only used through this slice until it is unmapped.
        let fresh = unsafe { std::slice::from_raw_parts_mut(mapping.cast::<u8>(), length) };
        let started = Instant::now();
        fresh.par_chunks_mut(bytes_per_dpu).zip(&sources).for_each(|(destination, source)| {
            destination.copy_from_slice(source);
        });
        black_box(&fresh);
        let elapsed = started.elapsed();
        // SAFETY: unmapping the mapping made above; `fresh` is not used again.
        unsafe { libc::munmap(mapping, length) };
        elapsed
    };
    let mut destinations: Vec<Vec<u8>> = (0..nr_dpus).map(|_| vec![0u8; bytes_per_dpu]).collect();
    let serial = median(|| {
        let started = Instant::now();
        for (destination, source) in destinations.iter_mut().zip(&sources) {
            destination.copy_from_slice(black_box(source));
        }
        black_box(&destinations);
        started.elapsed()
    });
    let parallel = median(|| {
        let started = Instant::now();
        destinations.par_iter_mut().zip(&sources).for_each(|(destination, source)| destination.copy_from_slice(source));
        black_box(&destinations);
        started.elapsed()
    });

    eprintln!("[4/5] small dpu_copy_to calls...");
    let word = 42u64;
    let small = |target: dpu_set_t| {
        let started = Instant::now();
        for _ in 0..small_copies {
            // SAFETY: 8 readable bytes for an 8-byte __host symbol.
            check(unsafe { dpu_copy_to(target, value.as_ptr(), 0, (&word as *const u64).cast(), 8) }, "dpu_copy_to");
        }
        f64::from(small_copies) / started.elapsed().as_secs_f64()
    };
    let one_dpu = small(dpus[0]);
    let whole_set = {
        let started = Instant::now();
        for _ in 0..100 {
            // SAFETY: as above.
            check(unsafe { dpu_copy_to(set, value.as_ptr(), 0, (&word as *const u64).cast(), 8) }, "dpu_copy_to");
        }
        100.0 / started.elapsed().as_secs_f64()
    };
    // SAFETY: the set came from dpu_alloc.
    check(unsafe { dpu_free(set) }, "dpu_free");

    eprintln!("[5/5] dpu_broadcast_to of {} to {nr_dpus} DPUs...", size(broadcast_bytes));
    let features: Vec<u8> = (0..broadcast_bytes).map(|i| (i % 251) as u8).collect();
    let mut copy = vec![0u8; broadcast_bytes];
    copy.copy_from_slice(&features);
    let one_memcpy = median(|| {
        let started = Instant::now();
        copy.copy_from_slice(black_box(&features));
        black_box(&copy);
        started.elapsed()
    });
    // Into memory the process has not touched yet, as the broadcast's one copy is.
    let fresh_memcpy = median(|| {
        let started = Instant::now();
        let mut fresh = Vec::with_capacity(broadcast_bytes);
        fresh.extend_from_slice(black_box(&features));
        black_box(&fresh);
        started.elapsed()
    });
    let before = resident_shared_mib();
    // SAFETY: as above; `features` holds broadcast_bytes bytes for the call.
    unsafe {
        check(dpu_alloc(nr_dpus, profile.as_ptr(), &mut set), "dpu_alloc");
        check(dpu_load(set, kernel.as_ptr(), std::ptr::null_mut()), "dpu_load");
    }
    let broadcast = |bytes: &[u8]| {
        let started = Instant::now();
        // SAFETY: as above; `bytes` holds broadcast_bytes bytes for the call.
        check(
            unsafe {
                dpu_broadcast_to(set, heap.as_ptr(), 0, bytes.as_ptr().cast(), broadcast_bytes, DPU_XFER_DEFAULT)
            },
            "dpu_broadcast_to",
        );
        started.elapsed()
    };
    let broadcast_time = broadcast(&features);
    let grown = resident_shared_mib() - before;
    // The same DPUs and range with new bytes, as a GNN sends each layer's features.
    let next_features: Vec<u8> = features.iter().map(|byte| byte ^ 0x5A).collect();
    let mut layer = 0;
    let repeated_time = median(|| {
        layer += 1;
        broadcast(if layer % 2 == 1 { &next_features } else { &features })
    });
    let grown_repeated = resident_shared_mib() - before;
    // SAFETY: the set came from dpu_alloc.
    check(unsafe { dpu_free(set) }, "dpu_free");

    let total = (bytes_per_dpu * nr_dpus as usize) as f64;
    let rate = |time: Duration| total / time.as_secs_f64() / 1e9;
    let mut table = table::with_header(["benchmark", "result", "baseline"]);
    table.add_row([
        format!("dpu_push_xfer {} to each of {nr_dpus} DPUs", size(bytes_per_dpu)),
        format!(
            "{:.2} GB/s ({:.0} ms); first push into fresh memory {:.2} GB/s ({:.2}x)",
            rate(warm),
            warm.as_secs_f64() * 1e3,
            rate(cold),
            warm.as_secs_f64() / cold.as_secs_f64()
        ),
        format!(
            "memcpy of the same bytes: {:.2} GB/s one thread ({:.2}x), {:.2} GB/s all cores ({:.2}x); into fresh \
             shared memory on all cores {:.2} GB/s (first push {:.2}x)",
            rate(serial),
            serial.as_secs_f64() / warm.as_secs_f64(),
            rate(parallel),
            parallel.as_secs_f64() / warm.as_secs_f64(),
            rate(fresh_shared),
            fresh_shared.as_secs_f64() / cold.as_secs_f64()
        ),
    ]);
    table.add_row([
        format!("dpu_push_xfer {} from each of {nr_dpus} DPUs", size(bytes_per_dpu)),
        format!(
            "{:.2} GB/s ({:.0} ms); from MRAM nothing wrote {:.2} GB/s, resident memory +{grown_unwritten:.0} MiB",
            rate(pulled),
            pulled.as_secs_f64() * 1e3,
            rate(unwritten)
        ),
        format!(
            "memcpy of the same bytes on all cores: {:.2} GB/s ({:.2}x)",
            rate(parallel),
            parallel.as_secs_f64() / pulled.as_secs_f64()
        ),
    ]);
    table.add_row([
        format!("dpu_copy_to of 8 bytes, {small_copies} calls"),
        format!("{one_dpu:.0} calls/s to one DPU"),
        format!("{whole_set:.0} calls/s broadcasting to all {nr_dpus} DPUs"),
    ]);
    table.add_row([
        format!(
            "dpu_broadcast_to of {} to {nr_dpus} DPUs ({} as copies)",
            size(broadcast_bytes),
            size(broadcast_bytes * nr_dpus as usize)
        ),
        format!("{:.1} ms, resident memory +{grown:.0} MiB", broadcast_time.as_secs_f64() * 1e3),
        format!(
            "one memcpy of {}: {:.1} ms ({:.2}x); into fresh memory {:.1} ms ({:.2}x)",
            size(broadcast_bytes),
            one_memcpy.as_secs_f64() * 1e3,
            broadcast_time.as_secs_f64() / one_memcpy.as_secs_f64(),
            fresh_memcpy.as_secs_f64() * 1e3,
            broadcast_time.as_secs_f64() / fresh_memcpy.as_secs_f64()
        ),
    ]);
    table.add_row([
        format!("dpu_broadcast_to of {} to the same {nr_dpus} DPUs again, new bytes", size(broadcast_bytes)),
        format!("{:.1} ms, resident memory +{grown_repeated:.0} MiB in all", repeated_time.as_secs_f64() * 1e3),
        format!(
            "one memcpy of {}: {:.1} ms ({:.2}x)",
            size(broadcast_bytes),
            one_memcpy.as_secs_f64() * 1e3,
            repeated_time.as_secs_f64() / one_memcpy.as_secs_f64()
        ),
    ]);
    table::fit_to_terminal(&mut table);
    println!("{table}");
    Ok(())
}

/// This process's resident shared memory in MiB (`RssShmem`), where the simulated DPUs' memories live.
fn resident_shared_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("reading /proc/self/status");
    let line = status.lines().find(|line| line.starts_with("RssShmem:")).expect("RssShmem in /proc/self/status");
    let kib: f64 = line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("RssShmem in kB");
    kib / 1024.0
}
