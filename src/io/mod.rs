//! Reading and writing the files GNN inference takes: graphs and sparse features (Matrix Market, CSV),
//! dense arrays, labels and masks (`.npy`), and model weights (`.safetensors`).
//!
//! Every reader checks its input and names the file, the line when the format has lines, and the reason.

mod csv;
mod mtx;
pub mod npy;
pub mod safetensors;

pub use self::csv::{read_edge_list_csv, read_triples_csv};
pub use self::mtx::read_matrix_market;

use std::path::Path;

use crate::error::Error;

/// A [`Error::Parse`] for `path` at a 1-based `line` (when the format has lines).
fn parse_error(path: &Path, line: Option<usize>, reason: impl Into<String>) -> Error {
    Error::Parse { path: path.to_path_buf(), line, reason: reason.into() }
}

/// A [`Error::Io`] for `path`.
fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}
