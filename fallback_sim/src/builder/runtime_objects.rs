//! The objects of the runtime's C files and of the worker harness, which every kernel links: the runtime compiled
//! with the kernel's tasklet settings, the harness with none. Compiling them is most of a small kernel's build,
//! so a build given a cache directory ([`upmem_types::KernelBuilder::runtime_cache`], or
//! `$UPMEM_SIM_RUNTIME_CACHE`) compiles each group once per compiler and arguments and later builds link the
//! cached objects.
//!
//! A cache entry is a directory named by a hash of everything its objects depend on: this crate's version, the
//! compiler's command and what its `--version` printed, the group's arguments and every runtime file (headers
//! included). It is compiled under a temporary name in the cache directory and renamed into place whole, so a
//! build never sees a partial entry; two builds that miss the same entry at once both compile it, and the first
//! rename publishes it. A build killed while compiling leaves its temporary directory behind: the next build that
//! compiles an entry of the group removes those an hour old, which no build still compiling can be.

use std::collections::hash_map::DefaultHasher;
use std::ffi::OsString;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::{stem, BuildError, CompileJob, HostCompiler};
use crate::runtime;

/// Age from which a group's temporary entry is taken to be left by a build that was killed: compiling a group takes
/// seconds, and a directory's modification time moves with every object written into it.
const ABANDONED_AFTER: Duration = Duration::from_secs(3600);

/// Runtime files compiled alike.
pub(super) struct ObjectGroup {
    /// What the group's objects are named after: `dpurt` or `harness`.
    pub(super) name: &'static str,
    /// The group's sources, relative to the runtime's directory.
    pub(super) sources: Vec<&'static str>,
    /// The compiler arguments, but for the runtime's include directory, which is in each build's own directory.
    pub(super) args: Vec<OsString>,
}

/// Where a build takes one group's objects from, and the compiles that have to run first.
pub(super) struct GroupObjects {
    objects: Vec<PathBuf>,
    jobs: Vec<CompileJob>,
    /// The cache entry being compiled, to publish once its jobs have run.
    staging: Option<Staging>,
}

/// A cache entry compiled under a temporary name (removed with it unless renamed into place).
struct Staging {
    dir: tempfile::TempDir,
    entry: PathBuf,
}

impl GroupObjects {
    /// Plans `group`'s objects: cached in `cache` when an entry holds them all, else compiled (into a new cache
    /// entry, or into `work_dir` without a cache) from the runtime extracted at `runtime_dir`.
    pub(super) fn plan(
        group: ObjectGroup,
        compiler: &HostCompiler,
        runtime_dir: &Path,
        work_dir: &Path,
        cache: Option<&Path>,
    ) -> Result<GroupObjects, BuildError> {
        let file_names: Vec<String> = group.sources.iter().map(|source| object_name(group.name, source)).collect();
        let uncached = || {
            let jobs = compile_jobs(&group, &file_names, runtime_dir, work_dir);
            GroupObjects { objects: jobs.iter().map(|job| job.object.clone()).collect(), jobs, staging: None }
        };
        let Some(cache) = cache else { return Ok(uncached()) };
        let entry = cache.join(entry_name(&group, compiler));
        let objects: Vec<PathBuf> = file_names.iter().map(|name| entry.join(name)).collect();
        if all_present(&objects) {
            return Ok(GroupObjects { objects, jobs: Vec::new(), staging: None });
        }
        if entry.exists() {
            log::warn!("{}: an incomplete runtime cache entry; this build compiles its own", entry.display());
            return Ok(uncached());
        }
        fs::create_dir_all(cache).map_err(|error| BuildError::io(cache, error))?;
        let prefix = format!(".{}.", group.name);
        remove_abandoned(cache, &prefix);
        let dir =
            tempfile::Builder::new().prefix(&prefix).tempdir_in(cache).map_err(|error| BuildError::io(cache, error))?;
        let jobs = compile_jobs(&group, &file_names, runtime_dir, dir.path());
        Ok(GroupObjects { objects, jobs, staging: Some(Staging { dir, entry }) })
    }

    /// The compiles to run before [`GroupObjects::publish`].
    pub(super) fn jobs(&self) -> &[CompileJob] {
        &self.jobs
    }

    /// Once the jobs have run: puts a compiled cache entry in place (unless another build did first) and
    /// returns the objects to link.
    pub(super) fn publish(self) -> Result<Vec<PathBuf>, BuildError> {
        if let Some(Staging { dir, entry }) = self.staging {
            if let Err(error) = fs::rename(dir.path(), &entry) {
                if !all_present(&self.objects) {
                    return Err(BuildError::io(&entry, error));
                }
            }
        }
        Ok(self.objects)
    }
}

/// Removes the temporary entries in `cache` named with `prefix` that are [`ABANDONED_AFTER`] old. What cannot be
/// read or removed is left for a later build: a build's own cache entry does not depend on it.
fn remove_abandoned(cache: &Path, prefix: &str) {
    let Ok(listing) = fs::read_dir(cache) else { return };
    let now = SystemTime::now();
    for entry in listing.flatten() {
        let abandoned = entry.file_name().to_string_lossy().starts_with(prefix)
            && entry
                .metadata()
                .and_then(|metadata| metadata.modified())
                .is_ok_and(|modified| now.duration_since(modified).is_ok_and(|age| age >= ABANDONED_AFTER));
        if abandoned {
            match fs::remove_dir_all(entry.path()) {
                Ok(()) => log::info!("{}: removed a runtime cache entry a killed build left", entry.path().display()),
                Err(error) => log::debug!("{}: not removed: {error}", entry.path().display()),
            }
        }
    }
}

/// `group`'s compiles, of the sources into `dir` under `file_names`.
fn compile_jobs(group: &ObjectGroup, file_names: &[String], runtime_dir: &Path, dir: &Path) -> Vec<CompileJob> {
    let mut args = group.args.clone();
    args.extend([OsString::from("-I"), runtime_dir.join("include").into()]);
    group
        .sources
        .iter()
        .zip(file_names)
        .map(|(source, name)| CompileJob {
            source: runtime_dir.join(source),
            object: dir.join(name),
            args: args.clone(),
            kernel_source: false,
        })
        .collect()
}

/// Whether every one of `objects` is there.
fn all_present(objects: &[PathBuf]) -> bool {
    objects.iter().all(|object| object.is_file())
}

/// The object file of `source` (relative to the runtime's directory) in `group`.
fn object_name(group: &str, source: &str) -> String {
    format!("{group}-{}.o", stem(Path::new(source)))
}

/// The cache entry of `group` compiled by `compiler`: the group's name and a hash of all its objects depend on.
fn entry_name(group: &ObjectGroup, compiler: &HostCompiler) -> String {
    let mut hasher = DefaultHasher::new();
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    compiler.identity().hash(&mut hasher);
    (group.name, &group.sources, &group.args).hash(&mut hasher);
    runtime::files().hash(&mut hasher);
    format!("{}-{:016x}", group.name, hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_differ_by_arguments_and_objects_are_named_by_group() {
        let compiler = HostCompiler::detect(None);
        let group = |args: &[&str]| ObjectGroup {
            name: "dpurt",
            sources: vec!["src/dpurt/alloc.c"],
            args: args.iter().map(OsString::from).collect(),
        };
        let sixteen = entry_name(&group(&["-DNR_TASKLETS=16"]), &compiler);
        assert_eq!(sixteen, entry_name(&group(&["-DNR_TASKLETS=16"]), &compiler));
        assert_ne!(sixteen, entry_name(&group(&["-DNR_TASKLETS=24"]), &compiler));
        assert!(sixteen.starts_with("dpurt-"), "{sixteen}");
        assert_eq!(object_name("harness", "src/harness/switch.S"), "harness-switch.o");
    }
}
