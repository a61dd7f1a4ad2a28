//! What the tests that need a tool share: skipping visibly, and failing instead in CI.

use std::io::Write as _;

/// A tool this test needs is missing: in CI (`CI` set, as CI services and `.ci/run` do) that fails the test;
/// elsewhere the test is [`skipped`] with a notice saying what is missing and how to get it.
pub fn tool_missing(notice: &str) {
    let in_ci = std::env::var("CI").is_ok_and(|value| !value.is_empty() && value != "false" && value != "0");
    assert!(!in_ci, "{notice} (CI is set, so a missing tool is a failure)");
    skipped(notice);
}

/// Says on the test's standard error that it did not run, and why. Written to the stream itself rather than
/// with `eprintln!`, which the test harness captures and shows only for a failing test: libtest has no "skipped"
/// outcome, so a skipped test would look like one that passed.
pub fn skipped(notice: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {notice}");
}
