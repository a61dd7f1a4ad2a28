//! The UPMEM SDK, emulated over the upmem-sim simulator, so that unchanged UPMEM programs and makefiles build
//! and run without hardware:
//!
//! - `libdpu`: the SDK 2025.1 host API (`dpu.h`), built as `libdpu.so` and `libdpu.a`, and the SDK's C++ API
//!   over it (`dpu.hpp`, included as `<dpu>`: `dpu::DpuSet`, an inline header);
//! - `dpu-upmem-dpurte-clang`: builds DPU C sources into simulated DPU binaries, taking the SDK compiler's flags,
//!   or with `-c` into DPU objects, which it links, as static libraries of them, later;
//! - `dpu-pkg-config`: answers `--cflags --libs dpu` with these headers and this library;
//! - `upmem-sim-clang`: the SDK environment's `clang`, for makefiles that call `clang --target=dpu-upmem-dpurte`
//!   (it builds those for the simulator, and passes every other command line to the host's clang);
//! - `fallback_sim/upmem_env.sh`: puts them on `PATH` (`upmem-sim-clang` as `clang`), like the SDK's
//!   `upmem_env.sh`.
//!
//! The headers are in `include/dpu/` (`dpu.h` and the headers it names, the low-level `dpu_log.h`,
//! `dpu_log_internals.h`, `dpu_management.h`, `dpu_memory.h`, the C++ API's `dpu.hpp` and `dpu`, and our extension
//! `dpu_sim.h`).
//!
//! The process has one simulated server, made at the first allocation from the profile (see [`profile`]);
//! by default 40 ranks of 64 DPUs (2,560 DPUs), whose memories cost only what is written. Every call checks
//! its set, symbol, sizes and alignment as libdpu does and returns the SDK's error code; where the SDK only
//! says "dpu is in fault", the reason (DPU, tasklet, kind, address) is printed to stderr and available from
//! `dpu_sim_fault_reason`.

pub mod error;
mod launch;
mod logging;
mod management;
pub mod profile;
mod program;
mod server;
mod sets;
mod timeline;
mod transfer;
pub mod types;

use std::panic::{catch_unwind, AssertUnwindSafe};

use error::{code, DpuError, Result};
use types::dpu_error_t;

/// Runs an API call's body: its error becomes the returned code, and a panic (a bug) becomes
/// `DPU_ERR_INTERNAL` instead of unwinding into C.
pub(crate) fn guard(body: impl FnOnce() -> Result<()>) -> dpu_error_t {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => code::OK,
        Ok(Err(DpuError(error))) => error,
        Err(_) => {
            eprintln!("libdpu (simulator): internal error (a bug in the simulator; please report it)");
            code::INTERNAL
        }
    }
}

/// Writes an output parameter, refusing a null pointer.
///
/// # Safety
/// `out` is null or valid for writes of `T`.
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T) -> Result<()> {
    if out.is_null() {
        return Err(DpuError(code::INVALID_BUFFER_SIZE));
    }
    // SAFETY: non-null and valid per the caller.
    unsafe { out.write(value) };
    Ok(())
}
