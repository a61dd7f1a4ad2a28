//! `pimgnn bench`: every benchmark of the library, each printing one table with its baseline measured in the same
//! run (the CPU backend, PyTorch, PyGim's plan).

mod cpu_gather;
mod cpu_spmm;
mod infer;
#[cfg(feature = "simulator")]
mod kernels;
mod quantize;
mod spmm;
mod train;
mod transfers;

use clap::Subcommand;

/// The benchmarks.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// End-to-end inference on the CPU backend against PyTorch (CSR sparse.mm + Linear, and PyG's GCNConv
    /// when installed) on the same workload.
    Infer(infer::BenchInferArgs),
    /// SpMM Y = A X: the CPU against PIM (simulated without hardware), at several feature widths, with the
    /// plan the cost model chose, predicted hardware time, phases and load balance.
    Spmm(spmm::BenchSpmmArgs),
    /// Full-batch training epochs on the CPU backend and on PIM (simulated without hardware, with the
    /// predicted hardware time) against PyTorch Geometric's on the same workload.
    Train(train::BenchTrainArgs),
    /// Host-DPU push, gather and broadcast bandwidth over 1 to all ranks against the published figures, with
    /// the transfer model fitted to them, written as this server's transfer profile with --profile.
    Transfers(transfers::BenchTransfersArgs),
    /// The CPU SpMM kernels against torch.sparse.mm (CSR) and scipy on the default R-MAT graph, interleaved.
    CpuSpmm(cpu_spmm::BenchCpuSpmmArgs),
    /// The CPU SpMM against a plain gather of the same rows of X (the memory-bound floor) on an Erdős–Rényi
    /// graph whose X is far larger than the last-level cache.
    CpuGather(cpu_gather::BenchCpuGatherArgs),
    /// Each SpMM kernel on one simulated DPU against the DPU's lower bound: instructions and modelled cycles
    /// per multiply-add, by value type, format and feature width.
    #[cfg(feature = "simulator")]
    Kernels(kernels::BenchKernelsArgs),
    /// Quantized aggregation's host conversions (largest |x|, rounding to i32/i16/i8, back to f32) against a
    /// parallel memcpy of the same values.
    Quantize(quantize::BenchQuantizeArgs),
}

/// Runs the benchmark `command`.
pub fn run(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Infer(args) => infer::run(&args),
        BenchCommand::Spmm(args) => spmm::run(args),
        BenchCommand::Train(args) => train::run(&args),
        BenchCommand::CpuSpmm(args) => cpu_spmm::run(&args),
        BenchCommand::Transfers(args) => transfers::run(&args),
        BenchCommand::Quantize(args) => quantize::run(&args),
        BenchCommand::CpuGather(args) => cpu_gather::run(&args),
        #[cfg(feature = "simulator")]
        BenchCommand::Kernels(args) => kernels::run(&args),
    }
}
