//! What several test files need: finding a C++ compiler, and the convention for a missing tool.

use std::io::ErrorKind;
use std::process::Command;

/// The C++ compiler: `$CXX`, else `c++`, else `g++`, else `clang++`; None if there is none.
pub fn cxx_compiler() -> Option<String> {
    let candidates = std::env::var("CXX").into_iter().chain(["c++", "g++", "clang++"].map(String::from));
    for candidate in candidates {
        match Command::new(&candidate).arg("--version").output() {
            Ok(output) if output.status.success() => return Some(candidate),
            Err(error) if error.kind() != ErrorKind::NotFound => panic!("running {candidate} --version: {error}"),
            _ => {}
        }
    }
    None
}

/// A tool a test needs is missing: in CI (`CI` set, as CI services and `.ci/run` do) that fails the test;
/// elsewhere the test is skipped with a notice saying what is missing and how to get it. The notice is written to
/// standard error itself rather than with `eprintln!`, which the test harness captures and shows only for a
/// failing test: libtest has no "skipped" outcome, so a skipped test would look like one that passed.
pub fn tool_missing(notice: &str) {
    use std::io::Write as _;
    let in_ci = std::env::var("CI").is_ok_and(|value| !value.is_empty() && value != "false" && value != "0");
    assert!(!in_ci, "{notice} (CI is set, so a missing tool is a failure)");
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {notice}");
}
