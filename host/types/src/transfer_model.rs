//! How long host-DPU transfers and launches take on a UPMEM server: the model behind the predicted-hardware
//! timelines of `upmem`'s `LoadedSet::timeline` and of `dpu_sim.h`'s `dpu_sim_timeline`.
//!
//! # The model
//!
//! A parallel transfer (`dpu_push_xfer`, and a broadcast) moves the same length to every DPU of a rank (the SDK
//! requires it), so it carries `DPUs x bytes per DPU` over the host-DPU interface; a broadcast's bytes are
//! counted as delivered (source bytes x DPUs), as PrIM counts them. Its time is those bytes over the aggregate
//! bandwidth of the ranks it spans, which grows with the ranks up to a system cap ([`RankScaling`]):
//!
//! | transfer | libdpu | aggregate bandwidth over `r` ranks | source |
//! |---|---|---|---|
//! | parallel push, host to DPUs | `dpu_prepare_xfer` + `dpu_push_xfer(TO_DPU)` | 5.04 + 0.259 min(r, 31.5) GB/s: 5.30 at 1 rank, 13.2 from 32 | (1) |
//! | parallel gather, DPUs to host | `dpu_push_xfer(FROM_DPU)` | 3.37 + 0.231 min(r, 23.5) GB/s: 3.60 at 1 rank, 8.8 from 24 | (2) |
//! | broadcast | `dpu_broadcast_to`, `dpu_copy_to` on a set | the push curve x 16.88 / 6.68 (bytes delivered) | (3) |
//! | serial, host to one DPU | `dpu_copy_to` on one DPU | 0.33 GB/s | (4) |
//! | serial, one DPU to host | `dpu_copy_from` on one DPU | 0.12 GB/s | (4) |
//!
//! 1. Measured on a full server (40 ranks) with SDK 2025.1, 8 MiB per DPU, 1 to 40 ranks: the derf fork of
//!    PrIM's benchmarks, `Microbenchmarks/CPU-DPU`, least-squares fit in `util/upvec-write.tex` (curve
//!    "upstream").
//! 2. The same benchmark's reads, `util/upvec-read.pdf`: about 3.0 GB/s at 1 rank, 8 to 9.7 GB/s from 24 ranks,
//!    fitted as 2.49 + 0.231 min(r, 23.5). The model keeps the fit's slope and saturation and raises its
//!    intercept by 0.88 GB/s, so that it passes between the 2025.1 SDK's one-rank figure and PrIM's (4.74 GB/s on
//!    the 2020 SDK) and caps at 8.8 GB/s, the middle of the measured 8 to 9.7 (the fit's own cap, 7.9, is below
//!    every measured point there).
//! 3. No server-scale broadcast measurement is published. PrIM (Gómez-Luna et al., "Benchmarking a New Paradigm:
//!    An Experimental Analysis of a Real Processing-in-Memory Architecture", 2021) measured one rank of 64 DPUs:
//!    broadcast 16.88 GB/s delivered against push 6.68 GB/s; the model keeps that ratio at every rank count.
//! 4. PrIM, one DPU.
//!
//! PrIM's one-rank figures (push 6.68, gather 4.74 GB/s, on the 2020 SDK) are the model's calibration check at one
//! rank (`cargo bench -p upmem-sim --bench calibration` prints model against measurement for every figure). The
//! SDK serialises transfers of ranks on one DDR channel and gives a transfer fewer copy threads below 32 KiB per
//! DPU; both are inside the measured curves (8 MiB per DPU, ranks spread over the server's channels) and not
//! modelled apart: a transfer of a few KiB per DPU is predicted at the large-transfer rate.
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

/// How a parallel transfer's aggregate bandwidth grows with the ranks it spans, as fitted on a full server:
/// `intercept + per_rank x min(ranks, saturation_ranks)` bytes per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RankScaling {
    /// Bytes per second of the fit at 0 ranks (the fit's intercept; one rank adds [`RankScaling::per_rank`]).
    pub intercept: f64,
    /// Bytes per second each rank adds, up to [`RankScaling::saturation_ranks`].
    pub per_rank: f64,
    /// Ranks from which the bandwidth stops growing: the system's cap is reached.
    pub saturation_ranks: f64,
}

impl RankScaling {
    /// Aggregate bytes per second of a transfer spanning `ranks` ranks (at least 1).
    pub const fn bytes_per_second(&self, ranks: usize) -> f64 {
        self.intercept + self.per_rank * (if ranks == 0 { 1 } else { ranks } as f64).min(self.saturation_ranks)
    }

    /// The system's cap: the bandwidth from [`RankScaling::saturation_ranks`] ranks on.
    pub fn cap(&self) -> f64 {
        self.intercept + self.per_rank * self.saturation_ranks
    }

    /// The same curve with every bandwidth multiplied by `factor`.
    fn scaled(self, factor: f64) -> RankScaling {
        RankScaling { intercept: self.intercept * factor, per_rank: self.per_rank * factor, ..self }
    }
}

/// Bandwidths and overheads of a UPMEM server's host-DPU interface; [`TransferModel::default`] is a full server
/// on SDK 2025.1 (see the module docs for the sources). A server's own figures replace them field by field.
#[derive(Clone, Debug, PartialEq)]
pub struct TransferModel {
    /// Where the figures come from, for the predictions that use them to say so.
    pub source: String,
    /// Parallel push, host to DPUs.
    pub push: RankScaling,
    /// Parallel gather, DPUs to host.
    pub gather: RankScaling,
    /// Broadcast, in bytes delivered (source bytes x DPUs).
    pub broadcast: RankScaling,
    /// Host to one DPU, bytes per second.
    pub serial_to_dpu_bytes_per_second: f64,
    /// One DPU to the host, bytes per second.
    pub serial_from_dpu_bytes_per_second: f64,
    /// Booting every rank and polling them until all stop (an estimate, see the module docs).
    pub launch_overhead: Duration,
}

/// The published fit of the 2025.1 SDK's push over 1 to 40 ranks (module docs, source 1).
const DERF_PUSH_FIT: RankScaling =
    RankScaling { intercept: 5.042768e9, per_rank: 0.258673e9, saturation_ranks: 31.536102 };
/// The published fit of its gather (module docs, source 2), whose intercept the model raises by
/// [`GATHER_INTERCEPT_RAISE`].
const DERF_GATHER_FIT: RankScaling = RankScaling { intercept: 2.49e9, per_rank: 0.231e9, saturation_ranks: 23.5 };
const GATHER_INTERCEPT_RAISE: f64 = 0.88e9;

/// PrIM's one-rank push and broadcast, whose ratio the broadcast curve keeps (module docs, source 3).
const PRIM_PUSH_ONE_RANK: f64 = 6.68e9;
const PRIM_BROADCAST_ONE_RANK: f64 = 16.88e9;

impl Default for TransferModel {
    fn default() -> Self {
        TransferModel {
            source: "SDK 2025.1 on a 40-rank server (derf/prim-benchmarks CPU-DPU)".to_owned(),
            push: DERF_PUSH_FIT,
            gather: RankScaling { intercept: DERF_GATHER_FIT.intercept + GATHER_INTERCEPT_RAISE, ..DERF_GATHER_FIT },
            broadcast: DERF_PUSH_FIT.scaled(PRIM_BROADCAST_ONE_RANK / PRIM_PUSH_ONE_RANK),
            serial_to_dpu_bytes_per_second: 0.33e9,
            serial_from_dpu_bytes_per_second: 0.12e9,
            launch_overhead: Duration::from_micros(20),
        }
    }
}

impl TransferModel {
    /// Modelled time of a transfer of `bytes_per_dpu` to or from every DPU of a set whose ranks hold these DPU
    /// index ranges: every DPU's bytes (a broadcast's delivered bytes) over the aggregate bandwidth of that many
    /// ranks. For [`Operation::CopyTo`] and [`Operation::CopyFrom`] the ranks are ignored (one DPU). `None` for
    /// [`Operation::Launch`], which is not a transfer.
    pub fn transfer_time(&self, operation: Operation, bytes_per_dpu: u64, ranks: &[Range<usize>]) -> Option<Duration> {
        let dpus: usize = ranks.iter().map(ExactSizeIterator::len).sum();
        self.parallel_time(operation, bytes_per_dpu, dpus, ranks.len())
    }

    /// As [`TransferModel::transfer_time`], for `dpus` DPUs over `nr_ranks` ranks (a set not yet allocated, as
    /// a cost model plans it).
    pub fn parallel_time(
        &self,
        operation: Operation,
        bytes_per_dpu: u64,
        dpus: usize,
        nr_ranks: usize,
    ) -> Option<Duration> {
        let scaling = match operation {
            Operation::Push => self.push,
            Operation::Gather => self.gather,
            Operation::Broadcast => self.broadcast,
            Operation::CopyTo => return Some(seconds(bytes_per_dpu as f64 / self.serial_to_dpu_bytes_per_second)),
            Operation::CopyFrom => return Some(seconds(bytes_per_dpu as f64 / self.serial_from_dpu_bytes_per_second)),
            Operation::Launch => return None,
        };
        if dpus == 0 {
            return Some(Duration::ZERO);
        }
        Some(seconds((dpus as u64 * bytes_per_dpu) as f64 / scaling.bytes_per_second(nr_ranks)))
    }

    /// Modelled time of a launch whose slowest DPU runs `cycles` at `clock_hz`.
    pub fn launch_time(&self, cycles: u64, clock_hz: u64) -> Duration {
        self.launch_overhead + seconds(cycles as f64 / clock_hz as f64)
    }
}

/// A published measurement of a transfer's aggregate bandwidth, which [`TransferModel::default`] is calibrated
/// against ([`TransferModel::calibration`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// What was measured.
    pub operation: Operation,
    /// Ranks of 64 DPUs the transfers spanned.
    pub ranks: usize,
    /// The measured aggregate bandwidth (a broadcast's in bytes delivered).
    pub bytes_per_second: f64,
    /// Where the figure is published.
    pub source: &'static str,
}

const DERF_WRITE: &str = "SDK 2025.1, 40-rank server: derf/prim-benchmarks CPU-DPU, fit in util/upvec-write.tex";
const DERF_READ: &str = "SDK 2025.1, 40-rank server: derf/prim-benchmarks CPU-DPU, util/upvec-read.pdf";
const DERF_READ_FIT: &str = "SDK 2025.1, 40-rank server: fit of util/upvec-read.pdf, 2.49 + 0.231 min(r, 23.5)";
const PRIM: &str = "PrIM (Gomez-Luna et al. 2021), SDK 2020, one rank";

/// The published figures [`TransferModel::default`] is calibrated against: the 2025.1 SDK's push and gather over
/// 1 to 40 ranks (the published fits at the ranks PrIM's benchmark sweeps, and the read points), and PrIM's
/// one-rank push, gather and broadcast.
pub const MEASUREMENTS: &[Measurement] = &{
    const fn derf_push(ranks: usize) -> Measurement {
        let bytes_per_second = DERF_PUSH_FIT.bytes_per_second(ranks);
        Measurement { operation: Operation::Push, ranks, bytes_per_second, source: DERF_WRITE }
    }
    const fn derf_gather(ranks: usize) -> Measurement {
        let bytes_per_second = DERF_GATHER_FIT.bytes_per_second(ranks);
        Measurement { operation: Operation::Gather, ranks, bytes_per_second, source: DERF_READ_FIT }
    }
    const fn read(ranks: usize, bytes_per_second: f64) -> Measurement {
        Measurement { operation: Operation::Gather, ranks, bytes_per_second, source: DERF_READ }
    }
    const fn prim(operation: Operation, bytes_per_second: f64) -> Measurement {
        Measurement { operation, ranks: 1, bytes_per_second, source: PRIM }
    }
    [
        derf_push(1),
        derf_push(4),
        derf_push(8),
        derf_push(16),
        derf_push(24),
        derf_push(32),
        derf_push(40),
        derf_gather(1),
        derf_gather(4),
        derf_gather(8),
        derf_gather(16),
        derf_gather(24),
        derf_gather(32),
        derf_gather(40),
        read(1, 3.0e9),
        read(24, 8.85e9),
        read(40, 8.85e9),
        prim(Operation::Push, PRIM_PUSH_ONE_RANK),
        prim(Operation::Gather, 4.74e9),
        prim(Operation::Broadcast, PRIM_BROADCAST_ONE_RANK),
    ]
};

impl TransferModel {
    /// Every [`MEASUREMENTS`] figure beside this model's bandwidth for the same transfer, as `(measurement,
    /// modelled bytes per second)`: the model's calibration, printed by `cargo bench -p upmem-sim --bench
    /// calibration` (goal: every ratio within 0.75 to 1.33).
    pub fn calibration(&self) -> Vec<(Measurement, f64)> {
        MEASUREMENTS
            .iter()
            .filter_map(|measurement| {
                let scaling = match measurement.operation {
                    Operation::Push => self.push,
                    Operation::Gather => self.gather,
                    Operation::Broadcast => self.broadcast,
                    Operation::CopyTo | Operation::CopyFrom | Operation::Launch => return None,
                };
                Some((*measurement, scaling.bytes_per_second(measurement.ranks)))
            })
            .collect()
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
    fn a_push_to_one_full_rank_runs_at_the_one_rank_bandwidth() {
        let model = TransferModel::default();
        let time = model.transfer_time(Operation::Push, 1 << 20, FULL_RANK).unwrap();
        let expected = 64.0 * f64::from(1 << 20) / (5.042768e9 + 0.258673e9);
        assert!((time.as_secs_f64() - expected).abs() < 1e-9, "{time:?}");
    }

    #[test]
    fn ranks_share_a_bandwidth_that_grows_to_the_systems_cap() {
        let model = TransferModel::default();
        let ranks = |n: usize| (0..n).map(|rank| rank * 64..rank * 64 + 64).collect::<Vec<_>>();
        let rate = |n: usize| {
            let time = model.transfer_time(Operation::Push, 1 << 20, &ranks(n)).unwrap();
            (n * 64) as f64 * f64::from(1 << 20) / time.as_secs_f64()
        };
        assert!(rate(4) > rate(1) && rate(32) > rate(16), "more ranks move more bytes per second");
        assert!((rate(40) - model.push.cap()).abs() < 1e3 && (rate(32) - rate(40)).abs() < 1e3, "capped from 32");
        assert!((model.push.cap() - 13.2e9).abs() < 0.05e9, "{}", model.push.cap());
        assert!((model.gather.cap() - 8.80e9).abs() < 0.05e9, "{}", model.gather.cap());
    }

    #[test]
    fn the_model_is_within_a_third_of_every_published_figure() {
        let calibration = TransferModel::default().calibration();
        assert_eq!(calibration.len(), MEASUREMENTS.len());
        for (measurement, modelled) in calibration {
            let ratio = modelled / measurement.bytes_per_second;
            assert!((0.75..=1.33).contains(&ratio), "{measurement:?}: modelled {modelled:.3e}, ratio {ratio:.2}");
        }
    }

    #[test]
    fn a_broadcast_is_charged_its_delivered_bytes() {
        let model = TransferModel::default();
        let (source, dpus, ranks) = (25_600_000_u64, 2048, 32);
        let time = model.parallel_time(Operation::Broadcast, source, dpus, ranks).unwrap();
        let expected = (source * dpus as u64) as f64 / model.broadcast.bytes_per_second(ranks);
        assert!((time.as_secs_f64() - expected).abs() < 1e-9, "{time:?}");
        assert!(time > Duration::from_secs(1), "52 GB delivered take over a second at any measured rate: {time:?}");
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
