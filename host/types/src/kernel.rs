//! The description of a DPU kernel to build, which every backend's build reads: the simulator compiles it with
//! the host's C compiler (`upmem_sim::SimulatedBuild`), the hardware build passes it to the UPMEM SDK's
//! compiler ([`KernelBuilder::sdk_arguments`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::chip::ChipVersion;

/// A DPU kernel to build: its C sources, the DPU objects and libraries to link with them (the simulator's), its
/// defines (`NR_TASKLETS`, `STACK_SIZE_DEFAULT`, ...), include directories, flags and target chip, and how the
/// build runs (compiler, work directory, `cargo:` lines for a build script).
///
/// ```
/// let mut reduce = upmem_types::KernelBuilder::new();
/// reduce.source("dpu/reduce.c").nr_tasklets(16).flag("-O2");
/// let arguments: Vec<String> =
///     reduce.sdk_arguments().into_iter().map(|arg| arg.to_string_lossy().into_owned()).collect();
/// assert_eq!(arguments, ["-mcpu=v1A", "-DNR_TASKLETS=16", "-O2", "dpu/reduce.c"]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct KernelBuilder {
    sources: Vec<PathBuf>,
    objects: Vec<PathBuf>,
    libraries: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    include_dirs: Vec<PathBuf>,
    flags: Vec<String>,
    compiler: Option<PathBuf>,
    work_dir: Option<PathBuf>,
    runtime_cache: Option<PathBuf>,
    cargo_metadata: bool,
    chip: ChipVersion,
}

impl KernelBuilder {
    /// A builder with no sources.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a C source file.
    pub fn source(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.sources.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds a DPU object file, one that the simulator's `compile_object` (or `dpu-upmem-dpurte-clang -c`)
    /// compiled, to link with the sources.
    pub fn object(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.objects.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds a static library of DPU objects (made with `ar`): its members that define what the program's other
    /// objects need (its `main`, too) are linked, whatever the order of the libraries, as the SDK's linker takes
    /// them.
    pub fn library(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.libraries.push(path.as_ref().to_path_buf());
        self
    }

    /// Defines a preprocessor macro (`-DNAME` or `-DNAME=VALUE`), e.g. `NR_TASKLETS`.
    pub fn define(&mut self, name: &str, value: Option<&str>) -> &mut Self {
        self.defines.push((name.to_owned(), value.map(str::to_owned)));
        self
    }

    /// Sets `NR_TASKLETS`.
    pub fn nr_tasklets(&mut self, nr_tasklets: u32) -> &mut Self {
        self.define("NR_TASKLETS", Some(&nr_tasklets.to_string()))
    }

    /// Adds an include directory (`-I`).
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.include_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds a compiler flag for the kernel sources (`-O2`, `-g`, `-Wall`, `-std=c11`, ...).
    pub fn flag(&mut self, flag: &str) -> &mut Self {
        self.flags.push(flag.to_owned());
        self
    }

    /// The C compiler the simulator's build uses (default: `$CC`, else `clang` when one runs, as the SDK's
    /// compiler is a clang, else `cc`).
    pub fn compiler(&mut self, compiler: impl AsRef<Path>) -> &mut Self {
        self.compiler = Some(compiler.as_ref().to_path_buf());
        self
    }

    /// Keeps intermediate files in `dir` (default: a temporary directory removed after the build).
    pub fn work_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.work_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Keeps the simulator's compiled runtime in `dir`, for later builds with the same compiler and tasklet
    /// settings to link instead of compiling it again, which is most of a small kernel's build. Default:
    /// `$UPMEM_SIM_RUNTIME_CACHE` when set and not empty; else, in a build script (`upmem::build::kernel`), a
    /// directory in `$OUT_DIR`; else none, and every build compiles the runtime.
    pub fn runtime_cache(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.runtime_cache = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The chip the kernel is built for (default v1A), as the SDK compiler's `-mcpu=`: it bounds `NR_TASKLETS`
    /// (24 on v1A, 16 on v1B) and the program's size, and the sources see its macro (`__dpu_v1A__` or
    /// `__dpu_v1B__`).
    pub fn chip(&mut self, chip: ChipVersion) -> &mut Self {
        self.chip = chip;
        self
    }

    /// Prints `cargo:rerun-if-changed` for every source, object and library and `cargo:rerun-if-env-changed=CC`
    /// (for build.rs).
    pub fn cargo_metadata(&mut self, enabled: bool) -> &mut Self {
        self.cargo_metadata = enabled;
        self
    }

    /// The C sources.
    pub fn sources(&self) -> &[PathBuf] {
        &self.sources
    }

    /// The DPU objects to link.
    pub fn objects(&self) -> &[PathBuf] {
        &self.objects
    }

    /// The static libraries of DPU objects to link from.
    pub fn libraries(&self) -> &[PathBuf] {
        &self.libraries
    }

    /// The preprocessor macros, in the order defined: name and value.
    pub fn defines(&self) -> &[(String, Option<String>)] {
        &self.defines
    }

    /// The include directories.
    pub fn include_dirs(&self) -> &[PathBuf] {
        &self.include_dirs
    }

    /// The compiler flags.
    pub fn flags(&self) -> &[String] {
        &self.flags
    }

    /// The C compiler given with [`KernelBuilder::compiler`], if any.
    pub fn given_compiler(&self) -> Option<&Path> {
        self.compiler.as_deref()
    }

    /// The directory given with [`KernelBuilder::work_dir`], if any.
    pub fn given_work_dir(&self) -> Option<&Path> {
        self.work_dir.as_deref()
    }

    /// The directory given with [`KernelBuilder::runtime_cache`], if any.
    pub fn given_runtime_cache(&self) -> Option<&Path> {
        self.runtime_cache.as_deref()
    }

    /// Whether the build prints `cargo:` lines ([`KernelBuilder::cargo_metadata`]).
    pub fn prints_cargo_metadata(&self) -> bool {
        self.cargo_metadata
    }

    /// The chip the kernel is built for.
    pub fn target_chip(&self) -> ChipVersion {
        self.chip
    }

    /// Whether `name` is defined.
    pub fn is_defined(&self, name: &str) -> bool {
        self.defines.iter().any(|(defined, _)| defined == name)
    }

    /// `NR_TASKLETS` as the kernel's code sees it: its last definition, else the DPU compiler's default 1.
    pub fn nr_tasklets_value(&self) -> String {
        self.defines
            .iter()
            .rev()
            .find(|(name, _)| name == "NR_TASKLETS")
            .map_or_else(|| "1".to_owned(), |(_, value)| value.clone().unwrap_or_else(|| "1".to_owned()))
    }

    /// The same kernel as arguments of the UPMEM SDK's own `dpu-upmem-dpurte-clang` (defines, include
    /// directories, flags and sources, and the chip as `-mcpu=`, which the SDK's wrapper's own `-mcpu=` before
    /// them yields to; no `-o`), to build it for real DPUs as well. Objects and libraries are the simulator's own
    /// and are not among them.
    pub fn sdk_arguments(&self) -> Vec<OsString> {
        let chip = OsString::from(format!("-mcpu={}", self.chip.name()));
        let defines = self.defines.iter().map(|(name, value)| Self::define_argument(name, value.as_deref()));
        let includes = self.include_dirs.iter().flat_map(|dir| [OsString::from("-I"), dir.into()]);
        let flags = self.flags.iter().map(OsString::from);
        let sources = self.sources.iter().map(OsString::from);
        std::iter::once(chip).chain(defines).chain(includes).chain(flags).chain(sources).collect()
    }

    /// A define as a C compiler's argument: `-DNAME` or `-DNAME=VALUE`.
    pub fn define_argument(name: &str, value: Option<&str>) -> OsString {
        match value {
            Some(value) => format!("-D{name}={value}").into(),
            None => format!("-D{name}").into(),
        }
    }
}
