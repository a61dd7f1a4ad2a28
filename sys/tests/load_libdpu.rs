//! Loads libdpu at run time through `LibDpu`: a missing library is an `Err`, and the simulator's libdpu (built by
//! the `upmem-sim-sdk` package as `target/<profile>/libdpu.so`) resolves every declared function and answers
//! `dpu_error_to_string`. The simulator tests are skipped, with a notice, when that library has not been built
//! (`cargo build -p upmem-sim-sdk`; `cargo test --workspace` builds it), and fail in CI.

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::{env, fs};

mod common;

use common::tool_missing;
use upmem_sys::{dpu_error_t, LibDpu, DPU_ERR_ALLOCATION, DPU_ERR_INVALID_DPU_SET, DPU_ERR_SG_NOT_MRAM_SYMBOL, DPU_OK};

/// The simulator's libdpu, if it has been built: in this test's directory (`target/<profile>/deps/`, where cargo
/// puts it when another package's tests depend on `upmem-sim-sdk`, as `cargo test --workspace` builds them) or in
/// the profile directory (`target/<profile>/`, after `cargo build -p upmem-sim-sdk`).
fn simulator_libdpu() -> Option<PathBuf> {
    let exe = env::current_exe().expect("the test executable's path");
    let deps = exe.parent()?;
    let candidates = [deps.join("libdpu.so"), deps.parent()?.join("libdpu.so")];
    if let Some(library) = candidates.iter().find(|library| library.is_file()) {
        Some(library.clone())
    } else {
        tool_missing(&format!(
            "libdpu.so is absent from {} and {}; build it with `cargo build -p upmem-sim-sdk` (cargo test \
             --workspace does) to run this test",
            candidates[0].parent()?.display(),
            candidates[1].parent()?.display()
        ));
        None
    }
}

/// Loads the library at `path`.
fn load(path: &Path) -> LibDpu {
    // SAFETY: the simulator's libdpu runs no initialiser that makes assumptions about the loading program.
    match unsafe { LibDpu::new(path) } {
        Ok(lib) => lib,
        Err(error) => panic!("loading {}: {error}", path.display()),
    }
}

/// `dpu_error_to_string(code)`, freed after copying.
fn error_string(lib: &LibDpu, code: dpu_error_t) -> String {
    // SAFETY: dpu_error_to_string takes any value and returns NULL or a NUL-terminated string from malloc.
    let string = unsafe { lib.dpu_error_to_string(code) };
    assert!(!string.is_null(), "dpu_error_to_string({code}) returned NULL");
    // SAFETY: `string` is non-null and NUL-terminated (above), and not freed until after the copy.
    let copy = unsafe { CStr::from_ptr(string) }.to_string_lossy().into_owned();
    // SAFETY: the string was allocated with malloc and is freed once, here; `copy` does not borrow it.
    unsafe { libc::free(string.cast()) };
    copy
}

#[test]
fn a_missing_library_is_an_error() {
    // SAFETY: no library is loaded, so no initialiser runs.
    let result = unsafe { LibDpu::new("/nonexistent/libdpu.so") };
    let error = result.err().expect("loading /nonexistent/libdpu.so succeeded");
    assert!(error.to_string().contains("/nonexistent/libdpu.so"), "{error}");
}

#[test]
fn lib_dpu_can_be_shared_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<LibDpu>();
}

#[test]
fn the_simulator_libdpu_describes_errors() {
    let Some(path) = simulator_libdpu() else { return };
    let lib = load(&path);
    assert!(lib.dpu_error_to_string.is_ok(), "{} does not export dpu_error_to_string", path.display());
    assert_eq!(error_string(&lib, DPU_OK), "success");
    assert_eq!(error_string(&lib, DPU_ERR_ALLOCATION), "dpu allocation error");
    assert_eq!(error_string(&lib, 4), "dpu allocation error");
    assert_eq!(error_string(&lib, DPU_ERR_INVALID_DPU_SET), "invalid action for this dpu set");
    assert!(!error_string(&lib, DPU_ERR_SG_NOT_MRAM_SYMBOL).is_empty());
}

/// Every function the bindings declare (the `pub unsafe fn` methods of `LibDpu` in `src/bindings.rs`) is
/// exported by the simulator's libdpu: its headers declare only what it implements.
#[test]
fn the_simulator_libdpu_exports_every_declared_function() {
    let Some(path) = simulator_libdpu() else { return };
    let bindings = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bindings.rs");
    let source = fs::read_to_string(&bindings).expect("reading src/bindings.rs");
    let declared: Vec<&str> = source
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("pub unsafe fn "))
        .filter_map(|rest| rest.split(['(', '<']).next())
        .filter(|name| !matches!(*name, "new" | "from_library"))
        .collect();
    assert!(declared.contains(&"dpu_alloc") && declared.len() > 40, "parsed {declared:?}");
    // SAFETY: as in `load`.
    let library = unsafe { upmem_sys::libloading::Library::new(&path) }.expect("loading the simulator's libdpu");
    let missing: Vec<&str> = declared
        .iter()
        .copied()
        // SAFETY: the symbol is only looked up, never called, so its type does not matter.
        .filter(|name| unsafe { library.get::<unsafe extern "C" fn()>(name.as_bytes()) }.is_err())
        .collect();
    assert!(missing.is_empty(), "{} does not export {missing:?}", path.display());
}
