//! `pimgnn infer|train --distributed`: one run over MPI ranks (under `mpirun -np P`), each rank a server with its
//! own engines holding its block of the aggregation matrix and exchanging halo rows at every layer; rank 0
//! prints one table of every rank's part.

use clap::Args;

use super::infer::InferArgs;
use super::train::TrainArgs;

#[cfg(feature = "mpi")]
mod infer;
#[cfg(feature = "mpi")]
mod ranks;
#[cfg(feature = "mpi")]
mod train;

/// Bandwidth between servers of the predicted halo exchange when not given: 100 Gb/s InfiniBand (EDR), in GB/s.
const DEFAULT_NETWORK_GBPS: f64 = 12.5;
/// Latency of one message between servers when not given: an InfiniBand EDR MPI ping, in microseconds.
const DEFAULT_NETWORK_LATENCY_US: f64 = 1.5;

/// The arguments of a distributed run.
#[derive(Args, Debug)]
pub struct DistributedArgs {
    /// Run over the MPI ranks this process is one of (start it with `mpirun -np P pimgnn infer|train
    /// --distributed ...`; needs the `mpi` feature): each rank aggregates its nodes' rows on its own engines
    /// and receives the feature rows of the remote nodes they reference at every layer (in training, their
    /// gradients go back, and the ranks sum their parameter gradients). Rank 0 prints the table and writes
    /// --output.
    #[arg(long)]
    pub distributed: bool,
    /// How nodes are split over the ranks: range (contiguous, balanced by edges), metis, or a file that
    /// `pimgnn partition --save` wrote for as many ranks.
    #[arg(long, requires = "distributed", default_value = "range")]
    pub partition: String,
}

/// The network a distributed inference's halo exchange is predicted over.
#[derive(Args, Debug)]
pub struct NetworkArgs {
    /// Network bandwidth between servers for the predicted halo exchange, GB/s (default: 100 Gb/s InfiniBand).
    #[arg(long, requires = "distributed", default_value_t = DEFAULT_NETWORK_GBPS)]
    pub network_gbps: f64,
    /// Latency of one message between servers for the predicted halo exchange, microseconds.
    #[arg(long, requires = "distributed", default_value_t = DEFAULT_NETWORK_LATENCY_US)]
    pub network_latency_us: f64,
}

/// The error of `--distributed` without the `mpi` feature.
#[cfg(not(feature = "mpi"))]
fn needs_mpi() -> anyhow::Error {
    anyhow::anyhow!("--distributed needs pimgnn built with its `mpi` feature (cargo build --features mpi)")
}

/// Runs `pimgnn infer --distributed`.
#[cfg(not(feature = "mpi"))]
pub fn infer(_args: &InferArgs) -> anyhow::Result<()> {
    Err(needs_mpi())
}

/// Runs `pimgnn train --distributed`.
#[cfg(not(feature = "mpi"))]
pub fn train(_args: &TrainArgs) -> anyhow::Result<()> {
    Err(needs_mpi())
}

#[cfg(feature = "mpi")]
pub use infer::infer;
#[cfg(feature = "mpi")]
pub use train::train;
