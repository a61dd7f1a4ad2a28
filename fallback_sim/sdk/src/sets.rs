//! Allocation, counts and iteration: `dpu_alloc`, `dpu_alloc_ranks`, `dpu_free`, `dpu_get_nr_*` and the
//! iterator functions behind `DPU_FOREACH` and `DPU_RANK_FOREACH`.

use std::ffi::c_char;

use crate::error::{code, DpuError, Result};
use crate::profile::Profile;
use crate::server::{existing, server, Server};
use crate::types::*;
use crate::{guard, write_out};

/// Allocates `nr_dpus` DPUs (`None`: every free rank) or `nr_ranks` ranks.
///
/// # Safety
/// `profile` is null or a NUL-terminated string; `set` is valid for writes.
unsafe fn allocate(
    nr_dpus: Option<u32>,
    nr_ranks: Option<u32>,
    profile: *const c_char,
    set: *mut dpu_set_t,
) -> dpu_error_t {
    guard(|| {
        // SAFETY: guaranteed by the caller.
        let profile = unsafe { Profile::effective(profile)? };
        let mut guard = server();
        let reusable = guard.as_ref().is_some_and(|server| server.profile.same_machine(&profile) || server.in_use());
        if !reusable {
            let mut replacement = Server::new(profile.clone())?;
            if let Some(replaced) = guard.take() {
                replacement.adopt_spare_arrays(replaced);
            }
            *guard = Some(replacement);
        }
        let server = guard.as_mut().expect("the server was just made");
        if !server.profile.same_machine(&profile) {
            eprintln!(
                "libdpu (simulator): the profile asks for another simulated server than the one in use; free every \
                 DPU set first"
            );
            return Err(DpuError(code::INVALID_PROFILE));
        }
        server.profile.sg_xfer_enable = profile.sg_xfer_enable;
        server.profile.sg_max_blocks_per_dpu = profile.sg_max_blocks_per_dpu;
        server.profile.disable_reset_on_alloc = profile.disable_reset_on_alloc;
        let first_set = !server.in_use();
        let allocated = server.allocate(nr_dpus, nr_ranks)?;
        if first_set {
            server.timeline.restart();
        }
        // SAFETY: guaranteed by the caller.
        unsafe { write_out(set, allocated) }
    })
}

/// `dpu_alloc`.
///
/// # Safety
/// As libdpu's: `profile` null or a C string, `set` writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_alloc(nr_dpus: u32, profile: *const c_char, set: *mut dpu_set_t) -> dpu_error_t {
    let nr_dpus = (nr_dpus != DPU_ALLOCATE_ALL).then_some(nr_dpus);
    // SAFETY: forwarded from the caller.
    unsafe { allocate(nr_dpus, None, profile, set) }
}

/// `dpu_alloc_ranks`.
///
/// # Safety
/// As libdpu's: `profile` null or a C string, `set` writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_alloc_ranks(nr_ranks: u32, profile: *const c_char, set: *mut dpu_set_t) -> dpu_error_t {
    let nr_ranks = (nr_ranks != DPU_ALLOCATE_ALL).then_some(nr_ranks);
    // SAFETY: forwarded from the caller.
    unsafe { allocate(None, nr_ranks, profile, set) }
}

/// `dpu_free`: only a set returned by `dpu_alloc`/`dpu_alloc_ranks`.
#[no_mangle]
pub extern "C" fn dpu_free(set: dpu_set_t) -> dpu_error_t {
    guard(|| existing(&mut server())?.free(&set))
}

/// `dpu_get_nr_ranks`.
///
/// # Safety
/// `nr_ranks` is writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_get_nr_ranks(set: dpu_set_t, nr_ranks: *mut u32) -> dpu_error_t {
    guard(|| {
        let count = existing(&mut server())?.ranks_of(&set)?.len() as u32;
        // SAFETY: guaranteed by the caller.
        unsafe { write_out(nr_ranks, count) }
    })
}

/// `dpu_get_nr_dpus`: enabled DPUs only.
///
/// # Safety
/// `nr_dpus` is writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_get_nr_dpus(set: dpu_set_t, nr_dpus: *mut u32) -> dpu_error_t {
    guard(|| {
        let count = match existing(&mut server())?.dpus_of(&set) {
            Ok(dpus) => dpus.len() as u32,
            Err(DpuError(code::DPU_DISABLED)) => 0,
            Err(error) => return Err(error),
        };
        // SAFETY: guaranteed by the caller.
        unsafe { write_out(nr_dpus, count) }
    })
}

/// Positions `iterator.next` on the rank at `index` of its set, or ends the iteration.
fn rank_position(iterator: &mut dpu_set_rank_iterator_t, index: u32) {
    iterator.has_next = false;
    iterator.next = dpu_set_t::empty();
    if iterator.set.is_null() {
        return;
    }
    // SAFETY: the iterator was made by dpu_set_rank_iterator_from from the caller's set, which outlives the
    // loop (DPU_RANK_FOREACH takes it as an lvalue).
    let set = unsafe { *iterator.set };
    match set.kind {
        DPU_SET_RANKS => {
            // SAFETY: kind says the union holds `list`.
            let list = unsafe { set.rank_list() };
            if index < list.nr_ranks && !list.ranks.is_null() {
                // SAFETY: index < nr_ranks, within the set's rank array.
                iterator.next = dpu_set_t::of_ranks(1, unsafe { list.ranks.add(index as usize) });
                iterator.has_next = true;
            }
        }
        DPU_SET_DPU if index == 0 => {
            iterator.next = set;
            iterator.has_next = true;
        }
        _ => {}
    }
    iterator.count = index;
    iterator.next_idx = index + 1;
}

/// `dpu_set_rank_iterator_from`.
///
/// # Safety
/// `set` points to a set that outlives the iteration.
#[no_mangle]
pub unsafe extern "C" fn dpu_set_rank_iterator_from(set: *mut dpu_set_t) -> dpu_set_rank_iterator_t {
    let mut iterator =
        dpu_set_rank_iterator_t { set, count: 0, next_idx: 0, has_next: false, next: dpu_set_t::empty() };
    rank_position(&mut iterator, 0);
    iterator
}

/// `dpu_set_rank_iterator_next`.
///
/// # Safety
/// `iterator` was made by `dpu_set_rank_iterator_from`.
#[no_mangle]
pub unsafe extern "C" fn dpu_set_rank_iterator_next(iterator: *mut dpu_set_rank_iterator_t) {
    // SAFETY: guaranteed by the caller.
    let iterator = unsafe { &mut *iterator };
    let next = iterator.next_idx;
    rank_position(iterator, next);
}

/// Moves a DPU iterator to the first enabled DPU at or after `member` in the current rank, then in the
/// following ranks.
fn dpu_position(iterator: &mut dpu_set_dpu_iterator_t, mut member: u32) -> Result<()> {
    let guard = server();
    let server = guard.as_ref().ok_or(DpuError(code::INVALID_DPU_SET))?;
    iterator.has_next = false;
    iterator.next = dpu_set_t::empty();
    while iterator.rank_iterator.has_next {
        let current = iterator.rank_iterator.next;
        let candidates: Vec<u32> = if current.kind == DPU_SET_DPU {
            // SAFETY: kind says the union holds `dpu`.
            let dpu = server.dpu_of(unsafe { current.single() })?;
            if member == 0 {
                vec![dpu]
            } else {
                Vec::new()
            }
        } else {
            let rank = server.ranks_of(&current)?[0];
            let rank = &server.ranks[rank];
            (rank.first_dpu + member..rank.first_dpu + rank.nr_dpus).collect()
        };
        if let Some(&dpu) = candidates.iter().find(|&&dpu| server.dpus[dpu as usize].enabled) {
            let dpu_ref = &server.dpus[dpu as usize];
            iterator.next = dpu_set_t::of_dpu((dpu_ref as *const crate::server::Dpu).cast_mut());
            iterator.next_idx = dpu_ref.member + 1;
            iterator.has_next = true;
            return Ok(());
        }
        let next_rank = iterator.rank_iterator.next_idx;
        rank_position(&mut iterator.rank_iterator, next_rank);
        member = 0;
    }
    Ok(())
}

/// `dpu_set_dpu_iterator_from`: rank by rank, DPUs in index order, enabled DPUs only.
///
/// # Safety
/// `set` points to a set that outlives the iteration.
#[no_mangle]
pub unsafe extern "C" fn dpu_set_dpu_iterator_from(set: *mut dpu_set_t) -> dpu_set_dpu_iterator_t {
    // SAFETY: forwarded from the caller.
    let rank_iterator = unsafe { dpu_set_rank_iterator_from(set) };
    let mut iterator =
        dpu_set_dpu_iterator_t { rank_iterator, count: 0, next_idx: 0, has_next: false, next: dpu_set_t::empty() };
    if dpu_position(&mut iterator, 0).is_err() {
        iterator.has_next = false;
    }
    iterator
}

/// `dpu_set_dpu_iterator_next`.
///
/// # Safety
/// `iterator` was made by `dpu_set_dpu_iterator_from`.
#[no_mangle]
pub unsafe extern "C" fn dpu_set_dpu_iterator_next(iterator: *mut dpu_set_dpu_iterator_t) {
    // SAFETY: guaranteed by the caller.
    let iterator = unsafe { &mut *iterator };
    if !iterator.has_next {
        return;
    }
    iterator.count += 1;
    let member = iterator.next_idx;
    if dpu_position(iterator, member).is_err() {
        iterator.has_next = false;
    }
}
