//! Host <-> DPU transfers: `dpu_copy_to/from`, `dpu_broadcast_to`, `dpu_prepare_xfer`, `dpu_push_xfer`,
//! `dpu_push_sg_xfer` (and their `_symbol` forms).
//!
//! Checks follow libdpu's order: the set, its common program and the symbol, then bounds
//! (`DPU_ERR_INVALID_SYMBOL_ACCESS`), then alignment (MRAM: offset and length multiples of 8,
//! `DPU_ERR_INVALID_MRAM_ACCESS`; WRAM: multiples of 4, `DPU_ERR_INVALID_WRAM_ACCESS`). Copies to many DPUs
//! run in parallel on the host's cores. Asynchronous transfers complete before the call returns, which is one
//! of the orders the SDK allows (buffers must stay alive until `dpu_sync` either way); like every transfer, they
//! run after the asynchronous launch still running on their DPUs, if any, as libdpu's per-rank job queues order
//! them.

use std::ffi::{c_char, c_void, CStr};
use std::time::Instant;

use rayon::prelude::*;
use upmem_sim::{Machine, MemoryKind, MRAM_BASE};
use upmem_types::transfer_model::Operation;

use crate::error::{code, DpuError, Result};
use crate::guard;
use crate::launch::after_launch;
use crate::program::common_program;
use crate::server::{existing, server, Server};
use crate::types::*;

/// A symbol given by name or as a `struct dpu_symbol_t`.
#[derive(Clone, Copy)]
enum SymbolRef<'a> {
    Name(&'a str),
    Resolved(dpu_symbol_t),
}

/// Where a transfer lands in each DPU.
struct Target {
    dpus: Vec<u32>,
    memory: MemoryKind,
    offset: u64,
}

/// A host address that rayon may pass between threads: the C caller guarantees the buffers are valid and
/// does not touch them until the call returns.
#[derive(Clone, Copy)]
struct HostBuffer(*mut u8);
// SAFETY: see above; each buffer is used by one thread at a time except broadcasts, which only read it.
unsafe impl Send for HostBuffer {}
// SAFETY: as above.
unsafe impl Sync for HostBuffer {}

/// # Safety
/// `name` is a C string.
unsafe fn name_of<'a>(name: *const c_char) -> Result<&'a str> {
    if name.is_null() {
        return Err(DpuError(code::UNKNOWN_SYMBOL));
    }
    // SAFETY: guaranteed by the caller.
    unsafe { CStr::from_ptr(name) }.to_str().map_err(|_| DpuError(code::UNKNOWN_SYMBOL))
}

fn resolve(server: &Server, dpus: Vec<u32>, symbol: SymbolRef<'_>, offset: u32, length: usize) -> Result<Target> {
    let symbol = match symbol {
        SymbolRef::Resolved(symbol) => symbol,
        SymbolRef::Name(name) => {
            if dpus.is_empty() {
                return Ok(Target { dpus, memory: MemoryKind::Mram, offset: 0 });
            }
            let program = common_program(server, &dpus)?;
            let found =
                program.symbol(name, server.machine.topology().mram_size).ok_or(DpuError(code::UNKNOWN_SYMBOL))?;
            dpu_symbol_t { address: found.address, size: found.size }
        }
    };
    if u64::from(offset) + length as u64 > u64::from(symbol.size) {
        return Err(DpuError(code::INVALID_SYMBOL_ACCESS));
    }
    let address = u64::from(symbol.address);
    let (memory, base) = if address & 0x8000_0000 != 0 {
        return Err(DpuError(code::INVALID_MEMORY_TRANSFER)); // IRAM: the simulator runs native code
    } else if address & MRAM_BASE != 0 {
        (MemoryKind::Mram, address & !MRAM_BASE)
    } else {
        (MemoryKind::Wram, address)
    };
    let target = base + u64::from(offset);
    match memory {
        MemoryKind::Mram if target % 8 != 0 || !length.is_multiple_of(8) => Err(DpuError(code::INVALID_MRAM_ACCESS)),
        MemoryKind::Wram if target % 4 != 0 || !length.is_multiple_of(4) => Err(DpuError(code::INVALID_WRAM_ACCESS)),
        _ => Ok(Target { dpus, memory, offset: target }),
    }
}

/// Copies one host buffer per DPU (`None`: skipped), in parallel.
///
/// C may prepare one buffer for several DPUs. Into DPUs that is one source read many times; out of DPUs only
/// the last of them (in set order) is copied, as a sequential libdpu's last copy would win, so that no two
/// threads ever write one buffer.
fn copy(machine: &Machine, target: &Target, buffers: &[Option<HostBuffer>], length: usize, to_dpu: bool) -> Result<()> {
    if length == 0 {
        return Ok(());
    }
    let mut buffers = buffers.to_vec();
    if !to_dpu {
        let mut seen = std::collections::HashSet::new();
        for buffer in buffers.iter_mut().rev() {
            if let Some(HostBuffer(pointer)) = *buffer {
                if !seen.insert(pointer) {
                    *buffer = None;
                }
            }
        }
    }
    target.dpus.par_iter().zip(&buffers).try_for_each(|(&dpu, buffer)| {
        let Some(HostBuffer(pointer)) = *buffer else { return Ok(()) };
        if to_dpu {
            // SAFETY: the caller of the API call guarantees `length` readable bytes at the buffer.
            let data = unsafe { std::slice::from_raw_parts(pointer, length) };
            machine.write(dpu, target.memory, target.offset, data)
        } else {
            // SAFETY: the caller guarantees `length` writable bytes, not used elsewhere during the call.
            let data = unsafe { std::slice::from_raw_parts_mut(pointer, length) };
            machine.read(dpu, target.memory, target.offset, data)
        }
    })?;
    Ok(())
}

fn broadcast(set: dpu_set_t, symbol: SymbolRef<'_>, offset: u32, source: *const c_void, length: usize) -> Result<()> {
    let started = Instant::now();
    let mut guard = server();
    let server = existing(&mut guard)?;
    let dpus = server.dpus_of(&set)?;
    after_launch(server, &dpus)?;
    let target = resolve(server, dpus, symbol, offset, length)?;
    if length > 0 && source.is_null() {
        return Err(DpuError(code::INVALID_BUFFER_SIZE));
    }
    share(&mut server.machine, &target, HostBuffer(source.cast_mut().cast()), length)?;
    let operation = if set.kind == DPU_SET_DPU { Operation::CopyTo } else { Operation::Broadcast };
    server.record_transfer(operation, &target.dpus, length, started);
    Ok(())
}

/// Writes one host buffer to every DPU of `target`: a large one as a broadcast whose whole pages the DPUs
/// share copy-on-write (see `Machine::broadcast`), a small one copied to each DPU in parallel.
fn share(machine: &mut Machine, target: &Target, source: HostBuffer, length: usize) -> Result<()> {
    /// Below this, copies cost less than sharing (and `Machine::broadcast` would copy anyway).
    const SHARED_BROADCAST_MIN: usize = 64 << 10;
    if length < SHARED_BROADCAST_MIN {
        return copy(machine, target, &vec![Some(source); target.dpus.len()], length, true);
    }
    // SAFETY: the caller of the API call guarantees `length` readable bytes at the buffer.
    let data = unsafe { std::slice::from_raw_parts(source.0.cast_const(), length) };
    machine.broadcast(&target.dpus, target.memory, target.offset, data)?;
    Ok(())
}

fn copy_from_one(
    set: dpu_set_t,
    symbol: SymbolRef<'_>,
    offset: u32,
    destination: *mut c_void,
    length: usize,
) -> Result<()> {
    let started = Instant::now();
    let mut guard = server();
    let server = existing(&mut guard)?;
    let dpu = server.single_dpu(&set)?;
    let dpus = server.dpus_of(&set)?;
    after_launch(server, &dpus)?;
    debug_assert_eq!(dpus, [dpu]);
    let target = resolve(server, dpus, symbol, offset, length)?;
    if length > 0 && destination.is_null() {
        return Err(DpuError(code::INVALID_BUFFER_SIZE));
    }
    copy(&server.machine, &target, &[Some(HostBuffer(destination.cast()))], length, false)?;
    server.record_transfer(Operation::CopyFrom, &target.dpus, length, started);
    Ok(())
}

/// `dpu_copy_to`: the same bytes to every DPU of the set.
///
/// # Safety
/// `symbol_name` is a C string; `src` holds `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn dpu_copy_to(
    set: dpu_set_t,
    symbol_name: *const c_char,
    symbol_offset: u32,
    src: *const c_void,
    length: usize,
) -> dpu_error_t {
    // SAFETY: forwarded from the caller.
    guard(|| broadcast(set, SymbolRef::Name(unsafe { name_of(symbol_name)? }), symbol_offset, src, length))
}

/// `dpu_copy_to_symbol`.
///
/// # Safety
/// `src` holds `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn dpu_copy_to_symbol(
    set: dpu_set_t,
    symbol: dpu_symbol_t,
    symbol_offset: u32,
    src: *const c_void,
    length: usize,
) -> dpu_error_t {
    guard(|| broadcast(set, SymbolRef::Resolved(symbol), symbol_offset, src, length))
}

/// `dpu_broadcast_to`.
///
/// # Safety
/// `symbol_name` is a C string; `src` holds `length` bytes (until `dpu_sync` with `DPU_XFER_ASYNC`).
#[no_mangle]
pub unsafe extern "C" fn dpu_broadcast_to(
    set: dpu_set_t,
    symbol_name: *const c_char,
    symbol_offset: u32,
    src: *const c_void,
    length: usize,
    _flags: u32,
) -> dpu_error_t {
    // SAFETY: forwarded from the caller.
    guard(|| broadcast(set, SymbolRef::Name(unsafe { name_of(symbol_name)? }), symbol_offset, src, length))
}

/// `dpu_broadcast_to_symbol`.
///
/// # Safety
/// `src` holds `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn dpu_broadcast_to_symbol(
    set: dpu_set_t,
    symbol: dpu_symbol_t,
    symbol_offset: u32,
    src: *const c_void,
    length: usize,
    _flags: u32,
) -> dpu_error_t {
    guard(|| broadcast(set, SymbolRef::Resolved(symbol), symbol_offset, src, length))
}

/// `dpu_copy_from`: a single DPU only.
///
/// # Safety
/// `symbol_name` is a C string; `dst` has room for `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn dpu_copy_from(
    set: dpu_set_t,
    symbol_name: *const c_char,
    symbol_offset: u32,
    dst: *mut c_void,
    length: usize,
) -> dpu_error_t {
    // SAFETY: forwarded from the caller.
    guard(|| copy_from_one(set, SymbolRef::Name(unsafe { name_of(symbol_name)? }), symbol_offset, dst, length))
}

/// `dpu_copy_from_symbol`.
///
/// # Safety
/// `dst` has room for `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn dpu_copy_from_symbol(
    set: dpu_set_t,
    symbol: dpu_symbol_t,
    symbol_offset: u32,
    dst: *mut c_void,
    length: usize,
) -> dpu_error_t {
    guard(|| copy_from_one(set, SymbolRef::Resolved(symbol), symbol_offset, dst, length))
}

/// `dpu_prepare_xfer`: records `buffer` as the pending host buffer of every enabled DPU of the set (NULL
/// clears it); a later prepare overrides, as the 2022/2023 libdpu does.
#[no_mangle]
pub extern "C" fn dpu_prepare_xfer(set: dpu_set_t, buffer: *mut c_void) -> dpu_error_t {
    guard(|| {
        let mut guard = server();
        let server = existing(&mut guard)?;
        for dpu in server.dpus_of(&set)? {
            let (rank, member) = (server.dpus[dpu as usize].rank, server.dpus[dpu as usize].member);
            server.ranks[rank as usize].transfer_matrix[member as usize] = buffer;
        }
        Ok(())
    })
}

fn push(set: dpu_set_t, xfer: u32, symbol: SymbolRef<'_>, offset: u32, length: usize, flags: u32) -> Result<()> {
    let to_dpu = match xfer {
        DPU_XFER_TO_DPU => true,
        DPU_XFER_FROM_DPU => false,
        _ => return Err(DpuError(code::INVALID_MEMORY_TRANSFER)),
    };
    let started = Instant::now();
    let mut guard = server();
    let server = existing(&mut guard)?;
    let dpus = server.dpus_of(&set)?;
    after_launch(server, &dpus)?;
    let target = resolve(server, dpus, symbol, offset, length)?;
    if flags & DPU_XFER_PARALLEL != 0 && target.memory == MemoryKind::Mram {
        return Err(DpuError(code::INVALID_PARALLEL_MEMORY_TRANSFER));
    }
    let buffers: Vec<Option<HostBuffer>> = target
        .dpus
        .iter()
        .map(|&dpu| {
            let dpu = &server.dpus[dpu as usize];
            let pointer = server.ranks[dpu.rank as usize].transfer_matrix[dpu.member as usize];
            (!pointer.is_null()).then_some(HostBuffer(pointer.cast()))
        })
        .collect();
    match buffers.first() {
        // Every DPU names the same buffer: a broadcast.
        Some(&Some(first)) if to_dpu && buffers.iter().all(|buffer| buffer.is_some_and(|other| other.0 == first.0)) => {
            share(&mut server.machine, &target, first, length)?
        }
        _ => copy(&server.machine, &target, &buffers, length, to_dpu)?,
    }
    if flags != DPU_XFER_NO_RESET {
        for &dpu in &target.dpus {
            let (rank, member) = (server.dpus[dpu as usize].rank, server.dpus[dpu as usize].member);
            server.ranks[rank as usize].transfer_matrix[member as usize] = std::ptr::null_mut();
        }
    }
    let operation = if to_dpu { Operation::Push } else { Operation::Gather };
    server.record_transfer(operation, &target.dpus, length, started);
    Ok(())
}

/// `dpu_push_xfer`: `length` bytes at `symbol + offset` between each DPU and its prepared buffer.
///
/// # Safety
/// `symbol_name` is a C string; every prepared buffer holds `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn dpu_push_xfer(
    set: dpu_set_t,
    xfer: u32,
    symbol_name: *const c_char,
    symbol_offset: u32,
    length: usize,
    flags: u32,
) -> dpu_error_t {
    // SAFETY: forwarded from the caller.
    guard(|| push(set, xfer, SymbolRef::Name(unsafe { name_of(symbol_name)? }), symbol_offset, length, flags))
}

/// `dpu_push_xfer_symbol`.
///
/// # Safety
/// Every prepared buffer holds `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn dpu_push_xfer_symbol(
    set: dpu_set_t,
    xfer: u32,
    symbol: dpu_symbol_t,
    symbol_offset: u32,
    length: usize,
    flags: u32,
) -> dpu_error_t {
    guard(|| push(set, xfer, SymbolRef::Resolved(symbol), symbol_offset, length, flags))
}

fn scatter_gather(
    set: dpu_set_t,
    xfer: u32,
    symbol: SymbolRef<'_>,
    offset: u32,
    length: usize,
    get_block: *mut get_block_t,
    flags: u32,
) -> Result<()> {
    let to_dpu = match xfer {
        DPU_XFER_TO_DPU => true,
        DPU_XFER_FROM_DPU => false,
        _ => return Err(DpuError(code::INVALID_MEMORY_TRANSFER)),
    };
    let started = Instant::now();
    let mut guard = server();
    let server = existing(&mut guard)?;
    // The profile's scatter/gather keys belong to the allocation that took the ranks.
    let ranks = server.ranks_of(&set)?;
    if ranks.is_empty() || !ranks.iter().all(|&rank| server.ranks[rank].sg_xfer_enable) {
        return Err(DpuError(code::SG_NOT_ACTIVATED));
    }
    let max_blocks = ranks.iter().map(|&rank| server.ranks[rank].sg_max_blocks_per_dpu).min().unwrap_or(u32::MAX);
    if set.kind != DPU_SET_RANKS {
        eprintln!("libdpu (simulator): dpu_push_sg_xfer needs a set of ranks, not a single DPU");
        return Err(DpuError(code::INTERNAL));
    }
    // SAFETY: the caller passes a valid get_block_t.
    let Some(get_block) = (unsafe { get_block.as_ref() }) else { return Err(DpuError(code::INVALID_BUFFER_SIZE)) };
    let Some(next_block) = get_block.f else { return Err(DpuError(code::INVALID_BUFFER_SIZE)) };
    let dpus = server.dpus_of(&set)?;
    after_launch(server, &dpus)?;
    let target = resolve(server, dpus, symbol, offset, length)?;
    if target.memory != MemoryKind::Mram {
        return Err(DpuError(code::SG_NOT_MRAM_SYMBOL));
    }
    let check_length = flags & DPU_SG_XFER_DISABLE_LENGTH_CHECK == 0;
    for (index, &dpu) in target.dpus.iter().enumerate() {
        let mut position = 0usize;
        for block_index in 0.. {
            let mut block = sg_block_info { addr: std::ptr::null_mut(), length: 0 };
            // SAFETY: the callback and its arguments are the caller's, called as libdpu documents.
            if !unsafe { next_block(&mut block, index as u32, block_index, get_block.args) } {
                break;
            }
            if block_index >= max_blocks {
                return Err(DpuError(code::SG_TOO_MANY_BLOCKS));
            }
            let block_length = block.length as usize;
            if position + block_length > length {
                return Err(DpuError(code::SG_LENGTH_MISMATCH));
            }
            let at = target.offset + position as u64;
            if to_dpu {
                // SAFETY: the callback returned a block of `length` readable bytes.
                let data = unsafe { std::slice::from_raw_parts(block.addr, block_length) };
                server.machine.write(dpu, target.memory, at, data)?;
            } else {
                // SAFETY: the callback returned a block of `length` writable bytes.
                let data = unsafe { std::slice::from_raw_parts_mut(block.addr, block_length) };
                server.machine.read(dpu, target.memory, at, data)?;
            }
            position += block_length;
        }
        if position != length {
            if check_length {
                return Err(DpuError(code::SG_LENGTH_MISMATCH));
            }
            if to_dpu {
                let zeros = vec![0u8; length - position];
                server.machine.write(dpu, target.memory, target.offset + position as u64, &zeros)?;
            }
        }
    }
    let operation = if to_dpu { Operation::Push } else { Operation::Gather };
    server.record_transfer(operation, &target.dpus, length, started);
    Ok(())
}

/// `dpu_push_sg_xfer`: gathers host blocks into (or scatters from) one MRAM range per DPU.
///
/// # Safety
/// `symbol_name` is a C string; `get_block_info` is valid and its callback returns valid blocks.
#[no_mangle]
pub unsafe extern "C" fn dpu_push_sg_xfer(
    set: dpu_set_t,
    xfer: u32,
    symbol_name: *const c_char,
    symbol_offset: u32,
    length: usize,
    get_block_info: *mut get_block_t,
    flags: u32,
) -> dpu_error_t {
    guard(|| {
        // SAFETY: forwarded from the caller.
        let name = unsafe { name_of(symbol_name)? };
        scatter_gather(set, xfer, SymbolRef::Name(name), symbol_offset, length, get_block_info, flags)
    })
}

/// `dpu_push_sg_xfer_symbol`.
///
/// # Safety
/// `get_block_info` is valid and its callback returns valid blocks.
#[no_mangle]
pub unsafe extern "C" fn dpu_push_sg_xfer_symbol(
    set: dpu_set_t,
    xfer: u32,
    symbol: dpu_symbol_t,
    symbol_offset: u32,
    length: usize,
    get_block_info: *mut get_block_t,
    flags: u32,
) -> dpu_error_t {
    guard(|| scatter_gather(set, xfer, SymbolRef::Resolved(symbol), symbol_offset, length, get_block_info, flags))
}
