//! `dpu-pkg-config --libs dpu` names the library a program should link: the newest build of `libdpu.so`.

use std::fs::{self, File};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

/// A copy of `dpu-pkg-config` in `dir/bin`, with a `libdpu.so` beside it and one in `bin/deps`, the one in
/// `deps` the newer when `deps_is_newer`; returns what `--libs dpu` answers.
fn libs_with(dir: &Path, deps_is_newer: bool) -> String {
    let bin = dir.join("bin");
    fs::create_dir_all(bin.join("deps")).expect("creating bin/deps");
    let command = bin.join("dpu-pkg-config");
    fs::copy(env!("CARGO_BIN_EXE_dpu-pkg-config"), &command).expect("copying dpu-pkg-config");
    let older = SystemTime::now() - Duration::from_secs(3600);
    let newer = older + Duration::from_secs(60);
    let (beside, in_deps) = if deps_is_newer { (older, newer) } else { (newer, older) };
    for (library, modified) in [(bin.join("libdpu.so"), beside), (bin.join("deps/libdpu.so"), in_deps)] {
        let file = File::create(&library).expect("creating a stand-in libdpu.so");
        file.set_modified(modified).expect("setting its modification time");
    }
    let output = Command::new(&command).args(["--libs", "dpu"]).output().expect("running dpu-pkg-config");
    assert!(output.status.success(), "dpu-pkg-config failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

/// A test build refreshes `deps/libdpu.so` only: the older copy beside the command must not be the one linked.
#[test]
fn the_newest_libdpu_is_linked() {
    let work = tempfile::tempdir().expect("temporary directory");
    let deps = work.path().join("bin/deps");
    let libs = libs_with(work.path(), true);
    assert!(libs.starts_with(&format!("-L{} ", deps.display())), "deps/ holds the newer build, but: {libs}");

    let work = tempfile::tempdir().expect("temporary directory");
    let bin = work.path().join("bin");
    let libs = libs_with(work.path(), false);
    assert!(libs.starts_with(&format!("-L{} ", bin.display())), "bin/ holds the newer build, but: {libs}");
}
