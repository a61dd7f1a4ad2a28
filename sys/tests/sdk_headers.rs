//! The hardware backend (`upmem`'s `hw` module) builds against bindings generated from a directory of SDK
//! headers, checked by building it as a UPMEM server would: `cargo check -p upmem --no-default-features
//! --features hardware,upmem-sys/bindgen` with `UPMEM_SYS_INCLUDE_DIR` naming the headers, in a target directory
//! of its own (under cargo's `target/tmp`, so later runs are incremental).
//!
//! - upmem-sim's headers without `dpu_sim.h`, always (libclang needed): whatever only the simulator declares
//!   must not be needed, since a real SDK's headers do not declare it.
//! - A real SDK's headers when `UPMEM_SYS_INCLUDE_DIR` names them (say `$UPMEM_HOME/include/dpu`); skipped with
//!   a notice otherwise (no SDK can be shipped with the tests).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

#[path = "../bindgen_config.rs"]
// This test generates the SDK's bindings only.
#[allow(dead_code)]
mod bindgen_config;
mod common;

use common::{skipped, tool_missing};

/// The header upmem-sim adds to the SDK's.
const SIMULATOR_ONLY_HEADER: &str = "dpu_sim.h";

/// Generates the bindings from `headers`, then builds the hardware backend with the `bindgen` feature over them
/// (both tests in one target directory: cargo runs them one after the other, and they share the dependencies).
fn hardware_backend_builds_against(headers: &Path) {
    let bindings = match bindgen_config::builder(&[headers]).generate() {
        Ok(bindings) => bindings.to_string(),
        Err(error) => panic!("bindgen failed on {}: {error}", headers.display()),
    };
    assert!(bindings.contains("pub struct LibDpu"), "no LibDpu generated from {}", headers.display());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sdk-headers");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(&workspace)
        .args(["check", "--quiet", "--message-format=short", "-p", "upmem", "--no-default-features"])
        .args(["--features", "hardware,upmem-sys/bindgen"])
        .env("UPMEM_SYS_INCLUDE_DIR", headers)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("UPMEM_SYS_NO_SDK")
        .output()
        .expect("running cargo check");
    assert!(
        output.status.success(),
        "the hardware backend does not build against bindings from {}:\n{}",
        headers.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_simulators_headers_without_its_extensions_build_the_hardware_backend() {
    if let Err(error) = clang_sys::load() {
        tool_missing(&format!("libclang could not be loaded ({error}): install libclang-dev to run this test"));
        return;
    }
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fallback_sim/sdk/include/dpu");
    let headers = tempfile::tempdir().expect("a temporary directory");
    let mut copied = 0;
    for entry in fs::read_dir(&ours).expect("the simulator's headers") {
        let path = entry.expect("a header").path();
        if path.file_name().is_some_and(|name| name != SIMULATOR_ONLY_HEADER) {
            fs::copy(&path, headers.path().join(path.file_name().unwrap())).expect("copying a header");
            copied += 1;
        }
    }
    assert!(copied > 10 && !headers.path().join(SIMULATOR_ONLY_HEADER).exists());
    hardware_backend_builds_against(headers.path());
}

#[test]
fn the_sdks_headers_build_the_hardware_backend() {
    let Some(headers) = env::var_os("UPMEM_SYS_INCLUDE_DIR").filter(|dir| !dir.is_empty()).map(PathBuf::from) else {
        skipped(
            "set UPMEM_SYS_INCLUDE_DIR to a UPMEM SDK's header directory (its include/dpu) to check that the hardware \
             backend builds against bindings generated from it",
        );
        return;
    };
    assert!(headers.join("dpu.h").is_file(), "UPMEM_SYS_INCLUDE_DIR={} holds no dpu.h", headers.display());
    hardware_backend_builds_against(&headers);
}
