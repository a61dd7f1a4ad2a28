//! Allocation profiles: `"key=value,key=value"`, the concatenation of `$UPMEM_PROFILE_BASE`, the argument
//! of `dpu_alloc` and `$UPMEM_PROFILE`, as libdpu reads them.
//!
//! The simulator reads `backend` (`simulator`; any other backend has no device here), the SDK's simulator size
//! keys `mramSize` and `wramSize`, `chipId` (the DPUs' chip id of `dpu_chip_id.h`: above 8 is a v1B chip with 16
//! threads, as the SDK's `dpu_v1B_mode` sets `chipId=0x42`), `disableResetOnAlloc`, `sgXferEnable` and
//! `sgXferMaxBlocksPerDpu`, and its
//! own `nrRanks`, `nrDpusPerRank`, `disabledDpus` (a `:`-separated list of DPU indices), `simWorkers`,
//! `simStrict` and `simSchedule` (`fast`, `modelled` or `shuffle:SEED`: how tasklets are interleaved, see
//! [`upmem_sim::Schedule`]; without it, `$UPMEM_SIM_SCHEDULE` or the modelled default). Other keys of libdpu
//! are accepted and ignored.

use std::collections::BTreeSet;
use std::ffi::CStr;

use upmem_sim::{ChipVersion, Schedule};

use crate::error::{code, DpuError, Result};

/// The settings of a profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Ranks of the simulated server.
    pub nr_ranks: u32,
    /// DPUs per rank.
    pub dpus_per_rank: u32,
    /// DPUs that do not work.
    pub disabled: BTreeSet<u32>,
    /// MRAM per DPU.
    pub mram_size: u64,
    /// WRAM per DPU.
    pub wram_size: u64,
    /// The DPUs' chip id (`dpu_chip_id.h`), which says their version.
    pub chip_id: u32,
    /// Worker processes (default: one per core).
    pub workers: Option<usize>,
    /// The simulator's strict mode.
    pub strict: bool,
    /// How tasklets are interleaved (`None`: the simulator's default).
    pub schedule: Option<Schedule>,
    /// Keep DPU memories as they are on allocation.
    pub disable_reset_on_alloc: bool,
    /// `dpu_push_sg_xfer` allowed.
    pub sg_xfer_enable: bool,
    /// Blocks per DPU in one scatter/gather transfer.
    pub sg_max_blocks_per_dpu: u32,
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            nr_ranks: 40,
            dpus_per_rank: 64,
            disabled: BTreeSet::new(),
            mram_size: 64 << 20,
            wram_size: 64 << 10,
            chip_id: ChipVersion::V1A.chip_id(),
            workers: None,
            strict: false,
            schedule: None,
            disable_reset_on_alloc: false,
            sg_xfer_enable: false,
            sg_max_blocks_per_dpu: u32::MAX,
        }
    }
}

impl Profile {
    /// The topology-defining part: a server made for one profile serves another only if these agree.
    pub fn same_machine(&self, other: &Profile) -> bool {
        let key = |p: &Profile| {
            (p.nr_ranks, p.dpus_per_rank, p.disabled.clone(), p.mram_size, p.wram_size, p.chip_id, p.workers)
        };
        key(self) == key(other) && (self.strict, self.schedule) == (other.strict, other.schedule)
    }

    /// Reads the effective profile for an allocation call.
    ///
    /// # Safety
    /// `argument` is null or a valid NUL-terminated string.
    pub unsafe fn effective(argument: *const std::ffi::c_char) -> Result<Profile> {
        let mut text = std::env::var("UPMEM_PROFILE_BASE").unwrap_or_default();
        if !argument.is_null() {
            // SAFETY: guaranteed by the caller.
            let argument = unsafe { CStr::from_ptr(argument) };
            text.push(',');
            text.push_str(&argument.to_string_lossy());
        }
        if let Ok(extra) = std::env::var("UPMEM_PROFILE") {
            text.push(',');
            text.push_str(&extra);
        }
        Self::parse(&text)
    }

    /// Parses a profile string. A key given again takes its last value, as libdpu's `dpu_properties_add`
    /// replaces it, so `backend` is checked once every entry is read.
    pub fn parse(text: &str) -> Result<Profile> {
        let mut profile = Profile::default();
        let mut backend = None;
        for entry in text.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
            let (key, value) = entry.split_once('=').ok_or_else(|| invalid(entry, "expected key=value"))?;
            let (key, value) = (key.trim(), value.trim());
            let number = |what: &str| -> Result<u64> {
                parse_number(value).ok_or_else(|| invalid(entry, &format!("{what} must be a number")))
            };
            let flag = || -> Result<bool> {
                match value {
                    "true" | "1" => Ok(true),
                    "false" | "0" => Ok(false),
                    _ => Err(invalid(entry, "expected true or false")),
                }
            };
            match key {
                "backend" => backend = Some(value),
                "nrRanks" => profile.nr_ranks = number("nrRanks")? as u32,
                "nrDpusPerRank" => profile.dpus_per_rank = number("nrDpusPerRank")? as u32,
                "disabledDpus" => {
                    profile.disabled = value
                        .split(':')
                        .filter(|dpu| !dpu.is_empty())
                        .map(|dpu| parse_number(dpu).map(|dpu| dpu as u32))
                        .collect::<Option<_>>()
                        .ok_or_else(|| invalid(entry, "expected DPU indices separated by ':'"))?
                }
                "mramSize" => profile.mram_size = number("mramSize")?,
                "wramSize" => profile.wram_size = number("wramSize")?,
                "chipId" => profile.chip_id = number("chipId")? as u32,
                "simWorkers" => profile.workers = Some(number("simWorkers")? as usize),
                "simStrict" => profile.strict = flag()?,
                "simSchedule" => {
                    profile.schedule = Some(
                        value
                            .parse()
                            .map_err(|error: upmem_sim::ParseScheduleError| invalid(entry, &error.to_string()))?,
                    )
                }
                "disableResetOnAlloc" => profile.disable_reset_on_alloc = flag()?,
                "sgXferEnable" => profile.sg_xfer_enable = flag()?,
                "sgXferMaxBlocksPerDpu" => profile.sg_max_blocks_per_dpu = number("sgXferMaxBlocksPerDpu")? as u32,
                _ => {}
            }
        }
        match backend {
            Some(backend) if backend != "simulator" => {
                eprintln!(
                    "libdpu (simulator): backend={backend} is not available: this libdpu is the upmem-sim \
                     simulator (use the UPMEM SDK's libdpu for hardware)"
                );
                Err(DpuError(code::ALLOCATION))
            }
            _ => Ok(profile),
        }
    }
}

fn parse_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn invalid(entry: &str, why: &str) -> DpuError {
    eprintln!("libdpu (simulator): invalid profile entry `{entry}`: {why}");
    DpuError(code::INVALID_PROFILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_parse_and_reject_bad_syntax() {
        let profile =
            Profile::parse("backend=simulator, nrRanks=2,nrDpusPerRank=8,disabledDpus=1:5,cycleAccurate=true").unwrap();
        assert_eq!((profile.nr_ranks, profile.dpus_per_rank), (2, 8));
        assert_eq!(profile.disabled, BTreeSet::from([1, 5]));
        assert_eq!(Profile::parse("nrRanks").unwrap_err(), DpuError(code::INVALID_PROFILE));
        assert_eq!(Profile::parse("nrRanks=many").unwrap_err(), DpuError(code::INVALID_PROFILE));
        assert_eq!(Profile::parse("backend=hw").unwrap_err(), DpuError(code::ALLOCATION));
        // The last backend wins, as in libdpu: `UPMEM_PROFILE=backend=simulator` overrides the argument's.
        assert!(Profile::parse("backend=hw,backend=simulator").is_ok());
        assert_eq!(Profile::parse("backend=simulator,backend=hw").unwrap_err(), DpuError(code::ALLOCATION));
        assert_eq!(Profile::parse("").unwrap(), Profile::default());
    }

    #[test]
    fn the_schedule_is_read_and_checked() {
        assert_eq!(Profile::parse("simSchedule=shuffle:9").unwrap().schedule, Some(Schedule::Shuffle { seed: 9 }));
        assert_eq!(Profile::parse("simSchedule=fast").unwrap().schedule, Some(Schedule::Fast));
        assert_eq!(Profile::parse("simSchedule=slow").unwrap_err(), DpuError(code::INVALID_PROFILE));
        let modelled = Profile::parse("simSchedule=modelled").unwrap();
        assert!(!modelled.same_machine(&Profile::parse("simSchedule=fast").unwrap()));
    }
}
