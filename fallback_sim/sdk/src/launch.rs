//! Running DPUs: `dpu_launch`, `dpu_sync`, `dpu_status`, `dpu_callback`.

use std::time::Instant;

use std::ffi::c_void;

use upmem_sim::{DpuState, SimError};

use crate::error::{code, DpuError, Result};
use crate::server::{existing, server, Server};
use crate::types::*;
use crate::{guard, write_out};

/// Prints why each faulting DPU of `dpus` is in fault (libdpu only says "dpu is in fault").
fn report_faults(server: &Server, dpus: &[u32]) -> bool {
    let mut any = false;
    for &dpu in dpus {
        if let Ok(Some(fault)) = server.machine.fault(dpu) {
            eprintln!("libdpu (simulator): {fault}");
            any = true;
        }
    }
    any
}

/// Finishes another set's asynchronous launch so that this one can start (the simulator runs one launch at a
/// time); its faults stay recorded on its DPUs for its own `dpu_sync`.
fn finish_other_launch(server: &mut Server) -> Result<()> {
    match server.machine.wait() {
        Ok(()) | Err(SimError::DpuFault { .. }) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// libdpu runs the operations on a rank in the order they were issued (each rank has a job queue), so a
/// transfer or callback issued after an asynchronous launch, with or without `DPU_XFER_ASYNC`, sees the
/// launch's results. The simulator runs them at once, so it first finishes the launch still running any of
/// `dpus`; that launch's faults stay recorded for its own `dpu_sync`.
pub(crate) fn after_launch(server: &mut Server, dpus: &[u32]) -> Result<()> {
    if dpus.iter().any(|&dpu| matches!(server.machine.dpu_state(dpu), Ok(DpuState::Queued | DpuState::Running))) {
        finish_other_launch(server)?;
    }
    Ok(())
}

/// `dpu_launch`: boots every DPU of the set; synchronously, waits for them all.
#[no_mangle]
pub extern "C" fn dpu_launch(set: dpu_set_t, policy: u32) -> dpu_error_t {
    guard(|| {
        if policy != DPU_SYNCHRONOUS && policy != DPU_ASYNCHRONOUS {
            return Err(DpuError(code::INVALID_LAUNCH_POLICY));
        }
        let started = Instant::now();
        let mut guard = server();
        let server = existing(&mut guard)?;
        let dpus = server.dpus_of(&set)?;
        if dpus.is_empty() {
            return Ok(());
        }
        for &dpu in &dpus {
            if matches!(server.machine.dpu_state(dpu)?, DpuState::Queued | DpuState::Running) {
                return Err(DpuError(code::DPU_ALREADY_RUNNING));
            }
        }
        // The launch replaces its DPUs' cycles: an earlier asynchronous launch of theirs is predicted first.
        server.predict_finished_launches()?;
        match server.machine.launch_async(&dpus) {
            Err(SimError::LaunchInProgress) => {
                finish_other_launch(server)?;
                server.machine.launch_async(&dpus)?;
            }
            started => started?,
        }
        if policy == DPU_ASYNCHRONOUS {
            server.async_launched.extend(&dpus);
            return server.record_launch(&dpus, started, false);
        }
        match server.machine.wait() {
            Ok(()) => server.record_launch(&dpus, started, true),
            Err(SimError::DpuFault { .. }) => {
                report_faults(server, &dpus);
                Err(DpuError(code::DPU_FAULT))
            }
            Err(error) => Err(error.into()),
        }
    })
}

/// `dpu_sync`: waits for the set's asynchronous work; a fault of an asynchronous launch comes back as
/// `DPU_ERR_DPU_FAULT` with the `DPU_ERR_ASYNC_JOBS` bit.
#[no_mangle]
pub extern "C" fn dpu_sync(set: dpu_set_t) -> dpu_error_t {
    guard(|| {
        let mut guard = server();
        let server = existing(&mut guard)?;
        let dpus = server.dpus_of(&set)?;
        if dpus.iter().any(|&dpu| matches!(server.machine.dpu_state(dpu), Ok(DpuState::Queued | DpuState::Running))) {
            finish_other_launch(server)?;
        }
        let launched: Vec<u32> = dpus.iter().copied().filter(|dpu| server.async_launched.contains(dpu)).collect();
        server.async_launched.retain(|dpu| !launched.contains(dpu));
        server.predict_finished_launches()?;
        if report_faults(server, &launched) {
            return Err(DpuError(code::DPU_FAULT | code::ASYNC_JOBS));
        }
        Ok(())
    })
}

/// `dpu_status`: whether every DPU of the set is done, and whether any is in fault. As in the SDK, it waits for
/// the set's asynchronous work first, so it returns only once the set's DPUs have stopped: the SDK 2025.1's
/// libdpu calls `dpu_sync` on the set before it reads any rank's state, and discards what `dpu_sync` returns
/// (`dpu_status`, disassembled). The wait leaves a fault of an asynchronous launch to be reported by the set's
/// own `dpu_sync`.
///
/// # Safety
/// `done` and `fault` are writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_status(set: dpu_set_t, done: *mut bool, fault: *mut bool) -> dpu_error_t {
    guard(|| {
        let mut guard = server();
        let server = existing(&mut guard)?;
        let dpus = server.dpus_of(&set)?;
        after_launch(server, &dpus)?;
        let (all_done, any_fault) = server.machine.status(&dpus)?;
        // SAFETY: guaranteed by the caller.
        unsafe {
            write_out(done, all_done)?;
            write_out(fault, any_fault)
        }
    })
}

/// What crosses to a callback thread: the set to pass and the caller's arguments, owned by the C caller for
/// the call's duration.
#[derive(Clone, Copy)]
struct CallbackCall(dpu_set_t, *mut c_void);
// SAFETY: libdpu calls callbacks from its own threads too; the caller made `args` fit for that, and the set
// is a value whose pointers stay valid while the call lasts.
unsafe impl Send for CallbackCall {}

impl CallbackCall {
    /// Calls back (a method, so that the thread closure captures the whole value, which is `Send`).
    fn invoke(
        self,
        callback: unsafe extern "C" fn(dpu_set_t, u32, *mut c_void) -> dpu_error_t,
        rank_id: u32,
    ) -> dpu_error_t {
        // SAFETY: the caller's callback, called as libdpu documents.
        unsafe { callback(self.0, rank_id, self.1) }
    }
}

/// `dpu_callback`: calls `callback` once per rank of the set, in parallel (or once with the whole set for
/// `DPU_CALLBACK_SINGLE_CALL`), and waits. Asynchronous callbacks run before the call returns, one of the
/// orders the SDK allows (after the set's asynchronous launch, if one is running: see [`after_launch`]).
#[no_mangle]
pub extern "C" fn dpu_callback(set: dpu_set_t, callback: dpu_callback_t, args: *mut c_void, flags: u32) -> dpu_error_t {
    guard(|| {
        if flags & DPU_CALLBACK_NONBLOCKING != 0 && flags & DPU_CALLBACK_ASYNC == 0 {
            return Err(DpuError(code::NONBLOCKING_SYNC_CALLBACK));
        }
        let callback = callback.ok_or(DpuError(code::INVALID_BUFFER_SIZE))?;
        // The lock is released before calling back: callbacks use the API on their rank.
        let rank_sets: Vec<dpu_set_t> = {
            let mut guard = server();
            let server = existing(&mut guard)?;
            let ranks = server.ranks_of(&set)?;
            // A DPU_CALLBACK_PARALLEL callback may overlap the DPUs' run; others come after it.
            if flags & DPU_CALLBACK_PARALLEL == 0 {
                if let Ok(dpus) = server.dpus_of(&set) {
                    after_launch(server, &dpus)?;
                }
            }
            if flags & DPU_CALLBACK_SINGLE_CALL != 0 || set.kind == DPU_SET_DPU {
                vec![set]
            } else {
                // SAFETY: ranks_of validated the set, so its union holds a rank array of nr_ranks entries.
                let list = unsafe { set.rank_list() };
                // SAFETY: index < nr_ranks (ranks.len()), within that array.
                (0..ranks.len()).map(|index| dpu_set_t::of_ranks(1, unsafe { list.ranks.add(index) })).collect()
            }
        };
        let results: Vec<dpu_error_t> = std::thread::scope(|scope| {
            let calls: Vec<_> = rank_sets
                .iter()
                .enumerate()
                .map(|(rank_id, &rank_set)| {
                    let call = CallbackCall(rank_set, args);
                    scope.spawn(move || call.invoke(callback, rank_id as u32))
                })
                .collect();
            calls.into_iter().map(|call| call.join().unwrap_or(code::INTERNAL)).collect()
        });
        match results.into_iter().find(|&result| result != code::OK) {
            None => Ok(()),
            Some(error) => Err(DpuError(error)),
        }
    })
}
