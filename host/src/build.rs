//! Building DPU kernels from a build script: always for the simulator, and for real DPUs when the UPMEM SDK's
//! compiler is installed.
//!
//! ```no_run
//! // In build.rs's main:
//! upmem::build::KernelBuilder::new("reduce")
//!     .source("dpu/reduce.c")
//!     .nr_tasklets(16)
//!     .flag("-O2")
//!     .build()
//!     .expect("building the reduce kernel");
//! // then, in the crate: `let kernel = upmem::kernel!("reduce");`
//! ```

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::Kernel;

/// Builds one kernel into `$OUT_DIR/upmem-kernels` and points `UPMEM_KERNEL_DIR` there for [`crate::kernel!`].
#[derive(Clone, Debug)]
pub struct KernelBuilder {
    name: String,
    sources: Vec<PathBuf>,
    includes: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    flags: Vec<String>,
}

impl KernelBuilder {
    /// A kernel called `name` (its binaries are `name.dpusim` and `name.dpu`).
    pub fn new(name: &str) -> Self {
        KernelBuilder {
            name: name.to_owned(),
            sources: Vec::new(),
            includes: Vec::new(),
            defines: Vec::new(),
            flags: Vec::new(),
        }
    }

    /// Adds a C source.
    pub fn source(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.sources.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds an include directory.
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// Defines a macro.
    pub fn define(&mut self, name: &str, value: Option<&str>) -> &mut Self {
        self.defines.push((name.to_owned(), value.map(str::to_owned)));
        self
    }

    /// Sets `NR_TASKLETS`.
    pub fn nr_tasklets(&mut self, nr_tasklets: u32) -> &mut Self {
        self.define("NR_TASKLETS", Some(&nr_tasklets.to_string()))
    }

    /// Adds a compiler flag (`-O2`, `-Wall`, ...).
    pub fn flag(&mut self, flag: &str) -> &mut Self {
        self.flags.push(flag.to_owned());
        self
    }

    /// Builds into `$OUT_DIR/upmem-kernels` (only valid in a build script).
    pub fn build(&self) -> Result<Kernel> {
        let out = env::var_os("OUT_DIR").map(PathBuf::from).ok_or_else(|| Error::Io {
            what: "KernelBuilder::build runs in a build script".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "OUT_DIR is not set"),
        })?;
        let dir = out.join("upmem-kernels");
        // Set even if the build fails, so that `kernel!` compiles and says at run time what is missing.
        println!("cargo:rustc-env=UPMEM_KERNEL_DIR={}", dir.display());
        self.build_into(&dir)
    }

    /// Builds into `dir`: the simulated binary (feature `simulator`), and the hardware binary when the SDK
    /// compiler is found.
    pub fn build_into(&self, dir: &Path) -> Result<Kernel> {
        let in_build_script = env::var_os("OUT_DIR").is_some();
        let simulated =
            if cfg!(feature = "simulator") { Some(self.build_for_simulator(dir, in_build_script)?) } else { None };
        let hardware = match sdk_compiler(in_build_script) {
            Some(compiler) => Some(self.build_for_hardware(&compiler, &dir.join(format!("{}.dpu", self.name)))?),
            None => None,
        };
        if simulated.is_none() && hardware.is_none() {
            return Err(Error::NoKernelCompiler(self.name.clone()));
        }
        Ok(Kernel::new(&self.name, simulated, hardware))
    }

    fn build_for_simulator(&self, dir: &Path, in_build_script: bool) -> Result<PathBuf> {
        let mut simulator = upmem_sim::KernelBuilder::new();
        for source in &self.sources {
            simulator.source(source);
        }
        for include in &self.includes {
            simulator.include(include);
        }
        for (name, value) in &self.defines {
            simulator.define(name, value.as_deref());
        }
        for flag in &self.flags {
            simulator.flag(flag);
        }
        simulator.cargo_metadata(in_build_script);
        Ok(simulator.build(dir.join(format!("{}.dpusim", self.name)))?)
    }

    fn build_for_hardware(&self, compiler: &Path, output: &Path) -> Result<PathBuf> {
        let mut command = Command::new(compiler);
        for (name, value) in &self.defines {
            command.arg(match value {
                Some(value) => format!("-D{name}={value}"),
                None => format!("-D{name}"),
            });
        }
        for include in &self.includes {
            command.arg("-I").arg(include);
        }
        command.args(&self.flags).arg("-o").arg(output).args(&self.sources);
        let result =
            command.output().map_err(|source| Error::Io { what: format!("running {}", compiler.display()), source })?;
        if !result.status.success() {
            return Err(Error::Io {
                what: format!("building kernel `{}` for DPUs with {}", self.name, compiler.display()),
                source: std::io::Error::other(String::from_utf8_lossy(&result.stderr).into_owned()),
            });
        }
        Ok(output.to_path_buf())
    }
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
