//! How the simulated machine behaves: its shape (a [`Topology`]), workers, hang limit, strictness and schedule.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use upmem_types::Topology;

use crate::error::{Result, SimError};
use crate::layout::{MAX_WORKERS, MRAM_WINDOW, SCHEDULE_FAST, SCHEDULE_MODELLED, SCHEDULE_SHUFFLE};

/// Checks that the simulator can build a machine of this shape.
pub(crate) fn validate_topology(topology: &Topology) -> Result<()> {
    let invalid = |message: String| Err(SimError::InvalidConfig(message));
    if topology.nr_ranks == 0 || topology.dpus_per_rank == 0 {
        return invalid(format!("{topology}: need at least one DPU"));
    }
    if topology.dpus_per_rank > 64 {
        return invalid(format!("{} DPUs per rank: a rank has at most 64", topology.dpus_per_rank));
    }
    if u64::from(topology.nr_ranks) * u64::from(topology.dpus_per_rank) > 1 << 16 {
        return invalid(format!("{topology}: at most 65,536 DPUs"));
    }
    if let Some(&dpu) = topology.disabled.iter().find(|&&dpu| dpu >= topology.nr_dpus()) {
        return invalid(format!("disabled DPU {dpu} does not exist: there are {} DPUs", topology.nr_dpus()));
    }
    if topology.wram_size == 0 || !topology.wram_size.is_multiple_of(4096) || topology.wram_size > 1 << 20 {
        return invalid(format!("WRAM size {}: must be a multiple of 4096 up to 1 MiB", topology.wram_size));
    }
    if topology.mram_size == 0 || !topology.mram_size.is_multiple_of(4096) || topology.mram_size > MRAM_WINDOW {
        return invalid(format!("MRAM size {}: must be a multiple of 4096 up to 64 MiB", topology.mram_size));
    }
    Ok(())
}

/// How the simulator runs DPUs.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// The machine's shape.
    pub topology: Topology,
    /// Worker processes per program (default: one per host core).
    pub workers: usize,
    /// A DPU still running after this long is stopped and put in fault ([`crate::FaultKind::Timeout`]).
    /// `None` waits forever.
    pub hang_limit: Option<Duration>,
    /// Fault on what the documentation forbids but the hardware tolerates (unaligned DMA, DMA sizes outside
    /// 8..=2048 or not a multiple of 8, DMA crossing the end of MRAM, a misaligned seqread cache, unlocking a
    /// free mutex, bad handshake ids).
    pub strict: bool,
    /// How each DPU's tasklets are interleaved (default: [`Schedule::Modelled`], or what the
    /// `UPMEM_SIM_SCHEDULE` environment variable says when [`SimConfig::new`] runs).
    pub schedule: Schedule,
    /// Capacity of each DPU's log in bytes (the SDK's default stdout buffer is 1 MiB).
    pub log_size: u64,
}

impl SimConfig {
    /// Default behaviour on the given topology.
    pub fn new(topology: Topology) -> Self {
        SimConfig {
            topology,
            workers: std::thread::available_parallelism().map_or(1, usize::from),
            hang_limit: Some(Duration::from_secs(60)),
            strict: false,
            schedule: Schedule::from_env(),
            log_size: 1 << 20,
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        validate_topology(&self.topology)?;
        if self.workers == 0 || self.workers > MAX_WORKERS {
            return Err(SimError::InvalidConfig(format!("{} workers: must be 1..={MAX_WORKERS}", self.workers)));
        }
        if self.log_size == 0 || !self.log_size.is_multiple_of(4096) {
            return Err(SimError::InvalidConfig(format!(
                "log size {}: must be a positive multiple of 4096",
                self.log_size
            )));
        }
        if let Some(limit) = self.hang_limit {
            if limit.as_millis() == 0 || limit.as_millis() > u128::from(u32::MAX) {
                return Err(SimError::InvalidConfig(format!("hang limit {limit:?}: must be 1 ms to 49 days")));
            }
        }
        Ok(())
    }
}

/// How a DPU's tasklets are interleaved. Every schedule is deterministic: the same kernel, input and schedule
/// give the same results and counts on every run and any number of workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Schedule {
    /// Each tasklet runs until it blocks (barrier, mutex, semaphore, handshake), tasklets in round-robin
    /// order. The fastest, but kernels that rely on the DPU's interleaving (a DMA suspending its issuer, all
    /// tasklets advancing together) can give wrong results or deadlock.
    Fast,
    /// On modelled time, like the DPU: the tasklet furthest behind runs; DMA and synchronisation happen in
    /// modelled-time order (see the crate docs, "Timing model").
    #[default]
    Modelled,
    /// Modelled time perturbed by a generator with this seed: the next tasklet is drawn among those close to
    /// the furthest behind, and how far a tasklet may run ahead varies. Different seeds give different
    /// interleavings, which exposes races a kernel would show only now and then on hardware. Its cycles predict
    /// nothing ([`Schedule::predicts_hardware_time`]).
    Shuffle {
        /// The generator's seed.
        seed: u64,
    },
}

impl Schedule {
    /// The environment variable [`SimConfig::new`] reads the schedule from.
    pub const ENV_VAR: &'static str = "UPMEM_SIM_SCHEDULE";

    /// `DPUSIM_SCHEDULE_*` of abi.h.
    pub(crate) fn control_code(self) -> u32 {
        match self {
            Schedule::Fast => SCHEDULE_FAST,
            Schedule::Modelled => SCHEDULE_MODELLED,
            Schedule::Shuffle { .. } => SCHEDULE_SHUFFLE,
        }
    }

    /// Whether modelled cycles under this schedule predict the hardware's time: the modelled schedule's only.
    /// The fast schedule runs each tasklet until it blocks, so its DMA transfers queue behind all of an earlier
    /// tasklet's instead of interleaving: its cycle counts are those of that order, up to one tasklet count times
    /// too many. The shuffle schedule runs tasklets out of modelled order, so it cannot share the pipeline among
    /// the tasklets issuing at each cycle as the modelled one does; it counts every runnable tasklet, waiting
    /// for its DMA or not, which overstates the cycles of kernels that wait for DMA.
    pub fn predicts_hardware_time(self) -> bool {
        matches!(self, Schedule::Modelled)
    }

    /// The generator's seed (0 unless shuffling).
    pub(crate) fn shuffle_seed(self) -> u64 {
        match self {
            Schedule::Shuffle { seed } => seed,
            _ => 0,
        }
    }

    /// The schedule `UPMEM_SIM_SCHEDULE` names, or the default when it is unset. An invalid value is reported
    /// with a warning (log) and ignored.
    fn from_env() -> Self {
        let Ok(text) = std::env::var(Self::ENV_VAR) else { return Self::default() };
        text.parse().unwrap_or_else(|error| {
            log::warn!("{}: {error}; using the modelled schedule", Self::ENV_VAR);
            Self::default()
        })
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::Fast => f.write_str("fast"),
            Schedule::Modelled => f.write_str("modelled"),
            Schedule::Shuffle { seed } => write!(f, "shuffle:{seed}"),
        }
    }
}

/// A schedule that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("schedule `{0}`: expected `fast`, `modelled` or `shuffle:SEED` (SEED a 64-bit unsigned integer)")]
pub struct ParseScheduleError(String);

impl FromStr for Schedule {
    type Err = ParseScheduleError;

    /// `fast`, `modelled` or `shuffle:SEED`.
    fn from_str(text: &str) -> std::result::Result<Self, Self::Err> {
        match text.trim() {
            "fast" => Ok(Schedule::Fast),
            "modelled" => Ok(Schedule::Modelled),
            other => other
                .strip_prefix("shuffle:")
                .and_then(|seed| seed.parse().ok())
                .map(|seed| Schedule::Shuffle { seed })
                .ok_or_else(|| ParseScheduleError(text.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_and_print_the_same() {
        for schedule in [Schedule::Fast, Schedule::Modelled, Schedule::Shuffle { seed: 42 }] {
            assert_eq!(schedule.to_string().parse::<Schedule>(), Ok(schedule));
        }
    }

    #[test]
    fn bad_schedules_are_rejected_by_name() {
        for text in ["", "slow", "shuffle", "shuffle:", "shuffle:-1", "shuffle:x"] {
            let error = text.parse::<Schedule>().unwrap_err();
            assert!(error.to_string().contains("shuffle:SEED"), "{error}");
        }
    }
}
