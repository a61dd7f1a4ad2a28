//! Choosing a backend: real DPUs through libdpu, or the bundled simulator.

use std::path::Path;

use crate::error::{Error, Result};

/// Which DPUs to drive: displayed as `auto`, `hardware` or `simulator`, parsed from those, `hw` and `sim`, in any
/// case (as `UPMEM_BACKEND` takes them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, strum::Display, strum::EnumString)]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
#[strum(parse_err_ty = Error, parse_err_fn = Error::invalid_backend)]
pub enum BackendKind {
    /// Hardware when present (and libdpu loads), else the simulator; `UPMEM_BACKEND` decides when set.
    #[default]
    Auto,
    /// UPMEM DPUs through the SDK's libdpu, loaded at run time. Never falls back.
    #[strum(to_string = "hardware", serialize = "hw")]
    Hardware,
    /// The bundled simulator (`upmem-sim`), in this process.
    #[strum(to_string = "simulator", serialize = "sim")]
    Simulator,
}

impl BackendKind {
    /// The backend an allocation asking for `self` runs on: an explicit backend as is; [`BackendKind::Auto`] as
    /// `UPMEM_BACKEND` says, else hardware when present and libdpu loads, else the simulator (logged). Lets a
    /// caller plan for the backend before allocating.
    pub fn resolve(self) -> Result<BackendKind> {
        resolve(self, None)
    }
}

/// Where the kernel driver exposes the first rank when UPMEM DIMMs are installed.
const HARDWARE_MARKER: &str = "/sys/class/dpu_rank/dpu_rank0";

/// Whether this machine has UPMEM DPUs.
pub fn hardware_present() -> bool {
    Path::new(HARDWARE_MARKER).exists()
}

/// The backend to use for a request: an explicit request as is; `Auto` from `UPMEM_BACKEND`, else hardware
/// when present and libdpu loads, else the simulator. The log says which and why.
pub(crate) fn resolve(requested: BackendKind, libdpu: Option<&Path>) -> Result<BackendKind> {
    let requested = match requested {
        BackendKind::Auto => match std::env::var("UPMEM_BACKEND") {
            Ok(value) if !value.trim().is_empty() => {
                value.trim().parse().map_err(|_| Error::InvalidBackend(format!("UPMEM_BACKEND={value}")))?
            }
            _ => BackendKind::Auto,
        },
        explicit => explicit,
    };
    if requested != BackendKind::Auto {
        return Ok(requested);
    }
    if !cfg!(feature = "simulator") {
        log::info!("using UPMEM hardware: the simulator backend is not compiled in (feature `simulator`)");
        return Ok(BackendKind::Hardware);
    }
    if !cfg!(feature = "hardware") {
        log::info!("using the DPU simulator: the hardware backend is not compiled in (feature `hardware`)");
        return Ok(BackendKind::Simulator);
    }
    if !hardware_present() {
        log::info!("using the DPU simulator: no UPMEM hardware ({HARDWARE_MARKER} does not exist)");
        return Ok(BackendKind::Simulator);
    }
    match hardware_library(libdpu) {
        Ok(()) => {
            log::info!("using UPMEM hardware ({HARDWARE_MARKER} exists and libdpu loaded)");
            Ok(BackendKind::Hardware)
        }
        Err(error) => {
            log::warn!("UPMEM hardware is present but {error}; using the DPU simulator");
            Ok(BackendKind::Simulator)
        }
    }
}

/// Whether libdpu loads (it is kept loaded for the set's allocation).
#[cfg(feature = "hardware")]
fn hardware_library(libdpu: Option<&Path>) -> Result<()> {
    crate::hw::library(libdpu).map(drop)
}

#[cfg(not(feature = "hardware"))]
fn hardware_library(_libdpu: Option<&Path>) -> Result<()> {
    Err(Error::BackendNotCompiled { backend: BackendKind::Hardware, feature: "hardware" })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With one backend left out, asking for it is a typed error naming the feature, and `Auto` (without
    /// `UPMEM_BACKEND`) picks the other. `.ci/run` runs this with each feature alone.
    #[test]
    fn a_backend_left_out_is_a_typed_error_and_auto_picks_the_other() {
        let left_out = [
            (cfg!(feature = "simulator"), BackendKind::Simulator),
            (cfg!(feature = "hardware"), BackendKind::Hardware),
        ];
        for (compiled, backend) in left_out {
            let allocated = crate::DpuSet::builder().dpus(1).backend(backend).allocate();
            if !compiled {
                assert!(
                    matches!(allocated, Err(Error::BackendNotCompiled { backend: found, .. }) if found == backend),
                    "{backend}: {:?}",
                    allocated.err()
                );
                if std::env::var_os("UPMEM_BACKEND").is_none() {
                    let other =
                        if backend == BackendKind::Simulator { BackendKind::Hardware } else { BackendKind::Simulator };
                    assert_eq!(BackendKind::Auto.resolve().unwrap(), other);
                }
            }
        }
    }
}
