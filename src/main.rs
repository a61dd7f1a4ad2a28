//! `pimgnn`: GNN inference on UPMEM processing-in-memory servers, the simulator, or the CPU.

mod cli;

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// GNN inference on UPMEM processing-in-memory servers.
#[derive(Parser)]
#[command(name = "pimgnn", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs a GNN over a graph and prints where the time went (without --graph: a generated R-MAT graph and
    /// a seeded 3-layer GCN).
    Infer(cli::infer::InferArgs),
    /// Trains a GNN full-batch (aggregation forward and backward on PIM, dense layers and updates on the
    /// CPU), printing each epoch's loss and accuracies and where the time went.
    Train(cli::train::TrainArgs),
    /// Says which backends this machine has, why one is missing, and the simulator's settings.
    Info,
    /// Runs every DPU kernel on small seeded inputs and compares each result with the CPU's, bit for bit (the
    /// first command to run on a new UPMEM server).
    ///
    /// Prints the backend and the DPUs, then runs the CSR and COO SpMM kernels in f32, i32, i16 and i8 (rows cut
    /// between DPUs and between tasklets, empty rows, features wider than one DMA, 2D tiles and feature groups,
    /// and f32 sums that round) and the reduction, and prints a table of the runs. Exits non-zero if any run
    /// differs from the CPU, naming the kernel and its first differing element.
    Check(cli::check::CheckArgs),
    /// Splits a graph's nodes over processes (MPI ranks) by ranges and by METIS, and prints per rank the nodes,
    /// edges, halo nodes (feature rows received per layer) and cut edges; --save writes one for later runs.
    Partition(cli::partition::PartitionArgs),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(cli::bench::BenchCommand),
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let result = match Cli::parse().command {
        Command::Infer(args) => cli::infer::run(&args),
        Command::Train(args) => cli::train::run(&args),
        Command::Info => cli::info::run(),
        Command::Check(args) => cli::check::run(&args),
        Command::Partition(args) => cli::partition::run(&args),
        Command::Bench(command) => cli::bench::run(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // As a `Result` returned from main would print it, but in one write, so that the errors of processes
            // sharing a stream (MPI ranks under mpirun) do not interleave.
            let _ = std::io::stderr().write_all(format!("Error: {error:?}\n").as_bytes());
            ExitCode::FAILURE
        }
    }
}
