//! `dpu_error_t`: the SDK's codes and strings, and how simulator errors map onto them.

use upmem_sim::SimError;

use crate::types::dpu_error_t;

/// The SDK's error codes, by value (`dpu_error.h`).
pub mod code {
    #![allow(missing_docs)]
    use super::dpu_error_t;
    pub const OK: dpu_error_t = 0;
    pub const INTERNAL: dpu_error_t = 1;
    pub const SYSTEM: dpu_error_t = 2;
    pub const ALLOCATION: dpu_error_t = 4;
    pub const INVALID_DPU_SET: dpu_error_t = 5;
    pub const INVALID_WRAM_ACCESS: dpu_error_t = 8;
    pub const INVALID_IRAM_ACCESS: dpu_error_t = 9;
    pub const INVALID_MRAM_ACCESS: dpu_error_t = 10;
    pub const INVALID_SYMBOL_ACCESS: dpu_error_t = 11;
    pub const INVALID_PARALLEL_MEMORY_TRANSFER: dpu_error_t = 14;
    pub const NO_PROGRAM_LOADED: dpu_error_t = 16;
    pub const DIFFERENT_DPU_PROGRAMS: dpu_error_t = 17;
    pub const DPU_DISABLED: dpu_error_t = 19;
    pub const DPU_ALREADY_RUNNING: dpu_error_t = 20;
    pub const INVALID_MEMORY_TRANSFER: dpu_error_t = 21;
    pub const INVALID_LAUNCH_POLICY: dpu_error_t = 22;
    pub const DPU_FAULT: dpu_error_t = 23;
    pub const ELF_INVALID_FILE: dpu_error_t = 24;
    pub const ELF_NO_SUCH_FILE: dpu_error_t = 25;
    pub const INVALID_PROFILE: dpu_error_t = 28;
    pub const UNKNOWN_SYMBOL: dpu_error_t = 29;
    pub const INVALID_BUFFER_SIZE: dpu_error_t = 36;
    pub const NONBLOCKING_SYNC_CALLBACK: dpu_error_t = 37;
    pub const TOO_MANY_TASKLETS: dpu_error_t = 38;
    pub const SG_TOO_MANY_BLOCKS: dpu_error_t = 39;
    pub const SG_LENGTH_MISMATCH: dpu_error_t = 40;
    pub const SG_NOT_ACTIVATED: dpu_error_t = 41;
    pub const SG_NOT_MRAM_SYMBOL: dpu_error_t = 42;
    pub const ASYNC_JOBS: dpu_error_t = upmem_sys::DPU_ERR_ASYNC_JOBS;
}

/// The strings of `dpu_error_to_string`, indexed by code.
const STRINGS: [&str; 43] = [
    "success",
    "internal error",
    "system error",
    "driver error",
    "dpu allocation error",
    "invalid action for this dpu set",
    "invalid thread id",
    "invalid notify id",
    "invalid wram access",
    "invalid iram access",
    "invalid mram access",
    "invalid memory symbol access",
    "mram is busy",
    "dpu transfer is already set",
    "invalid parallel transfer (should be to/from WRAM)",
    "cannot push to WRAM FIFO, FIFO full",
    "no program has been loaded in the dpu set",
    "cannot access symbol on dpus with different programs",
    "corrupted memory",
    "dpu is disabled",
    "dpu is already running",
    "invalid memory transfer",
    "invalid launch policy",
    "dpu is in fault",
    "invalid ELF file",
    "no such ELF file",
    "no such ELF section",
    "result timeout",
    "invalid profile",
    "undefined symbol",
    "logging format error",
    "logging context missing",
    "logging buffer too small",
    "invalid VPD file",
    "repairs have not been generated",
    "no thread to perform multiple-rank operation",
    "invalid buffer size",
    "nonblocking and synchronous callback is invalid",
    "dpu program uses more tasklets than the hardware has threads",
    "scatter/gather transfer prepare exceed max number of blocks",
    "scatter/gather transfer mismatch between nr bytes in blocks and length",
    "scatter/gather transfer not activated",
    "scatter/gather transfer unsupported symbol (must be a mram symbol)",
];

/// The SDK's text for a code ("unknown error" for values it does not define).
pub fn describe(error: dpu_error_t) -> String {
    let base = error & !code::ASYNC_JOBS;
    let text = STRINGS.get(base as usize).copied().unwrap_or("unknown error");
    if error & code::ASYNC_JOBS != 0 && base != 0 {
        format!("asynchronous operation error: {text}")
    } else if error == code::ASYNC_JOBS {
        "asynchronous operation error".into()
    } else {
        text.into()
    }
}

/// A failed libdpu call: the SDK code to return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DpuError(pub dpu_error_t);

/// Result of the library's internal functions.
pub type Result<T> = std::result::Result<T, DpuError>;

impl From<SimError> for DpuError {
    fn from(error: SimError) -> Self {
        let mapped = match &error {
            SimError::NoSuchDpu { .. } => code::INVALID_DPU_SET,
            SimError::DpuDisabled(_) => code::DPU_DISABLED,
            SimError::NoProgramLoaded(_) => code::NO_PROGRAM_LOADED,
            SimError::DpuRunning(_) | SimError::LaunchInProgress => code::DPU_ALREADY_RUNNING,
            SimError::OutOfBounds { .. } => code::INVALID_SYMBOL_ACCESS,
            SimError::UnknownSymbol { .. } => code::UNKNOWN_SYMBOL,
            SimError::HardwareBinary(_) | SimError::InvalidProgram { .. } => code::ELF_INVALID_FILE,
            SimError::TooManyTasklets { .. } => code::TOO_MANY_TASKLETS,
            SimError::WramOverflow { .. } | SimError::MramOverflow { .. } => code::ELF_INVALID_FILE,
            // libdpu 2025.1's ELF loader copies a program's text with dpu_copy_to_iram_for_rank (or _for_dpu),
            // which returns DPU_ERR_INVALID_IRAM_ACCESS for a range past the end of IRAM (disassembled).
            SimError::IramOverflow { .. } => code::INVALID_IRAM_ACCESS,
            // A DPU would load it: no SDK code says "laid out differently"; the program is not a valid one for
            // the host that shares these variables, which is what "invalid ELF file" says of a program.
            SimError::LayoutMismatch { .. } => code::ELF_INVALID_FILE,
            SimError::DpuFault { .. } => code::DPU_FAULT,
            SimError::InvalidConfig(_) => code::INVALID_PROFILE,
            SimError::Os { error, .. } if error.kind() == std::io::ErrorKind::NotFound => code::ELF_NO_SUCH_FILE,
            _ => code::SYSTEM,
        };
        // The SDK only returns a code; the simulator also says why, like libdpu's own log lines.
        if mapped != code::DPU_FAULT {
            eprintln!("libdpu (simulator): {error}");
        }
        DpuError(mapped)
    }
}
