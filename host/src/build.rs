//! Building DPU kernels from a build script: for the simulator (feature `simulator`), and for real DPUs when
//! the UPMEM SDK's compiler is installed. One [`KernelBuilder`] describes the kernel for both.
//!
//! ```no_run
//! // In build.rs's main:
//! let mut reduce = upmem::build::KernelBuilder::new();
//! reduce.source("dpu/reduce.c").nr_tasklets(16).flag("-O2");
//! upmem::build::kernel("reduce", &reduce).expect("building the reduce kernel");
//! // then, in the crate: `let kernel = upmem::kernel!("reduce");`
//! ```

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use upmem_types::KernelBuilder;

use crate::error::{Error, Result};
use crate::Kernel;

/// Builds `builder`'s kernel as `name` into `$OUT_DIR/upmem-kernels` (only valid in a build script) and points
/// `UPMEM_KERNEL_DIR` there for [`crate::kernel!`]. The script's simulated kernels share one compiled runtime in
/// `$OUT_DIR` unless the builder or `$UPMEM_SIM_RUNTIME_CACHE` names a cache ([`KernelBuilder::runtime_cache`]).
pub fn kernel(name: &str, builder: &KernelBuilder) -> Result<Kernel> {
    let out = env::var_os("OUT_DIR").map(PathBuf::from).ok_or_else(|| Error::Io {
        what: "upmem::build::kernel runs in a build script".into(),
        error: std::io::Error::new(std::io::ErrorKind::NotFound, "OUT_DIR is not set"),
    })?;
    let dir = out.join("upmem-kernels");
    // Set even if the build fails, so that `kernel!` compiles and says at run time what is missing.
    println!("cargo:rustc-env=UPMEM_KERNEL_DIR={}", dir.display());
    kernel_into(name, builder, &dir)
}

/// Builds `builder`'s kernel as `name` into `dir` for the builder's chip
/// ([`KernelBuilder::chip`], default v1A): for the simulator (feature
/// `simulator`), and for real DPUs when the SDK compiler is found, into the files
/// [`Kernel::file_name`] names (`name.dpusim` and `name.dpu` for v1A). Build once per chip for a kernel that
/// must run on both: a set loads the binary of its DPUs' chip.
pub fn kernel_into(name: &str, builder: &KernelBuilder, dir: &Path) -> Result<Kernel> {
    let in_build_script = env::var_os("OUT_DIR").is_some();
    let chip = builder.target_chip();
    let simulated = build_for_simulator(builder, in_build_script, &dir.join(Kernel::file_name(name, chip, true)))?;
    let hardware = match sdk_compiler(in_build_script) {
        Some(compiler) => {
            Some(build_for_hardware(name, builder, &compiler, &dir.join(Kernel::file_name(name, chip, false)))?)
        }
        None => None,
    };
    if simulated.is_none() && hardware.is_none() {
        return Err(Error::NoKernelCompiler(name.to_owned()));
    }
    Ok(Kernel::in_dir(name, dir).with_binaries(chip, simulated, hardware))
}

/// Builds `builder`'s kernel for the simulator into `output`, printing `cargo:` lines in a build script.
#[cfg(feature = "simulator")]
fn build_for_simulator(builder: &KernelBuilder, in_build_script: bool, output: &Path) -> Result<Option<PathBuf>> {
    use upmem_sim::SimulatedBuild as _;

    let mut simulator = builder.clone();
    simulator.cargo_metadata(in_build_script);
    // A build script's kernels share one compiled runtime, kept beside them, unless a cache is given.
    let cache_given = builder.given_runtime_cache().is_some() || env::var_os("UPMEM_SIM_RUNTIME_CACHE").is_some();
    if let Some(out) = env::var_os("OUT_DIR").filter(|_| in_build_script && !cache_given) {
        simulator.runtime_cache(Path::new(&out).join("upmem-sim-runtime"));
    }
    Ok(Some(simulator.build(output)?))
}

/// Without the simulator there is no simulated binary to build.
#[cfg(not(feature = "simulator"))]
fn build_for_simulator(_builder: &KernelBuilder, _in_build_script: bool, _output: &Path) -> Result<Option<PathBuf>> {
    Ok(None)
}

/// Builds `builder`'s kernel with the SDK's `compiler` into `output`, creating its directory (which the
/// simulator's build, when it runs first, would otherwise be the only one to create).
fn build_for_hardware(name: &str, builder: &KernelBuilder, compiler: &Path, output: &Path) -> Result<PathBuf> {
    if let Some(dir) = output.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|error| Error::Io { what: format!("creating {}", dir.display()), error })?;
    }
    let result = Command::new(compiler)
        .args(builder.sdk_arguments())
        .arg("-o")
        .arg(output)
        .output()
        .map_err(|error| Error::Io { what: format!("running {}", compiler.display()), error })?;
    if !result.status.success() {
        return Err(Error::Io {
            what: format!("building kernel `{name}` for DPUs with {}", compiler.display()),
            error: std::io::Error::other(String::from_utf8_lossy(&result.stderr).into_owned()),
        });
    }
    Ok(output.to_path_buf())
}

/// The UPMEM SDK's DPU compiler: `$UPMEM_HOME/bin/dpu-upmem-dpurte-clang`, else one on `PATH` that is not the
/// simulator's drop-in command of the same name.
pub fn sdk_compiler(cargo_metadata: bool) -> Option<PathBuf> {
    if cargo_metadata {
        println!("cargo:rerun-if-env-changed=UPMEM_HOME");
        println!("cargo:rerun-if-env-changed=PATH");
    }
    let name = "dpu-upmem-dpurte-clang";
    let from_home = env::var_os("UPMEM_HOME").map(|home| PathBuf::from(home).join("bin").join(name));
    let on_path = env::var_os("PATH")
        .into_iter()
        .flat_map(|path| env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join(name));
    from_home.into_iter().chain(on_path).filter(|candidate| candidate.is_file()).find(|candidate| {
        Command::new(candidate).arg("--version").output().is_ok_and(|output| {
            output.status.success() && !String::from_utf8_lossy(&output.stdout).contains("upmem-sim")
        })
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A stand-in for the SDK's compiler that writes its `-o` file, as the real one does, and nothing else.
    fn stand_in_compiler(dir: &Path) -> PathBuf {
        let path = dir.join("dpu-upmem-dpurte-clang");
        let script =
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && { shift; echo dpu > \"$1\"; }; shift; done\n";
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// Without the simulator nothing else creates the kernel directory: the hardware build must (a
    /// hardware-only build of pimgnn failed there).
    #[test]
    fn the_hardware_build_creates_the_output_directory() {
        let dir = tempfile::tempdir().unwrap();
        let compiler = stand_in_compiler(dir.path());
        let output = dir.path().join("not-yet").join("upmem-kernels").join("double.dpu");
        let mut builder = KernelBuilder::new();
        builder.source("double.c").nr_tasklets(4);
        assert_eq!(build_for_hardware("double", &builder, &compiler, &output).unwrap(), output);
        assert_eq!(std::fs::read_to_string(&output).unwrap(), "dpu\n");
    }
}
