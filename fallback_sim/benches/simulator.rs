//! Simulator benchmarks: what a launch costs, how fast simulated DMA is next to the host's memcpy, and a full
//! MRAM sweep. Run with `cargo bench -p upmem-sim --bench simulator`; it prints a table. With
//! `PIMGNN_BENCH_QUICK=1`, the same on 64 DPUs, 1 MiB regions read twice, an 8 MiB sweep and one timing each.

#[path = "support/quick.rs"]
mod quick;
/// The command line's table style, so that every benchmark prints as `pimgnn` does.
#[path = "../../src/cli/table.rs"]
mod table;

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use upmem_sim::{
    KernelBuilder, Machine, MemoryKind, Program, SimConfig, SimulatedBuild as _, Topology, CLOCK_HZ, MRAM_HEAP,
};

const BLOCK_BYTES: u32 = 2048;

/// Timings of each measurement (the median is reported).
fn repeats() -> usize {
    quick::pick(5, 1)
}

/// The machine of the launch benchmark: a full server (quick: one rank).
fn launch_topology() -> Topology {
    quick::pick(Topology::full_server(), Topology::new(1, 64))
}

/// The MRAM region each DPU streams in the DMA benchmark, read `stream_passes()` times.
fn stream_region() -> u32 {
    quick::pick(8 << 20, 1 << 20)
}

fn stream_passes() -> u32 {
    quick::pick(8, 2)
}

/// The most MRAM the sweep reads: all of it (quick: 8 MiB).
fn sweep_limit() -> u32 {
    quick::pick(u32::MAX, 8 << 20)
}

fn build(name: &str, nr_tasklets: u32) -> anyhow::Result<Arc<Program>> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/kernels").join(format!("{name}.c"));
    let output = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-{name}-{nr_tasklets}.dpusim"));
    KernelBuilder::new().source(source).nr_tasklets(nr_tasklets).flag("-O2").build(&output)?;
    Ok(Arc::new(Program::from_file(output)?))
}

/// Median of `repeats()` timings of `run`.
fn median(mut run: impl FnMut() -> anyhow::Result<Duration>) -> anyhow::Result<Duration> {
    let repeats = repeats();
    let mut times = (0..repeats).map(|_| run()).collect::<anyhow::Result<Vec<_>>>()?;
    times.sort();
    Ok(times[repeats / 2])
}

fn gigabytes_per_second(bytes: u64, time: Duration) -> f64 {
    bytes as f64 / time.as_secs_f64() / 1e9
}

fn fill_heap(machine: &Machine, dpus: &[u32], bytes: u32) -> anyhow::Result<()> {
    let data: Vec<u8> = (0..bytes).map(|i| (i * 31 % 251) as u8).collect();
    for &dpu in dpus {
        let heap = machine.symbol(dpu, MRAM_HEAP)?;
        machine.write(dpu, MemoryKind::Mram, heap.offset(), &data)?;
    }
    Ok(())
}

fn set(machine: &Machine, dpus: &[u32], name: &str, value: u32) -> anyhow::Result<()> {
    for &dpu in dpus {
        machine.write_symbol(dpu, name, 0, &value.to_le_bytes())?;
    }
    Ok(())
}

/// The host doing what the simulated DPUs do, with the same working set and threads: `threads` threads copy
/// `nr_regions` regions of `stream_region()` bytes (region r by thread r % threads), `stream_passes()` times each,
/// block by block into a small buffer. Returns GB/s per thread.
fn memcpy_rate(nr_regions: usize, threads: usize) -> f64 {
    let (region_bytes, passes) = (stream_region(), stream_passes());
    let regions: Vec<Vec<u64>> =
        (0..nr_regions as u64).map(|r| (0..u64::from(region_bytes) / 8).map(|i| i ^ r).collect()).collect();
    let copy_regions = |thread: usize| {
        let mut block = [0u64; BLOCK_BYTES as usize / 8];
        let words = block.len();
        let mut checksum = 0u64;
        for region in regions.iter().skip(thread).step_by(threads) {
            for _ in 0..passes {
                for chunk in region.chunks_exact(words) {
                    block.copy_from_slice(black_box(chunk));
                    checksum ^= black_box(&block)[0] + block[words - 1];
                }
            }
        }
        black_box(checksum);
    };
    let time = median(|| {
        let started = Instant::now();
        std::thread::scope(|scope| {
            for thread in 0..threads {
                scope.spawn(move || copy_regions(thread));
            }
        });
        Ok(started.elapsed())
    })
    .expect("timing memcpy");
    let bytes = u64::from(region_bytes) * u64::from(passes) * nr_regions as u64;
    gigabytes_per_second(bytes, time) / threads as f64
}

fn main() -> anyhow::Result<()> {
    let workers = SimConfig::new(Topology::new(1, 1)).workers;
    let mut table = table::with_header(["benchmark", "result", "baseline / detail"]);

    // (a) An empty kernel on a full server.
    let empty = build("empty", 16)?;
    let mut machine = Machine::new(SimConfig::new(launch_topology()))?;
    let dpus: Vec<u32> = machine.topology().enabled_dpus().collect();
    eprintln!("[1/3] launching an empty kernel on {} DPUs ({} times)...", dpus.len(), repeats());
    machine.load(&dpus, &empty)?;
    machine.launch(&dpus)?; // starts the workers
    let launch = median(|| {
        let started = Instant::now();
        machine.launch(&dpus)?;
        Ok(started.elapsed())
    })?;
    let per_dpu = launch.as_secs_f64() * 1e6 / dpus.len() as f64;
    table.add_row([
        format!("empty kernel, {} DPUs x 16 tasklets", dpus.len()),
        format!("{per_dpu:.2} µs per DPU (launch {:.1} ms)", launch.as_secs_f64() * 1e3),
        format!("{:.2} µs of worker time per DPU ({workers} workers)", per_dpu * workers as f64),
    ]);
    drop(machine);

    // (b) mram_read of 2,048-byte blocks against the host's memcpy of the same blocks.
    eprintln!("[2/3] streaming MRAM through mram_read and through memcpy...");
    let stream = build("stream", 16)?;
    let mut machine = Machine::new(SimConfig::new(Topology::new(1, 2 * workers as u32)))?;
    let dpus: Vec<u32> = machine.topology().enabled_dpus().collect();
    machine.load(&dpus, &stream)?;
    let (region_bytes, passes) = (stream_region(), stream_passes());
    fill_heap(&machine, &dpus, region_bytes)?;
    set(&machine, &dpus, "bytes", region_bytes)?;
    set(&machine, &dpus, "block_bytes", BLOCK_BYTES)?;
    set(&machine, &dpus, "passes", passes)?;
    machine.launch(&dpus)?;
    let streamed = median(|| {
        let started = Instant::now();
        machine.launch(&dpus)?;
        Ok(started.elapsed())
    })?;
    let total_bytes = u64::from(region_bytes) * u64::from(passes) * dpus.len() as u64;
    let read: u64 =
        dpus.iter().map(|&dpu| machine.stats(dpu).map(|stats| stats.total().dma_read_bytes)).sum::<Result<_, _>>()?;
    anyhow::ensure!(read == total_bytes, "the DPUs read {read} bytes, expected {total_bytes}");
    let per_worker = gigabytes_per_second(total_bytes, streamed) / workers as f64;
    let memcpy = memcpy_rate(dpus.len(), workers);
    table.add_row([
        format!("mram_read of {BLOCK_BYTES}-byte blocks, {} DPUs x 16 tasklets", dpus.len()),
        format!("{per_worker:.2} GB/s per worker = {:.2} x memcpy", per_worker / memcpy),
        format!(
            "host memcpy of the same blocks from {} regions of {} MiB: {memcpy:.2} GB/s per thread ({workers} threads)",
            dpus.len(),
            region_bytes >> 20
        ),
    ]);
    drop(machine);

    // (c) One DPU reading its whole MRAM with 16 tasklets.
    let mut machine = Machine::new(SimConfig::new(Topology::new(1, 1)))?;
    machine.load(&[0], &stream)?;
    let heap = machine.symbol(0, MRAM_HEAP)?;
    let sweep = (heap.size.min(sweep_limit()) / BLOCK_BYTES) * BLOCK_BYTES;
    let whole = sweep == (heap.size / BLOCK_BYTES) * BLOCK_BYTES;
    let what = if whole { "a whole" } else { "part of a" };
    eprintln!("[3/3] reading {what} MRAM ({} MiB)...", sweep >> 20);
    fill_heap(&machine, &[0], sweep)?;
    set(&machine, &[0], "bytes", sweep)?;
    set(&machine, &[0], "block_bytes", BLOCK_BYTES)?;
    set(&machine, &[0], "passes", 1)?;
    let full = median(|| {
        let started = Instant::now();
        machine.launch(&[0])?;
        Ok(started.elapsed())
    })?;
    let stats = machine.stats(0)?;
    table.add_row([
        format!("{} MRAM read ({} MiB) by 16 tasklets, 1 DPU", if whole { "full" } else { "partial" }, sweep >> 20),
        format!("{:.1} ms = {:.2} GB/s", full.as_secs_f64() * 1e3, gigabytes_per_second(u64::from(sweep), full)),
        format!(
            "modelled DPU time {:.1} ms ({} cycles at {} MHz, {} of them with the DMA engine busy)",
            stats.cycles as f64 / CLOCK_HZ as f64 * 1e3,
            stats.cycles,
            CLOCK_HZ / 1_000_000,
            stats.dma_cycles
        ),
    ]);
    table::fit_to_terminal(&mut table);
    println!("{table}");
    Ok(())
}
