//! DPU programs ("kernels") as Rust users refer to them: one name, a binary per backend.

use std::path::{Path, PathBuf};

/// A DPU program: its simulated binary (built by [`crate::build::kernel`]) and,
/// when the UPMEM SDK was present at build time, its binary for real DPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    name: String,
    simulator: Option<PathBuf>,
    hardware: Option<PathBuf>,
}

impl Kernel {
    /// A kernel from explicit binaries.
    pub fn new(name: &str, simulator: Option<PathBuf>, hardware: Option<PathBuf>) -> Self {
        Kernel { name: name.to_owned(), simulator, hardware }
    }

    /// The kernel `name` built into `dir` by [`crate::build::kernel_into`] (`name.dpusim` for the simulator,
    /// `name.dpu` for hardware); what [`kernel!`](crate::kernel!) uses.
    pub fn in_dir(name: &str, dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        let existing = |extension: &str| Some(dir.join(format!("{name}.{extension}"))).filter(|path| path.exists());
        Kernel { name: name.to_owned(), simulator: existing("dpusim"), hardware: existing("dpu") }
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The simulated binary, if built.
    pub fn simulator_binary(&self) -> Option<&Path> {
        self.simulator.as_deref()
    }

    /// The binary for real DPUs, if built.
    pub fn hardware_binary(&self) -> Option<&Path> {
        self.hardware.as_deref()
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
