//! pimgnn: graph neural network inference on UPMEM processing-in-memory servers.
//!
//! The DPU kernels of `dpu/` are built by this crate's build script for the bundled simulator; their binaries
//! are found with [`kernel_path`].

use std::path::PathBuf;

/// The simulated DPU binary of a kernel of `dpu/` (by its file stem, e.g. `"reduce"`).
pub fn kernel_path(name: &str) -> PathBuf {
    PathBuf::from(env!("PIMGNN_DPU_DIR")).join(format!("{name}.dpusim"))
}
