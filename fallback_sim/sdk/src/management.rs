//! The low-level API (`dpu_management.h`, `dpu_memory.h`): ranks and DPUs as objects, their descriptions,
//! and direct MRAM/WRAM access by DPU.

use upmem_sim::{ChipVersion, MemoryKind, CLOCK_HZ};

use crate::error::{code, DpuError};
use crate::guard;
use crate::server::{existing, server, Dpu, Rank, Server};
use crate::types::{dpu_error_t, dpu_set_t, SetParts, DPU_SET_DPU, DPU_SET_RANKS};

/// `struct _dpu_description_t` (`dpu_description.h`, the SDK's layout), as upmem-sys declares it.
pub type Description = upmem_sys::_dpu_description_t;

/// Control interfaces (slices) of a rank and DPUs per slice: 8 slices when the rank size allows, as on DIMMs.
pub fn slices(dpus_per_rank: u32) -> (u32, u32) {
    if dpus_per_rank.is_multiple_of(8) {
        (8, dpus_per_rank / 8)
    } else {
        (1, dpus_per_rank)
    }
}

/// The description of a rank of a server made for `server_profile`: its chip (the profile's `chipId`) and
/// thread count, its slices, memory sizes and clock. The SDK's hardware backend fills the same members from the
/// driver; the link-training ones (carousel, bit permutation) stay zero, as a simulated rank has no link.
pub fn description(server_profile: &crate::profile::Profile) -> Description {
    let (nr_slices, per_slice) = slices(server_profile.dpus_per_rank);
    let chip = ChipVersion::from_chip_id(server_profile.chip_id);
    let mut description = Description { type_: upmem_sys::FUNCTIONAL_SIMULATOR, ..Default::default() };
    let hw = &mut description.hw;
    hw.signature.chip_id = server_profile.chip_id;
    hw.topology.nr_of_control_interfaces = nr_slices as u8;
    hw.topology.nr_of_dpus_per_control_interface = per_slice as u8;
    hw.topology.ci_mask = ((1u16 << nr_slices) - 1) as u8;
    hw.memories.mram_size = server_profile.mram_size as u32;
    hw.memories.wram_size = server_profile.wram_size as u32;
    hw.memories.iram_size = chip.iram_instructions() as u16;
    hw.timings.fck_frequency_in_mhz = (2 * CLOCK_HZ / 1_000_000) as u32;
    hw.timings.clock_division = 2;
    hw.dpu.nr_of_threads = chip.hardware_threads() as u8;
    hw.dpu.nr_of_atomic_bits = ATOMIC_BITS;
    hw.dpu.nr_of_notify_bits = NOTIFY_BITS;
    hw.dpu.nr_of_work_registers_per_thread = WORK_REGISTERS;
    description
}

/// Atomic bits, notify bits and work registers per DPU, as the SDK's `dpu_characteristics.h` and the 2020
/// SDK's chip description give them.
const ATOMIC_BITS: u32 = 256;
const NOTIFY_BITS: u32 = 40;
const WORK_REGISTERS: u8 = 24;

/// Runs `read` on the server with the DPU behind `dpu` (None when it is not ours).
fn with_dpu<T>(dpu: *mut Dpu, read: impl FnOnce(&Server, &Dpu) -> T) -> Option<T> {
    let guard = server();
    let server = guard.as_ref()?;
    let index = server.dpu_of(dpu).ok()?;
    Some(read(server, &server.dpus[index as usize]))
}

fn rank_index(server: &Server, mut rank: *mut Rank) -> Option<usize> {
    // The one-rank set points at `rank`, a local that outlives the lookup.
    let set = dpu_set_t::of_ranks(1, &mut rank);
    server.ranks_of(&set).ok().map(|ranks| ranks[0])
}

/// `dpu_get_rank_numa_node`: the simulator has no NUMA placement.
#[no_mangle]
pub extern "C" fn dpu_get_rank_numa_node(_rank: *mut Rank) -> i32 {
    -1
}

/// `dpu_get_rank_id`.
#[no_mangle]
pub extern "C" fn dpu_get_rank_id(rank: *mut Rank) -> u16 {
    let guard = server();
    guard.as_ref().and_then(|server| rank_index(server, rank)).map_or(u16::MAX, |index| rank_id(index as u32))
}

/// A DPU's slice (control interface) and member id within the slice.
fn slice_and_member(server: &Server, dpu: &Dpu) -> (u8, u8) {
    let per_slice = slices(server.profile.dpus_per_rank).1;
    // A rank has at most 64 DPUs (the simulator's topology check), so both fit.
    ((dpu.member / per_slice) as u8, (dpu.member % per_slice) as u8)
}

/// What `dpu_get_id` says of a DPU: as libdpu 2025.1 builds it (disassembled), the id of its rank (what
/// `dpu_get_rank_id` returns: the rank's index in the server) in bits 16 and up, its slice in bits 8 to 15 and
/// its member id in bits 0 to 7.
pub fn sdk_dpu_id(server: &Server, dpu: &Dpu) -> u32 {
    let (slice, member) = slice_and_member(server, dpu);
    (u32::from(rank_id(dpu.rank)) << 16) | (u32::from(slice) << 8) | u32::from(member)
}

/// The id `dpu_get_rank_id` gives the rank at `index` (a server has at most 65,536 DPUs, so it fits).
fn rank_id(index: u32) -> u16 {
    index as u16
}

/// `dpu_get_id`: `rank_id << 16 | slice_id << 8 | member_id`, as libdpu's (see [`sdk_dpu_id`]).
#[no_mangle]
pub extern "C" fn dpu_get_id(dpu: *mut Dpu) -> u32 {
    with_dpu(dpu, sdk_dpu_id).unwrap_or(u32::MAX)
}

/// `dpu_get_slice_id`.
#[no_mangle]
pub extern "C" fn dpu_get_slice_id(dpu: *mut Dpu) -> u8 {
    with_dpu(dpu, |server, dpu| slice_and_member(server, dpu).0).unwrap_or(u8::MAX)
}

/// `dpu_get_member_id`.
#[no_mangle]
pub extern "C" fn dpu_get_member_id(dpu: *mut Dpu) -> u8 {
    with_dpu(dpu, |server, dpu| slice_and_member(server, dpu).1).unwrap_or(u8::MAX)
}

/// `dpu_is_enabled`.
#[no_mangle]
pub extern "C" fn dpu_is_enabled(dpu: *mut Dpu) -> bool {
    with_dpu(dpu, |_, dpu| dpu.enabled).unwrap_or(false)
}

/// `dpu_get`: the DPU at (slice, member) of a rank, enabled or not.
#[no_mangle]
pub extern "C" fn dpu_get(rank: *mut Rank, slice_id: u8, member_id: u8) -> *mut Dpu {
    let mut guard = server();
    let Some(server) = guard.as_mut() else { return std::ptr::null_mut() };
    let Some(index) = rank_index(server, rank) else { return std::ptr::null_mut() };
    let (nr_slices, per_slice) = slices(server.profile.dpus_per_rank);
    if u32::from(slice_id) >= nr_slices || u32::from(member_id) >= per_slice {
        return std::ptr::null_mut();
    }
    let dpu = server.ranks[index].first_dpu + u32::from(slice_id) * per_slice + u32::from(member_id);
    server.dpu_ptr(dpu as usize)
}

/// `dpu_get_rank`.
#[no_mangle]
pub extern "C" fn dpu_get_rank(dpu: *mut Dpu) -> *mut Rank {
    let mut guard = server();
    let Some(server) = guard.as_mut() else { return std::ptr::null_mut() };
    match server.dpu_of(dpu) {
        Ok(index) => {
            let rank = server.dpus[index as usize].rank as usize;
            server.rank_ptr(rank)
        }
        Err(_) => std::ptr::null_mut(),
    }
}

/// `dpu_get_description`: valid while the server lives.
#[no_mangle]
pub extern "C" fn dpu_get_description(rank: *mut Rank) -> *mut Description {
    let mut guard = server();
    let Some(server) = guard.as_mut() else { return std::ptr::null_mut() };
    match rank_index(server, rank) {
        Some(index) => &mut server.ranks[index].description,
        None => std::ptr::null_mut(),
    }
}

/// `dpu_set_from_rank`: a one-rank set viewing `*rank`.
#[no_mangle]
pub extern "C" fn dpu_set_from_rank(rank: *mut *mut Rank) -> dpu_set_t {
    dpu_set_t::of_ranks(1, rank)
}

/// `dpu_set_from_dpu`.
#[no_mangle]
pub extern "C" fn dpu_set_from_dpu(dpu: *mut Dpu) -> dpu_set_t {
    dpu_set_t::of_dpu(dpu)
}

/// `dpu_rank_from_set`: the rank of a one-rank set, else NULL.
#[no_mangle]
pub extern "C" fn dpu_rank_from_set(set: dpu_set_t) -> *mut Rank {
    if set.kind != DPU_SET_RANKS {
        return std::ptr::null_mut();
    }
    // SAFETY: kind says the union holds `list`; a one-rank list has one readable entry.
    unsafe {
        let list = set.rank_list();
        if list.nr_ranks == 1 && !list.ranks.is_null() {
            *list.ranks
        } else {
            std::ptr::null_mut()
        }
    }
}

/// `dpu_from_set`: the DPU of a single-DPU set, else NULL.
#[no_mangle]
pub extern "C" fn dpu_from_set(set: dpu_set_t) -> *mut Dpu {
    if set.kind == DPU_SET_DPU {
        // SAFETY: kind says the union holds `dpu`.
        unsafe { set.single() }
    } else {
        std::ptr::null_mut()
    }
}

/// `struct dpu_iterator_t` (`dpu_management.h`).
#[repr(C)]
#[allow(missing_docs)]
pub struct DpuIterator {
    pub rank: *mut Rank,
    pub count: u32,
    pub next_idx: u32,
    pub has_next: bool,
    pub next: *mut Dpu,
}

fn position(iterator: &mut DpuIterator, from: u32) {
    iterator.has_next = false;
    iterator.next = std::ptr::null_mut();
    let mut guard = server();
    let Some(server) = guard.as_mut() else { return };
    let Some(index) = rank_index(server, iterator.rank) else { return };
    let (first, size) = (server.ranks[index].first_dpu, server.ranks[index].nr_dpus);
    if let Some(dpu) = (first + from..first + size).find(|&dpu| server.dpus[dpu as usize].enabled) {
        iterator.next = server.dpu_ptr(dpu as usize);
        iterator.next_idx = dpu - first + 1;
        iterator.has_next = true;
    }
}

/// `dpu_iterator_from`: the rank's enabled DPUs in order.
#[no_mangle]
pub extern "C" fn dpu_iterator_from(rank: *mut Rank) -> DpuIterator {
    let mut iterator = DpuIterator { rank, count: 0, next_idx: 0, has_next: false, next: std::ptr::null_mut() };
    position(&mut iterator, 0);
    iterator
}

/// `dpu_iterator_next`.
///
/// # Safety
/// `iterator` was made by `dpu_iterator_from`.
#[no_mangle]
pub unsafe extern "C" fn dpu_iterator_next(iterator: *mut DpuIterator) {
    // SAFETY: guaranteed by the caller.
    let iterator = unsafe { &mut *iterator };
    if iterator.has_next {
        iterator.count += 1;
        let from = iterator.next_idx;
        position(iterator, from);
    }
}

fn direct(dpu: *mut Dpu, memory: MemoryKind, offset: u64, length: usize, data: *mut u8, to_dpu: bool) -> dpu_error_t {
    guard(|| {
        let mut guard = server();
        let server = existing(&mut guard)?;
        let id = server.dpu_of(dpu)?;
        if length > 0 && data.is_null() {
            return Err(DpuError(code::INVALID_BUFFER_SIZE));
        }
        if length == 0 {
            return Ok(());
        }
        if to_dpu {
            // SAFETY: the caller guarantees `length` readable bytes.
            let bytes = unsafe { std::slice::from_raw_parts(data, length) };
            server.machine.write(id, memory, offset, bytes).map_err(|_| access_error(memory))
        } else {
            // SAFETY: the caller guarantees `length` writable bytes.
            let bytes = unsafe { std::slice::from_raw_parts_mut(data, length) };
            server.machine.read(id, memory, offset, bytes).map_err(|_| access_error(memory))
        }
    })
}

fn access_error(memory: MemoryKind) -> DpuError {
    DpuError(match memory {
        MemoryKind::Mram => code::INVALID_MRAM_ACCESS,
        MemoryKind::Wram => code::INVALID_WRAM_ACCESS,
    })
}

/// `dpu_copy_to_mram`: bytes at a 0-based MRAM offset.
///
/// # Safety
/// `source` holds `nb_of_bytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn dpu_copy_to_mram(
    dpu: *mut Dpu,
    offset: u32,
    source: *const u8,
    nb_of_bytes: u32,
) -> dpu_error_t {
    direct(dpu, MemoryKind::Mram, u64::from(offset), nb_of_bytes as usize, source.cast_mut(), true)
}

/// `dpu_copy_from_mram`.
///
/// # Safety
/// `destination` has room for `nb_of_bytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn dpu_copy_from_mram(
    dpu: *mut Dpu,
    destination: *mut u8,
    offset: u32,
    nb_of_bytes: u32,
) -> dpu_error_t {
    direct(dpu, MemoryKind::Mram, u64::from(offset), nb_of_bytes as usize, destination, false)
}

/// `dpu_copy_to_wram_for_dpu`: WRAM addressed in 32-bit words.
///
/// # Safety
/// `source` holds `nb_of_words` words.
#[no_mangle]
pub unsafe extern "C" fn dpu_copy_to_wram_for_dpu(
    dpu: *mut Dpu,
    word_offset: u32,
    source: *const u32,
    nb_of_words: u32,
) -> dpu_error_t {
    direct(dpu, MemoryKind::Wram, u64::from(word_offset) * 4, nb_of_words as usize * 4, source.cast_mut().cast(), true)
}

/// `dpu_copy_from_wram_for_dpu`.
///
/// # Safety
/// `destination` has room for `nb_of_words` words.
#[no_mangle]
pub unsafe extern "C" fn dpu_copy_from_wram_for_dpu(
    dpu: *mut Dpu,
    destination: *mut u32,
    word_offset: u32,
    nb_of_words: u32,
) -> dpu_error_t {
    direct(dpu, MemoryKind::Wram, u64::from(word_offset) * 4, nb_of_words as usize * 4, destination.cast(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_describes_its_chip_and_threads() {
        let v1b = crate::profile::Profile::parse("chipId=0x42").unwrap();
        let v1b = description(&v1b);
        assert_eq!(v1b.hw.signature.chip_id, 0x42);
        assert_eq!(v1b.hw.dpu.nr_of_threads, 16);
        assert_eq!(v1b.hw.memories.iram_size, 3968);
        let v1a = description(&crate::profile::Profile::default());
        assert_eq!(v1a.hw.dpu.nr_of_threads, 24);
        assert_eq!(v1a.hw.memories.iram_size, 4096);
        assert_eq!(v1a.hw.topology.nr_of_control_interfaces, 8);
        assert_eq!(v1a.hw.topology.ci_mask, 0xff);
        assert_eq!(v1a.type_, upmem_sys::FUNCTIONAL_SIMULATOR);
    }
}
