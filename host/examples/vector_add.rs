//! Vector addition on DPUs with per-DPU transfers: each DPU gets its own slices of `a` and `b` in MRAM
//! (`dpu/vector_add.c`, 16 tasklets), computes `c = a + b`, and the host gathers `c` and checks it.
//!
//! `cargo run -p upmem --example vector_add -- --backend sim --dpus 256`

use anyhow::{ensure, Context as _};
use clap::Parser;
use upmem::{BackendKind, DpuSet};

#[derive(Parser)]
#[command(about = "c = a + b on UPMEM DPUs (simulated when there is no hardware)")]
struct Args {
    /// DPUs to use.
    #[arg(long, default_value_t = 64)]
    dpus: u32,
    /// Elements per DPU (a multiple of 256, the kernel's block).
    #[arg(long, default_value_t = 65_536)]
    elements: u32,
    /// Backend: auto (hardware if present), hw, or sim.
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
}

fn main() -> anyhow::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args = Args::parse();
    ensure!(args.elements % 256 == 0, "--elements must be a multiple of 256");
    let build_dir = tempfile::tempdir()?;
    let mut builder = upmem::build::KernelBuilder::new();
    builder.source(concat!(env!("CARGO_MANIFEST_DIR"), "/dpu/vector_add.c")).nr_tasklets(16).flag("-O2");
    let kernel =
        upmem::build::kernel_into("vector_add", &builder, build_dir.path()).context("building the DPU kernel")?;
    let mut set = DpuSet::builder().dpus(args.dpus).backend(args.backend).allocate()?.load(&kernel)?;

    let n = args.elements as usize;
    // Each DPU's buffer holds its slice of a, then its slice of b.
    let inputs: Vec<Vec<u32>> = (0..set.nr_dpus())
        .map(|dpu| (0..2 * n).map(|i| (dpu * n + i % n) as u32 ^ if i < n { 0 } else { 0x5555 }).collect())
        .collect();
    set.broadcast("nr_elements", 0, &[args.elements])?;
    set.push(upmem::MRAM_HEAP, 0, &inputs)?;
    set.launch()?;
    let sums: Vec<Vec<u32>> = set.gather(upmem::MRAM_HEAP, 8 * args.elements, n)?;
    for (dpu, (input, sum)) in inputs.iter().zip(&sums).enumerate() {
        let expected: Vec<u32> = (0..n).map(|i| input[i].wrapping_add(input[n + i])).collect();
        ensure!(*sum == expected, "DPU {dpu} computed a wrong sum");
    }
    println!("{} DPUs x {n} elements on the {} backend: every sum matches the CPU", set.nr_dpus(), set.backend());
    Ok(())
}
