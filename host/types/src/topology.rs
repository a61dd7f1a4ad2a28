//! The shape of a set of DPUs: ranks, DPUs per rank, disabled DPUs, memory sizes and chip version.

use std::collections::BTreeSet;
use std::fmt;

use crate::chip::ChipVersion;
use crate::{DEFAULT_MRAM_SIZE, DEFAULT_WRAM_SIZE};

/// Ranks, DPUs per rank and the disabled DPUs of a server (real or simulated), with each DPU's memory sizes and chip
/// version.
///
/// DPUs are numbered rank by rank: DPU `d` is member `d % dpus_per_rank` of rank `d / dpus_per_rank`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Number of ranks.
    pub nr_ranks: u32,
    /// DPUs per rank: 64 on UPMEM DIMMs, 1 in the SDK's own simulator.
    pub dpus_per_rank: u32,
    /// DPUs that exist but cannot be used, as faulty DPUs on real servers.
    pub disabled: BTreeSet<u32>,
    /// WRAM per DPU in bytes (64 KiB on UPMEM v1A).
    pub wram_size: u64,
    /// MRAM per DPU in bytes (64 MiB).
    pub mram_size: u64,
    /// The DPUs' chip version, which bounds a program's tasklets (24 on v1A, 16 on v1B).
    pub chip: ChipVersion,
}

/// "`r` ranks of `d` DPUs", as the logs and `pimgnn info` say it.
impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        write!(
            f,
            "{} rank{} of {} DPU{}",
            self.nr_ranks,
            plural(self.nr_ranks),
            self.dpus_per_rank,
            plural(self.dpus_per_rank)
        )
    }
}

impl Topology {
    /// `nr_ranks` ranks of `dpus_per_rank` DPUs with UPMEM's memory sizes and no disabled DPU.
    pub fn new(nr_ranks: u32, dpus_per_rank: u32) -> Self {
        Topology {
            nr_ranks,
            dpus_per_rank,
            disabled: BTreeSet::new(),
            wram_size: DEFAULT_WRAM_SIZE,
            mram_size: DEFAULT_MRAM_SIZE,
            chip: ChipVersion::default(),
        }
    }

    /// A full UPMEM server: 40 ranks of 64 DPUs (2,560 DPUs).
    pub fn full_server() -> Self {
        Self::new(40, 64)
    }

    /// The part of a full server that holds `nr_dpus` DPUs: as many of its ranks as they need, at least one and
    /// at most all 40, so that a larger request is refused at allocation as on the hardware.
    pub fn server_ranks_for(nr_dpus: u32) -> Self {
        let server = Self::full_server();
        Self::new(nr_dpus.div_ceil(server.dpus_per_rank).clamp(1, server.nr_ranks), server.dpus_per_rank)
    }

    /// The same topology with DPUs of this chip version.
    pub fn with_chip(mut self, chip: ChipVersion) -> Self {
        self.chip = chip;
        self
    }

    /// The same topology with these DPUs disabled.
    pub fn with_disabled(mut self, dpus: impl IntoIterator<Item = u32>) -> Self {
        self.disabled.extend(dpus);
        self
    }

    /// All DPUs, enabled or not.
    pub fn nr_dpus(&self) -> u32 {
        self.nr_ranks * self.dpus_per_rank
    }

    /// DPUs that can be used.
    pub fn nr_enabled_dpus(&self) -> u32 {
        self.nr_dpus() - self.disabled.len() as u32
    }

    /// Whether DPU `dpu` exists and is enabled.
    pub fn is_enabled(&self, dpu: u32) -> bool {
        dpu < self.nr_dpus() && !self.disabled.contains(&dpu)
    }

    /// The enabled DPUs in order.
    pub fn enabled_dpus(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nr_dpus()).filter(|dpu| !self.disabled.contains(dpu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topologies_print_ranks_and_dpus_in_words() {
        assert_eq!(Topology::full_server().to_string(), "40 ranks of 64 DPUs");
        assert_eq!(Topology::new(1, 1).to_string(), "1 rank of 1 DPU");
    }

    #[test]
    fn a_part_of_a_server_has_the_ranks_its_dpus_need() {
        for (dpus, ranks) in [(0, 1), (1, 1), (64, 1), (65, 2), (2048, 32), (2560, 40), (3000, 40)] {
            assert_eq!(Topology::server_ranks_for(dpus), Topology::new(ranks, 64), "{dpus} DPUs");
        }
    }
}
