//! Beyond one server: a graph's nodes split over processes (MPI ranks, each a server with its own DPU set),
//! and what the split costs in communication ([`RankPartition`]); each rank's block of the aggregation matrix
//! and the feature rows it exchanges per layer ([`RankBlock`]), which an aggregator brings in through a
//! [`HaloExchange`] before it aggregates.

mod block;
#[cfg(feature = "mpi")]
pub mod mpi;
mod partition;

pub use block::{HaloExchange, RankBlock};
pub use partition::{PartitionMethod, RankPartition, RankStats};
