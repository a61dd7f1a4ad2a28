//! DPU programs ("kernels") as Rust users refer to them: one name, a binary per backend and chip version.

use std::path::{Path, PathBuf};

use upmem_types::ChipVersion;

/// A DPU program: its simulated binaries (built by [`crate::build::kernel`]) and, when the UPMEM SDK was present
/// at build time, its binaries for real DPUs, each for a chip version ([`ChipVersion`]: a program built for v1A
/// DPUs may have 24 tasklets, one for v1B DPUs at most 16). Loading picks the binary of the set's chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    name: String,
    binaries: Vec<Binary>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Binary {
    chip: ChipVersion,
    simulated: bool,
    path: PathBuf,
}

impl Kernel {
    /// A kernel from explicit binaries for v1A DPUs.
    pub fn new(name: &str, simulator: Option<PathBuf>, hardware: Option<PathBuf>) -> Self {
        Kernel { name: name.to_owned(), binaries: Vec::new() }.with_binaries(ChipVersion::V1A, simulator, hardware)
    }

    /// The same kernel with binaries for `chip`'s DPUs (replacing any it had for that chip).
    pub fn with_binaries(mut self, chip: ChipVersion, simulator: Option<PathBuf>, hardware: Option<PathBuf>) -> Self {
        self.binaries.retain(|binary| binary.chip != chip);
        let simulated = simulator.map(|path| Binary { chip, simulated: true, path });
        let real = hardware.map(|path| Binary { chip, simulated: false, path });
        self.binaries.extend(simulated.into_iter().chain(real));
        self
    }

    /// The kernel `name` built into `dir` by [`crate::build::kernel_into`] for each chip version (see
    /// [`file_name`](Self::file_name)); what [`kernel!`](crate::kernel!) uses.
    pub fn in_dir(name: &str, dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        let existing =
            |chip, simulated| Some(dir.join(Self::file_name(name, chip, simulated))).filter(|path| path.exists());
        ChipVersion::ALL.into_iter().fold(Kernel { name: name.to_owned(), binaries: Vec::new() }, |kernel, chip| {
            kernel.with_binaries(chip, existing(chip, true), existing(chip, false))
        })
    }

    /// The file a binary of kernel `name` is built into: `name.dpusim` (simulator) or `name.dpu` (DPUs) for v1A,
    /// `name.v1B.dpusim` or `name.v1B.dpu` for v1B.
    pub fn file_name(name: &str, chip: ChipVersion, simulated: bool) -> String {
        let extension = if simulated { "dpusim" } else { "dpu" };
        match chip {
            ChipVersion::V1A => format!("{name}.{extension}"),
            other => format!("{name}.{other}.{extension}"),
        }
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The simulated binary for `chip`'s DPUs, if built.
    pub fn simulator_binary(&self, chip: ChipVersion) -> Option<&Path> {
        self.binary(chip, true)
    }

    /// The binary for real DPUs of `chip`, if built.
    pub fn hardware_binary(&self, chip: ChipVersion) -> Option<&Path> {
        self.binary(chip, false)
    }

    /// The chip versions it has a binary of for the simulator (`simulated`) or for real DPUs.
    pub fn chips(&self, simulated: bool) -> Vec<ChipVersion> {
        self.binaries.iter().filter(|binary| binary.simulated == simulated).map(|binary| binary.chip).collect()
    }

    fn binary(&self, chip: ChipVersion, simulated: bool) -> Option<&Path> {
        self.binaries
            .iter()
            .find(|binary| binary.chip == chip && binary.simulated == simulated)
            .map(|b| b.path.as_path())
    }
}

/// The kernel `name` built by this crate's build script with [`crate::build::kernel`].
///
/// ```ignore
/// let kernel = upmem::kernel!("reduce");
/// ```
#[macro_export]
macro_rules! kernel {
    ($name:expr) => {
        $crate::Kernel::in_dir($name, env!("UPMEM_KERNEL_DIR"))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binaries_are_found_per_chip() {
        let dir = tempfile::tempdir().unwrap();
        for file in ["k.dpusim", "k.v1B.dpusim", "k.v1B.dpu"] {
            std::fs::write(dir.path().join(file), b"").unwrap();
        }
        let kernel = Kernel::in_dir("k", dir.path());
        assert_eq!(kernel.simulator_binary(ChipVersion::V1A), Some(dir.path().join("k.dpusim").as_path()));
        assert_eq!(kernel.simulator_binary(ChipVersion::V1B), Some(dir.path().join("k.v1B.dpusim").as_path()));
        assert_eq!(kernel.hardware_binary(ChipVersion::V1A), None);
        assert_eq!(kernel.hardware_binary(ChipVersion::V1B), Some(dir.path().join("k.v1B.dpu").as_path()));
        assert_eq!(kernel.chips(true), [ChipVersion::V1A, ChipVersion::V1B]);
    }
}
