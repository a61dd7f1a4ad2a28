//! The error type of the `pimgnn` layer.

use std::path::PathBuf;

/// Everything that can go wrong in `pimgnn`: bad input (files, shapes, indices), plans that do not fit the
/// DPUs, and the runtime's own errors, kept whole.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two operands whose shapes do not fit together.
    #[error("shape mismatch in {what}: expected {expected}, found {found}")]
    Shape {
        /// The operation or argument whose shape is wrong.
        what: String,
        /// The shape it needed.
        expected: String,
        /// The shape it got.
        found: String,
    },
    /// An index outside its dimension.
    #[error("{what}: index {index} out of range (limit {limit})")]
    IndexOutOfRange {
        /// Which index (e.g. "column index of nonzero 12").
        what: String,
        /// The index found.
        index: u64,
        /// The exclusive upper bound it must stay below.
        limit: u64,
    },
    /// A structure that breaks an invariant (e.g. CSR row pointers that decrease).
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// The structure.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file that could not be read or written.
    // The system's error is in the message, so it is not also reported as the source: error reporters that
    // print the chain (anyhow's, for one) would print it twice.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// A malformed input file.
    #[error("{}{}: {reason}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The 1-based line, when the format has lines.
        line: Option<usize>,
        /// What is wrong there.
        reason: String,
    },
    /// Input that does not fit the DPUs (MRAM per DPU, DPUs in the set).
    #[error("{what}: needs {needed}, limit {limit}")]
    Capacity {
        /// What does not fit, and where.
        what: String,
        /// How much it needs.
        needed: u64,
        /// How much there is.
        limit: u64,
    },
    /// A value that should be a number is a NaN or an infinity (in a compared result, or one to quantize).
    #[error("{what}: value {index} is {value}, not a finite number")]
    NotFinite {
        /// The values, and which side of a comparison.
        what: String,
        /// Where the first such value is.
        index: usize,
        /// The value found.
        value: f32,
    },
    /// Another process of a distributed run failed; every rank stops with its error.
    #[error("rank {rank} failed: {message}")]
    Rank {
        /// The lowest rank that failed.
        rank: u32,
        /// Its error.
        message: String,
    },
    /// The UPMEM runtime failed (allocation, load, transfer, launch, DPU fault).
    #[error(transparent)]
    Upmem(#[from] upmem::Error),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A [`Error::Shape`] from displayable parts.
    pub fn shape(what: impl Into<String>, expected: impl std::fmt::Display, found: impl std::fmt::Display) -> Self {
        Error::Shape { what: what.into(), expected: expected.to_string(), found: found.to_string() }
    }

    /// A [`Error::Invalid`] from displayable parts.
    pub fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Invalid { what: what.into(), reason: reason.into() }
    }

    /// The error of parsing `text` as a `T`, an enum whose names strum derives: names the type (its last path
    /// segment, lowercased: `dtype`) and lists its names. Given to strum as `parse_err_fn`.
    pub(crate) fn not_one_of<T: strum::VariantNames>(text: &str) -> Self {
        let type_name = std::any::type_name::<T>();
        let what = type_name.rsplit("::").next().unwrap_or(type_name).to_ascii_lowercase();
        Error::invalid(what, format!("`{text}` is not one of {}", T::VARIANTS.join(", ")))
    }
}
