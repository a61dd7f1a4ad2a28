//! Beyond one server: a graph's nodes split over processes (MPI ranks, each a server with its own DPU set),
//! and what the split costs in communication ([`RankPartition`]); each rank's block of the aggregation matrix
//! and the feature rows it exchanges per layer ([`RankBlock`]), which an aggregator brings in through a
//! [`HaloExchange`] before it aggregates (`gnn::Aggregator::with_halo`). In training
//! (`train::Trainer::distributed`) the exchange also takes the halo's gradients back to their owners, and the
//! ranks sum their gradients through an [`AllReduce`]. Feature `mpi` provides both over MPI (`distributed::mpi`); the
//! tests run ranks as threads.

mod block;
#[cfg(feature = "mpi")]
pub mod mpi;
mod partition;

pub use block::{AllReduce, HaloExchange, RankBlock, RankTransport};
pub use partition::{PartitionMethod, RankPartition, RankStats};
