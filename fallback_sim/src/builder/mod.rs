//! Builds simulated DPU binaries from unchanged DPU C sources with the host C compiler.
//!
//! 1. The kernel sources are compiled against the SDK-named runtime headers, with the DPU compiler's defaults
//!    (`NR_TASKLETS=1`, `STACK_SIZE_DEFAULT=1024`) unless the caller defines them, and the runtime's C files
//!    with the same tasklet and stack settings (or taken from the runtime cache, see [`runtime_objects`]).
//!    The kernel sources (not the runtime) are instrumented with `-fsanitize-coverage=trace-pc`, which counts
//!    the instructions each tasklet executes (see [`crate::block_costs`]), and include
//!    `dpusim/coverage_hook.h` first, which tells clang that the hook preserves every register. A kernel source compiled alone
//!    ([`SimulatedBuild::compile_object`], the compiler's `-c`) is a DPU object: the same object, marked
//!    ([`dpu_object`]), which a later build links, as it links the members of static libraries of them that
//!    the program needs.
//! 2. Kernel objects (compiled, given, and taken from libraries) and runtime objects are combined into one
//!    relocatable object, `dpu_kernel.o`, with all code in one `.text`; `main` becomes the tasklets' entry point
//!    and every other global of the kernel is made local, so kernel names never bind to the C library's or the
//!    harness's (and never the reverse).
//! 3. `objdump` disassembles that `.text`; the cost of each basic block becomes a table in a generated C file
//!    compiled with the harness.
//! 4. `dpu_kernel.o` is linked with the worker harness and the table by the linker script `dpusim.ld`, which
//!    puts the kernel's WRAM sections in the 64 KiB window at 0x00100000 and its MRAM sections at the DPU's
//!    MRAM window 0x08000000. The executable's own code and the C library live above 0x10000000.
//! 5. The build checks ([`crate::build_checks`]) read the binary's DWARF (kernel sources are compiled with `-g`)
//!    for the DPU layout of `__host` and MRAM variables, and estimate the program's IRAM; what they find is a
//!    warning and is recorded in the binary's `.dpusim.checks` section, for strict mode at load.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::{env, fs, thread};

use object::{Object, ObjectSymbol};

use crate::block_costs::{self, BlockCost};
use crate::build_checks::{self, BuildWarning, IramEstimate, KernelBuild, KernelUnit};
use upmem_types::KernelBuilder;

use crate::layout::{ABI_VERSION, DEFAULT_MRAM_SIZE, DEFAULT_WRAM_SIZE};
use crate::program::Program;
use crate::runtime;
use crate::SimError;
use dpu_object::{LinkedObject, ObjectInfo};
use host_compiler::HostCompiler;
use runtime_objects::{GroupObjects, ObjectGroup};

mod dpu_object;
mod host_compiler;
mod runtime_objects;

pub use dpu_object::ObjectProblem;
pub use host_compiler::CompilerFamily;

/// Where the executable's code starts: above the DPU windows and the tasklet stacks.
const TEXT_SEGMENT: &str = "0x10000000";
/// Symbols of the kernel object that stay global: what the harness calls or reads.
const KERNEL_EXPORTS: [&str; 4] =
    ["__dpusim_kernel_main", "__dpusim_kernel_info", "__dpusim_stdout_capacity", KERNEL_TEXT_SYMBOL];
/// The start of the kernel object's `.text`, where the block-cost table's offsets start.
const KERNEL_TEXT_SYMBOL: &str = "__dpusim_kernel_text";
/// Basic-block instrumentation of the kernel sources (see [`crate::block_costs`]).
const INSTRUMENTATION_FLAG: &str = "-fsanitize-coverage=trace-pc";
/// The block hook finds a block by its call's return address, so it must always be called: at -O2 GCC turns the
/// hook of a function's last, empty block into a tail jump, whose "return address" is then the caller's, which
/// is no block's (an unrelated table entry, or a memory fault).
const HOOK_NEVER_TAIL_CALLED: &str = "-fno-optimize-sibling-calls";
/// How the block hook is called: preserving every register, where the compiler can be told (see
/// `runtime/include/dpusim/coverage_hook.h`).
const HOOK_PRESERVES_REGISTERS: [&str; 2] = ["-include", "dpusim/coverage_hook.h"];
/// Clang by default leaves out the blocks whose coverage others imply, a loop's body among them; counting needs
/// every block. GCC instruments every block.
const CLANG_INSTRUMENT_EVERY_BLOCK: &str = "-fsanitize-coverage=no-prune";
/// Flags every simulated kernel is compiled with: fixed addresses, DPU-like floating point (no FMA
/// contraction), no fortified libc calls, and no warnings for the 32-bit MRAM address casts DPU code makes.
const KERNEL_FLAGS: [&str; 7] = [
    "-fno-pie",
    "-fno-pic",
    "-fno-common",
    "-ffp-contract=off",
    "-fno-stack-protector",
    "-U_FORTIFY_SOURCE",
    "-D__DPUSIM__",
];
const CAST_WARNINGS_OFF: [&str; 2] = ["-Wno-pointer-to-int-cast", "-Wno-int-to-pointer-cast"];
/// A DPU has no vector unit, and its compiler does not unroll loops (PrIM's int32 add loop runs at about six
/// instructions an element: load, add, store, index update, compare-and-branch, address): a host vector
/// instruction would count as one of several DPU operations, and an unrolled loop would count less overhead
/// than the DPU executes. Understood by GCC and Clang alike.
const DPU_LIKE_CODE: [&str; 3] = ["-fno-tree-vectorize", "-fno-tree-slp-vectorize", "-fno-unroll-loops"];
/// Debug information, which the build checks read the kernel's types and functions from. It changes no
/// generated code (and the SDK's compiler adds it too unless told `-g0`).
const DEBUG_INFO: &str = "-g";
/// Every `memcpy` of a kernel calls the runtime's, the SDK's forward copy. The DPU's compiler inlines a
/// constant-size copy only when it takes at most four stores (`MaxStoresPerMemcpy = 4` in UPMEM's LLVM DPU
/// backend, DPUTargetLowering.cpp) and otherwise calls `memcpy` or its word loop `__memcpy_wram_4align`, which
/// copies the same bytes forward; the host compiler inlines constant-size copies of hundreds of bytes as loads
/// followed by stores, which is memmove, so an overlapping copy (an LZ back-reference of constant length) would
/// give the host's bytes, not the DPU's.
const DPU_MEMCPY: &str = "-fno-builtin-memcpy";
/// The runtime's routines charge the instructions of the SDK routine they stand for, path by path; a loop of
/// theirs that the host compiler turned into a call of memcpy, memmove or memset (clang's loop-idiom
/// recognition does) would call the DPU libc's, which charges its own instructions on top (a partial word of
/// `mram_write_unaligned`, 20 to 35 more). Calls the runtime makes on purpose, as the SDK's routines do
/// (buddy_realloc's memcpy), are unaffected.
const RUNTIME_LOOPS_STAY_LOOPS: [&str; 3] = ["-fno-builtin-memcpy", "-fno-builtin-memmove", "-fno-builtin-memset"];
/// How the worker harness and the block-cost table are compiled (with the runtime's include directory).
const HARNESS_FLAGS: [&str; 4] = ["-O2", "-std=gnu11", "-fno-pie", "-Wall"];

/// Why a kernel could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No source files, objects or libraries were given.
    #[error("no DPU source files, objects or libraries given")]
    NoSources,
    /// A tool the build needs is missing.
    #[error("`{tool}` was not found: {hint}")]
    ToolNotFound {
        /// The command.
        tool: String,
        /// How to get it.
        hint: &'static str,
    },
    /// A compiler, linker or objcopy run failed.
    #[error("{step} failed ({status}):\n  $ {command}\n{output}")]
    CommandFailed {
        /// What was being done.
        step: String,
        /// The command line.
        command: String,
        /// Its exit status.
        status: String,
        /// What it printed.
        output: String,
    },
    /// The sources define no `main`.
    #[error("the DPU program has no main() (sources: {0})")]
    NoMain(String),
    /// An object or library given to the link is not one of DPU objects the simulator compiled.
    #[error("{input}: {problem}")]
    NotADpuObject {
        /// The object file, or the library and member (`libx.a(member.o)`).
        input: String,
        /// What it is instead.
        problem: ObjectProblem,
    },
    /// Reading or writing a file failed.
    // The system's error is in the message, so it is not also reported as the source (a chain would print it
    // twice).
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// The binary was built but is not a valid DPU program (for example, its WRAM overflows).
    #[error(transparent)]
    Invalid(#[from] SimError),
}

impl BuildError {
    pub(crate) fn io(path: &Path, error: std::io::Error) -> Self {
        BuildError::Io { path: path.to_path_buf(), error }
    }
}

/// A kernel built by [`SimulatedBuild::build_kernel`]: its binary and what the build checks found.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BuiltKernel {
    /// The simulated DPU binary.
    pub path: PathBuf,
    /// The program's estimated size in DPU instructions.
    pub iram: IramEstimate,
    /// What would not work on a DPU as it does on the simulator (empty when the checks found nothing).
    pub warnings: Vec<BuildWarning>,
}

/// Builds a [`KernelBuilder`]'s kernel for the simulator: compiles its DPU C sources with the host C compiler into
/// a simulated DPU binary, from a build script or a command line.
///
/// Each build checks the kernel for what works on the simulator but not on a DPU: `__host` and MRAM variables
/// whose types have another layout on a DPU (a pointer or a `size_t` is 4 bytes there), and a program too
/// large for a DPU's IRAM ([`IramEstimate`]). What it finds is a [`BuildWarning`]: [`SimulatedBuild::build`]
/// prints them (`cargo:warning` lines with [`KernelBuilder::cargo_metadata`], else the `log` crate's warnings),
/// [`SimulatedBuild::build_kernel`] returns them, and strict mode ([`SimConfig::strict`](crate::SimConfig::strict))
/// refuses such a program when it is loaded.
///
/// ```no_run
/// use upmem_sim::SimulatedBuild as _;
///
/// let binary = upmem_sim::KernelBuilder::new()
///     .source("dpu/kernel.c")
///     .define("NR_TASKLETS", Some("16"))
///     .flag("-O2")
///     .build("target/kernel.dpusim")?;
/// # Ok::<(), upmem_sim::BuildError>(())
/// ```
pub trait SimulatedBuild {
    /// Compiles `source` alone into the DPU object file `output`, as `dpu-upmem-dpurte-clang -c` does: with this
    /// builder's defines, include directories, flags and chip (its sources, objects and libraries play no part),
    /// into a host object of the simulated kernel code marked as a DPU object. A later build links it
    /// ([`KernelBuilder::object`]), or a static library of such objects ([`KernelBuilder::library`]). Returns
    /// `output`.
    fn compile_object(&self, source: impl AsRef<Path>, output: impl AsRef<Path>) -> Result<PathBuf, BuildError>;

    /// Builds the binary at `output` and checks that it is a loadable DPU program; prints the build checks'
    /// warnings. Returns `output`.
    fn build(&self, output: impl AsRef<Path>) -> Result<PathBuf, BuildError>;

    /// Builds the binary at `output` from the sources, objects and libraries, and checks that it is a loadable
    /// DPU program; returns it with what the build checks found.
    fn build_kernel(&self, output: impl AsRef<Path>) -> Result<BuiltKernel, BuildError>;
}

impl SimulatedBuild for KernelBuilder {
    fn compile_object(&self, source: impl AsRef<Path>, output: impl AsRef<Path>) -> Result<PathBuf, BuildError> {
        let (source, output) = (source.as_ref(), output.as_ref());
        if self.prints_cargo_metadata() {
            println!("cargo:rerun-if-env-changed=CC");
            println!("cargo:rerun-if-changed={}", source.display());
        }
        let work = intermediate_dir(self)?;
        let runtime_dir = work.path.join("runtime");
        runtime::extract(&runtime_dir)?;
        let compiler = HostCompiler::detect(chosen_compiler(self));
        let (_, args) = kernel_arguments(self, &runtime_dir.join("include"), &compiler);
        create_parent_dir(output)?;
        compiler.compile_kernel_source(&args, source, output, &work.path)?;
        let info = ObjectInfo {
            abi_version: ABI_VERSION,
            chip: self.target_chip(),
            nr_tasklets: self.nr_tasklets_value(),
            source: file_name(source),
        };
        dpu_object::mark(output, &info, &work.path)?;
        Ok(output.to_path_buf())
    }

    fn build(&self, output: impl AsRef<Path>) -> Result<PathBuf, BuildError> {
        let built = self.build_kernel(output)?;
        for warning in &built.warnings {
            if self.prints_cargo_metadata() {
                println!("cargo:warning={warning}");
            } else {
                log::warn!("{warning}");
            }
        }
        Ok(built.path)
    }

    fn build_kernel(&self, output: impl AsRef<Path>) -> Result<BuiltKernel, BuildError> {
        let output = output.as_ref();
        if self.sources().is_empty() && self.objects().is_empty() && self.libraries().is_empty() {
            return Err(BuildError::NoSources);
        }
        if self.prints_cargo_metadata() {
            println!("cargo:rerun-if-env-changed=CC");
            for input in self.sources().iter().chain(self.objects()).chain(self.libraries()) {
                println!("cargo:rerun-if-changed={}", input.display());
            }
        }
        let work = intermediate_dir(self)?;
        let dir = work.path.as_path();
        let runtime_dir = dir.join("runtime");
        runtime::extract(&runtime_dir)?;
        let include = runtime_dir.join("include");

        let compiler = HostCompiler::detect(chosen_compiler(self));
        let (tasklet_defines, kernel_args) = kernel_arguments(self, &include, &compiler);
        let kernel_jobs: Vec<CompileJob> = self
            .sources()
            .iter()
            .enumerate()
            .map(|(index, source)| CompileJob {
                source: source.clone(),
                object: dir.join(format!("kernel{index}-{}.o", stem(source))),
                args: kernel_args.clone(),
                kernel_source: true,
            })
            .collect();
        let cache = runtime_cache_dir(self);
        let mut runtime_args = tasklet_defines;
        runtime_args.extend(["-O2", "-std=gnu11", "-Wall"].map(OsString::from));
        runtime_args.extend(RUNTIME_LOOPS_STAY_LOOPS.map(OsString::from));
        let runtime = GroupObjects::plan(
            ObjectGroup { name: "dpurt", sources: runtime::sources("src/dpurt/", &[".c"]), args: runtime_args },
            &compiler,
            &runtime_dir,
            dir,
            cache.as_deref(),
        )?;
        let harness_args: Vec<OsString> = HARNESS_FLAGS.map(OsString::from).to_vec();
        let harness = GroupObjects::plan(
            ObjectGroup {
                name: "harness",
                sources: runtime::sources("src/harness/", &[".c", ".S"]),
                args: harness_args.clone(),
            },
            &compiler,
            &runtime_dir,
            dir,
            cache.as_deref(),
        )?;
        let jobs: Vec<&CompileJob> = kernel_jobs.iter().chain(runtime.jobs()).chain(harness.jobs()).collect();
        compile_all(&compiler, &jobs, dir)?;
        let runtime_objects = runtime.publish()?;
        let harness_objects = harness.publish()?;

        let (units, warnings) = kernel_units(self, &kernel_jobs, dir)?;
        let kernel_object = dir.join("dpu_kernel.o");
        let mut combine = compiler.command();
        combine
            // Without a build-id note, which toolchains that add one by default place before .text: the
            // disassembly's addresses are then offsets in .text, as the block-cost table's indices must be.
            .args(["-r", "-nostdlib", "-Wl,--build-id=none"])
            .arg(format!("-Wl,-T,{}", runtime_dir.join("kernel_text.ld").display()))
            .arg("-o")
            .arg(&kernel_object)
            .args(units.iter().map(|unit| &unit.object))
            .args(&runtime_objects);
        run("combining the kernel objects", &mut combine, "a C compiler (set CC)")?;
        check_main(&kernel_object, &units)?;
        let objcopy = env::var_os("OBJCOPY").unwrap_or_else(|| "objcopy".into());
        let mut hide = Command::new(objcopy);
        hide.arg("--redefine-sym=main=__dpusim_kernel_main");
        hide.arg(format!("--add-symbol={KERNEL_TEXT_SYMBOL}=.text:0,global"));
        for export in KERNEL_EXPORTS {
            hide.arg(format!("--keep-global-symbol={export}"));
        }
        hide.arg(&kernel_object);
        run("hiding the kernel's symbols", &mut hide, "objcopy from GNU binutils (set OBJCOPY)")?;
        let disassembly = disassemble(&kernel_object)?;
        let sites = block_costs::from_disassembly(&disassembly);
        let mut costs_args = harness_args;
        costs_args.extend([OsString::from("-I"), include.into()]);
        let costs_object = compile_block_costs(&compiler, &sites, dir, &costs_args)?;

        create_parent_dir(output)?;
        let mut link = compiler.command();
        // `-z now` binds every libc symbol at load: lazy binding would run the dynamic linker's resolver (kilobytes
        // of saved vector registers) on a tasklet's stack at its first call of, say, memcpy, which the stack
        // measurement would blame on the kernel.
        link.args(["-no-pie", "-Wl,-z,now", &format!("-Wl,-Ttext-segment={TEXT_SEGMENT}"), "-T"])
            .arg(runtime_dir.join("dpusim.ld"))
            .args(&harness_objects)
            .arg(&costs_object)
            .arg(&kernel_object)
            .args(["-pthread", "-lm", "-o"])
            .arg(output);
        run("linking the simulated DPU binary", &mut link, "a C compiler (set CC)")?;
        let build = KernelBuild {
            binary: output,
            units: &units,
            sites: &sites,
            disassembly: &disassembly,
            chip: self.target_chip(),
            compiler: compiler.family(),
        };
        let findings = build_checks::check(&build)?;
        record_checks(output, &findings.recorded().to_text(), dir)?;
        let program = Program::from_file(output)?;
        program.check_fits(DEFAULT_WRAM_SIZE, DEFAULT_MRAM_SIZE)?;
        // What the SDK's linker script asserts: NR_TASKLETS within the chip's threads.
        program.check_threads(self.target_chip())?;
        let warnings = warnings.into_iter().chain(findings.warnings).collect();
        Ok(BuiltKernel { path: output.to_path_buf(), iram: findings.iram, warnings })
    }
}

/// The runtime cache the builder was given, else `$UPMEM_SIM_RUNTIME_CACHE` when set and not empty.
fn runtime_cache_dir(builder: &KernelBuilder) -> Option<PathBuf> {
    builder
        .given_runtime_cache()
        .map(Path::to_path_buf)
        .or_else(|| env::var_os("UPMEM_SIM_RUNTIME_CACHE").filter(|dir| !dir.is_empty()).map(PathBuf::from))
}

/// The compiler the builder was given, else `$CC`.
fn chosen_compiler(builder: &KernelBuilder) -> Option<PathBuf> {
    builder.given_compiler().map(Path::to_path_buf).or_else(|| env::var_os("CC").map(PathBuf::from))
}

/// The directory of a build's intermediate files.
fn intermediate_dir(builder: &KernelBuilder) -> Result<WorkDir, BuildError> {
    let work = match builder.given_work_dir() {
        Some(dir) => WorkDir { path: dir.to_path_buf(), _temporary: None },
        None => {
            let temporary = tempfile::tempdir().map_err(|error| BuildError::io(&env::temp_dir(), error))?;
            WorkDir { path: temporary.path().to_path_buf(), _temporary: Some(temporary) }
        }
    };
    fs::create_dir_all(&work.path).map_err(|error| BuildError::io(&work.path, error))?;
    Ok(work)
}

/// The kernel's own objects (its compiled sources, the DPU objects given, and the library members they need),
/// and a warning for each DPU object compiled with another chip or `NR_TASKLETS` than the program's.
fn kernel_units(
    builder: &KernelBuilder,
    compiled: &[CompileJob],
    dir: &Path,
) -> Result<(Vec<KernelUnit>, Vec<BuildWarning>), BuildError> {
    let mut units: Vec<KernelUnit> = compiled
        .iter()
        .map(|job| KernelUnit { object: job.object.clone(), source_name: file_name(&job.source) })
        .collect();
    let mut linked =
        builder.objects().iter().map(|path| dpu_object::read_object(path)).collect::<Result<Vec<_>, _>>()?;
    let objects: Vec<PathBuf> =
        units.iter().map(|unit| unit.object.clone()).chain(linked.iter().map(|object| object.path.clone())).collect();
    linked.extend(dpu_object::take_library_members(builder.libraries(), &objects, dir)?);
    let warnings = linked.iter().flat_map(|object| setting_differences(builder, object)).collect();
    units.extend(linked.into_iter().map(|object| KernelUnit { object: object.path, source_name: object.info.source }));
    Ok((units, warnings))
}

/// What differs between how `object` was compiled and how the program is linked.
fn setting_differences(builder: &KernelBuilder, object: &LinkedObject) -> Vec<BuildWarning> {
    let differs = |setting: &'static str, compiled: String, linked: String| {
        (compiled != linked).then(|| BuildWarning::ObjectSettingDiffers {
            object: object.name.clone(),
            setting,
            compiled,
            linked,
        })
    };
    [
        differs("NR_TASKLETS", object.info.nr_tasklets.clone(), builder.nr_tasklets_value()),
        differs("-mcpu", object.info.chip.name().to_owned(), builder.target_chip().name().to_owned()),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The tasklet/stack defines (shared with the runtime) and the full argument list for kernel sources.
fn kernel_arguments(
    builder: &KernelBuilder,
    include: &Path,
    compiler: &HostCompiler,
) -> (Vec<OsString>, Vec<OsString>) {
    let mut tasklet_defines: Vec<OsString> = KERNEL_FLAGS.map(OsString::from).to_vec();
    tasklet_defines.push(format!("-D{}", builder.target_chip().target_macro()).into());
    if !builder.is_defined("NR_TASKLETS") {
        tasklet_defines.push("-DNR_TASKLETS=1".into());
    }
    if !builder.is_defined("STACK_SIZE_DEFAULT") {
        tasklet_defines.push("-DSTACK_SIZE_DEFAULT=1024".into());
    }
    for (name, value) in builder.defines() {
        if name == "NR_TASKLETS" || name.starts_with("STACK_SIZE_") {
            tasklet_defines.push(KernelBuilder::define_argument(name, value.as_deref()));
        }
    }
    let mut kernel = tasklet_defines.clone();
    for (name, value) in
        builder.defines().iter().filter(|(name, _)| name != "NR_TASKLETS" && !name.starts_with("STACK_SIZE_"))
    {
        kernel.push(KernelBuilder::define_argument(name, value.as_deref()));
    }
    // The runtime headers are system headers, as the SDK's are to its compiler: `-pedantic` and `-W...`
    // apply to the kernel's code, not to them. `libc/` has the DPU's <errno.h>, <stdint.h>, <stdlib.h> and
    // <string.h>, for kernel sources only (the runtime's own C files use the host's).
    for dir in [include.to_path_buf(), include.join("libc")] {
        kernel.push("-isystem".into());
        kernel.push(dir.into());
    }
    for dir in builder.include_dirs() {
        kernel.push("-I".into());
        kernel.push(dir.into());
    }
    kernel.extend(builder.flags().iter().map(OsString::from));
    kernel.extend(CAST_WARNINGS_OFF.map(OsString::from));
    // After the user's flags, so that they win: the SDK compiler's warnings and errors (see
    // HostCompiler::sdk_warning_options), code shaped as the DPU's compiler shapes it (see DPU_LIKE_CODE),
    // whose instructions the block costs count, and the debug information the build checks read.
    kernel.extend(compiler.sdk_warning_options(builder.flags()));
    kernel.extend(DPU_LIKE_CODE.map(OsString::from));
    kernel.push(DEBUG_INFO.into());
    kernel.push(DPU_MEMCPY.into());
    kernel.push(INSTRUMENTATION_FLAG.into());
    kernel.push(HOOK_NEVER_TAIL_CALLED.into());
    kernel.extend(HOOK_PRESERVES_REGISTERS.map(OsString::from));
    if compiler.is_clang() {
        kernel.push(CLANG_INSTRUMENT_EVERY_BLOCK.into());
    }
    (tasklet_defines, kernel)
}

/// Where a build keeps its intermediate files: the builder's work directory, or a temporary one removed with it.
struct WorkDir {
    path: PathBuf,
    _temporary: Option<tempfile::TempDir>,
}

/// One compiler run of a build.
struct CompileJob {
    source: PathBuf,
    object: PathBuf,
    args: Vec<OsString>,
    /// A kernel source (compiled as [`HostCompiler::compile_kernel_source`] says), not a runtime or harness file.
    kernel_source: bool,
}

impl CompileJob {
    fn run(&self, compiler: &HostCompiler, scratch: &Path) -> Result<(), BuildError> {
        if self.kernel_source {
            return compiler.compile_kernel_source(&self.args, &self.source, &self.object, scratch);
        }
        let mut compile = compiler.command();
        compile.args(&self.args).arg("-c").arg(&self.source).arg("-o").arg(&self.object);
        run(&format!("compiling {}", self.source.display()), &mut compile, "a C compiler (set CC)").map(drop)
    }
}

/// Runs the jobs, as many at a time as the host has cores, each core taking the next job as soon as it is free.
/// After a failure no job starts; the error returned is that of the first failed job in `jobs`' order.
fn compile_all(compiler: &HostCompiler, jobs: &[&CompileJob], scratch: &Path) -> Result<(), BuildError> {
    let workers = thread::available_parallelism().map_or(1, usize::from).min(jobs.len());
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let mut errors: Vec<(usize, BuildError)> = thread::scope(|scope| {
        let worker = || {
            let mut errors = Vec::new();
            while !failed.load(Ordering::Relaxed) {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(index) else { break };
                if let Err(error) = job.run(compiler, scratch) {
                    failed.store(true, Ordering::Relaxed);
                    errors.push((index, error));
                }
            }
            errors
        };
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(worker)).collect();
        handles.into_iter().flat_map(|handle| handle.join().expect("compiler thread panicked")).collect()
    });
    errors.sort_by_key(|(index, _)| *index);
    errors.into_iter().next().map_or(Ok(()), |(_, error)| Err(error))
}

/// Writes the block-cost table of `sites` as C and compiles it with the harness's flags. Returns the table's
/// object.
fn compile_block_costs(
    compiler: &HostCompiler,
    sites: &[BlockCost],
    dir: &Path,
    harness_args: &[OsString],
) -> Result<PathBuf, BuildError> {
    let source = dir.join("block_costs.c");
    let table = block_costs::c_table(sites);
    fs::write(&source, table).map_err(|error| BuildError::io(&source, error))?;
    let object = dir.join("block_costs.o");
    let mut compile = compiler.command();
    compile.args(harness_args).arg("-c").arg(&source).arg("-o").arg(&object);
    run("compiling the block-cost table", &mut compile, "a C compiler (set CC)")?;
    Ok(object)
}

/// Checks that the combined kernel object defines `main`.
fn check_main(kernel_object: &Path, units: &[KernelUnit]) -> Result<(), BuildError> {
    let bytes = fs::read(kernel_object).map_err(|error| BuildError::io(kernel_object, error))?;
    let has_main = object::File::parse(&*bytes)
        .map(|file| file.symbols().any(|symbol| symbol.is_definition() && symbol.name() == Ok("main")))
        .unwrap_or(false);
    if has_main {
        Ok(())
    } else {
        let sources: Vec<&str> = units.iter().map(|unit| unit.source_name.as_str()).collect();
        Err(BuildError::NoMain(sources.join(", ")))
    }
}

fn create_parent_dir(path: &Path) -> Result<(), BuildError> {
    match path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        Some(parent) => fs::create_dir_all(parent).map_err(|error| BuildError::io(parent, error)),
        None => Ok(()),
    }
}

/// `objdump -d -r` of the kernel object's `.text`.
fn disassemble(kernel_object: &Path) -> Result<String, BuildError> {
    let objdump = env::var_os("OBJDUMP").unwrap_or_else(|| "objdump".into());
    let mut disassemble = Command::new(objdump);
    disassemble.args(["-d", "-r", "--no-show-raw-insn", "-j", ".text"]).arg(kernel_object);
    run("disassembling the kernel", &mut disassemble, "objdump from GNU binutils (set OBJDUMP)")
}

/// Adds what the build checks found to the binary, as a section that is not loaded (so no address moves).
fn record_checks(binary: &Path, checks: &str, dir: &Path) -> Result<(), BuildError> {
    let contents = dir.join("build_checks.txt");
    fs::write(&contents, checks).map_err(|error| BuildError::io(&contents, error))?;
    let objcopy = env::var_os("OBJCOPY").unwrap_or_else(|| "objcopy".into());
    let mut add = Command::new(objcopy);
    add.arg(format!("--add-section={}={}", build_checks::SECTION, contents.display()))
        .arg(format!("--set-section-flags={}=readonly", build_checks::SECTION))
        .arg(binary);
    run("recording the build checks", &mut add, "objcopy from GNU binutils (set OBJCOPY)").map(drop)
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned())
}

fn stem(path: &Path) -> String {
    path.file_stem().map_or_else(|| "source".into(), |stem| stem.to_string_lossy().into_owned())
}

/// Runs a build step; returns what it printed on standard output.
fn run(step: &str, command: &mut Command, tool_hint: &'static str) -> Result<String, BuildError> {
    let output = command.output().map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            BuildError::ToolNotFound { tool: command.get_program().to_string_lossy().into_owned(), hint: tool_hint }
        } else {
            BuildError::io(Path::new(command.get_program()), error)
        }
    })?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let printed = String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout);
    let line = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|argument| argument.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    Err(BuildError::CommandFailed {
        step: step.to_owned(),
        command: line,
        status: output.status.to_string(),
        output: printed,
    })
}
