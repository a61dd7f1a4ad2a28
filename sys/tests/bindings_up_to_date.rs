//! Fails when the checked-in `src/bindings.rs` differs from a regeneration from upmem-sim's SDK headers
//! (`fallback_sim/sdk/include/dpu`) with the shared configuration of `bindgen_config.rs`.
//!
//! `UPMEM_SYS_BLESS=1 cargo test -p upmem-sys --test bindings_up_to_date` rewrites the checked-in file instead.
//! Skipped, with a notice, when libclang cannot be loaded (CI installs it).

use std::path::Path;
use std::{env, fs};

#[path = "../bindgen_config.rs"]
mod bindgen_config;

/// The command that rewrites the checked-in file.
const BLESS: &str = "UPMEM_SYS_BLESS=1 cargo test -p upmem-sys --test bindings_up_to_date";

/// Differing lines shown at most on each side.
const SHOWN_LINES: usize = 40;

#[test]
fn checked_in_bindings_match_a_regeneration() {
    if let Err(error) = clang_sys::load() {
        tool_missing(&format!(
            "libclang could not be loaded ({error}). Install it (Debian: apt-get install libclang-dev) or point \
             LIBCLANG_PATH at it to check src/bindings.rs"
        ));
        return;
    }
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let headers = manifest_dir.join("../fallback_sim/sdk/include/dpu");
    let checked_in_path = manifest_dir.join("src/bindings.rs");
    let regenerated = match bindgen_config::builder(&[&headers]).generate() {
        Ok(bindings) => bindings.to_string(),
        Err(error) => panic!("bindgen failed on {}: {error}", headers.display()),
    };
    let checked_in = fs::read_to_string(&checked_in_path).unwrap_or_default();
    if regenerated == checked_in {
        return;
    }
    if env::var("UPMEM_SYS_BLESS").is_ok_and(|value| !value.is_empty() && value != "0") {
        if let Err(error) = fs::write(&checked_in_path, &regenerated) {
            panic!("writing {}: {error}", checked_in_path.display());
        }
        eprintln!("UPMEM_SYS_BLESS: rewrote {}", checked_in_path.display());
        return;
    }
    panic!(
        "{} is out of date with the headers in {} (or with bindgen_config.rs).\n{}\nTo update it, run:\n    {BLESS}\n",
        checked_in_path.display(),
        headers.display(),
        diff_summary(&checked_in, &regenerated)
    );
}

/// The region where `old` and `new` differ: everything between their common first and last lines, as `-`/`+`
/// lines numbered from 1, at most [`SHOWN_LINES`] of each.
fn diff_summary(old: &str, new: &str) -> String {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    let removed = &old[prefix..old.len() - suffix];
    let added = &new[prefix..new.len() - suffix];
    let mut summary = format!(
        "checked-in lines {}..{} ({} lines) differ from regenerated lines {}..{} ({} lines) \
         (checked in: {} lines, regenerated: {} lines):\n",
        prefix + 1,
        prefix + removed.len(),
        removed.len(),
        prefix + 1,
        prefix + added.len(),
        added.len(),
        old.len(),
        new.len()
    );
    for (sign, lines) in [('-', removed), ('+', added)] {
        for (index, line) in lines.iter().enumerate().take(SHOWN_LINES) {
            summary.push_str(&format!("{sign}{:>6} {line}\n", prefix + index + 1));
        }
        if lines.len() > SHOWN_LINES {
            summary.push_str(&format!("{sign}       ... {} more lines\n", lines.len() - SHOWN_LINES));
        }
    }
    summary
}

/// A tool this test needs is missing: in CI (`CI` set, as CI services and `.ci/run` do) that fails the test;
/// elsewhere the test is skipped with a notice saying what is missing and how to get it.
fn tool_missing(notice: &str) {
    let in_ci = std::env::var("CI").is_ok_and(|value| !value.is_empty() && value != "false" && value != "0");
    assert!(!in_ci, "{notice} (CI is set, so a missing tool is a failure)");
    eprintln!("NOTICE: skipped: {notice}");
}
