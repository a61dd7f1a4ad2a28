//! The runtime cache ([`upmem_types::KernelBuilder::runtime_cache`]): builds with the same compiler and tasklet
//! settings link one compiled runtime, builds running at once fill the cache without a partial entry, an entry
//! found incomplete is left alone while the build compiles its own runtime, and a temporary entry a killed
//! build left is removed once it is an hour old.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{kernel_source, machine_with, read_u32s, write_u32};
use upmem_sim::{KernelBuilder, Program, SimulatedBuild as _, Topology};

/// Builds the `isolation` test kernel with `nr_tasklets` into `dir`, with the runtime cache `cache`.
fn build_isolation(dir: &Path, cache: &Path, nr_tasklets: u32) -> Arc<Program> {
    let output = dir.join(format!("isolation-{nr_tasklets}-{:?}.dpusim", std::thread::current().id()));
    let mut builder = KernelBuilder::new();
    builder.source(kernel_source("isolation")).nr_tasklets(nr_tasklets).flag("-O2").runtime_cache(cache);
    builder.build(&output).expect("building with a runtime cache");
    Arc::new(Program::from_file(&output).expect("loading"))
}

/// The cache's entries, sorted, temporary ones (named with a leading dot) included.
fn entries(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache)
        .expect("listing the cache")
        .map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs the kernel on one DPU and checks what each tasklet wrote.
fn check_runs(program: &Arc<Program>, nr_tasklets: u32) {
    let mut machine = machine_with(Topology::new(1, 1), |_| {});
    machine.load(&[0], program).expect("loading the kernel");
    write_u32(&machine, 0, "dpu_id", 7);
    machine.launch(&[0]).expect("running the kernel");
    let expected: Vec<u32> = (0..nr_tasklets).map(|tasklet| 7 * 1000 + tasklet).collect();
    assert_eq!(read_u32s(&machine, 0, "wram_ids", nr_tasklets as usize), expected);
}

fn objects_of(entry: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(entry).expect("listing an entry").map(|object| object.expect("an object").path()).collect()
}

#[test]
fn builds_with_the_same_settings_share_one_compiled_runtime_filled_safely_at_once() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cache = dir.path().join("cache");
    let programs: Vec<Arc<Program>> = std::thread::scope(|scope| {
        let builds: Vec<_> = (0..3).map(|_| scope.spawn(|| build_isolation(dir.path(), &cache, 16))).collect();
        builds.into_iter().map(|build| build.join().expect("a build")).collect()
    });
    let after_sixteen = entries(&cache);
    assert_eq!(after_sixteen.len(), 2, "one runtime and one harness entry, no partial one: {after_sixteen:?}");
    assert!(after_sixteen[0].starts_with("dpurt-") && after_sixteen[1].starts_with("harness-"), "{after_sixteen:?}");
    for program in &programs {
        check_runs(program, 16);
    }

    // Other tasklet settings compile the runtime again, not the harness; the same settings compile nothing.
    check_runs(&build_isolation(dir.path(), &cache, 4), 4);
    let after_four = entries(&cache);
    assert_eq!(after_four.len(), 3, "{after_four:?}");
    assert!(after_sixteen.iter().all(|entry| after_four.contains(entry)), "{after_four:?}");
    let modified = |entries: &[String]| -> Vec<std::time::SystemTime> {
        entries.iter().map(|entry| cache.join(entry).metadata().and_then(|meta| meta.modified()).unwrap()).collect()
    };
    let before = modified(&after_four);
    build_isolation(dir.path(), &cache, 4);
    assert_eq!(entries(&cache), after_four);
    assert_eq!(modified(&after_four), before);
}

#[test]
fn an_incomplete_entry_is_left_alone_and_the_build_compiles_its_own_runtime() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cache = dir.path().join("cache");
    build_isolation(dir.path(), &cache, 8);
    let runtime = cache.join(&entries(&cache)[0]);
    let mut objects = objects_of(&runtime);
    let removed = objects.pop().expect("a runtime object");
    std::fs::remove_file(&removed).expect("removing a cached object");

    check_runs(&build_isolation(dir.path(), &cache, 8), 8);
    assert_eq!(entries(&cache).len(), 2, "{:?}", entries(&cache));
    assert!(!removed.exists(), "the incomplete entry was changed");
    assert_eq!(objects_of(&runtime).len(), objects.len());
}

#[test]
fn a_temporary_entry_a_killed_build_left_is_removed_once_an_hour_old() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cache = dir.path().join("cache");
    let (abandoned, compiling) = (cache.join(".dpurt.killed"), cache.join(".dpurt.compiling"));
    for staging in [&abandoned, &compiling] {
        std::fs::create_dir_all(staging).expect("a temporary entry");
        std::fs::write(staging.join("dpurt-barrier.o"), b"half an object").expect("an object");
    }
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    std::fs::File::open(&abandoned).expect("opening").set_modified(two_hours_ago).expect("ageing the entry");

    check_runs(&build_isolation(dir.path(), &cache, 8), 8);
    assert!(!abandoned.exists(), "the abandoned entry is still there: {:?}", entries(&cache));
    assert!(compiling.join("dpurt-barrier.o").exists(), "a recent temporary entry was touched");
    let names = entries(&cache);
    assert_eq!(names.len(), 3, "the new entries and the recent temporary one: {names:?}");
}
