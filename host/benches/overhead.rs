//! What the safe API costs over the simulator core: a parallel push of 1 MiB to each of 2,048 DPUs through
//! `LoadedSet::push`, next to the same copies made directly with `Machine::write` from all cores on a machine of
//! the same shape, in one run.
//! Run with `cargo bench -p upmem --bench overhead`. With `PIMGNN_BENCH_QUICK=1`, the same with 256 KiB to each
//! of 128 DPUs, timed once.

#[path = "../../fallback_sim/benches/support/quick.rs"]
mod quick;
/// The command line's table style, so that every benchmark prints as `pimgnn` does.
#[path = "../../src/cli/table.rs"]
mod table;

use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use upmem::sim::{Machine, Program, SimConfig};
use upmem::{BackendKind, DpuSet, MemoryKind, Topology};

/// DPUs pushed to (in ranks of 64).
fn nr_dpus() -> u32 {
    quick::pick(2048, 128)
}

/// Bytes pushed to each DPU.
fn bytes_per_dpu() -> usize {
    quick::pick(1 << 20, 256 << 10)
}

/// Timings of each push (the median is reported).
fn repeats() -> usize {
    quick::pick(5, 1)
}

fn median(mut run: impl FnMut() -> anyhow::Result<Duration>) -> anyhow::Result<Duration> {
    let repeats = repeats();
    let mut times = (0..repeats).map(|_| run()).collect::<anyhow::Result<Vec<_>>>()?;
    times.sort();
    Ok(times[repeats / 2])
}

/// `bytes` for a table: `1 MiB`, `256 KiB`.
fn size(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

fn main() -> anyhow::Result<()> {
    let (nr_dpus, bytes_per_dpu, repeats) = (nr_dpus(), bytes_per_dpu(), repeats());
    let dir = tempfile::tempdir()?;
    let source = dir.path().join("hold.c");
    std::fs::write(
        &source,
        "#include <defs.h>\n#include <stdint.h>\n__host uint64_t value;\nint main(void) { return 0; }\n",
    )?;
    let kernel = upmem::build::kernel_into("hold", upmem::build::KernelBuilder::new().source(&source), dir.path())?;
    let machine = || SimConfig::new(Topology::new(nr_dpus.div_ceil(64), 64));
    let mut set = DpuSet::builder()
        .dpus(nr_dpus)
        .backend(BackendKind::Simulator)
        .simulator(machine())
        .allocate()?
        .load(&kernel)?;
    let buffers: Vec<Vec<u8>> = (0..nr_dpus).map(|dpu| vec![dpu as u8; bytes_per_dpu]).collect();
    let heap = set.symbol(upmem::MRAM_HEAP)?;
    let heap_offset = heap.offset();

    eprintln!(
        "pushing {} to each of {nr_dpus} DPUs through the safe API, then through the core ({repeats} times each)...",
        size(bytes_per_dpu)
    );
    // Both paths write the same bytes to the same DPUs, so every measured push lands in memory that exists.
    set.push(upmem::MRAM_HEAP, 0, &buffers)?;
    let safe = median(|| {
        let started = Instant::now();
        set.push(upmem::MRAM_HEAP, 0, &buffers)?;
        Ok(started.elapsed())
    })?;
    // The set's memory is freed before the core's machine holds the same bytes.
    drop(set);
    let mut machine = Machine::new(machine())?;
    let dpus: Vec<u32> = machine.topology().enabled_dpus().collect();
    let binary = kernel.simulator_binary(upmem::ChipVersion::V1A).expect("the kernel's simulator build");
    machine.load(&dpus, &Arc::new(Program::from_file(binary)?))?;
    let raw_push = || {
        dpus.par_iter()
            .zip(&buffers)
            .try_for_each(|(&dpu, buffer)| machine.write(dpu, MemoryKind::Mram, heap_offset, buffer))
    };
    raw_push()?;
    let raw = median(|| {
        let started = Instant::now();
        raw_push()?;
        Ok(started.elapsed())
    })?;

    let gigabytes = (bytes_per_dpu * nr_dpus as usize) as f64 / 1e9;
    let header = format!("{} to each of {nr_dpus} DPUs", size(bytes_per_dpu));
    let mut table = table::with_header([header.as_str(), "time", "GB/s"]);
    table.add_row([
        "upmem: LoadedSet::push".to_owned(),
        format!("{:.1} ms", safe.as_secs_f64() * 1e3),
        format!("{:.2}", gigabytes / safe.as_secs_f64()),
    ]);
    table.add_row([
        "upmem-sim core: Machine::write, all cores".to_owned(),
        format!("{:.1} ms", raw.as_secs_f64() * 1e3),
        format!("{:.2}", gigabytes / raw.as_secs_f64()),
    ]);
    table.add_row([
        "overhead of the safe API".to_owned(),
        format!("{:+.1} %", (safe.as_secs_f64() / raw.as_secs_f64() - 1.0) * 100.0),
        String::new(),
    ]);
    table::fit_to_terminal(&mut table);
    println!("{table}");
    Ok(())
}
