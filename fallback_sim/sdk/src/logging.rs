//! Logs, error strings and the simulator's explanations: `dpu_log_read`, `dpulog_read_for_dpu`,
//! `dpulog_read_for_dpu_`, `dpu_error_to_string`, and `dpu_sim.h`'s `dpu_sim_fault_reason` and `dpu_sim_stats`.

use std::ffi::{c_char, c_int, c_void, CString};

use crate::error::{code, describe, DpuError, Result};
use crate::management::sdk_dpu_id;
use crate::server::{existing, server};
use crate::types::{
    dpu_error_t, dpu_set_t, dpu_sim_instruction_class, dpu_sim_instructions, dpu_sim_stats, dpu_sim_timing, dpu_t,
    DPU_SIM_MAX_TASKLETS,
};
use crate::{guard, write_out};

/// Writes all of `bytes` to a C stream.
fn write_to_stream(stream: *mut libc::FILE, bytes: &[u8]) -> Result<()> {
    // SAFETY: `stream` is the caller's open FILE (checked non-null by the callers); the buffer is valid for its
    // length.
    let written = unsafe { libc::fwrite(bytes.as_ptr().cast(), 1, bytes.len(), stream) };
    if written != bytes.len() {
        return Err(DpuError(code::SYSTEM));
    }
    Ok(())
}

/// The line `dpu_log_read` prints before a DPU's log: `DPU_LOG_FORMAT_HEADER` (`dpu_log_internals.h`) with the
/// DPU's `dpu_get_id`.
fn log_header(dpu_id: u32) -> String {
    format!("=== DPU#0x{dpu_id:x} ===\n")
}

/// `dpu_log_read`: prints a line naming a single DPU, then what it printed during its last launch.
///
/// libdpu 2025.1 prints the line with `fprintf` and the DPU's `dpu_get_id` before it looks at the set, then
/// returns `DPU_ERR_INVALID_DPU_SET` for a set that is not one DPU, or reads the log as `dpulog_read_for_dpu`
/// does (disassembled). For a set of ranks it reads the id of a NULL DPU and crashes; here such a set, or a
/// null stream, is refused before anything is printed.
///
/// # Safety
/// `stream` is an open `FILE *`.
#[no_mangle]
pub unsafe extern "C" fn dpu_log_read(set: dpu_set_t, stream: *mut libc::FILE) -> dpu_error_t {
    guard(|| {
        let (id, log) = {
            let mut guard = server();
            let server = existing(&mut guard)?;
            let index = server.single_dpu(&set)?;
            (sdk_dpu_id(server, &server.dpus[index as usize]), server.machine.log(index))
        };
        if stream.is_null() {
            return Err(DpuError(code::INVALID_BUFFER_SIZE));
        }
        // The lock is released: a stream may be a program's own (fopencookie) that calls the API.
        write_to_stream(stream, log_header(id).as_bytes())?;
        write_to_stream(stream, &log?)
    })
}

/// `dpulog_read_for_dpu` (`dpu_log.h`), the older entry point PrIM uses with `dpu.dpu`.
///
/// # Safety
/// `stream` is an open `FILE *`.
#[no_mangle]
pub unsafe extern "C" fn dpulog_read_for_dpu(dpu: *mut dpu_t, stream: *mut libc::FILE) -> dpu_error_t {
    guard(|| {
        let log = {
            let mut guard = server();
            let server = existing(&mut guard)?;
            let index = server.dpu_of(dpu)?;
            server.machine.log(index)?
        };
        if stream.is_null() {
            return Err(DpuError(code::INVALID_BUFFER_SIZE));
        }
        write_to_stream(stream, &log)
    })
}

/// `dpu_log_print_fct_t` (`dpu_log_internals.h`): how `dpulog_read_for_dpu_` hands the log to its caller.
#[allow(non_camel_case_types)]
pub type dpu_log_print_fct_t =
    Option<unsafe extern "C" fn(arg: *mut c_void, format: *const c_char, ...) -> dpu_error_t>;

/// `dpulog_read_for_dpu_` (`dpu_log_internals.h`, used by the SDK's C++ API): passes what the DPU printed
/// during its last launch to `print_fct`, as one `"%.*s"` call with the text (none when it printed nothing); a
/// failure `print_fct` returns is returned.
///
/// # Safety
/// `print_fct` is null or a function that accepts a `printf` format and its arguments, and `arg` is what it
/// expects as its first argument.
#[no_mangle]
pub unsafe extern "C" fn dpulog_read_for_dpu_(
    dpu: *mut dpu_t,
    print_fct: dpu_log_print_fct_t,
    arg: *mut c_void,
) -> dpu_error_t {
    guard(|| {
        let print_fct = print_fct.ok_or(DpuError(code::INVALID_BUFFER_SIZE))?;
        let text = {
            let mut guard = server();
            let server = existing(&mut guard)?;
            let id = server.dpu_of(dpu)?;
            server.machine.log(id)?
        };
        // The lock is released: the printer may call the API.
        for part in text.chunks(c_int::MAX as usize) {
            // SAFETY: the caller's printer, given a format whose one conversion takes the part's length and bytes.
            let status = unsafe { print_fct(arg, c"%.*s".as_ptr(), part.len() as c_int, part.as_ptr()) };
            if status != code::OK {
                return Err(DpuError(status));
            }
        }
        Ok(())
    })
}

/// `dpu_error_to_string`: a `malloc`'d string the caller frees.
#[no_mangle]
pub extern "C" fn dpu_error_to_string(status: dpu_error_t) -> *mut c_char {
    let text = CString::new(describe(status)).expect("error strings have no NUL");
    // SAFETY: strdup copies a valid C string into malloc'd memory (NULL if out of memory, as libdpu).
    unsafe { libc::strdup(text.as_ptr()) }
}

/// `dpu_sim_fault_reason`: why a single DPU is in fault ("" when it is not).
///
/// # Safety
/// `buffer` has room for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn dpu_sim_fault_reason(dpu: dpu_set_t, buffer: *mut c_char, size: usize) -> dpu_error_t {
    guard(|| {
        let mut guard = server();
        let server = existing(&mut guard)?;
        let id = server.single_dpu(&dpu)?;
        let reason = server.machine.fault(id)?.map(|fault| fault.to_string()).unwrap_or_default();
        if buffer.is_null() || size == 0 {
            return Err(DpuError(code::INVALID_BUFFER_SIZE));
        }
        let length = reason.len().min(size - 1);
        // SAFETY: length + 1 <= size bytes are writable per the caller.
        unsafe {
            std::ptr::copy_nonoverlapping(reason.as_ptr().cast(), buffer, length);
            buffer.add(length).write(0);
        }
        Ok(())
    })
}

/// `dpu_sim_stats`: what a single DPU did during its last launch.
///
/// # Safety
/// `stats` is writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_sim_stats(dpu: dpu_set_t, stats: *mut dpu_sim_stats) -> dpu_error_t {
    guard(|| {
        let mut guard = server();
        let server = existing(&mut guard)?;
        let id = server.single_dpu(&dpu)?;
        let measured = server.machine.stats(id)?;
        let total = measured.total();
        let value = dpu_sim_stats {
            cycles: measured.cycles,
            dma_cycles: measured.dma_cycles,
            dma_read_bytes: total.dma_read_bytes,
            dma_write_bytes: total.dma_write_bytes,
            dma_read_ops: total.dma_read_ops,
            dma_write_ops: total.dma_write_ops,
            sync_waits: total.sync_waits,
            nr_tasklets: measured.nr_tasklets,
            reserved: 0,
        };
        // SAFETY: guaranteed by the caller.
        unsafe { write_out(stats, value) }
    })
}

/// `dpu_sim_timing`: the timing model's figures for a single DPU's last launch.
///
/// # Safety
/// `timing` is writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_sim_timing(dpu: dpu_set_t, timing: *mut dpu_sim_timing) -> dpu_error_t {
    guard(|| {
        let mut guard = server();
        let server = existing(&mut guard)?;
        let id = server.single_dpu(&dpu)?;
        let measured = server.machine.stats(id)?;
        let mut value = dpu_sim_timing {
            cycles: measured.cycles,
            instructions: measured.instructions,
            dma_cycles: measured.dma_cycles,
            nr_tasklets: measured.nr_tasklets,
            ..dpu_sim_timing::default()
        };
        for (t, tasklet) in measured.tasklets.iter().enumerate().take(DPU_SIM_MAX_TASKLETS as usize) {
            value.tasklet_instructions[t] = tasklet.instructions;
            value.tasklet_cycles[t] = tasklet.cycles;
        }
        // SAFETY: guaranteed by the caller.
        unsafe { write_out(timing, value) }
    })
}

/// `dpu_sim_instructions`: a single DPU's last launch, DPU instructions by class.
///
/// # Safety
/// `instructions` is writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_sim_instructions(dpu: dpu_set_t, instructions: *mut dpu_sim_instructions) -> dpu_error_t {
    guard(|| {
        let mut guard = server();
        let server = existing(&mut guard)?;
        let id = server.single_dpu(&dpu)?;
        let measured = server.machine.stats(id)?;
        let value = dpu_sim_instructions { total: measured.instructions, by_class: measured.instructions_by_class };
        // SAFETY: guaranteed by the caller.
        unsafe { write_out(instructions, value) }
    })
}

/// `dpu_sim_instruction_class_name`: a class's short name, a static NUL-terminated string; null out of range.
#[no_mangle]
pub extern "C" fn dpu_sim_instruction_class_name(instruction_class: dpu_sim_instruction_class) -> *const c_char {
    /// The names of `InstructionClass::ALL`, NUL-terminated, built once.
    static NAMES: std::sync::OnceLock<Vec<CString>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        upmem_sim::InstructionClass::ALL
            .iter()
            .map(|class| CString::new(class.name()).expect("class names have no NUL"))
            .collect()
    });
    names.get(instruction_class as usize).map_or(std::ptr::null(), |name| name.as_ptr())
}
