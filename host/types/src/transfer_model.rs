//! How long host-DPU transfers and launches take on a UPMEM server: the model behind the predicted-hardware
//! timelines of `upmem`'s `LoadedSet::timeline` and of `dpu_sim.h`'s `dpu_sim_timeline`.
//!
//! # The model
//!
//! Figures are PrIM's measurements on a 350 MHz server (Gómez-Luna et al., "Benchmarking a New Paradigm: An
//! Experimental Analysis of a Real Processing-in-Memory Architecture", 2021), per rank of 64 DPUs:
//!
//! | transfer | libdpu | bandwidth |
//! |---|---|---|
//! | parallel push, host to DPUs | `dpu_prepare_xfer` + `dpu_push_xfer(TO_DPU)` | 6.68 GB/s per rank |
//! | parallel gather, DPUs to host | `dpu_push_xfer(FROM_DPU)` | 4.74 GB/s per rank |
//! | broadcast | `dpu_broadcast_to`, `dpu_copy_to` on a set | 16.88 GB/s per rank (bytes delivered) |
//! | serial, host to one DPU | `dpu_copy_to` on one DPU | 0.33 GB/s |
//! | serial, one DPU to host | `dpu_copy_from` on one DPU | 0.12 GB/s |
//!
//! A parallel transfer moves the same length to every DPU of a rank (the SDK requires it), so a rank's time
//! is its DPUs' bytes over the rank's bandwidth. Ranks: the 2020 SDK's `dpu_push_xfer` served the ranks of a
//! set one after the other in the calling thread (`backends/api/src/api/dpu.c`); later SDKs hand each rank to
//! its own thread, and PrIM measures sub-linear scaling over ranks without a figure we can cite. The model
//! runs ranks in parallel (the time of the slowest rank): a lower bound, as `pimgnn`'s cost model assumes.
//! [`TransferModel::ranks_in_series`] gives the 2020 SDK's upper bound.
//!
//! A launch costs the slowest DPU's modelled cycles (the simulator's timing model, at 350 MHz) plus
//! [`TransferModel::launch_overhead`], the boot of every rank and the polling until all stop. No measurement of
//! that overhead is published; the default, 20 µs, is an estimate (a few control-interface commands per rank
//! and a poll of each rank's state), to be replaced with a measured server's figure.

use std::fmt;
use std::ops::Range;
use std::time::Duration;

/// What a timeline event did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Operation {
    /// A parallel write of one buffer per DPU.
    Push,
    /// The same bytes to every DPU.
    Broadcast,
    /// A parallel read of one buffer per DPU.
    Gather,
    /// A write to one DPU.
    CopyTo,
    /// A read from one DPU.
    CopyFrom,
    /// A launch of every DPU of the set, to completion.
    Launch,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operation::Push => "push",
            Operation::Broadcast => "broadcast",
            Operation::Gather => "gather",
            Operation::CopyTo => "copy to DPU",
            Operation::CopyFrom => "copy from DPU",
            Operation::Launch => "launch",
        })
    }
}

/// Bandwidths and overheads of a UPMEM server's host-DPU interface; [`TransferModel::default`] is PrIM's
/// 350 MHz server (see the module docs for the sources).
#[derive(Clone, Debug, PartialEq)]
pub struct TransferModel {
    /// Parallel push, host to the DPUs of one rank, bytes per second.
    pub push_rank_bytes_per_second: f64,
    /// Parallel gather, the DPUs of one rank to the host, bytes per second.
    pub gather_rank_bytes_per_second: f64,
    /// Broadcast to the DPUs of one rank, bytes delivered per second.
    pub broadcast_rank_bytes_per_second: f64,
    /// Host to one DPU, bytes per second.
    pub serial_to_dpu_bytes_per_second: f64,
    /// One DPU to the host, bytes per second.
    pub serial_from_dpu_bytes_per_second: f64,
    /// Booting every rank and polling them until all stop (an estimate, see the module docs).
    pub launch_overhead: Duration,
    /// Serve the ranks of a set one after the other (the 2020 SDK) instead of in parallel.
    pub ranks_in_series: bool,
}

impl Default for TransferModel {
    fn default() -> Self {
        TransferModel {
            push_rank_bytes_per_second: 6.68e9,
            gather_rank_bytes_per_second: 4.74e9,
            broadcast_rank_bytes_per_second: 16.88e9,
            serial_to_dpu_bytes_per_second: 0.33e9,
            serial_from_dpu_bytes_per_second: 0.12e9,
            launch_overhead: Duration::from_micros(20),
            ranks_in_series: false,
        }
    }
}

impl TransferModel {
    /// Modelled time of a transfer of `bytes_per_dpu` to or from every DPU of a set whose ranks hold these DPU
    /// index ranges; for [`Operation::CopyTo`] and [`Operation::CopyFrom`] the ranks are ignored (one DPU).
    /// `None` for [`Operation::Launch`], which is not a transfer.
    pub fn transfer_time(&self, operation: Operation, bytes_per_dpu: u64, ranks: &[Range<usize>]) -> Option<Duration> {
        let rank_bandwidth = match operation {
            Operation::Push => self.push_rank_bytes_per_second,
            Operation::Gather => self.gather_rank_bytes_per_second,
            Operation::Broadcast => self.broadcast_rank_bytes_per_second,
            Operation::CopyTo => return Some(seconds(bytes_per_dpu as f64 / self.serial_to_dpu_bytes_per_second)),
            Operation::CopyFrom => return Some(seconds(bytes_per_dpu as f64 / self.serial_from_dpu_bytes_per_second)),
            Operation::Launch => return None,
        };
        let rank_times = ranks.iter().map(|rank| (rank.len() as u64 * bytes_per_dpu) as f64 / rank_bandwidth);
        let total = if self.ranks_in_series { rank_times.sum() } else { rank_times.fold(0.0, f64::max) };
        Some(seconds(total))
    }

    /// Modelled time of a launch whose slowest DPU runs `cycles` at `clock_hz`.
    pub fn launch_time(&self, cycles: u64, clock_hz: u64) -> Duration {
        self.launch_overhead + seconds(cycles as f64 / clock_hz as f64)
    }
}

fn seconds(value: f64) -> Duration {
    Duration::from_secs_f64(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set of one full rank.
    const FULL_RANK: &[Range<usize>] = &[FULL_RANK_DPUS];
    const FULL_RANK_DPUS: Range<usize> = 0..64;

    #[test]
    fn a_push_to_one_full_rank_runs_at_the_rank_bandwidth() {
        let model = TransferModel::default();
        let time = model.transfer_time(Operation::Push, 1 << 20, FULL_RANK).unwrap();
        let expected = 64.0 * f64::from(1 << 20) / 6.68e9;
        assert!((time.as_secs_f64() - expected).abs() < 1e-9, "{time:?}");
    }

    #[test]
    fn ranks_run_in_parallel_unless_in_series() {
        let ranks = [0..64, 64..128, 128..190];
        let parallel = TransferModel::default();
        let one = parallel.transfer_time(Operation::Gather, 4096, &ranks[..1]).unwrap();
        assert_eq!(parallel.transfer_time(Operation::Gather, 4096, &ranks).unwrap(), one);
        let series = TransferModel { ranks_in_series: true, ..TransferModel::default() };
        let total = series.transfer_time(Operation::Gather, 4096, &ranks).unwrap();
        let expected = (64 + 64 + 62) as f64 * 4096.0 / 4.74e9;
        assert!((total.as_secs_f64() - expected).abs() < 1e-9, "{total:?}");
    }

    #[test]
    fn broadcast_is_faster_than_push_and_serial_copies_slower() {
        let model = TransferModel::default();
        let time = |operation| model.transfer_time(operation, 1 << 16, FULL_RANK).unwrap();
        assert!(time(Operation::Broadcast) < time(Operation::Push));
        assert!(time(Operation::Push) < time(Operation::Gather));
        // One DPU serially against 64 in parallel: 1/64 of the bytes, at 1/20 of the bandwidth.
        assert!(time(Operation::CopyTo) < time(Operation::Push));
        assert!(time(Operation::CopyFrom) > time(Operation::CopyTo));
        assert_eq!(model.transfer_time(Operation::Launch, 0, FULL_RANK), None);
    }

    #[test]
    fn a_launch_adds_the_overhead_to_the_slowest_dpu() {
        let model = TransferModel::default();
        assert_eq!(model.launch_time(350_000, 350_000_000), Duration::from_millis(1) + model.launch_overhead);
    }
}
