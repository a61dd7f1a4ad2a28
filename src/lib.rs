//! pimgnn: graph neural network inference on UPMEM processing-in-memory servers.
//!
//! The DPU kernels of `dpu/` are built by this crate's build script (for the bundled simulator, and for real
//! DPUs when the UPMEM SDK is installed) and found by name with [`kernel`].
//!
//! SpMM (`Y = A X`) runs on the CPU ([`CpuSpmm`]) or on DPUs ([`pim::PimSpmm`]), with a partitioning
//! [`plan::Plan`] chosen by the [`cost`] model or by the caller. GNN inference is in [`gnn`], full-batch
//! training (aggregation forward and backward through the same engines) in [`train`].

pub mod bench;
pub mod compare;
pub mod cost;
pub mod cpu;
mod error;
pub mod gnn;
pub mod graph;
mod host_memory;
pub mod io;
mod matmul;
pub mod pim;
pub mod plan;
pub mod sparse;
pub mod spmm;
pub mod table;
pub mod train;

pub use error::{Error, Result};
pub use sparse::{Coo, Csr, Dense, Duplicates, Element};
pub use spmm::{Chunk, CpuSpmm, Phase, RowStep, SpmmEngine, StreamedStage};

/// A DPU kernel of `dpu/` by its file stem (e.g. `"reduce"`), ready to load with [`upmem::DpuSet::load`].
pub fn kernel(name: &str) -> upmem::Kernel {
    upmem::kernel!(name)
}
