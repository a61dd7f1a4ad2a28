//! Sums 64-bit integers across thousands of DPUs and checks the result against the CPU.
//!
//! Every DPU gets its own slice of the input in MRAM; 16 tasklets per DPU stream it through WRAM in 2 KiB
//! DMA blocks (`dpu/reduce.c`); the host adds the per-DPU sums. Runs on the simulator without hardware.

use std::time::Instant;

use anyhow::{ensure, Context as _};
use clap::Parser;
use upmem::{BackendKind, DpuSet, SimConfig, Topology};

#[derive(Parser)]
#[command(about = "Sum 64-bit integers across UPMEM DPUs (simulated when there is no hardware)")]
struct Args {
    /// DPUs to use.
    #[arg(long, default_value_t = 2044)]
    dpus: u32,
    /// Integers per DPU.
    #[arg(long, default_value_t = 65_536)]
    elements: u32,
    /// Backend: auto (hardware if present), hw, or sim.
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
}

fn main() -> anyhow::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = Args::parse();
    // The simulated server: 32 ranks of 64 DPUs with 4 disabled, as real servers have a few faulty DPUs.
    let topology = Topology::new(args.dpus.div_ceil(64).max(1), 64).with_disabled([3, 700, 1401, 2000]);
    let mut set = DpuSet::builder()
        .dpus(args.dpus)
        .backend(args.backend)
        .simulator(SimConfig::new(topology))
        .allocate()
        .context("allocating DPUs")?
        .load(&pimgnn::kernel("reduce"))?;
    println!("{} DPUs in {} ranks on the {} backend", set.nr_dpus(), set.nr_ranks(), set.backend());

    let started = Instant::now();
    let inputs: Vec<Vec<u64>> =
        (0..set.nr_dpus() as u64).map(|dpu| (0..u64::from(args.elements)).map(|i| i * 3 + dpu).collect()).collect();
    let expected = inputs.iter().flatten().fold(0u64, |sum, value| sum.wrapping_add(*value));
    set.broadcast("nr_elements", 0, &[args.elements])?;
    set.push("__sys_used_mram_end", 0, &inputs)?;
    let transferred = started.elapsed();

    let started = Instant::now();
    set.launch().context("running the reduction")?;
    let launched = started.elapsed();

    let sums: Vec<Vec<u64>> = set.gather("sum", 0, 1)?;
    let total = sums.iter().fold(0u64, |sum, dpu| sum.wrapping_add(dpu[0]));
    ensure!(total == expected, "DPU sum {total} differs from the CPU's {expected}");
    println!(
        "{} x {} integers: sum {total} matches the CPU (inputs {:.1?}, launch {:.1?})",
        set.nr_dpus(),
        args.elements,
        transferred,
        launched
    );
    Ok(())
}
