//! Sums 64-bit integers across thousands of simulated DPUs and checks the result against the CPU.
//!
//! Every DPU gets its own slice of the input in MRAM; 16 tasklets per DPU stream it through WRAM in 2 KiB
//! DMA blocks (`dpu/reduce.c`); the host adds the per-DPU sums.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{ensure, Context as _};
use clap::Parser;
use upmem_sim::{Machine, MemoryKind, Program, SimConfig, Topology, MRAM_HEAP_SYMBOL};

#[derive(Parser)]
#[command(about = "Sum 64-bit integers across simulated UPMEM DPUs")]
struct Args {
    /// Ranks of 64 DPUs.
    #[arg(long, default_value_t = 32)]
    ranks: u32,
    /// DPUs to disable, as on real servers with faulty DPUs.
    #[arg(long, default_value_t = 4)]
    disabled: u32,
    /// Integers per DPU.
    #[arg(long, default_value_t = 65_536)]
    elements: u32,
}

fn main() -> anyhow::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = Args::parse();
    let topology = Topology::new(args.ranks, 64).with_disabled((0..args.disabled).map(|i| i * 67 % (args.ranks * 64)));
    let mut machine = Machine::new(SimConfig::new(topology))?;
    let program = Arc::new(Program::from_file(pimgnn::kernel_path("reduce"))?);
    let dpus: Vec<u32> = machine.topology().enabled_dpus().collect();
    machine.load(&dpus, &program)?;

    let started = Instant::now();
    let mut expected = 0u64;
    for (index, &dpu) in dpus.iter().enumerate() {
        let values: Vec<u64> = (0..u64::from(args.elements)).map(|i| i * 3 + index as u64).collect();
        expected = values.iter().fold(expected, |sum, value| sum.wrapping_add(*value));
        let bytes: Vec<u8> = values.iter().flat_map(|value| value.to_le_bytes()).collect();
        let heap = machine.symbol(dpu, MRAM_HEAP_SYMBOL)?;
        machine.write(dpu, MemoryKind::Mram, heap.offset(), &bytes)?;
        machine.write_symbol(dpu, "nr_elements", 0, &args.elements.to_le_bytes())?;
    }
    let transferred = started.elapsed();

    let started = Instant::now();
    machine.launch(&dpus).context("launching the reduction")?;
    let launched = started.elapsed();

    let mut total = 0u64;
    for &dpu in &dpus {
        let mut sum = [0u8; 8];
        machine.read_symbol(dpu, "sum", 0, &mut sum)?;
        total = total.wrapping_add(u64::from_le_bytes(sum));
    }
    ensure!(total == expected, "DPU sum {total} differs from the CPU's {expected}");
    println!(
        "{} DPUs x {} integers: sum {total} matches the CPU (inputs {:.1?}, launch {:.1?})",
        dpus.len(),
        args.elements,
        transferred,
        launched
    );
    Ok(())
}
