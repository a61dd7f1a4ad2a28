//! What the safe API costs over the simulator core: a parallel push of 1 MiB to each of 2,048 DPUs through
//! `LoadedSet::push`, next to the same copies made directly with `Machine::write` from all cores on a machine of
//! the same shape, in one run.
//! Run with `cargo bench -p upmem --bench overhead`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use comfy_table::{presets::UTF8_FULL, Table};
use rayon::prelude::*;
use upmem::sim::{Machine, Program, SimConfig};
use upmem::{BackendKind, DpuSet, MemoryKind, Topology};

const NR_DPUS: u32 = 2048;
const BYTES_PER_DPU: usize = 1 << 20;
const REPEATS: usize = 5;

fn median(mut run: impl FnMut() -> anyhow::Result<Duration>) -> anyhow::Result<Duration> {
    let mut times = (0..REPEATS).map(|_| run()).collect::<anyhow::Result<Vec<_>>>()?;
    times.sort();
    Ok(times[REPEATS / 2])
}

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let source = dir.path().join("hold.c");
    std::fs::write(
        &source,
        "#include <defs.h>\n#include <stdint.h>\n__host uint64_t value;\nint main(void) { return 0; }\n",
    )?;
    let kernel = upmem::build::kernel_into("hold", upmem::build::KernelBuilder::new().source(&source), dir.path())?;
    let machine = || SimConfig::new(Topology::new(NR_DPUS / 64, 64));
    let mut set = DpuSet::builder()
        .dpus(NR_DPUS)
        .backend(BackendKind::Simulator)
        .simulator(machine())
        .allocate()?
        .load(&kernel)?;
    let buffers: Vec<Vec<u8>> = (0..NR_DPUS).map(|dpu| vec![dpu as u8; BYTES_PER_DPU]).collect();
    let heap = set.symbol(upmem::MRAM_HEAP)?;
    let heap_offset = heap.offset();

    eprintln!(
        "pushing 1 MiB to each of {NR_DPUS} DPUs through the safe API, then through the core ({REPEATS} times each)..."
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

    let gigabytes = (BYTES_PER_DPU * NR_DPUS as usize) as f64 / 1e9;
    let mut table = Table::new();
    table.load_preset(UTF8_FULL).set_header(["1 MiB to each of 2,048 DPUs", "time", "GB/s"]);
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
    println!("{table}");
    Ok(())
}
