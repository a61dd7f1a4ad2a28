//! Beyond one server: a graph's nodes split over processes (MPI ranks, each a server with its own DPU set),
//! and what the split costs in communication ([`RankPartition`]).

mod partition;

pub use partition::{PartitionMethod, RankPartition, RankStats};
