//! The build checks through the SDK's interfaces: `dpu-upmem-dpurte-clang` prints what they find as compiler
//! warnings, and `dpu_load` with `simStrict=true` refuses what they found with libdpu's error codes.
//!
//! The tests share the process's one simulated server, whose profile they change, so they take turns.

use std::ffi::{c_char, c_void, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

use dpu::types::{dpu_error_t, dpu_set_t, SetParts};

extern "C" {
    fn dpu_alloc(nr_dpus: u32, profile: *const c_char, set: *mut dpu_set_t) -> dpu_error_t;
    fn dpu_free(set: dpu_set_t) -> dpu_error_t;
    fn dpu_load(set: dpu_set_t, path: *const c_char, program: *mut *mut c_void) -> dpu_error_t;
}

/// Held by each test: the server's profile changes between them.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `DPU_ERR_INVALID_IRAM_ACCESS`: what libdpu 2025.1's loader returns for a program past the end of IRAM.
const INVALID_IRAM_ACCESS: dpu_error_t = 9;
/// `DPU_ERR_ELF_INVALID_FILE`.
const ELF_INVALID_FILE: dpu_error_t = 24;

/// Builds `name` (a kernel of the simulator's tests) with `dpu-upmem-dpurte-clang`; returns the binary and
/// what the command printed on standard error.
fn compile(name: &str) -> (PathBuf, String) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels").join(format!("{name}.c"));
    let output = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.dpusim"));
    let result = Command::new(env!("CARGO_BIN_EXE_dpu-upmem-dpurte-clang"))
        .args(["-O2", "-Wall", "-o"])
        .arg(&output)
        .arg(&source)
        .output()
        .expect("running dpu-upmem-dpurte-clang");
    let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
    assert!(result.status.success(), "building {name} failed:\n{stderr}");
    (output, stderr)
}

/// What `dpu_load` returns for `binary` on one DPU allocated with `profile`.
fn load_status(profile: &str, binary: &Path) -> dpu_error_t {
    let profile = CString::new(profile).expect("no NUL");
    let path = CString::new(binary.to_str().expect("a UTF-8 path")).expect("no NUL");
    let mut set = <dpu_set_t as SetParts>::empty();
    // SAFETY: the library's C API, called as a C program would, with valid strings and a set freed once.
    unsafe {
        assert_eq!(dpu_alloc(1, profile.as_ptr(), &mut set), 0, "dpu_alloc");
        let status = dpu_load(set, path.as_ptr(), std::ptr::null_mut());
        assert_eq!(dpu_free(set), 0, "dpu_free");
        status
    }
}

#[test]
fn a_program_too_large_for_iram_is_a_warning_and_strict_dpu_load_refuses_it() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (binary, stderr) = compile("build_check_iram_overflow");
    assert!(
        stderr.lines().any(|line| line.starts_with("dpu-upmem-dpurte-clang: warning: ")
            && line.contains("DPU instructions")
            && line.contains("more than the 4096 a v1A DPU's IRAM holds")),
        "{stderr}"
    );
    assert_eq!(load_status("backend=simulator,simStrict=true", &binary), INVALID_IRAM_ACCESS);
    assert_eq!(load_status("backend=simulator", &binary), 0);
}

#[test]
fn shared_layouts_that_differ_on_a_dpu_are_warnings_and_strict_dpu_load_refuses_them() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (binary, stderr) = compile("build_check_layouts");
    let expected = "build_check_layouts.c:42: warning: __host variable `args` (struct dpu_args): 24 bytes in the \
                    simulated kernel, 12 on a DPU; member `buffer` (char *) is 8 bytes here, 4 on a DPU";
    assert!(stderr.lines().any(|line| line.contains(expected)), "{stderr}");
    assert_eq!(stderr.lines().filter(|line| line.contains(": warning: ")).count(), 3, "{stderr}");
    assert_eq!(load_status("backend=simulator,simStrict=true", &binary), ELF_INVALID_FILE);
    assert_eq!(load_status("backend=simulator", &binary), 0);
}

/// The chip `-mcpu=` or `$DPU_ARCH_VERSION` names bounds NR_TASKLETS as the SDK's linker script does: 24 tasklets
/// build for v1A and are refused for v1B, 16 build for both.
#[test]
fn the_target_chip_bounds_the_tasklets() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/empty.c");
    let dir = tempfile::tempdir().unwrap();
    let build = |tasklets: u32, chip_flag: Option<&str>, arch: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dpu-upmem-dpurte-clang"));
        command.arg(format!("-DNR_TASKLETS={tasklets}")).arg("-DSTACK_SIZE_DEFAULT=256").arg("-o");
        command.arg(dir.path().join(format!("empty-{tasklets}.dpusim"))).args(chip_flag).arg(&source);
        match arch {
            Some(version) => command.env("DPU_ARCH_VERSION", version),
            None => command.env_remove("DPU_ARCH_VERSION"),
        };
        command.output().expect("running dpu-upmem-dpurte-clang")
    };
    assert!(build(24, Some("-mcpu=v1A"), None).status.success());
    for refused in [build(24, Some("-mcpu=v1B"), None), build(24, None, Some("v1B"))] {
        assert!(!refused.status.success());
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("uses 24 tasklets, but a v1B DPU has 16 hardware threads"), "{stderr}");
    }
    assert!(build(16, Some("-mcpu=v1B"), None).status.success());
    let bad = build(16, Some("-mcpu=v2"), None);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected v1A or v1B"));
}
