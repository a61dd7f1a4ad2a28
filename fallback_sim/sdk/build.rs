//! Embeds the host headers (`include/dpu/`: the C headers, and the C++ API's `dpu.hpp` and `dpu`) so that
//! `dpu-pkg-config` can write them where host programs find them.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::{env, fs};

fn main() {
    // Read when the script runs, not when it was compiled (see fallback_sim/build.rs).
    let dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR set by cargo")).join("include/dpu");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut headers: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    headers.sort();
    let mut table = String::from("&[\n");
    for header in &headers {
        println!("cargo:rerun-if-changed={}", header.display());
        let name = header.file_name().expect("file name").to_str().expect("UTF-8 header name");
        writeln!(table, "    ({name:?}, include_bytes!({:?})),", header.to_str().expect("UTF-8 path"))
            .expect("formatting");
    }
    table.push_str("]\n");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR set by cargo"));
    fs::write(out.join("host_headers.rs"), table).expect("writing host_headers.rs");
}
