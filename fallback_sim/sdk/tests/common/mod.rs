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
/// elsewhere the test is skipped with a notice saying what is missing and how to get it.
pub fn tool_missing(notice: &str) {
    let in_ci = std::env::var("CI").is_ok_and(|value| !value.is_empty() && value != "false" && value != "0");
    assert!(!in_ci, "{notice} (CI is set, so a missing tool is a failure)");
    eprintln!("NOTICE: skipped: {notice}");
}
