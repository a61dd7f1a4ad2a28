//! Which UPMEM SDK a libdpu comes from, and whether this runtime supports it.
//!
//! libdpu exports no version function (none among the dynamic symbols of the SDK 2025.1's libdpu.so). The SDK
//! says its version in two places, read in this order: the text file `<prefix>/share/upmem/version` beside the
//! `<prefix>/lib` holding libdpu ("UPMEM DPU SDK version 2025.1.0 - build ..."), and the library's SONAME
//! (`libdpu.so.2025.1`, which is also the name of the real file behind the `libdpu.so` link).

use std::fmt;
use std::path::{Path, PathBuf};

use super::elf;

/// The SDK release whose libdpu ABI the bindings describe.
pub(crate) const SUPPORTED: &str = "2025.1";

/// Set (to anything but `0`) to use a libdpu of another SDK version anyway, with a warning.
pub(crate) const IGNORE_VERSION_VARIABLE: &str = "UPMEM_IGNORE_SDK_VERSION";

/// An SDK version and where it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SdkVersion {
    /// The version, `2025.1.0` or `2025.1`.
    pub version: String,
    /// Where it was read: the version file's path, or the library's SONAME.
    pub source: String,
}

impl fmt::Display for SdkVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UPMEM SDK {} (from {})", self.version, self.source)
    }
}

impl SdkVersion {
    /// The version of the SDK the library file `library` belongs to, `None` when neither the version file nor
    /// a versioned SONAME says it.
    pub fn of_library(library: &Path) -> Option<SdkVersion> {
        let real = std::fs::canonicalize(library).unwrap_or_else(|_| library.to_path_buf());
        Self::from_version_file(&real).or_else(|| Self::from_soname(&real))
    }

    fn from_version_file(real: &Path) -> Option<SdkVersion> {
        let file: PathBuf = real.parent()?.parent()?.join("share/upmem/version");
        let text = std::fs::read_to_string(&file).ok()?;
        let version = parse_version_text(&text)?;
        Some(SdkVersion { version, source: file.display().to_string() })
    }

    fn from_soname(real: &Path) -> Option<SdkVersion> {
        let soname = elf::dynamic_entries(real)?.soname?;
        let version = soname.strip_prefix("libdpu.so.")?.to_owned();
        version
            .starts_with(|c: char| c.is_ascii_digit())
            .then(|| SdkVersion { version, source: format!("SONAME {soname}") })
    }

    /// Whether this runtime supports the version: the same year and release, any patch level.
    pub fn is_supported(&self) -> bool {
        self.version == SUPPORTED || self.version.strip_prefix(SUPPORTED).is_some_and(|rest| rest.starts_with('.'))
    }
}

/// The version in the SDK's version file: the word after "version".
fn parse_version_text(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    words.find(|word| *word == "version")?;
    words.next().filter(|version| version.starts_with(|c: char| c.is_ascii_digit())).map(str::to_owned)
}

/// Whether `UPMEM_IGNORE_SDK_VERSION` asks to use an unsupported libdpu anyway.
pub(crate) fn ignore_requested() -> bool {
    std::env::var(IGNORE_VERSION_VARIABLE).is_ok_and(|value| !value.is_empty() && value != "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_files_text_gives_the_version() {
        let line = "UPMEM DPU SDK version 2025.1.0 - build 8e9207e - Jan 30 11:43:45 UTC 2025\n";
        assert_eq!(parse_version_text(line).as_deref(), Some("2025.1.0"));
        assert_eq!(parse_version_text("UPMEM DPU SDK"), None);
    }

    #[test]
    fn the_supported_release_is_2025_1_at_any_patch_level() {
        let version = |text: &str| SdkVersion { version: text.to_owned(), source: String::new() };
        assert!(version("2025.1").is_supported() && version("2025.1.0").is_supported());
        assert!(!version("2024.2.0").is_supported() && !version("2025.10.0").is_supported());
    }

    /// A tarball layout: `<prefix>/lib/libdpu.so` (a link to the versioned file) and the version file, which
    /// wins over the SONAME.
    #[test]
    fn the_version_file_beside_the_library_is_read_through_its_link() {
        let prefix = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(prefix.path().join("lib")).unwrap();
        std::fs::create_dir_all(prefix.path().join("share/upmem")).unwrap();
        std::fs::write(prefix.path().join("lib/libdpu.so.2024.2"), b"not an ELF file").unwrap();
        std::os::unix::fs::symlink("libdpu.so.2024.2", prefix.path().join("lib/libdpu.so")).unwrap();
        let version_file = prefix.path().join("share/upmem/version");
        std::fs::write(&version_file, "UPMEM DPU SDK version 2024.2.1 - build 0 - Jan 1 2024\n").unwrap();
        let found = SdkVersion::of_library(&prefix.path().join("lib/libdpu.so")).unwrap();
        assert_eq!(found.version, "2024.2.1");
        assert!(found.source.ends_with("share/upmem/version"), "{found}");
        std::fs::remove_file(&version_file).unwrap();
        assert_eq!(SdkVersion::of_library(&prefix.path().join("lib/libdpu.so")), None, "no version file, no SONAME");
    }
}
