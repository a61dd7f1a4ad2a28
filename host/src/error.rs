//! The runtime's error type.

use std::fmt;
use std::path::PathBuf;

#[cfg(feature = "simulator")]
use upmem_sim::{BuildError, SimError};

use crate::backend::BackendKind;
use crate::driver::RankInventory;
use crate::set::FaultInfo;

/// What can go wrong driving DPUs. Misuse the safe layer can see (sizes, alignment, bounds, symbols) is
/// reported before any backend is called; backends report what nobody could foresee.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The backend asked for (or the only one `Auto` could pick) was left out of this build.
    #[error("the {backend} backend is not compiled in: enable the `{feature}` feature of upmem (or pimgnn)")]
    BackendNotCompiled {
        /// The backend.
        backend: BackendKind,
        /// The Cargo feature that brings it.
        feature: &'static str,
    },
    /// A kernel can be built for no backend of this build: the `simulator` feature is off and the UPMEM SDK's
    /// compiler was not found.
    #[error(
        "kernel `{0}` cannot be built: the `simulator` feature is off and the UPMEM SDK's dpu-upmem-dpurte-clang \
         was not found (set UPMEM_HOME)"
    )]
    NoKernelCompiler(String),
    /// The transfer profile named by `UPMEM_TRANSFER_PROFILE` could not be read.
    #[error(transparent)]
    TransferProfile(#[from] upmem_types::ProfileError),
    /// A backend name (`UPMEM_BACKEND`'s, or one parsed as a [`crate::BackendKind`]) other than `auto`,
    /// `hardware` (`hw`) or `simulator` (`sim`).
    #[error("backend {0:?}: expected auto, hardware (hw) or simulator (sim)")]
    InvalidBackend(String),
    /// libdpu could not be loaded: each candidate tried and why.
    #[error(
        "cannot load libdpu: {}. Set UPMEM_LIBDPU to libdpu.so's path, or UPMEM_HOME to the UPMEM SDK's install \
         directory, and add the SDK's lib directory to LD_LIBRARY_PATH ({})",
        attempts.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
        ld_library_path.as_ref().map_or_else(|| "now unset".to_owned(), |path| format!("now {path:?}"))
    )]
    LibraryNotFound {
        /// The candidates, in the order tried.
        attempts: Vec<LoadAttempt>,
        /// `LD_LIBRARY_PATH` when they were tried.
        ld_library_path: Option<String>,
    },
    /// The libdpu found belongs to an SDK version this runtime does not support.
    #[error(
        "{} is the libdpu of UPMEM SDK {found} (from {read_from}), but this runtime supports SDK {supported}: install \
         SDK {supported}, point UPMEM_LIBDPU or UPMEM_HOME at it, or set UPMEM_IGNORE_SDK_VERSION=1 to use this one \
         anyway",
        library.display()
    )]
    UnsupportedSdk {
        /// The library file.
        library: PathBuf,
        /// Its SDK version.
        found: String,
        /// Where the version was read.
        read_from: String,
        /// The version supported.
        supported: &'static str,
    },
    /// libdpu could not allocate the DPUs asked for on the hardware; the kernel driver's view says why.
    #[error("cannot allocate {requested} on UPMEM hardware (libdpu says: {message}; profile {profile:?}): {machine}")]
    HardwareAllocation {
        /// What was asked for ("100 DPUs", "2 ranks", "every free rank").
        requested: String,
        /// The profile given to libdpu.
        profile: String,
        /// libdpu's text for its error.
        message: String,
        /// The ranks the kernel driver lists, and which are free.
        machine: RankInventory,
    },
    /// Fewer DPUs are available than requested, or none was requested.
    #[error(
        "cannot allocate {requested} DPUs: {}",
        if *requested == 0 { format!("a set has at least 1 (the backend has {available})") }
        else { format!("{available} are available") }
    )]
    Allocation {
        /// DPUs asked for.
        requested: usize,
        /// DPUs the backend has.
        available: usize,
    },
    /// libdpu lacks a function this runtime needs.
    #[error("the loaded libdpu has no `{0}` (an SDK older than 2025.1?)")]
    MissingFunction(&'static str),
    /// A libdpu call failed; the SDK's code is kept.
    #[error("{call} failed: {message} (DPU error {code})")]
    Dpu {
        /// The libdpu function.
        call: &'static str,
        /// The SDK's `dpu_error_t`, a C `int` (negative when it carries `DPU_ERR_ASYNC_JOBS`).
        code: std::ffi::c_int,
        /// The SDK's text for it.
        message: String,
    },
    /// The simulator backend failed.
    #[cfg(feature = "simulator")]
    #[error(transparent)]
    Simulator(#[from] SimError),
    /// A kernel could not be built for the simulator.
    #[cfg(feature = "simulator")]
    #[error(transparent)]
    Build(#[from] BuildError),
    /// No binary of the kernel exists for the backend in use.
    #[error("kernel `{kernel}` has no binary for the {backend} backend ({reason})")]
    KernelUnavailable {
        /// The kernel's name.
        kernel: String,
        /// The backend.
        backend: BackendKind,
        /// Why.
        reason: String,
    },
    /// The loaded program has no such symbol.
    #[error("the program has no symbol `{0}`")]
    UnknownSymbol(String),
    /// A transfer would go past the end of its symbol.
    #[error("{length} bytes at offset {offset} of `{symbol}` go past its {size} bytes")]
    OutOfBounds {
        /// The symbol.
        symbol: String,
        /// Byte offset in it.
        offset: u32,
        /// Bytes transferred.
        length: usize,
        /// Its size.
        size: u32,
    },
    /// A transfer breaks the DPU's alignment rules (MRAM: 8 bytes, WRAM: 4 bytes, for offset and length).
    #[error("{length} bytes at offset {offset} of {memory} symbol `{symbol}`: offset and length must be multiples of {required}")]
    Misaligned {
        /// The symbol.
        symbol: String,
        /// "MRAM" or "WRAM".
        memory: &'static str,
        /// Byte offset in the symbol (plus the symbol's address).
        offset: u32,
        /// Bytes transferred.
        length: usize,
        /// The required multiple.
        required: u32,
    },
    /// Per-DPU buffers do not match the set.
    #[error("{found} buffers given for {expected} DPUs")]
    BufferCount {
        /// DPUs in the set.
        expected: usize,
        /// Buffers given.
        found: usize,
    },
    /// Per-DPU buffers differ in length (a transfer moves the same length to every DPU).
    #[error("buffer {index} has {found} bytes, buffer 0 has {expected}: every DPU gets the same length")]
    BufferLength {
        /// The buffer that differs.
        index: usize,
        /// Its length.
        found: usize,
        /// The first buffer's length.
        expected: usize,
    },
    /// A DPU index outside the set.
    #[error("DPU {index} is not in the set of {count} DPUs")]
    NoSuchDpu {
        /// The index.
        index: usize,
        /// DPUs in the set.
        count: usize,
    },
    /// DPUs faulted during a launch.
    #[error("{} DPU(s) in fault; first: {}", .0.len(), .0.first().map_or_else(String::new, ToString::to_string))]
    Fault(Vec<FaultInfo>),
    /// An operating-system call failed.
    // The system's error is in the message, so it is not also reported as the source (a chain would print it
    // twice).
    #[error("{what}: {error}")]
    Io {
        /// The operation.
        what: String,
        /// The error.
        error: std::io::Error,
    },
    /// A path is not valid UTF-8 or has a NUL byte.
    #[error("invalid path {0}")]
    InvalidPath(PathBuf),
}

/// Result type of the runtime.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The error of parsing `text` as a [`crate::BackendKind`] (strum's `parse_err_fn`).
    pub(crate) fn invalid_backend(text: &str) -> Self {
        Error::InvalidBackend(text.to_owned())
    }
}

/// One libdpu candidate that did not load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadAttempt {
    /// The path (or bare name, for the loader's search) tried.
    pub candidate: PathBuf,
    /// The loader's error.
    pub error: String,
    /// The libraries it needs that the loader cannot load (for a candidate that is a file).
    pub missing: Vec<MissingLibrary>,
}

/// A library libdpu needs that the loader cannot load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingLibrary {
    /// Its name, as libdpu's `DT_NEEDED` gives it.
    pub name: String,
    /// libdpu's directory, when the library is there (the loader does not look there by itself).
    pub beside: Option<PathBuf>,
}

impl fmt::Display for LoadAttempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.candidate.display(), self.error)?;
        if !self.missing.is_empty() {
            let missing: Vec<String> = self.missing.iter().map(ToString::to_string).collect();
            write!(f, " (it needs, and the loader cannot load: {})", missing.join(", "))?;
        }
        Ok(())
    }
}

impl fmt::Display for MissingLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.beside, package_of(&self.name)) {
            (Some(dir), _) => write!(
                f,
                "{}, which is in {}: add that directory to LD_LIBRARY_PATH (the SDK's upmem_env.sh does)",
                self.name,
                dir.display()
            ),
            (None, Some(package)) => write!(f, "{} (Debian and Ubuntu package {package})", self.name),
            (None, None) => f.write_str(&self.name),
        }
    }
}

/// The Debian and Ubuntu package of the system libraries the SDK 2025.1's libdpu needs.
fn package_of(library: &str) -> Option<&'static str> {
    [("libnuma.so", "libnuma1"), ("libelf.so", "libelf1"), ("libpython3.10.so", "libpython3.10")]
        .into_iter()
        .find(|(prefix, _)| library.starts_with(prefix))
        .map(|(_, package)| package)
}
