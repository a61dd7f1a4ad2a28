//! Reading and writing what GNN inference takes. Graphs and sparse matrices: Matrix Market
//! ([`read_matrix_market`]), CSV edge lists ([`read_edge_list_csv`]) and CSV `(row, column, value)` triples
//! ([`read_triples_csv`]), with writers for the first two; dense arrays, labels and masks in [`npy`]; model
//! weights in [`safetensors`]. Every malformed input is an [`Error::Parse`] naming the file, the 1-based line and the reason;
//! nothing panics on bad input.
//!
//! Loaders return [`Coo`] exactly as listed (repeated entries stay, and add up in products). Turn a file into
//! the adjacency matrix a GNN wants with [`Coo::symmetrized`] (undirected edges listed once),
//! [`crate::Csr::deduplicated`] (repeated pairs) and [`crate::Csr::with_self_loops`].

mod csv;
mod mtx;
pub mod npy;
pub mod safetensors;

pub use self::csv::{read_edge_list_csv, read_triples_csv, write_edge_list_csv};
pub use self::mtx::{read_matrix_market, write_matrix_market};

use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::sparse::Coo;

/// A graph file by its extension: `.mtx` is Matrix Market, `.csv` an edge list (`id_1,id_2`). The matrix is
/// returned as listed; see the module docs for making it symmetric.
pub fn read_graph(path: &Path) -> Result<Coo<f32>> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("mtx") => read_matrix_market(path),
        Some("csv") => read_edge_list_csv(path),
        _ => Err(Error::Parse {
            path: path.to_path_buf(),
            line: None,
            reason: "unknown graph format: expected a Matrix Market `.mtx` or an edge-list `.csv` file".into(),
        }),
    }
}

/// A whole text file in memory, read line by line with 1-based line numbers for errors.
struct TextFile {
    path: PathBuf,
    text: String,
}

impl TextFile {
    fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(io_error(path))?;
        let text = String::from_utf8(bytes).map_err(|e| Error::Parse {
            path: path.to_path_buf(),
            line: None,
            reason: format!("not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()),
        })?;
        Ok(TextFile { path: path.to_path_buf(), text })
    }

    /// `(line number, line)` for every line, without its `\n` or `\r\n`.
    fn lines(&self) -> impl Iterator<Item = (usize, &str)> {
        self.text.lines().enumerate().map(|(at, line)| (at + 1, line))
    }

    /// The number of the last line (0 for an empty file), for errors found at the end of the file.
    fn last_line(&self) -> usize {
        self.text.lines().count()
    }

    fn error(&self, line: usize, reason: impl Into<String>) -> Error {
        Error::Parse { path: self.path.clone(), line: Some(line), reason: reason.into() }
    }

    /// An upper bound on the number of lines, to reserve room for entries without trusting a header.
    fn max_lines(&self) -> usize {
        self.text.bytes().filter(|&b| b == b'\n').count() + 1
    }
}

/// `token` parsed as the `what` field of `line`: a non-negative integer, or an error naming both.
fn parse_count<T: FromStr>(file: &TextFile, line: usize, what: &str, token: &str) -> Result<T> {
    token.trim().parse().map_err(|_| file.error(line, format!("{what}: `{token}` is not a non-negative integer")))
}

/// The largest dimension (rows, columns, nodes) a file may declare: indices are 32-bit.
const MAX_DIMENSION: u64 = u32::MAX as u64;

/// `token` parsed as the `what` field of `line`: an integer in `0..=limit`, or an error naming the field and,
/// for a value too large, the limit.
fn parse_bounded(file: &TextFile, line: usize, what: &str, token: &str, limit: u64) -> Result<u64> {
    let digits = token.trim();
    let value = match digits.parse::<u64>() {
        Ok(value) => Some(value),
        // Digits that overflow even a u64 are over any limit.
        Err(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => None,
        Err(_) => return Err(file.error(line, format!("{what}: `{token}` is not a non-negative integer"))),
    };
    match value {
        Some(value) if value <= limit => Ok(value),
        _ => Err(file.error(line, format!("{what}: {digits} exceeds the limit {limit} (indices are 32-bit)"))),
    }
}

/// `token` parsed as the `what` field of `line`: a finite number, or an error naming both (`nan` and `inf`,
/// which Rust parses, and values beyond `f32`'s range would spread through every product they enter).
fn parse_number(file: &TextFile, line: usize, what: &str, token: &str) -> Result<f32> {
    let value: f32 =
        token.trim().parse().map_err(|_| file.error(line, format!("{what}: `{token}` is not a number")))?;
    if !value.is_finite() {
        return Err(file.error(line, format!("{what}: `{token}` is not a finite number")));
    }
    Ok(value)
}

/// A [`Error::Parse`] for `path` at a 1-based `line` (when the format has lines).
fn parse_error(path: &Path, line: Option<usize>, reason: impl Into<String>) -> Error {
    Error::Parse { path: path.to_path_buf(), line, reason: reason.into() }
}

/// A [`Error::Io`] for `path`.
fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |error| Error::Io { path: path.to_path_buf(), error }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_extensions_are_errors() {
        let err = read_graph(Path::new("graph.json")).unwrap_err();
        assert!(err.to_string().contains("unknown graph format"), "{err}");
    }

    #[test]
    fn missing_files_name_the_path() {
        let err = read_graph(Path::new("/nonexistent/graph.mtx")).unwrap_err();
        assert!(matches!(err, Error::Io { .. }));
        assert!(err.to_string().contains("/nonexistent/graph.mtx"), "{err}");
    }
}
