//! Builds and runs the UPMEM C programs of `tests/programs/` the way their users do: `make` with this package's
//! `dpu-upmem-dpurte-clang` and `dpu-pkg-config` on `PATH`, then `./bin/host`, which checks its results against
//! the CPU and exits non-zero on any mismatch.
//!
//! Each program is copied into a fresh temporary directory first, so runs never share build products. Both
//! steps have a deadline: a hang fails the test (the process group is killed) instead of blocking CI.

use std::ffi::OsString;
use std::fs::{self, File};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

mod common;

use common::{cxx_compiler, tool_missing};

/// How long `make`, and then `./bin/host`, may take.
const DEADLINE: Duration = Duration::from_secs(120);
/// Lines of output shown when a step fails.
const SHOWN_LINES: usize = 150;

/// Where cargo put the commands and `libdpu.so` for this test run.
fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_dpu-pkg-config")).parent().expect("the binary has a directory").to_path_buf()
}

/// A directory in `work` with the `clang` of `upmem_env.sh`: a link of that name to `upmem-sim-clang`.
fn clang_dir(work: &Path) -> PathBuf {
    let dir = work.join("upmem-env-clang");
    fs::create_dir_all(&dir).expect("creating the clang directory");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_upmem-sim-clang"), dir.join("clang")).expect("linking clang");
    dir
}

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// Copies a program's sources (not a `bin/` left by a manual build).
fn copy_sources(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap_or_else(|error| panic!("creating {}: {error}", to.display()));
    for entry in fs::read_dir(from).unwrap_or_else(|error| panic!("reading {}: {error}", from.display())) {
        let entry = entry.expect("directory entry");
        let path = entry.path();
        if entry.file_name() == "bin" {
            continue;
        }
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_sources(&path, &target);
        } else {
            fs::copy(&path, &target).unwrap_or_else(|error| panic!("copying {}: {error}", path.display()));
        }
    }
}

/// What a step did.
struct Outcome {
    /// None when the deadline passed.
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let skipped = lines.len().saturating_sub(SHOWN_LINES);
    let mut shown = String::new();
    if skipped > 0 {
        shown.push_str(&format!("[... {skipped} lines ...]\n"));
    }
    for line in &lines[skipped..] {
        shown.push_str(line);
        shown.push('\n');
    }
    shown
}

/// Runs `command` in `dir` in its own process group, output to files (so a chatty program cannot block on a
/// full pipe), polling until it exits or the deadline passes; then the whole group is killed.
fn run(mut command: Command, dir: &Path, step: &str) -> Outcome {
    let stdout_path = dir.join(format!(".{step}.stdout"));
    let stderr_path = dir.join(format!(".{step}.stderr"));
    let stdout = File::create(&stdout_path).expect("creating the stdout file");
    let stderr = File::create(&stderr_path).expect("creating the stderr file");
    command.current_dir(dir).stdin(Stdio::null()).stdout(stdout).stderr(stderr).process_group(0);
    let start = Instant::now();
    let mut child = command.spawn().unwrap_or_else(|error| panic!("starting {step} ({command:?}): {error}"));
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the child") {
            break Some(status);
        }
        if start.elapsed() > DEADLINE {
            // The child leads its own process group (process_group(0)): kill the group, simulator workers included.
            let group = i32::try_from(child.id()).expect("pid fits in i32");
            // SAFETY: kill(2) with a negative pid signals the process group this test created; no memory involved.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let read = |path: &Path| String::from_utf8_lossy(&fs::read(path).unwrap_or_default()).into_owned();
    Outcome { status, stdout: read(&stdout_path), stderr: read(&stderr_path), elapsed: start.elapsed() }
}

fn check(outcome: &Outcome, program: &str, step: &str) {
    let ok = outcome.status.is_some_and(|status| status.success());
    if !ok {
        let how = match outcome.status {
            Some(status) => format!("failed ({status})"),
            None => format!("did not finish within {} s and was killed", DEADLINE.as_secs()),
        };
        panic!(
            "{program}: {step} {how} after {:.1} s\n--- stdout ---\n{}--- stderr ---\n{}",
            outcome.elapsed.as_secs_f64(),
            tail(&outcome.stdout),
            tail(&outcome.stderr)
        );
    }
}

/// Builds and runs `tests/programs/<name>` and returns the host program's standard output.
fn build_and_run(name: &str) -> String {
    build_and_run_with(name, &[]).stdout
}

/// Builds and runs `tests/programs/<name>` with `variables` set for `make` and the program (`CC=gcc`, say: the
/// C compiler of the host program and, through `dpu-upmem-dpurte-clang`, of the kernel) and returns what the
/// host program printed.
fn build_and_run_with(name: &str, variables: &[(&str, &str)]) -> Outcome {
    let work = tempfile::Builder::new().prefix(&format!("upmem-sdk-{name}-")).tempdir().expect("temporary directory");
    let dir = work.path().join(name);
    copy_sources(&programs_dir().join(name), &dir);

    // As after `source upmem_env.sh`: its clang, then its commands, then the rest of PATH.
    let mut path = OsString::from(clang_dir(work.path()));
    path.push(":");
    path.push(tools_dir());
    if let Some(existing) = std::env::var_os("PATH") {
        path.push(":");
        path.push(existing);
    }
    let environment = |command: &mut Command| {
        command
            .env("PATH", &path)
            // The program finds libdpu through the rpath dpu-pkg-config gives it, as after `make` on a user's
            // machine; a libdpu elsewhere on LD_LIBRARY_PATH (upmem_env.sh's release build, an SDK) must not win.
            .env_remove("LD_LIBRARY_PATH")
            // The default profile, whatever the caller's environment says.
            .env_remove("UPMEM_PROFILE")
            .env_remove("UPMEM_PROFILE_BASE")
            .env_remove("MAKEFLAGS")
            .env_remove("MFLAGS");
        command.envs(variables.iter().copied());
    };

    let mut make = Command::new("make");
    environment(&mut make);
    let built = run(make, &dir, "make");
    check(&built, name, "make");

    let mut host = Command::new("./bin/host");
    environment(&mut host);
    let ran = run(host, &dir, "host");
    check(&ran, name, "./bin/host");
    println!(
        "{name}: make {:.1} s, ./bin/host {:.2} s: {}",
        built.elapsed.as_secs_f64(),
        ran.elapsed.as_secs_f64(),
        ran.stdout.lines().last().unwrap_or("")
    );
    ran
}

/// The host program's last line is its summary; it must not report a failure.
fn assert_summary(output: &str, name: &str) {
    let last = output.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("{name}: ")) && last.contains(": OK (0 errors)"),
        "{name}: unexpected summary line {last:?}\n{}",
        tail(output)
    );
}

#[test]
fn vector_add() {
    assert_summary(&build_and_run("vector_add"), "vector_add");
}

#[test]
fn reduction() {
    assert_summary(&build_and_run("reduction"), "reduction");
}

#[test]
fn histogram() {
    assert_summary(&build_and_run("histogram"), "histogram");
}

#[test]
fn mram_names_log() {
    assert_summary(&build_and_run("mram_names_log"), "mram_names_log");
}

#[test]
fn async_operations() {
    assert_summary(&build_and_run("async"), "async");
}

#[test]
fn async_launches_on_the_timeline() {
    assert_summary(&build_and_run("async_timeline"), "async_timeline");
}

#[test]
fn ranks() {
    assert_summary(&build_and_run("ranks"), "ranks");
}

#[test]
fn lifecycle() {
    assert_summary(&build_and_run("lifecycle"), "lifecycle");
}

#[test]
fn two_kernels() {
    assert_summary(&build_and_run("two_kernels"), "two_kernels");
}

#[test]
fn misuse() {
    let output = build_and_run("misuse");
    let failures: Vec<&str> = output.lines().filter(|line| line.starts_with("FAILED")).collect();
    assert!(failures.is_empty(), "misuse: failed checks:\n{}", failures.join("\n"));
    let last = output.lines().last().unwrap_or_default();
    let counts: Vec<&str> = last.split(' ').collect();
    assert!(
        matches!(counts.as_slice(), [passed, "passed,", "0", "failed"] if passed.parse::<u32>().is_ok_and(|n| n > 0)),
        "misuse: the last line should be \"N passed, 0 failed\", not {last:?}"
    );
    // Every documented error code that a program can produce appears among the checks.
    for code in [
        "DPU_ERR_ALLOCATION",
        "DPU_ERR_INVALID_PROFILE",
        "DPU_ERR_INVALID_DPU_SET",
        "DPU_ERR_UNKNOWN_SYMBOL",
        "DPU_ERR_INVALID_SYMBOL_ACCESS",
        "DPU_ERR_INVALID_MRAM_ACCESS",
        "DPU_ERR_INVALID_WRAM_ACCESS",
        "DPU_ERR_NO_PROGRAM_LOADED",
        "DPU_ERR_DIFFERENT_DPU_PROGRAMS",
        "DPU_ERR_ELF_NO_SUCH_FILE",
        "DPU_ERR_ELF_INVALID_FILE",
        "DPU_ERR_DPU_FAULT",
        "DPU_ERR_ASYNC_JOBS",
        "DPU_ERR_DPU_ALREADY_RUNNING",
        "DPU_ERR_INVALID_LAUNCH_POLICY",
        "DPU_ERR_INVALID_PARALLEL_MEMORY_TRANSFER",
        "DPU_ERR_SG_NOT_ACTIVATED",
        "DPU_ERR_SG_NOT_MRAM_SYMBOL",
        "DPU_ERR_SG_LENGTH_MISMATCH",
        "DPU_ERR_SG_TOO_MANY_BLOCKS",
        "DPU_ERR_NONBLOCKING_SYNC_CALLBACK",
        "DPU_ERR_DPU_DISABLED",
    ] {
        assert!(
            output.lines().any(|line| line.starts_with("ok ") && line.contains(code)),
            "misuse: no passing check for {code}"
        );
    }
}

/// A host program in C++ (the SDK's `<dpu>` API), built by the C++ compiler (`$CXX`, `c++`, `g++` or
/// `clang++`); without one it is skipped with a notice, and in CI that fails.
#[test]
fn cpp_host() {
    let Some(compiler) = cxx_compiler() else {
        tool_missing(
            "no C++ compiler (c++, g++ or clang++) found for the C++ host program (Debian: apt-get install g++)",
        );
        return;
    };
    assert_summary(&build_and_run_with("cpp_host", &[("CXX", &compiler)]).stdout, "cpp_host");
}

/// A long-running process that allocates 64 DPUs, loads (from the file and from memory), transfers, launches,
/// reads back and frees, cycle after cycle: its allocated memory, file descriptors and threads stay flat after a
/// warm-up. `SOAK_CYCLES` sets the cycles (default 300); the figures are in the summary line.
#[test]
fn soak() {
    assert_summary(&build_and_run("soak"), "soak");
}

/// Separate compilation, as library and CMake builds do it: each DPU source compiled alone by the SDK environment's
/// `clang --target=dpu-upmem-dpurte -c` (with `--std=c11`, and `-Werror` over a variable that only clang 13 and
/// later warn about), two objects archived with `ar`, and the program linked from an object and the library with
/// `-L`/`-l`.
#[test]
fn separate_compilation() {
    assert_summary(&build_and_run("separate_compilation"), "separate_compilation");
}

/// Unchanged SDK programs: DPU libc headers, definition macros without their semicolon, built_ins.h,
/// SEQREAD_CACHE_SIZE, the SDK clang's flags, MRAM addresses and DMA sizes as the engine reads them, and a
/// stack overflow, each checked by the host program; the odd DMA size and the overflow are warned about. The
/// kernel is built with clang, as by the SDK (it puts `__dma_aligned` on a parameter, which only clang accepts).
#[test]
fn drop_in() {
    let outcome = build_and_run_with("drop_in", &[("CC", "clang")]);
    assert_summary(&outcome.stdout, "drop_in");
    assert!(!outcome.stderr.contains("tasklet 2: used "), "the warning's own printing counts as stack use");
    for warning in [
        "upmem-sim: warning: kernel ",
        ", DPU 0, tasklet 2: mram_write of 1 bytes, not a multiple of 8: a DPU moves 2048 bytes",
        ", DPU 0, tasklet 3: used ",
        "bytes of stack, more than its 1024-byte budget",
    ] {
        assert!(outcome.stderr.contains(warning), "drop_in: no warning {warning:?} in:\n{}", tail(&outcome.stderr));
    }
}

/// The same program with the kernel built by gcc: warnings gcc gives where the SDK's clang is silent
/// (`-Wparentheses`, `-Wunused-value` in a macro) do not fail its `-Werror` build.
#[test]
fn drop_in_with_gcc() {
    let outcome = build_and_run_with("drop_in", &[("CC", "gcc")]);
    assert_summary(&outcome.stdout, "drop_in");
}
