//! `dpu_sim_timeline`: every transfer and launch of the program, in order, with its wall time here and its
//! predicted time on a UPMEM server (the model of `upmem_sim::transfer_model`).

use std::ops::Range;
use std::time::Instant;

use upmem_sim::transfer_model::{Operation, TransferModel};
use upmem_sim::{DpuState, CLOCK_HZ};

use crate::error::{code, DpuError, Result};
use crate::guard;
use crate::server::{existing, server, Server};
use crate::types::{
    dpu_error_t, dpu_sim_event, DPU_SIM_OP_BROADCAST, DPU_SIM_OP_COPY_FROM, DPU_SIM_OP_COPY_TO, DPU_SIM_OP_GATHER,
    DPU_SIM_OP_LAUNCH, DPU_SIM_OP_PUSH,
};

/// `NOT_PREDICTED` of `dpu_sim.h` (bindgen reads its 64-bit literal as a C int).
const NOT_PREDICTED: u64 = u64::MAX;

/// The program's events and the model that predicts them.
#[derive(Default)]
pub struct Timeline {
    events: Vec<dpu_sim_event>,
    model: TransferModel,
    /// Asynchronous launches not predicted yet: their DPUs may still be running.
    pending: Vec<PendingLaunch>,
}

/// An asynchronous launch's event and its DPUs (machine ids).
struct PendingLaunch {
    event: usize,
    dpus: Vec<u32>,
}

fn c_operation(operation: Operation) -> u32 {
    match operation {
        Operation::Push => DPU_SIM_OP_PUSH,
        Operation::Broadcast => DPU_SIM_OP_BROADCAST,
        Operation::Gather => DPU_SIM_OP_GATHER,
        Operation::CopyTo => DPU_SIM_OP_COPY_TO,
        Operation::CopyFrom => DPU_SIM_OP_COPY_FROM,
        _ => DPU_SIM_OP_LAUNCH,
    }
}

fn nanoseconds(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

impl Server {
    /// `dpus` (machine ids, in set order) grouped into their ranks, as index ranges of the set.
    fn rank_ranges(&self, dpus: &[u32]) -> Vec<Range<usize>> {
        let mut ranges: Vec<Range<usize>> = Vec::new();
        for (index, &dpu) in dpus.iter().enumerate() {
            let same_rank = index > 0 && self.dpus[dpus[index - 1] as usize].rank == self.dpus[dpu as usize].rank;
            match ranges.last_mut() {
                Some(range) if same_rank => range.end = index + 1,
                _ => ranges.push(index..index + 1),
            }
        }
        ranges
    }

    /// Adds a transfer of `bytes_per_dpu` to or from each of `dpus`, started at `started`.
    pub(crate) fn record_transfer(
        &mut self,
        operation: Operation,
        dpus: &[u32],
        bytes_per_dpu: usize,
        started: Instant,
    ) {
        let bytes_per_dpu = bytes_per_dpu as u64;
        let ranks = self.rank_ranges(dpus);
        let predicted = self.timeline.model.transfer_time(operation, bytes_per_dpu, &ranks);
        self.timeline.events.push(dpu_sim_event {
            operation: c_operation(operation),
            nr_dpus: dpus.len() as u32,
            bytes_per_dpu,
            wall_ns: nanoseconds(started.elapsed()),
            predicted_ns: predicted.map_or(NOT_PREDICTED, nanoseconds),
        });
    }

    /// Adds a launch of `dpus` started at `started`; `finished`: its DPUs' cycles are this launch's, else it is
    /// predicted by [`Server::predict_finished_launches`] once they are.
    pub(crate) fn record_launch(&mut self, dpus: &[u32], started: Instant, finished: bool) -> Result<()> {
        let predicted = if finished { self.launch_prediction(dpus)? } else { NOT_PREDICTED };
        if !finished {
            self.timeline.pending.push(PendingLaunch { event: self.timeline.events.len(), dpus: dpus.to_vec() });
        }
        self.timeline.events.push(dpu_sim_event {
            operation: DPU_SIM_OP_LAUNCH,
            nr_dpus: dpus.len() as u32,
            bytes_per_dpu: 0,
            wall_ns: nanoseconds(started.elapsed()),
            predicted_ns: predicted,
        });
        Ok(())
    }

    /// Predicts each asynchronous launch whose DPUs have all finished, from their modelled cycles. Runs before
    /// a launch (which replaces its DPUs' cycles) and in `dpu_sync`, so that every asynchronous launch is
    /// predicted from its own cycles, whether several run at once (one per rank) or a finished one's DPUs are
    /// launched again before `dpu_sync`.
    pub(crate) fn predict_finished_launches(&mut self) -> Result<()> {
        let mut still_running = Vec::new();
        for launch in std::mem::take(&mut self.timeline.pending) {
            let running = launch
                .dpus
                .iter()
                .any(|&dpu| matches!(self.machine.dpu_state(dpu), Ok(DpuState::Queued | DpuState::Running)));
            if running {
                still_running.push(launch);
            } else {
                self.timeline.events[launch.event].predicted_ns = self.launch_prediction(&launch.dpus)?;
            }
        }
        self.timeline.pending = still_running;
        Ok(())
    }

    /// [`NOT_PREDICTED`] under a schedule whose cycles predict nothing (`fast`).
    fn launch_prediction(&self, dpus: &[u32]) -> Result<u64> {
        if !self.machine.config().schedule.predicts_hardware_time() {
            return Ok(NOT_PREDICTED);
        }
        let cycles = self.machine.slowest_cycles(dpus)?;
        Ok(nanoseconds(self.timeline.model.launch_time(cycles, CLOCK_HZ)))
    }
}

/// `dpu_sim_timeline`: copies up to `capacity` events, oldest first, and sets `*nr_events` to how many there
/// are (possibly more than `capacity`).
///
/// # Safety
/// `events` has room for `capacity` events (it may be null when `capacity` is 0); `nr_events` is writable.
#[no_mangle]
pub unsafe extern "C" fn dpu_sim_timeline(
    events: *mut dpu_sim_event,
    capacity: usize,
    nr_events: *mut usize,
) -> dpu_error_t {
    guard(|| {
        let mut guard = server();
        let server = existing(&mut guard)?;
        if nr_events.is_null() || (capacity > 0 && events.is_null()) {
            return Err(DpuError(code::INVALID_BUFFER_SIZE));
        }
        let recorded = &server.timeline.events;
        let copied = recorded.len().min(capacity);
        // SAFETY: the caller guarantees room for `capacity` >= `copied` events and a writable count.
        unsafe {
            std::ptr::copy_nonoverlapping(recorded.as_ptr(), events, copied);
            nr_events.write(recorded.len());
        }
        Ok(())
    })
}

/// `dpu_sim_timeline_clear`: starts a new timeline.
#[no_mangle]
pub extern "C" fn dpu_sim_timeline_clear() -> dpu_error_t {
    guard(|| {
        let mut guard = server();
        let timeline = &mut existing(&mut guard)?.timeline;
        timeline.events.clear();
        timeline.pending.clear();
        Ok(())
    })
}
