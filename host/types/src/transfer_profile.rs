//! A server's own transfer figures: a [`TransferModel`] saved as a JSON profile (written by `pimgnn bench
//! transfers` on that server) and read back in place of the published defaults.
//!
//! ```json
//! {
//!   "source": "pimgnn bench transfers, hardware, SDK 2025.1, 1 MiB per DPU, 1 to 40 ranks",
//!   "push_gb_per_s": { "intercept": 5.04, "per_rank": 0.259, "saturation_ranks": 31.5 },
//!   "gather_gb_per_s": { "intercept": 3.37, "per_rank": 0.231, "saturation_ranks": 23.5 },
//!   "broadcast_gb_per_s": { "intercept": 12.7, "per_rank": 0.654, "saturation_ranks": 31.5 },
//!   "serial_to_dpu_gb_per_s": 0.33,
//!   "serial_from_dpu_gb_per_s": 0.12,
//!   "launch_overhead_us": 20.0
//! }
//! ```
//!
//! Bandwidths are in GB/s (10^9 bytes per second), a broadcast's in bytes delivered, as in the model.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::transfer_model::{RankScaling, TransferModel};

/// The environment variable naming a transfer profile that replaces the published defaults wherever a transfer
/// time is predicted ([`TransferModel::configured`]).
pub const TRANSFER_PROFILE_VARIABLE: &str = "UPMEM_TRANSFER_PROFILE";

/// Why a transfer profile could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be read or written.
    #[error("transfer profile {path}: {source}")]
    Io {
        /// The profile.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not a profile.
    #[error("transfer profile {path}: {reason}")]
    Invalid {
        /// The profile.
        path: PathBuf,
        /// What is wrong, and where.
        reason: String,
    },
}

/// One transfer's curve, in GB/s.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CurveGbPerS {
    intercept: f64,
    per_rank: f64,
    saturation_ranks: f64,
}

/// The file's layout.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Profile {
    source: String,
    push_gb_per_s: CurveGbPerS,
    gather_gb_per_s: CurveGbPerS,
    broadcast_gb_per_s: CurveGbPerS,
    serial_to_dpu_gb_per_s: f64,
    serial_from_dpu_gb_per_s: f64,
    launch_overhead_us: f64,
}

const GB: f64 = 1e9;

impl From<RankScaling> for CurveGbPerS {
    fn from(curve: RankScaling) -> Self {
        CurveGbPerS {
            intercept: curve.intercept / GB,
            per_rank: curve.per_rank / GB,
            saturation_ranks: curve.saturation_ranks,
        }
    }
}

impl CurveGbPerS {
    /// The curve in bytes per second, checked: a finite positive one-rank bandwidth, a finite slope that keeps
    /// it positive up to saturation, and a saturation of at least one rank.
    fn scaling(&self, name: &str) -> Result<RankScaling, String> {
        let values = [self.intercept, self.per_rank, self.saturation_ranks];
        if values.iter().any(|value| !value.is_finite()) {
            return Err(format!("{name}: every figure must be a finite number"));
        }
        if self.saturation_ranks < 1.0 {
            return Err(format!("{name}.saturation_ranks is {}, below one rank", self.saturation_ranks));
        }
        let scaling = RankScaling {
            intercept: self.intercept * GB,
            per_rank: self.per_rank * GB,
            saturation_ranks: self.saturation_ranks,
        };
        let (one_rank, cap) = (scaling.bytes_per_second(1), scaling.cap());
        if one_rank <= 0.0 || cap <= 0.0 {
            return Err(format!(
                "{name}: bandwidth {:.3} GB/s at one rank and {:.3} at saturation, not positive",
                one_rank / GB,
                cap / GB
            ));
        }
        Ok(scaling)
    }
}

fn positive(name: &str, value: f64) -> Result<f64, String> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(format!("{name} is {value}, not a positive number"))
    }
}

impl TransferModel {
    /// The model predictions use: the profile named by [`TRANSFER_PROFILE_VARIABLE`] when it is set (and not
    /// empty), else the published defaults ([`TransferModel::default`]).
    pub fn configured() -> Result<TransferModel, ProfileError> {
        match std::env::var_os(TRANSFER_PROFILE_VARIABLE) {
            Some(path) if !path.is_empty() => TransferModel::read_profile(Path::new(&path)),
            _ => Ok(TransferModel::default()),
        }
    }

    /// Reads a profile (see the module documentation).
    pub fn read_profile(path: &Path) -> Result<TransferModel, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Io { path: path.into(), source })?;
        let invalid = |reason: String| ProfileError::Invalid { path: path.into(), reason };
        let profile: Profile = serde_json::from_str(&text).map_err(|error| invalid(error.to_string()))?;
        let model = (|| -> Result<TransferModel, String> {
            Ok(TransferModel {
                source: profile.source,
                push: profile.push_gb_per_s.scaling("push_gb_per_s")?,
                gather: profile.gather_gb_per_s.scaling("gather_gb_per_s")?,
                broadcast: profile.broadcast_gb_per_s.scaling("broadcast_gb_per_s")?,
                serial_to_dpu_bytes_per_second: positive("serial_to_dpu_gb_per_s", profile.serial_to_dpu_gb_per_s)?
                    * GB,
                serial_from_dpu_bytes_per_second: positive(
                    "serial_from_dpu_gb_per_s",
                    profile.serial_from_dpu_gb_per_s,
                )? * GB,
                launch_overhead: Duration::try_from_secs_f64(profile.launch_overhead_us * 1e-6)
                    .map_err(|_| format!("launch_overhead_us is {}, not a duration", profile.launch_overhead_us))?,
            })
        })();
        model.map_err(invalid)
    }

    /// Writes the model as a profile that [`TransferModel::read_profile`] reads back.
    pub fn write_profile(&self, path: &Path) -> Result<(), ProfileError> {
        let profile = Profile {
            source: self.source.clone(),
            push_gb_per_s: self.push.into(),
            gather_gb_per_s: self.gather.into(),
            broadcast_gb_per_s: self.broadcast.into(),
            serial_to_dpu_gb_per_s: self.serial_to_dpu_bytes_per_second / GB,
            serial_from_dpu_gb_per_s: self.serial_from_dpu_bytes_per_second / GB,
            launch_overhead_us: self.launch_overhead.as_secs_f64() * 1e6,
        };
        let text = serde_json::to_string_pretty(&profile).expect("a profile of numbers and a string serialises");
        std::fs::write(path, text + "\n").map_err(|source| ProfileError::Io { path: path.into(), source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
    }

    #[test]
    fn a_written_profile_reads_back_as_the_same_model() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.json");
        let model = TransferModel { source: "this server".into(), ..TransferModel::default() };
        model.write_profile(&path).unwrap();
        let read = TransferModel::read_profile(&path).unwrap();
        assert_eq!(read.source, "this server");
        for (a, b) in [(read.push, model.push), (read.gather, model.gather), (read.broadcast, model.broadcast)] {
            assert!(close(a.intercept, b.intercept) && close(a.per_rank, b.per_rank), "{a:?} {b:?}");
            assert!(close(a.saturation_ranks, b.saturation_ranks));
        }
        assert!(close(read.serial_from_dpu_bytes_per_second, model.serial_from_dpu_bytes_per_second));
        assert_eq!(read.launch_overhead, model.launch_overhead);
    }

    #[test]
    fn a_bad_profile_is_refused_naming_the_file_and_the_figure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        let good = dir.path().join("good.json");
        TransferModel::default().write_profile(&good).unwrap();
        let text = std::fs::read_to_string(&good).unwrap();
        let cases = [
            (
                text.replacen("\"saturation_ranks\": 31.536102", "\"saturation_ranks\": 0.5", 1),
                "push_gb_per_s.saturation_ranks is 0.5",
            ),
            (
                text.replacen("\"serial_to_dpu_gb_per_s\": 0.33", "\"serial_to_dpu_gb_per_s\": -1", 1),
                "serial_to_dpu_gb_per_s is -1",
            ),
            (text.replacen("\"launch_overhead_us\"", "\"launch_us\"", 1), "unknown field `launch_us`"),
            ("{".to_owned(), "EOF while parsing"),
        ];
        for (contents, expected) in cases {
            assert_ne!(contents, text, "the case changes the profile");
            std::fs::write(&path, contents).unwrap();
            let error = TransferModel::read_profile(&path).unwrap_err().to_string();
            assert!(error.starts_with(&format!("transfer profile {}: ", path.display())), "{error}");
            assert!(error.contains(expected), "{error}");
        }
        let missing = TransferModel::read_profile(&dir.path().join("missing.json")).unwrap_err();
        assert!(matches!(missing, ProfileError::Io { .. }), "{missing}");
    }
}
