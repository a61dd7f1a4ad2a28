//! Finding and loading libdpu, and saying why it did not load.
//!
//! The candidates, in order: `$UPMEM_LIBDPU` alone when set (or the path given to the builder), else
//! `$UPMEM_HOME/lib/libdpu.so`, then `libdpu.so` through the dynamic loader's search (`LD_LIBRARY_PATH`, the
//! loader's cache, `/usr/lib`, where the SDK's .deb installs it). A candidate that fails is reported with the
//! loader's error and, for a file that exists, every library it needs that cannot be loaded: the SDK 2025.1's
//! libdpu needs libdpuverbose (in the SDK's own lib directory, which the loader does not search unless
//! `LD_LIBRARY_PATH` names it), libnuma, libelf and libpython3.10 (`readelf -d` of libdpu.so.2025.1). The search
//! stops at the first candidate file that exists, loaded or not: with `UPMEM_HOME` set, its libdpu is the one
//! meant, and falling back to another `libdpu.so` on the loader's path would hide why it did not load.

use std::collections::HashMap;
use std::ffi::c_void;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use upmem_sys::libloading::os::unix::{Library as RawLibrary, RTLD_LAZY, RTLD_LOCAL};
use upmem_sys::sim::LibDpuSim;
use upmem_sys::LibDpu;

use super::elf;
use super::version::{self, SdkVersion};
use crate::error::{Error, LoadAttempt, MissingLibrary, Result};

/// A loaded libdpu.
pub(crate) struct Library {
    /// Its functions.
    pub dpu: LibDpu,
    /// upmem-sim's extensions, when this libdpu is the simulator's.
    pub sim: Option<LibDpuSim>,
    /// The SDK it belongs to, when known (upmem-sim's says which SDK it is compatible with).
    pub sdk_version: Option<String>,
}

static LIBRARIES: Mutex<Option<HashMap<PathBuf, Arc<Library>>>> = Mutex::new(None);

fn candidates(explicit: Option<&Path>) -> Vec<PathBuf> {
    if let Some(path) = explicit {
        return vec![path.to_path_buf()];
    }
    if let Some(path) = std::env::var_os("UPMEM_LIBDPU") {
        return vec![PathBuf::from(path)];
    }
    let mut paths = Vec::new();
    if let Some(home) = std::env::var_os("UPMEM_HOME") {
        paths.push(Path::new(&home).join("lib/libdpu.so"));
    }
    paths.push(PathBuf::from("libdpu.so"));
    paths
}

/// The libdpu to use: `explicit`, else the default search (each path loaded once). The search ends at the first
/// candidate file that exists: one that does not load is [`Error::LibraryNotFound`] with the reasons, one of an SDK
/// this runtime does not support is [`Error::UnsupportedSdk`].
pub(crate) fn library(explicit: Option<&Path>) -> Result<Arc<Library>> {
    let mut cache = LIBRARIES.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    let mut attempts = Vec::new();
    for candidate in candidates(explicit) {
        if let Some(library) = cache.get(&candidate) {
            return Ok(Arc::clone(library));
        }
        match load(&candidate)? {
            Ok(library) => {
                let library = Arc::new(library);
                cache.insert(candidate, Arc::clone(&library));
                return Ok(library);
            }
            Err(attempt) => {
                // A libdpu that is there but does not load is the one asked for: another would hide why.
                let found = attempt.candidate.is_file();
                attempts.push(attempt);
                if found {
                    break;
                }
            }
        }
    }
    Err(Error::LibraryNotFound { attempts, ld_library_path: std::env::var("LD_LIBRARY_PATH").ok() })
}

/// Loads `candidate`: the library, or why it did not load (outer `Err`: it loaded but is not supported).
fn load(candidate: &Path) -> Result<Result<Library, LoadAttempt>> {
    // SAFETY: loading libdpu runs its initialisers, which is what using the SDK means; its functions are typed
    // by the bindings generated from the SDK's own headers.
    let dpu = match unsafe { LibDpu::new(candidate) } {
        Ok(dpu) => dpu,
        Err(error) => return Ok(Err(failed_attempt(candidate, &error.to_string()))),
    };
    if dpu.dpu_alloc.is_err() {
        return Ok(Err(LoadAttempt {
            candidate: candidate.to_path_buf(),
            error: "it loads but exports no dpu_alloc: it is not a libdpu".into(),
            missing: Vec::new(),
        }));
    }
    let file = loaded_file(&dpu).unwrap_or_else(|| candidate.to_path_buf());
    // SAFETY: as above; the same library, loaded again, is only looked up for upmem-sim's symbols.
    let sim = unsafe { LibDpuSim::new(&file) }.ok().filter(|sim| sim.dpu_sim_fault_reason.is_ok());
    let sdk_version = if sim.is_some() {
        log::debug!("loaded libdpu from {}: upmem-sim's, SDK {} compatible", file.display(), version::SUPPORTED);
        Some(format!("{} (upmem-sim's libdpu)", version::SUPPORTED))
    } else {
        let found = SdkVersion::of_library(&file);
        check_version(&file, found.clone(), version::ignore_requested())?;
        found.map(|found| found.version)
    };
    Ok(Ok(Library { dpu, sim, sdk_version }))
}

/// Accepts the SDK version `found` of `file` (or an unknown one, with a warning); another version is
/// [`Error::UnsupportedSdk`] unless `ignore`.
fn check_version(file: &Path, found: Option<SdkVersion>, ignore: bool) -> Result<()> {
    let Some(found) = found else {
        log::warn!(
            "loaded libdpu from {}, of an unknown UPMEM SDK version (no share/upmem/version beside its lib \
             directory, no versioned SONAME): this runtime supports SDK {}",
            file.display(),
            version::SUPPORTED
        );
        return Ok(());
    };
    if found.is_supported() {
        log::info!("loaded libdpu from {}: {found}", file.display());
        return Ok(());
    }
    if ignore {
        log::warn!(
            "loaded libdpu from {}: {found}, not the supported SDK {}; used anyway as {}=1 asks",
            file.display(),
            version::SUPPORTED,
            version::IGNORE_VERSION_VARIABLE
        );
        return Ok(());
    }
    Err(Error::UnsupportedSdk {
        library: file.to_path_buf(),
        found: found.version,
        read_from: found.source,
        supported: version::SUPPORTED,
    })
}

/// The file the loader opened for `dpu`, found from the address of one of its functions (`dladdr`): a bare
/// `libdpu.so` was resolved by the loader's search.
fn loaded_file(dpu: &LibDpu) -> Option<PathBuf> {
    let function = *dpu.dpu_alloc.as_ref().ok()? as *const c_void;
    // SAFETY: an all-zero Dl_info is a valid out-parameter (null pointers).
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `function` is an address inside a loaded library; dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(function, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr set dli_fname to the loader's NUL-terminated copy of the file name.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes())))
}

/// A failed candidate, with the libraries it needs that do not load (when it is a file that exists).
fn failed_attempt(candidate: &Path, error: &str) -> LoadAttempt {
    let missing = if candidate.is_file() { missing_dependencies(candidate) } else { Vec::new() };
    // The loader's message starts with the path, which the attempt prints already.
    let prefix = format!("{}: ", candidate.display());
    let error = error.strip_prefix(&prefix).unwrap_or(error).to_owned();
    LoadAttempt { candidate: candidate.to_path_buf(), error, missing }
}

/// The libraries `library` needs (`DT_NEEDED`) that the loader cannot load, each with the directory of
/// `library` when the missing one is there.
fn missing_dependencies(library: &Path) -> Vec<MissingLibrary> {
    let Some(entries) = elf::dynamic_entries(library) else { return Vec::new() };
    let dir = library.parent().map(Path::to_path_buf);
    entries
        .needed
        .into_iter()
        .filter(|name| !loads(name))
        .map(|name| {
            let beside = dir.clone().filter(|dir| dir.join(&name).exists());
            MissingLibrary { name, beside }
        })
        .collect()
}

/// Whether the loader finds and loads the library `name` (already loaded, or loadable now and unloaded again).
fn loads(name: &str) -> bool {
    // SAFETY: loading a library libdpu itself needs runs only the initialisers libdpu's loading would run.
    unsafe {
        RawLibrary::open(Some(name), RTLD_LAZY | libc::RTLD_NOLOAD).is_ok()
            || RawLibrary::open(Some(name), RTLD_LAZY | RTLD_LOCAL).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    /// Builds a shared library `lib<name>.so` in `dir` from `source`, linked with `links` (`-l` names, found in
    /// `dir`) and with `soname` when given.
    fn shared_library(dir: &Path, name: &str, source: &str, links: &[&str], soname: Option<&str>) -> PathBuf {
        let source_path = dir.join(format!("{name}.c"));
        std::fs::write(&source_path, source).unwrap();
        let output = dir.join(format!("lib{name}.so"));
        let mut command = Command::new("cc");
        command.args(["-shared", "-fPIC", "-Wl,--no-as-needed"]).arg(&source_path).arg("-o").arg(&output);
        command.arg(format!("-L{}", dir.display()));
        command.args(links.iter().map(|link| format!("-l{link}")));
        if let Some(soname) = soname {
            command.arg(format!("-Wl,-soname,{soname}"));
        }
        assert!(command.status().expect("running cc").success(), "building {name}");
        output
    }

    /// A stand-in libdpu exporting `dpu_alloc` only.
    const STAND_IN: &str = "int dpu_alloc(unsigned n, const char *p, void *s) { return 4; }\n";

    /// A libdpu whose dependency is missing says which one and where it is, not only the loader's first error.
    #[test]
    fn a_missing_dependency_is_named_with_where_it_is() {
        let dir = tempfile::tempdir().unwrap();
        shared_library(dir.path(), "upmemtestverbose", "int verbose(void) { return 1; }\n", &[], None);
        let libdpu = shared_library(dir.path(), "dpu", STAND_IN, &["upmemtestverbose", "m"], None);
        let Err(error) = library(Some(&libdpu)) else { panic!("{} loaded without its dependency", libdpu.display()) };
        let Error::LibraryNotFound { attempts, .. } = &error else { panic!("{error}") };
        assert_eq!(attempts.len(), 1);
        assert_eq!(attempts[0].candidate, libdpu);
        assert!(attempts[0].error.contains("libupmemtestverbose.so"), "{}", attempts[0].error);
        assert_eq!(
            attempts[0].missing,
            [MissingLibrary { name: "libupmemtestverbose.so".into(), beside: Some(dir.path().to_path_buf()) }],
            "libm loads, the library beside libdpu does not"
        );
        let text = error.to_string();
        assert!(text.contains("LD_LIBRARY_PATH") && text.contains(&dir.path().display().to_string()), "{text}");
    }

    #[test]
    fn a_library_of_another_sdk_version_is_refused_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let libdpu = shared_library(dir.path(), "dpu", STAND_IN, &[], Some("libdpu.so.2024.2"));
        let Err(error) = library(Some(&libdpu)) else { panic!("an SDK 2024.2 libdpu loaded") };
        assert!(
            matches!(&error, Error::UnsupportedSdk { found, supported: "2025.1", .. } if found == "2024.2"),
            "{error}"
        );
        let text = error.to_string();
        assert!(text.contains("2024.2") && text.contains("2025.1") && text.contains("SONAME"), "{text}");
        let found = SdkVersion::of_library(&libdpu);
        assert!(check_version(&libdpu, found, true).is_ok(), "UPMEM_IGNORE_SDK_VERSION accepts it");
    }

    #[test]
    fn a_library_that_is_not_a_libdpu_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let other = shared_library(dir.path(), "other", "int something(void) { return 0; }\n", &[], None);
        let Err(Error::LibraryNotFound { attempts, .. }) = library(Some(&other)) else { panic!("loaded") };
        assert!(attempts[0].error.contains("not a libdpu"), "{:?}", attempts[0]);
    }
}
