//! Helpers shared by the GNN tests.

use std::path::PathBuf;

/// The real datasets: `PIMGNN_DATASETS`, else `../shared/datasets` beside the workspace root.
pub fn datasets() -> PathBuf {
    match std::env::var_os("PIMGNN_DATASETS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets"),
    }
}
