//! pimgnn: graph neural network inference on UPMEM processing-in-memory servers.
//!
//! The DPU kernels of `dpu/` are built by this crate's build script (for the bundled simulator, and for real
//! DPUs when the UPMEM SDK is installed) and found by name with [`kernel`].
//!
//! SpMM (`Y = A X`) runs on the CPU ([`CpuSpmm`], kernels in [`cpu`]) or on DPUs ([`pim::PimSpmm`]). Everything
//! about the DPUs is in [`pim`]: how a matrix is cut over them ([`pim::plan::Plan`]), what a plan costs on
//! hardware ([`pim::cost`], which chooses the plan unless the caller does), where an aggregation runs (CPU or
//! PIM, and on how many DPUs), and the kernels' argument layout. GNN inference is in [`gnn`], full-batch training
//! (aggregation forward and backward through the same engines) in [`train`].
//!
//! The `pimgnn` command line (feature `cli`, on by default) is built on this library and adds nothing to it: a
//! program that links only the library takes `default-features = false, features = ["simulator"]` (or
//! `"hardware"`) and gets no command-line dependencies.

pub mod attention;
pub mod compare;
pub mod cpu;
pub mod distributed;
mod error;
pub mod gnn;
pub mod graph;
pub mod host_memory;
pub mod io;
mod matmul;
pub mod pim;
pub mod sparse;
pub mod spmm;
pub mod train;

pub use attention::AttentionScores;
pub use error::{Error, Result};
pub use sparse::{Coo, Csr, Dense, Duplicates, Element};
pub use spmm::{Chunk, CpuSpmm, Phase, RowStep, SpmmEngine, StreamedStage};

/// A DPU kernel of `dpu/` by its file stem (e.g. `"reduce"`), ready to load with [`upmem::DpuSet::load`].
pub fn kernel(name: &str) -> upmem::Kernel {
    upmem::kernel!(name)
}
