//! The two DPU chip versions UPMEM ships, and what differs between them.
//!
//! The SDK's compiler targets one of them (`-mcpu=v1A` or `-mcpu=v1B`): its `dpu-upmem-dpurte-clang` wrapper
//! takes `$DPU_ARCH_VERSION`, else v1B when `/sys/class/dpu_rank/dpu_rank0/dpu_chip_id` is above 8, else v1A.
//! Its linker gets the chip's thread count (`--defsym=DPU_NR_THREADS=`, from `DPUCharacteristics.h` of UPMEM's
//! clang driver) and the SDK's `link/dpu.lds` refuses a larger `NR_TASKLETS` ("NR_TASKLETS should be in the
//! range: [0; x] with x == 24 for v1A or 16 for v1B"). The host learns the chip of a rank from libdpu
//! (`dpu_get_description(rank)->hw.signature.chip_id` and `hw.dpu.nr_of_threads`).

use std::fmt;
use std::str::FromStr;

/// A DPU chip version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChipVersion {
    /// The chips of UPMEM's DIMMs since 2020: 24 hardware threads.
    #[default]
    V1A,
    /// The "v1.4" chips: 16 hardware threads.
    V1B,
}

impl ChipVersion {
    /// Every version, oldest first.
    pub const ALL: [ChipVersion; 2] = [ChipVersion::V1A, ChipVersion::V1B];

    /// The environment variable the SDK's compiler wrapper reads the target chip from (`v1A` or `v1B`).
    pub const ARCH_ENV_VAR: &'static str = "DPU_ARCH_VERSION";

    /// Hardware threads of one DPU: the most tasklets a program may have.
    pub const fn hardware_threads(self) -> u32 {
        match self {
            ChipVersion::V1A => 24,
            ChipVersion::V1B => 16,
        }
    }

    /// IRAM of one DPU in instructions: the largest program it holds. A v1A DPU holds 24 KiB of 48-bit
    /// instructions, which the SDK's linker sees as 8-byte slots: the SDK 2025.1's v1A programs define
    /// `DPU_IRAM_SIZE` = 0x8000 for its script's IRAM region (from `DPUCharacteristics.h` of UPMEM's clang
    /// driver, which gives v1B 3,968 slots).
    pub const fn iram_instructions(self) -> u32 {
        match self {
            ChipVersion::V1A => 4096,
            ChipVersion::V1B => 3968,
        }
    }

    /// The version as `-mcpu=` and `$DPU_ARCH_VERSION` spell it.
    pub const fn name(self) -> &'static str {
        match self {
            ChipVersion::V1A => "v1A",
            ChipVersion::V1B => "v1B",
        }
    }

    /// The macro UPMEM's clang defines for this target (`syslib/perfcounter.h` tests `__dpu_v1B__`).
    pub const fn target_macro(self) -> &'static str {
        match self {
            ChipVersion::V1A => "__dpu_v1A__",
            ChipVersion::V1B => "__dpu_v1B__",
        }
    }

    /// The version of a chip id of the SDK's `dpu_chip_id.h`. The ids up to 8 (`vD`, `vD_asic8`, `vD_fpga4`, ...)
    /// are v1A chips and the `_v1_4` ids from 66 on are v1B ones; the compiler wrapper's rule is the same
    /// ("above 8 is v1B").
    pub const fn from_chip_id(chip_id: u32) -> Self {
        if chip_id > 8 {
            ChipVersion::V1B
        } else {
            ChipVersion::V1A
        }
    }

    /// The chip id a simulated rank of this version reports: `vD_asic8` (4) and `vD_asic8_v1_4` (68), the ids of
    /// the chips on UPMEM's DIMMs.
    pub const fn chip_id(self) -> u32 {
        match self {
            ChipVersion::V1A => 4,
            ChipVersion::V1B => 68,
        }
    }

    /// The chip the SDK's compiler targets here: `$DPU_ARCH_VERSION` when it names a version, else the first
    /// rank's chip id under `/sys/class/dpu_rank`, else v1A, as the SDK's `dpu-upmem-dpurte-clang` decides.
    pub fn compiler_target() -> Result<Self, ParseChipVersionError> {
        if let Some(version) = std::env::var_os(Self::ARCH_ENV_VAR) {
            return version.to_string_lossy().parse();
        }
        let chip_id = std::fs::read_to_string("/sys/class/dpu_rank/dpu_rank0/dpu_chip_id")
            .ok()
            .and_then(|text| parse_chip_id(text.trim()));
        Ok(chip_id.map_or(ChipVersion::V1A, Self::from_chip_id))
    }
}

/// A chip id as the driver's sysfs file or a profile's `chipId` writes it: decimal or `0x` hexadecimal.
pub fn parse_chip_id(text: &str) -> Option<u32> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

impl fmt::Display for ChipVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A chip version that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("DPU chip version `{0}`: expected v1A or v1B")]
pub struct ParseChipVersionError(String);

impl FromStr for ChipVersion {
    type Err = ParseChipVersionError;

    /// `v1A` or `v1B`, in either case.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|version| version.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| ParseChipVersionError(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_as_the_compiler_spells_them() {
        for version in ChipVersion::ALL {
            assert_eq!(version.name().parse::<ChipVersion>(), Ok(version));
            assert_eq!(version.name().to_lowercase().parse::<ChipVersion>(), Ok(version));
        }
        assert!("v2".parse::<ChipVersion>().unwrap_err().to_string().contains("v1A or v1B"));
    }

    #[test]
    fn chip_ids_above_8_are_v1b() {
        assert_eq!(ChipVersion::from_chip_id(4), ChipVersion::V1A);
        assert_eq!(ChipVersion::from_chip_id(8), ChipVersion::V1A);
        assert_eq!(ChipVersion::from_chip_id(0x42), ChipVersion::V1B);
        for version in ChipVersion::ALL {
            assert_eq!(ChipVersion::from_chip_id(version.chip_id()), version);
        }
        assert_eq!(parse_chip_id("0x42"), Some(66));
        assert_eq!(parse_chip_id("4"), Some(4));
        assert_eq!(parse_chip_id("v1B"), None);
    }

    #[test]
    fn v1b_runs_16_threads() {
        assert_eq!(ChipVersion::V1A.hardware_threads(), 24);
        assert_eq!(ChipVersion::V1B.hardware_threads(), 16);
    }
}
