//! `dpu-pkg-config`: answers `--cflags`, `--libs` and `--modversion` for the `dpu` module, as the SDK's
//! command does, pointing at this simulator's headers and `libdpu`, so that unchanged UPMEM makefiles
//! (`` `dpu-pkg-config --cflags --libs dpu` ``) build against the simulator.
//!
//! The headers are written next to this executable (`upmem-sim-sdk/include/dpu/`); `libdpu.so` is expected
//! beside the executable too, where `cargo build` puts both, or in `deps/`, where a test build leaves it (the
//! newer of the two when both are there). Programs get an rpath to it, so they run as they are.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::{env, fs};

/// The SDK version whose API the headers declare.
const MODULE_VERSION: &str = "2025.1.0";
const HEADERS: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/host_headers.rs"));

fn write_headers(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    for (name, contents) in HEADERS {
        let path = dir.join(name);
        if fs::read(&path).ok().as_deref() != Some(*contents) {
            fs::write(&path, contents)?;
        }
    }
    Ok(())
}

fn run(arguments: &[String]) -> Result<String, String> {
    let here = env::current_exe().map_err(|error| format!("cannot find this executable: {error}"))?;
    let bin = here.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let include = bin.join("upmem-sim-sdk/include/dpu");
    // `cargo build` puts libdpu.so beside this command (and in `deps/`); a build for tests leaves it in `deps/`
    // only, so the one beside the command may be an older build: the newest wins.
    let libdir = [bin.clone(), bin.join("deps")]
        .into_iter()
        .filter_map(|dir| {
            let modified = fs::metadata(dir.join("libdpu.so")).and_then(|metadata| metadata.modified()).ok()?;
            Some((modified, dir))
        })
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, dir)| dir);
    let mut parts = Vec::new();
    let mut module = None;
    for argument in arguments {
        match argument.as_str() {
            "--cflags" => parts.push(format!("-I{}", include.display())),
            "--libs" => {
                let libdir = libdir.as_ref().ok_or_else(|| {
                    format!("libdpu.so is not next to {} (build it: cargo build -p upmem-sim-sdk)", here.display())
                })?;
                parts.push(format!("-L{0} -Wl,-rpath,{0} -ldpu", libdir.display()));
            }
            "--modversion" => parts.push(MODULE_VERSION.to_owned()),
            "--version" => return Ok("0.29.2".into()),
            "--help" => return Ok("usage: dpu-pkg-config [--cflags] [--libs] [--modversion] dpu".into()),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            name => module = Some(name.to_owned()),
        }
    }
    match module.as_deref() {
        Some("dpu") => {}
        Some(other) => return Err(format!("Package {other} was not found (this dpu-pkg-config knows only `dpu`)")),
        None => return Err("Must specify package names on the command line".into()),
    }
    write_headers(&include).map_err(|error| format!("writing the headers to {}: {error}", include.display()))?;
    Ok(parts.join(" "))
}

fn main() -> ExitCode {
    let arguments: Vec<String> = env::args().skip(1).collect();
    match run(&arguments) {
        Ok(output) => {
            println!("{output}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("dpu-pkg-config: {message}");
            ExitCode::FAILURE
        }
    }
}
