//! The simulator's error type.

use std::path::PathBuf;

use crate::fault::Fault;
use upmem_types::ChipVersion;

/// Everything that can go wrong in the simulator core. Each variant names the input and the limit involved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The simulator needs Linux on x86-64 or aarch64.
    #[error("the UPMEM simulator runs on Linux (x86-64 and aarch64) only, not on {0}")]
    UnsupportedPlatform(&'static str),
    /// The machine's configuration is not usable.
    #[error("invalid simulator configuration: {0}")]
    InvalidConfig(String),
    /// A DPU index outside the machine.
    #[error("DPU {dpu} does not exist: the machine has {nr_dpus} DPUs")]
    NoSuchDpu {
        /// The index given.
        dpu: u32,
        /// DPUs in the machine (enabled or not).
        nr_dpus: u32,
    },
    /// The DPU is disabled in the topology, as faulty DPUs are on real servers.
    #[error("DPU {0} is disabled")]
    DpuDisabled(u32),
    /// The DPU has no program loaded.
    #[error("DPU {0} has no program loaded")]
    NoProgramLoaded(u32),
    /// The DPU is running, so its memories and program cannot change now.
    #[error("DPU {0} is running")]
    DpuRunning(u32),
    /// A memory access outside a DPU memory or symbol.
    #[error("{what} of {length} bytes at offset {offset} is out of bounds: {memory} has {size} bytes")]
    OutOfBounds {
        /// The operation.
        what: &'static str,
        /// The memory or symbol accessed.
        memory: String,
        /// The offset given.
        offset: u64,
        /// The length given.
        length: u64,
        /// The size of that memory or symbol.
        size: u64,
    },
    /// The program has no symbol with that name.
    #[error("the program {program} has no symbol `{symbol}`")]
    UnknownSymbol {
        /// The program's path.
        program: PathBuf,
        /// The name looked up.
        symbol: String,
    },
    /// The file is a real DPU binary, which the simulator cannot run.
    #[error(
        "{0} is a DPU binary for UPMEM hardware (ELF machine EM_DPU); the simulator runs programs built for it: \
         compile the same sources with upmem-sim's `dpu-upmem-dpurte-clang` or `KernelBuilder`"
    )]
    HardwareBinary(PathBuf),
    /// The file is not a simulated DPU binary.
    #[error("{path} is not a simulated DPU program: {reason}")]
    InvalidProgram {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The program was built with more tasklets than the DPUs have threads.
    #[error("{path} uses {nr_tasklets} tasklets, but a {chip} DPU has {} hardware threads", chip.hardware_threads())]
    TooManyTasklets {
        /// The program.
        path: PathBuf,
        /// Its NR_TASKLETS.
        nr_tasklets: u32,
        /// The DPUs' chip version, whose thread count is the limit.
        chip: ChipVersion,
    },
    /// The program's WRAM (globals and nominal stacks) does not fit.
    #[error("{path} needs {needed} bytes of WRAM (globals and tasklet stacks) but a DPU has {available}")]
    WramOverflow {
        /// The program.
        path: PathBuf,
        /// Static WRAM plus stacks.
        needed: u64,
        /// WRAM size.
        available: u64,
    },
    /// The program's MRAM variables do not fit.
    #[error("{path} needs {needed} bytes of MRAM for its variables but a DPU has {available}")]
    MramOverflow {
        /// The program.
        path: PathBuf,
        /// MRAM variables' size.
        needed: u64,
        /// MRAM size.
        available: u64,
    },
    /// Strict mode: the program is estimated larger than a DPU's IRAM (its build warned of it).
    #[error(
        "{path} is estimated at {estimated} DPU instructions, more than the {available} a DPU's IRAM holds; \
         strict mode does not load it"
    )]
    IramOverflow {
        /// The program.
        path: PathBuf,
        /// Its estimated size in DPU instructions.
        estimated: u32,
        /// IRAM's size in instructions.
        available: u32,
    },
    /// Strict mode: variables the host reaches by name have another layout on a DPU (its build warned of them).
    #[error(
        "{path}: strict mode does not load a program whose shared variables a DPU lays out differently: {}",
        differences.join("; ")
    )]
    LayoutMismatch {
        /// The program.
        path: PathBuf,
        /// Each difference, as the build warned of it.
        differences: Vec<String>,
    },
    /// One or more DPUs faulted during a launch.
    #[error("{count} DPU(s) in fault; first: {first}")]
    DpuFault {
        /// How many DPUs faulted.
        count: usize,
        /// The first fault (lowest DPU index).
        first: Box<Fault>,
    },
    /// A launch named the same DPU more than once.
    #[error("DPU {0} is named more than once in one launch")]
    DuplicateDpu(u32),
    /// A launch was asked while one is in progress.
    #[error("a launch is already in progress on this machine")]
    LaunchInProgress,
    /// A worker process could not be started or talked to.
    #[error("simulator worker for {program}: {reason}")]
    Worker {
        /// The program the worker runs.
        program: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// An operating-system call failed.
    // The OS error is in the message, so it is not also reported as the source (a chain would print it twice).
    #[error("{what}: {error}")]
    Os {
        /// The operation.
        what: String,
        /// The OS error.
        error: std::io::Error,
    },
}

impl SimError {
    pub(crate) fn os(what: impl Into<String>, error: std::io::Error) -> Self {
        SimError::Os { what: what.into(), error }
    }
}

/// Result type of the simulator core.
pub type Result<T, E = SimError> = std::result::Result<T, E>;
