//! A functional simulator of UPMEM DPUs: unchanged DPU C kernels run as native code in the DPU's own memory
//! map, each DPU's memories in shared memory, faults contained and explained.
//!
//! # Workflow
//!
//! 1. Write a DPU kernel in C against the UPMEM runtime headers (`<mram.h>`, `<defs.h>`, `<barrier.h>`, ...).
//! 2. Build it with [`KernelBuilder`] (from a `build.rs`) or the `dpu-upmem-dpurte-clang` command: the host C
//!    compiler produces a *simulated DPU binary* whose WRAM sits in a 64 KiB window at `0x00100000` and
//!    whose MRAM sits at the DPU's own MRAM window `0x08000000`, so kernels that keep MRAM addresses in
//!    `uint32_t` work unchanged.
//! 3. Create a [`Machine`] with a [`Topology`] (ranks, DPUs per rank, disabled DPUs, memory sizes).
//! 4. [`Machine::load`] a [`Program`] into DPUs, write inputs ([`Machine::write_symbol`], [`Machine::write`]),
//!    [`Machine::launch`] (or [`Machine::launch_async`] then [`Machine::wait`]), read results back, and read
//!    [`Machine::fault`], [`Machine::log`] and [`Machine::stats`].
//!
//! # How DPUs run
//!
//! Worker processes (one per host core by default) are started from the simulated binary. To run DPU `d`, a
//! worker maps `d`'s slices of the shared WRAM and MRAM files over the fixed windows (no copy) and runs the
//! kernel's `NR_TASKLETS` tasklets as coroutines, all starting at `main`, tasklet 0 first. Tasklets switch at
//! synchronisation points (barriers, mutexes, semaphores, handshakes) and, with
//! [`SimConfig::yield_on_dma`], at every DMA. Host reads and writes are memory copies into the shared files.
//!
//! # Faults
//!
//! What a DPU would reject, the simulator rejects, and says why ([`Fault`]): DMA misuse (size not a multiple
//! of 8 in 8..=2048, ranges outside MRAM or WRAM), heap overflow, more than 24 tasklets, WRAM or MRAM
//! overflow, deadlock (every live tasklet blocked), `assert`, `halt`, printf overflow, division by zero and any
//! signal, and a hang past [`SimConfig::hang_limit`]. The faulting DPU is in fault, the host process keeps
//! running, a worker that took a signal is replaced, and the next launch works. [`SimConfig::strict`] also
//! faults on what the documentation forbids but the hardware tolerates (unaligned and 0-byte DMA, ...).
//!
//! # Cycle model
//!
//! `perfcounter_get()` and [`DpuStats::cycles`] count modelled DPU cycles: every DMA costs
//! `alpha + bytes / 2` cycles (alpha = 77 for `mram_read`, 61 for `mram_write`, from the PrIM measurements),
//! and the rest is estimated from the CPU time the worker spends on the DPU: 3.5 DPU instructions per nanosecond,
//! one instruction per cycle with at least 11 tasklets, and `11 / NR_TASKLETS` cycles per instruction with
//! fewer (the DPU's pipeline issues from a given tasklet every 11 cycles). The DMA part is exact and
//! deterministic; the rest is an estimate that varies with the host. `CLOCKS_PER_SEC` is 350 MHz.
//!
//! # Who checks what
//!
//! The machine checks DPU indices, that DPUs are enabled, loaded and idle, and bounds of every host access.
//! Alignment rules of the SDK's host transfers are the business of the libdpu layer above it.
//!
//! The simulator runs on Linux, x86-64 and aarch64.

#[cfg(not(target_os = "linux"))]
compile_error!("upmem-sim runs on Linux (x86-64 and aarch64): it needs memfd, MAP_FIXED windows and Linux signals");

mod builder;
mod config;
mod control;
mod error;
mod fault;
mod layout;
mod machine;
mod memory;
mod overlay;
mod program;
mod runtime;
mod stats;
mod worker;

pub use builder::{BuildError, KernelBuilder};
pub use config::{SimConfig, Topology};
pub use error::{Result, SimError};
pub use fault::{Fault, FaultKind};
pub use layout::{
    CLOCK_HZ, DEFAULT_MRAM_SIZE, DEFAULT_WRAM_SIZE, DMA_MAX, MAX_TASKLETS, MRAM_BASE, MRAM_WINDOW, WRAM_BASE,
};
pub use machine::{DpuState, Machine};
pub use program::{MemoryKind, Program, Symbol, MRAM_HEAP_SYMBOL};
pub use stats::{DpuStats, TaskletStats};
