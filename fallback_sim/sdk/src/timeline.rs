//! `dpu_sim_timeline`: the transfers and launches of the program's current allocations, in order, with their
//! wall time here and their predicted time on a UPMEM server (the model of `upmem_types::transfer_model`).

use std::collections::VecDeque;
use std::ops::Range;
use std::time::Instant;

use upmem_sim::{DpuState, CLOCK_HZ};
use upmem_types::transfer_model::{Operation, TransferModel};

use crate::error::{code, DpuError, Result};
use crate::guard;
use crate::server::{existing, server, Server};
use crate::types::{
    dpu_error_t, dpu_sim_event, DPU_SIM_OP_BROADCAST, DPU_SIM_OP_COPY_FROM, DPU_SIM_OP_COPY_TO, DPU_SIM_OP_GATHER,
    DPU_SIM_OP_LAUNCH, DPU_SIM_OP_PUSH,
};

/// `NOT_PREDICTED` of `dpu_sim.h` (bindgen reads its 64-bit literal as a C int).
const NOT_PREDICTED: u64 = u64::MAX;

/// Events a timeline keeps (40 bytes each: 2.5 MiB): the most recent ones, so that a process that holds its
/// DPUs for ever and transfers all the time does not grow.
pub(crate) const TIMELINE_CAPACITY: usize = 1 << 16;

/// The program's events and the model that predicts them.
///
/// It starts anew at `dpu_sim_timeline_clear` and at each allocation made while no set is allocated (see
/// [`Timeline::restart`]).
pub struct Timeline {
    events: EventRing,
    model: TransferModel,
    /// Asynchronous launches not predicted yet: their DPUs may still be running.
    pending: Vec<PendingLaunch>,
}

impl Default for Timeline {
    /// A timeline predicting with [`TransferModel::configured`]. The C API has no error to return here, so a
    /// profile that cannot be read is reported on stderr and the published defaults are used.
    fn default() -> Self {
        let model = TransferModel::configured().unwrap_or_else(|error| {
            eprintln!("upmem-sim: {error}; the timeline predicts with the published transfer figures");
            TransferModel::default()
        });
        Timeline { events: EventRing::default(), model, pending: Vec::new() }
    }
}

/// An asynchronous launch's event (its sequence number in the [`EventRing`]) and its DPUs (machine ids).
struct PendingLaunch {
    event: u64,
    dpus: Vec<u32>,
}

/// The last [`TIMELINE_CAPACITY`] events, oldest first, each with a sequence number that stays its own while
/// older events are dropped.
#[derive(Default)]
struct EventRing {
    events: VecDeque<dpu_sim_event>,
    /// Events dropped from the front since the ring was last cleared: the sequence number of `events[0]`.
    dropped: u64,
}

impl EventRing {
    /// Adds an event, dropping the oldest when full; returns its sequence number.
    fn push(&mut self, event: dpu_sim_event) -> u64 {
        if self.events.len() == TIMELINE_CAPACITY {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(event);
        self.dropped + self.events.len() as u64 - 1
    }

    /// The event with sequence number `sequence`, if it is still kept.
    fn get_mut(&mut self, sequence: u64) -> Option<&mut dpu_sim_event> {
        let index = usize::try_from(sequence.checked_sub(self.dropped)?).ok()?;
        self.events.get_mut(index)
    }

    fn len(&self) -> usize {
        self.events.len()
    }

    fn clear(&mut self) {
        self.events.clear();
        self.dropped = 0;
    }
}

impl Timeline {
    /// Starts a new timeline: the events and the launches waiting for a prediction are forgotten. Called at
    /// `dpu_sim_timeline_clear`, and by an allocation while no set is allocated, so that a process that
    /// allocates and frees DPUs over and over holds the events of its current allocations only.
    pub(crate) fn restart(&mut self) {
        self.events.clear();
        self.pending.clear();
    }
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
        let event = self.timeline.events.push(dpu_sim_event {
            operation: DPU_SIM_OP_LAUNCH,
            nr_dpus: dpus.len() as u32,
            bytes_per_dpu: 0,
            wall_ns: nanoseconds(started.elapsed()),
            predicted_ns: predicted,
        });
        if !finished {
            self.timeline.pending.push(PendingLaunch { event, dpus: dpus.to_vec() });
        }
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
                let predicted = self.launch_prediction(&launch.dpus)?;
                // A launch whose event the ring dropped meanwhile has nothing left to predict.
                if let Some(event) = self.timeline.events.get_mut(launch.event) {
                    event.predicted_ns = predicted;
                }
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
        let (front, back) = recorded.events.as_slices();
        let from_front = front.len().min(copied);
        // SAFETY: the caller guarantees room for `capacity` >= `copied` events (so `events` is non-null when
        // `copied` > 0) and a writable count; the ring's two parts hold its events oldest first.
        unsafe {
            if copied > 0 {
                std::ptr::copy_nonoverlapping(front.as_ptr(), events, from_front);
                std::ptr::copy_nonoverlapping(back.as_ptr(), events.add(from_front), copied - from_front);
            }
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
        existing(&mut guard)?.timeline.restart();
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(bytes_per_dpu: u64) -> dpu_sim_event {
        dpu_sim_event { operation: DPU_SIM_OP_PUSH, nr_dpus: 1, bytes_per_dpu, wall_ns: 0, predicted_ns: 0 }
    }

    /// A full ring drops its oldest events and keeps each kept event's sequence number: a launch's event can
    /// be predicted later while it is kept, and is skipped once dropped.
    #[test]
    fn a_full_ring_keeps_the_most_recent_events() {
        let mut ring = EventRing::default();
        let first = ring.push(event(0));
        let extra = 10;
        for bytes in 1..TIMELINE_CAPACITY as u64 + extra {
            ring.push(event(bytes));
        }
        assert_eq!(ring.len(), TIMELINE_CAPACITY);
        assert_eq!(ring.events.front().map(|event| event.bytes_per_dpu), Some(extra));
        assert!(ring.get_mut(first).is_none(), "the first event was dropped");
        let kept = TIMELINE_CAPACITY as u64 + 5;
        assert_eq!(ring.get_mut(kept).map(|event| event.bytes_per_dpu), Some(kept));
        ring.clear();
        assert_eq!(ring.push(event(1)), 0, "a cleared ring numbers from 0 again");
        assert_eq!(ring.len(), 1);
    }
}
