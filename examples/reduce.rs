//! Sums 64-bit integers across thousands of DPUs and checks the result against the CPU.
//!
//! Every DPU gets its own slice of the input in MRAM; 16 tasklets per DPU stream it through WRAM in 2 KiB
//! DMA blocks (`dpu/reduce.c`); the host adds the per-DPU sums. Runs on the simulator without hardware, and
//! prints where the time went and how evenly the DPUs were loaded.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context as _};
use clap::Parser;
use upmem::sim::SimConfig;
use upmem::{BackendKind, DpuSet, DpuSetBuilder, LoadedSet, Topology, MRAM_HEAP};

/// The command line's table style, so that the example prints as `pimgnn` does.
#[path = "../src/cli/table.rs"]
mod table;

#[derive(Parser)]
#[command(about = "Sum 64-bit integers across UPMEM DPUs (simulated when there is no hardware)")]
struct Args {
    /// DPUs to use (default: every DPU the machine has: the free ones on hardware, the simulated server's 2,044).
    #[arg(long)]
    dpus: Option<u32>,
    /// Integers per DPU.
    #[arg(long, default_value_t = 65_536)]
    elements: u32,
    /// Backend: auto (hardware if present), hw, or sim.
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
}

/// Enabled DPUs of the simulated server without `--dpus`: 32 ranks of 64 with 4 disabled.
const SIMULATED_DPUS: u32 = 2044;

/// DPUs that real servers typically report disabled, as positions in a 40-rank server.
const DISABLED_DPUS: [u32; 4] = [3, 700, 1401, 2000];
const DPUS_PER_RANK: u32 = 64;

/// The simulated server: the fewest ranks of 64 DPUs that hold `dpus` enabled ones, with those of
/// `DISABLED_DPUS` that fall inside them disabled, as real servers have a few faulty DPUs.
fn simulated_server(dpus: u32) -> Topology {
    let mut nr_ranks = dpus.div_ceil(DPUS_PER_RANK).max(1);
    loop {
        let topology = Topology::new(nr_ranks, DPUS_PER_RANK)
            .with_disabled(DISABLED_DPUS.into_iter().filter(|dpu| *dpu < nr_ranks * DPUS_PER_RANK));
        if topology.nr_enabled_dpus() >= dpus {
            return topology;
        }
        nr_ranks += 1;
    }
}

/// A step of the run: its wall time here and its predicted time on a UPMEM server, when known.
struct Phase {
    name: &'static str,
    wall: Duration,
    predicted: Option<Duration>,
}

/// Runs `step` and records how long it took under `name`; the prediction is filled in by the caller.
fn timed<T>(phases: &mut Vec<Phase>, name: &'static str, step: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let value = step();
    phases.push(Phase { name, wall: started.elapsed(), predicted: None });
    value
}

/// The last phase's prediction: the host's own work takes as long on a server as here.
fn on_host(phases: &mut [Phase]) {
    if let Some(phase) = phases.last_mut() {
        phase.predicted = Some(phase.wall);
    }
}

/// The last phase's prediction: the modelled time of the transfers and launches it ran on `set`.
fn on_dpus(phases: &mut [Phase], set: &mut LoadedSet) {
    let timeline = set.take_timeline();
    let modelled = timeline.events().iter().all(|event| event.predicted.is_some());
    if let Some(phase) = phases.last_mut() {
        phase.predicted = modelled.then(|| timeline.predicted());
    }
}

/// The set `args` asks for: `--dpus` DPUs, else every DPU of the machine (`DPU_ALLOCATE_ALL` on hardware, the
/// whole simulated server on the simulator).
fn set_builder(args: &Args) -> DpuSetBuilder {
    let mut builder = DpuSet::builder();
    builder.backend(args.backend).simulator(SimConfig::new(simulated_server(args.dpus.unwrap_or(SIMULATED_DPUS))));
    if let Some(dpus) = args.dpus {
        builder.dpus(dpus);
    }
    builder
}

fn main() -> anyhow::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = Args::parse();
    let mut phases = Vec::new();
    let mut set = timed(&mut phases, "allocate and load", || -> anyhow::Result<LoadedSet> {
        let set = set_builder(&args).allocate().context("allocating DPUs")?;
        Ok(set.load(&pimgnn::kernel("reduce"))?)
    })?;
    println!("{} DPUs in {} ranks on the {} backend", set.nr_dpus(), set.nr_ranks(), set.backend());

    set.take_timeline();

    let inputs: Vec<Vec<u64>> = timed(&mut phases, "generate inputs (CPU)", || {
        (0..set.nr_dpus() as u64).map(|dpu| (0..u64::from(args.elements)).map(|i| i * 3 + dpu).collect()).collect()
    });
    on_host(&mut phases);
    let expected = inputs.iter().flatten().fold(0u64, |sum, value| sum.wrapping_add(*value));
    timed(&mut phases, "transfer in", || -> upmem::Result<()> {
        set.broadcast("nr_elements", 0, &[args.elements])?;
        set.push(MRAM_HEAP, 0, &inputs)
    })?;
    on_dpus(&mut phases, &mut set);
    timed(&mut phases, "kernel", || set.launch()).context("running the reduction")?;
    on_dpus(&mut phases, &mut set);
    let sums: Vec<Vec<u64>> = timed(&mut phases, "transfer out", || set.gather("sum", 0, 1))?;
    on_dpus(&mut phases, &mut set);
    let total = timed(&mut phases, "merge (CPU)", || sums.iter().fold(0u64, |sum, dpu| sum.wrapping_add(dpu[0])));
    on_host(&mut phases);
    ensure!(total == expected, "DPU sum {total} differs from the CPU's {expected}");

    print_timings(&phases);
    print_load_balance(&set)?;
    if let Some(stats) = set.launch_stats()? {
        println!("{stats}");
    }
    println!("{} DPUs x {} integers: sum {total} matches the CPU", set.nr_dpus(), args.elements);
    Ok(())
}

/// Wall and predicted hardware time per phase, and the totals of the phases after loading.
fn print_timings(phases: &[Phase]) {
    let ms = |duration: Duration| format!("{:.3} ms", duration.as_secs_f64() * 1e3);
    let mut table = table::with_header(["phase", "wall", "predicted hardware (host steps at wall time)"]);
    for phase in phases {
        table.add_row([phase.name.to_owned(), ms(phase.wall), phase.predicted.map_or_else(|| "-".to_owned(), ms)]);
    }
    let run = phases.iter().filter(|phase| phase.predicted.is_some());
    let (wall, predicted) = run.fold((Duration::ZERO, Duration::ZERO), |(wall, predicted), phase| {
        (wall + phase.wall, predicted + phase.predicted.unwrap_or_default())
    });
    table.add_row(["total after loading".to_owned(), ms(wall), ms(predicted)]);
    table::fit_to_terminal(&mut table);
    println!("{table}");
}

/// How evenly the work spread over the DPUs, from the simulator's per-DPU statistics.
fn print_load_balance(set: &LoadedSet) -> anyhow::Result<()> {
    let mut dma_cycles = Vec::with_capacity(set.nr_dpus());
    let mut cycles = Vec::with_capacity(set.nr_dpus());
    let mut instructions = Vec::with_capacity(set.nr_dpus());
    let mut bytes = Vec::with_capacity(set.nr_dpus());
    for dpu in 0..set.nr_dpus() {
        let Some(stats) = set.simulator_stats(dpu)? else { return Ok(()) };
        dma_cycles.push(stats.dma_cycles);
        cycles.push(stats.cycles);
        instructions.push(stats.instructions);
        bytes.push(stats.total().dma_read_bytes);
    }
    let summary = |values: &mut Vec<u64>| {
        values.sort_unstable();
        let mean = values.iter().sum::<u64>() / values.len() as u64;
        [values[0], values[values.len() / 2], mean, values[values.len() - 1]].map(|value| value.to_string())
    };
    let mut table = table::with_header(["per DPU (simulator)", "min", "median", "mean", "max"]);
    table.add_row(std::iter::once("modelled cycles".to_owned()).chain(summary(&mut cycles)));
    table.add_row(std::iter::once("DMA engine busy (cycles)".to_owned()).chain(summary(&mut dma_cycles)));
    table.add_row(std::iter::once("instructions".to_owned()).chain(summary(&mut instructions)));
    table.add_row(std::iter::once("MRAM bytes read".to_owned()).chain(summary(&mut bytes)));
    table::fit_to_terminal(&mut table);
    println!("{table}");
    Ok(())
}
