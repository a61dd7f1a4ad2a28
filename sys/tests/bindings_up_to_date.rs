//! Fails when the checked-in `src/bindings.rs` (the SDK's API) or `src/sim_bindings.rs` (upmem-sim's extensions)
//! differs from a regeneration from upmem-sim's SDK headers (`fallback_sim/sdk/include/dpu`) with the shared
//! configuration of `bindgen_config.rs`.
//!
//! `UPMEM_SYS_BLESS=1 cargo test -p upmem-sys --test bindings_up_to_date` rewrites the checked-in file instead.
//! Skipped, with a notice, when libclang cannot be loaded (CI installs it).

use std::path::{Path, PathBuf};
use std::{env, fs};

#[path = "../bindgen_config.rs"]
mod bindgen_config;
mod common;

use common::tool_missing;

/// The command that rewrites the checked-in file.
const BLESS: &str = "UPMEM_SYS_BLESS=1 cargo test -p upmem-sys --test bindings_up_to_date";

/// Differing lines shown at most on each side.
const SHOWN_LINES: usize = 40;

/// The headers the checked-in files come from.
fn simulator_headers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fallback_sim/sdk/include/dpu")
}

/// Whether libclang loads; when it does not, a notice (or, in CI, a failure) says so.
fn libclang_loads() -> bool {
    match clang_sys::load() {
        Ok(()) => true,
        Err(error) => {
            tool_missing(&format!(
                "libclang could not be loaded ({error}). Install it (Debian: apt-get install libclang-dev) or point \
                 LIBCLANG_PATH at it to check src/bindings.rs and src/sim_bindings.rs"
            ));
            false
        }
    }
}

/// Regenerates `file` (in `src/`) with `builder` and fails on a difference, or rewrites it under `UPMEM_SYS_BLESS`.
/// Returns the regenerated text.
fn check_up_to_date(file: &str, builder: bindgen::Builder) -> String {
    let checked_in_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(file);
    let regenerated = match builder.generate() {
        Ok(bindings) => bindings.to_string(),
        Err(error) => panic!("bindgen failed on {}: {error}", simulator_headers().display()),
    };
    let checked_in = fs::read_to_string(&checked_in_path).unwrap_or_default();
    if regenerated == checked_in {
        return regenerated;
    }
    if env::var("UPMEM_SYS_BLESS").is_ok_and(|value| !value.is_empty() && value != "0") {
        if let Err(error) = fs::write(&checked_in_path, &regenerated) {
            panic!("writing {}: {error}", checked_in_path.display());
        }
        eprintln!("UPMEM_SYS_BLESS: rewrote {}", checked_in_path.display());
        return regenerated;
    }
    panic!(
        "{} is out of date with the headers in {} (or with bindgen_config.rs).\n{}\nTo update it, run:\n    {BLESS}\n",
        checked_in_path.display(),
        simulator_headers().display(),
        diff_summary(&checked_in, &regenerated)
    );
}

#[test]
fn checked_in_bindings_match_a_regeneration() {
    if !libclang_loads() {
        return;
    }
    let bindings = check_up_to_date("bindings.rs", bindgen_config::builder(&[simulator_headers()]));
    // The SDK's own headers have none of the simulator's extensions: code written against these bindings must
    // not see them either, or it would not build against bindings generated from a real SDK.
    let declarations = bindings.lines().filter(|line| !line.starts_with("//"));
    let simulator_only: Vec<&str> = declarations.filter(|line| line.to_lowercase().contains("dpu_sim")).collect();
    assert!(simulator_only.is_empty(), "src/bindings.rs declares some of dpu_sim.h: {simulator_only:?}");
}

#[test]
fn checked_in_simulator_extensions_match_a_regeneration() {
    if !libclang_loads() {
        return;
    }
    let extensions = check_up_to_date("sim_bindings.rs", bindgen_config::sim_builder(&[simulator_headers()]));
    assert!(extensions.contains("pub struct LibDpuSim") && extensions.contains("dpu_sim_fault_reason"));
    assert!(!extensions.contains("pub struct dpu_set_t"), "the SDK's types belong to src/bindings.rs");
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
