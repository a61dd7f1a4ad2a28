//! The host headers against the SDK's C ABI and against C++:
//!
//! - `tests/abi/abi_check.c` (layouts, values, signatures and macros typed in from the SDK 2025.1 measurements) must build with
//!   `-Wall -Wextra -Werror` and report no failure;
//! - a C++ translation unit including the headers programs use must compile warning-free, when a C++ compiler is
//!   installed (a machine with only a C compiler skips it with a notice; in CI it fails).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include/dpu")
}

fn show(output: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}--- stderr ---\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn abi_check_c() {
    let work = tempfile::tempdir().expect("temporary directory");
    let binary = work.path().join("abi_check");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/abi/abi_check.c");
    let compiler = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let built = Command::new(&compiler)
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", include_dir().display()))
        .arg(&source)
        .arg("-o")
        .arg(&binary)
        .output()
        .unwrap_or_else(|error| panic!("running the C compiler {compiler:?}: {error}"));
    assert!(built.status.success(), "compiling abi_check.c failed: {}", show(&built));

    let ran = Command::new(&binary).output().expect("running abi_check");
    assert!(ran.status.success(), "abi_check failed: {}", show(&ran));
    let stdout = String::from_utf8_lossy(&ran.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "abi_check's last line is {last:?}: {}", show(&ran));
    println!("abi_check: {last}");
}

/// Every public header a C++ program includes, used the way programs use them.
const CPP_SOURCE: &str = r#"
#include <dpu.h>
#include <dpu_log.h>
#include <dpu_management.h>
#include <dpu_memory.h>
#include <dpu_sim.h>

#include <cstdint>
#include <cstdio>

int run(const char *binary) {
    struct dpu_set_t set, dpu, rank;
    uint32_t i, r, nr_dpus = 0;
    uint64_t buffer[16] = {0};
    DPU_ASSERT(dpu_alloc(DPU_ALLOCATE_ALL, "nrThreadsPerRank=1", &set));
    DPU_ASSERT(dpu_load(set, binary, nullptr));
    DPU_ASSERT(dpu_get_nr_dpus(set, &nr_dpus));
    DPU_FOREACH(set, dpu, i) {
        DPU_ASSERT(dpu_prepare_xfer(dpu, &buffer[i % 16]));
    }
    DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 8, DPU_XFER_DEFAULT));
    DPU_RANK_FOREACH(set, rank, r) {
        struct dpu_rank_t *rank_ptr = dpu_rank_from_set(rank);
        struct dpu_t *d;
        STRUCT_DPU_FOREACH(rank_ptr, d) {
            dpu_copy_to_mram(d, 0, reinterpret_cast<const uint8_t *>(buffer), 8);
        }
        (void)dpu_get_description(rank_ptr)->hw.memories.mram_size;
    }
    DPU_CHECK(dpu_launch(set, DPU_SYNCHRONOUS), return 1);
    DPU_FOREACH(set, dpu) {
        struct dpu_sim_stats stats;
        struct dpu_sim_timing timing;
        char reason[128];
        DPU_ASSERT(dpu_sim_stats(dpu, &stats));
        DPU_ASSERT(dpu_sim_timing(dpu, &timing));
        struct dpu_sim_instructions instructions;
        DPU_ASSERT(dpu_sim_instructions(dpu, &instructions));
        (void)dpu_sim_instruction_class_name(DPU_SIM_CLASS_FLOAT_MUL);
        DPU_ASSERT(dpu_sim_fault_reason(dpu, reason, sizeof reason));
        DPU_ASSERT(dpulog_read_for_dpu(dpu.dpu, stdout));
        DPU_ASSERT(dpu_log_read(dpu, stdout));
    }
    DPU_ASSERT(dpu_free(set));
    return static_cast<int>(nr_dpus) + static_cast<int>(r);
}
"#;

/// The C++ compiler: `$CXX`, else `c++`, else `g++`, else `clang++`; None if there is none.
fn cxx_compiler() -> Option<String> {
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

#[test]
fn headers_compile_as_cpp() {
    let Some(compiler) = cxx_compiler() else {
        tool_missing(
            "no C++ compiler (c++, g++ or clang++) found for the C++ header check (Debian: apt-get install g++)",
        );
        return;
    };
    let work = tempfile::tempdir().expect("temporary directory");
    let source = work.path().join("headers.cpp");
    std::fs::write(&source, CPP_SOURCE).expect("writing the C++ source");
    for standard in ["-std=c++11", "-std=c++17"] {
        let output = Command::new(&compiler)
            .args(["-fsyntax-only", "-Wall", "-Wextra", "-Werror", standard])
            .arg(format!("-I{}", include_dir().display()))
            .arg(&source)
            .output()
            .unwrap_or_else(|error| panic!("running {compiler}: {error}"));
        assert!(output.status.success(), "{compiler} {standard} rejects the headers: {}", show(&output));
    }
}

/// A tool this test needs is missing: in CI (`CI` set, as CI services and `.ci/run` do) that fails the test;
/// elsewhere the test is skipped with a notice saying what is missing and how to get it. The notice is written to
/// standard error itself rather than with `eprintln!`, which the test harness captures and shows only for a
/// failing test: libtest has no "skipped" outcome, so a skipped test would look like one that passed.
fn tool_missing(notice: &str) {
    use std::io::Write as _;
    let in_ci = std::env::var("CI").is_ok_and(|value| !value.is_empty() && value != "false" && value != "0");
    assert!(!in_ci, "{notice} (CI is set, so a missing tool is a failure)");
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {notice}");
}
