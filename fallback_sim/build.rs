//! Embeds the DPU runtime (headers, runtime and harness sources, linker script) into the crate, so that the
//! kernel builder works wherever the crate is used, including from other crates' build scripts.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

fn main() {
    // Read when the script runs, not when it was compiled: a build-script binary reused from a copy of the
    // workspace elsewhere (a shared target directory) would otherwise embed that copy's runtime.
    let root =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR set by cargo")).join("runtime");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    let mut table = String::from("&[\n");
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let relative = file.strip_prefix(&root).expect("runtime file under runtime/");
        writeln!(
            table,
            "    ({:?}, include_bytes!({:?})),",
            relative.to_str().expect("UTF-8 runtime path"),
            file.to_str().expect("UTF-8 runtime path")
        )
        .expect("formatting");
    }
    table.push_str("]\n");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR set by cargo"));
    fs::write(out.join("runtime_files.rs"), table).expect("writing runtime_files.rs");
}
