//! Loading programs and finding their symbols: `dpu_load`, `dpu_load_from_memory`, `dpu_load_from_incbin`,
//! `dpu_get_symbol`.

use std::ffi::{c_char, CStr, OsStr};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::sync::Arc;

use upmem_sim::Program;

use crate::error::{code, DpuError, Result};
use crate::server::{existing, server, ProgramEntry, Server};
use crate::types::{dpu_error_t, dpu_incbin_t, dpu_set_t, dpu_symbol_t};
use crate::{guard, write_out};

/// `struct dpu_program_t`: opaque to C.
#[allow(non_camel_case_types)]
pub type dpu_program_t = ProgramEntry;

/// The program every DPU of `dpus` runs (`DPU_ERR_NO_PROGRAM_LOADED`, `DPU_ERR_DIFFERENT_DPU_PROGRAMS`).
pub fn common_program(server: &Server, dpus: &[u32]) -> Result<Arc<Program>> {
    let mut common: Option<&Arc<Program>> = None;
    for &dpu in dpus {
        let program = server.machine.program(dpu).map_err(|_| DpuError(code::NO_PROGRAM_LOADED))?;
        match common {
            Some(first) if !Arc::ptr_eq(first, program) => return Err(DpuError(code::DIFFERENT_DPU_PROGRAMS)),
            _ => common = Some(program),
        }
    }
    common.cloned().ok_or(DpuError(code::NO_PROGRAM_LOADED))
}

fn load_entry(
    set: &dpu_set_t,
    find: impl FnOnce(&mut Server) -> Result<*mut ProgramEntry>,
    out: *mut *mut dpu_program_t,
) -> Result<()> {
    let mut guard = server();
    let server = existing(&mut guard)?;
    let dpus = server.dpus_of(set)?;
    let entry = find(server)?;
    // SAFETY: the entry is boxed in the server's program table, which drops entries only in
    // `forget_unused_programs`, called below once the entry is no longer read.
    let program = Arc::clone(unsafe { &(*entry).program });
    let loaded = server.machine.load(&dpus, &program);
    drop(program);
    // The programs these DPUs ran before, or this one if the load failed, may be unused now.
    server.forget_unused_programs();
    loaded?;
    if !out.is_null() {
        // A program from memory loaded into no DPU (an empty set) is already gone: no handle for it.
        let handle = if server.program_entry(entry).is_some() { entry } else { std::ptr::null_mut() };
        // SAFETY: a non-null `program` argument points to writable storage (libdpu's contract).
        unsafe { out.write(handle) };
    }
    Ok(())
}

/// `dpu_load`: the simulated binary at `binary_path` into every DPU of the set.
///
/// # Safety
/// `binary_path` is a C string; `program` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_load(
    set: dpu_set_t,
    binary_path: *const c_char,
    program: *mut *mut dpu_program_t,
) -> dpu_error_t {
    guard(|| {
        if binary_path.is_null() {
            return Err(DpuError(code::ELF_NO_SUCH_FILE));
        }
        // SAFETY: guaranteed by the caller.
        let path = Path::new(OsStr::from_bytes(unsafe { CStr::from_ptr(binary_path) }.to_bytes()));
        load_entry(&set, |server| server.program(path), program)
    })
}

/// `dpu_load_from_memory`.
///
/// # Safety
/// `buffer` holds `size` readable bytes; `program` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_load_from_memory(
    set: dpu_set_t,
    buffer: *mut u8,
    size: usize,
    program: *mut *mut dpu_program_t,
) -> dpu_error_t {
    guard(|| {
        if buffer.is_null() {
            return Err(DpuError(code::ELF_INVALID_FILE));
        }
        // SAFETY: guaranteed by the caller.
        let bytes = unsafe { std::slice::from_raw_parts(buffer, size) };
        load_entry(&set, |server| server.program_from_bytes(bytes), program)
    })
}

/// `dpu_load_from_incbin`.
///
/// # Safety
/// `incbin` points to a `struct dpu_incbin_t` made by `DPU_INCBIN`; `program` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_load_from_incbin(
    set: dpu_set_t,
    incbin: *mut dpu_incbin_t,
    program: *mut *mut dpu_program_t,
) -> dpu_error_t {
    if incbin.is_null() {
        return code::ELF_INVALID_FILE;
    }
    // SAFETY: guaranteed by the caller.
    let incbin = unsafe { *incbin };
    // SAFETY: the incbin's buffer holds `size` bytes (DPU_INCBIN).
    unsafe { dpu_load_from_memory(set, incbin.buffer, incbin.size, program) }
}

/// `dpu_get_symbol`.
///
/// # Safety
/// `program` came from a `dpu_load*` call; `symbol_name` is a C string; `symbol` is writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_get_symbol(
    program: *mut dpu_program_t,
    symbol_name: *const c_char,
    symbol: *mut dpu_symbol_t,
) -> dpu_error_t {
    guard(|| {
        let guard = server();
        let server = guard.as_ref().ok_or(DpuError(code::NO_PROGRAM_LOADED))?;
        let entry = server.program_entry(program).ok_or(DpuError(code::NO_PROGRAM_LOADED))?;
        if symbol_name.is_null() {
            return Err(DpuError(code::UNKNOWN_SYMBOL));
        }
        // SAFETY: guaranteed by the caller.
        let name = unsafe { CStr::from_ptr(symbol_name) }.to_string_lossy();
        let found =
            entry.program.symbol(&name, server.machine.topology().mram_size).ok_or(DpuError(code::UNKNOWN_SYMBOL))?;
        // SAFETY: guaranteed by the caller.
        unsafe { write_out(symbol, dpu_symbol_t { address: found.address, size: found.size }) }
    })
}
