//! The executables of a package's examples, for its integration tests to run (the tests of `upmem` and
//! `pimgnn` include this file). Cargo gives a test the path of the package's binaries, not of its examples:
//! they are in `target/<profile>/examples`, beside the test's `deps` directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The names of the examples in `manifest_dir/examples`, sorted.
pub fn example_sources(manifest_dir: &str) -> Vec<String> {
    let sources = std::fs::read_dir(Path::new(manifest_dir).join("examples")).expect("the examples directory");
    let mut names: Vec<String> =
        sources.filter_map(|entry| entry.ok()?.file_name().to_str()?.strip_suffix(".rs").map(str::to_owned)).collect();
    names.sort();
    names
}

/// The executable of example `name`, one of `all`, the examples of `package` (whose manifest is in
/// `manifest_dir`). `cargo test` builds every example when it builds every target; when one is missing or older
/// than its sources (after `cargo test --test <name>`, say), one `cargo build --examples` with this test's
/// profile builds them, before any of them runs (building while one runs could replace the libdpu it loads).
pub fn example(package: &str, manifest_dir: &str, all: &[&str], name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let test = std::env::current_exe().expect("the test's path");
    let dir = test.parent().and_then(Path::parent).expect("target/<profile>/deps").join("examples");
    BUILT.get_or_init(|| {
        if all.iter().all(|example| is_fresh(&dir.join(example))) {
            return;
        }
        let profile = match dir.parent().and_then(Path::file_name).and_then(|name| name.to_str()) {
            Some("debug") => "dev".to_owned(),
            Some(other) => other.to_owned(),
            None => panic!("no profile directory above {}", dir.display()),
        };
        let status = Command::new(env!("CARGO"))
            .current_dir(manifest_dir)
            .args(["build", "--quiet", "-p", package, "--examples", "--profile", &profile])
            .status()
            .expect("running cargo");
        assert!(status.success(), "building the examples of {package}");
    });
    let binary = dir.join(name);
    assert!(is_fresh(&binary), "{} is missing or older than its sources", binary.display());
    binary
}

/// Whether `binary` exists and is newer than every source file cargo built it from (the files its
/// dependency-info file, `<binary>.d`, lists).
fn is_fresh(binary: &Path) -> bool {
    let modified = |path: &Path| std::fs::metadata(path).and_then(|metadata| metadata.modified()).ok();
    let (Some(built), Ok(dep_info)) = (modified(binary), std::fs::read_to_string(binary.with_extension("d"))) else {
        return false;
    };
    let sources = dep_info_paths(&dep_info);
    !sources.is_empty() && sources.iter().all(|source| modified(source).is_some_and(|changed| changed <= built))
}

/// The paths of a dependency-info file in make's syntax, as cargo writes them: every file after the first `: `,
/// spaces in a path escaped with a backslash.
fn dep_info_paths(text: &str) -> Vec<PathBuf> {
    let Some((_, sources)) = text.lines().next().and_then(|line| line.split_once(": ")) else { return Vec::new() };
    let (mut paths, mut path, mut escaped) = (Vec::new(), String::new(), false);
    for character in sources.chars().chain([' ']) {
        match character {
            '\\' if !escaped => escaped = true,
            ' ' if !escaped => {
                if !path.is_empty() {
                    paths.push(PathBuf::from(std::mem::take(&mut path)));
                }
            }
            other => {
                path.push(other);
                escaped = false;
            }
        }
    }
    paths
}
