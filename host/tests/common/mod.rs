//! What the runtime's integration tests share.

use std::path::PathBuf;

/// The simulator's libdpu, built by cargo as a dev-dependency (`upmem-sim-sdk`, crate `dpu`).
pub fn simulator_libdpu() -> PathBuf {
    let deps = std::env::current_exe().expect("test path").parent().expect("deps directory").to_path_buf();
    let candidates = [deps.join("libdpu.so"), deps.parent().expect("profile directory").join("libdpu.so")];
    candidates
        .into_iter()
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("libdpu.so of upmem-sim-sdk not found next to {}", deps.display()))
}
