//! `dpu-upmem-dpurte-clang`: builds DPU C sources into a simulated DPU binary, or with `-c` into DPU object files
//! that a later command links, taking the UPMEM DPU compiler's usual flags, so that unchanged UPMEM makefiles
//! build for the simulator.
//!
//! Accepted: `-DNAME[=VALUE]` / `-D NAME`, `-UNAME`, `-I DIR` / `-IDIR`, `-isystem DIR`, `-include FILE`, `-O*`,
//! `-g*`, `-W*`, `-w`, `-std=*` / `--std=*` / `--std *`, `-pedantic[-errors]`, `-f*`, `-pg` (defines
//! `DPU_PROFILING`), `-o FILE` (default `a.out`), `-mcpu=v1A|v1B` and `-march=` (which wins, as with the SDK's
//! clang), and the inputs: C sources, DPU object files (`.o`) and static libraries of them (`.a`, or `-lNAME`
//! found as `libNAME.a` in the `-L DIR` directories, in any order, as the SDK's linker takes them). `-c` compiles
//! each source into a DPU object (`-o FILE` for one source, else the source's name with `.o`, in the current
//! directory), which only a link of this command accepts: host objects, and objects the SDK's compiler made for
//! DPU hardware, are refused with what they are. As with the SDK's compiler, a link takes `NR_TASKLETS` and the
//! stacks from its own `-D` options (1 tasklet when it has none), whatever its objects were compiled with; a
//! difference is a warning.
//!
//! The chip is that of `-march=`, else `-mcpu=`, else of `$DPU_ARCH_VERSION`, else v1B when the driver's first rank
//! reports a chip id above 8, else v1A, as the SDK's wrapper chooses it: it bounds NR_TASKLETS (24 on v1A, 16 on
//! v1B) and defines `__dpu_v1A__` or `__dpu_v1B__`. Ignored, as they mean nothing for a simulated DPU binary: other
//! `-m*` options, `--target=*`, `-flto[=*]` / `-fno-lto` (the kernel's objects are combined and their symbols
//! hidden, which link-time optimisation would undo), and the dependency-file options `-M`, `-MM`, `-MD`, `-MMD`,
//! `-MP`, `-MF FILE`, `-MT TARGET`, `-MQ TARGET`. `--help` and `--version` print what they say.
//!
//! The simulator's runtime, which every link compiles with the program's tasklet settings, is compiled once per
//! compiler and settings and kept, as a compiler's cache is: in `$UPMEM_SIM_RUNTIME_CACHE`, else in
//! `$XDG_CACHE_HOME/upmem-sim/runtime` (`~/.cache/upmem-sim/runtime`); `UPMEM_SIM_RUNTIME_CACHE=` (empty) turns
//! it off.
//!
//! What the build checks find (a `__host` or MRAM variable laid out differently on a DPU, a program too large for
//! a DPU's IRAM) is printed to standard error as a compiler prints a warning, `file:line: warning: ...`; the
//! build still succeeds, as the program runs on the simulator.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use upmem_sim::{ChipVersion, KernelBuilder, SimulatedBuild as _};

const USAGE: &str = "usage: dpu-upmem-dpurte-clang [-DNAME[=VALUE]] [-IDIR] [-O2] [-g] [-W...] [-c] [-o OUTPUT] \
                     [-LDIR] [-lNAME] SOURCE.c|OBJECT.o|LIBRARY.a...
Builds UPMEM DPU C sources into a program (or, with -c, DPU objects) for the upmem-sim simulator, not for DPU \
                     hardware.";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("dpu-upmem-dpurte-clang: {message}");
            ExitCode::FAILURE
        }
    }
}

/// What a command line asks for.
#[derive(Default)]
struct Invocation {
    builder: KernelBuilder,
    output: Option<PathBuf>,
    compile_only: bool,
    sources: Vec<PathBuf>,
    objects: Vec<PathBuf>,
    libraries: Vec<PathBuf>,
    library_names: Vec<String>,
    library_dirs: Vec<PathBuf>,
    mcpu: Option<ChipVersion>,
    march: Option<ChipVersion>,
}

fn run(arguments: Vec<String>) -> Result<(), String> {
    let Some(mut invocation) = parse(arguments)? else { return Ok(()) };
    let chip = match invocation.march.or(invocation.mcpu) {
        Some(chip) => chip,
        None => ChipVersion::compiler_target().map_err(|error| format!("${}: {error}", ChipVersion::ARCH_ENV_VAR))?,
    };
    invocation.builder.chip(chip);
    if let Some(cache) = user_runtime_cache() {
        invocation.builder.runtime_cache(cache);
    }
    if invocation.compile_only {
        compile_objects(&invocation)
    } else {
        link(invocation)
    }
}

/// The runtime cache in the user's cache directory, unless `$UPMEM_SIM_RUNTIME_CACHE` says where it is (or, empty,
/// that there is none), which the build reads itself.
fn user_runtime_cache() -> Option<PathBuf> {
    if std::env::var_os("UPMEM_SIM_RUNTIME_CACHE").is_some() {
        return None;
    }
    let absolute = |variable: &str| std::env::var_os(variable).map(PathBuf::from).filter(|dir| dir.is_absolute());
    let cache_home = absolute("XDG_CACHE_HOME").or_else(|| Some(absolute("HOME")?.join(".cache")))?;
    Some(cache_home.join("upmem-sim").join("runtime"))
}

/// Reads the command line; `None` when it only asked for `--help` or `--version`, which are printed.
fn parse(arguments: Vec<String>) -> Result<Option<Invocation>, String> {
    let mut invocation = Invocation::default();
    let builder = &mut invocation.builder;
    let mut arguments = arguments.into_iter();
    while let Some(argument) = arguments.next() {
        let mut value_of = |flag: &str, inline: &str| -> Result<String, String> {
            if inline.is_empty() {
                arguments.next().ok_or_else(|| format!("{flag} needs a value"))
            } else {
                Ok(inline.to_owned())
            }
        };
        let chip = |flag: &str, name: &str| name.parse::<ChipVersion>().map_err(|error| format!("{flag}: {error}"));
        match argument.as_str() {
            "--help" | "-h" => {
                println!("{USAGE}");
                return Ok(None);
            }
            "--version" => {
                println!(
                    "dpu-upmem-dpurte-clang (upmem-sim {}) for the UPMEM DPU simulator",
                    env!("CARGO_PKG_VERSION")
                );
                return Ok(None);
            }
            "-o" => invocation.output = Some(PathBuf::from(value_of("-o", "")?)),
            "-c" => invocation.compile_only = true,
            "-pg" => {
                builder.define("DPU_PROFILING", None);
            }
            "-MF" | "-MT" | "-MQ" => {
                value_of(&argument, "")?;
            }
            "-M" | "-MM" | "-MD" | "-MMD" | "-MP" => {}
            "-isystem" => {
                builder.include(value_of("-isystem", "")?);
            }
            "-include" => {
                let file = value_of("-include", "")?;
                builder.flag("-include").flag(&file);
            }
            "--std" => {
                let standard = value_of("--std", "")?;
                builder.flag(&format!("-std={standard}"));
            }
            _ if argument.starts_with("--std=") => {
                builder.flag(&format!("-std={}", &argument["--std=".len()..]));
            }
            _ if argument.starts_with("-flto") || argument == "-fno-lto" => {}
            _ if argument.starts_with("-D") => {
                let definition = value_of("-D", &argument[2..])?;
                match definition.split_once('=') {
                    Some((name, value)) => builder.define(name, Some(value)),
                    None => builder.define(&definition, None),
                };
            }
            _ if argument.starts_with("-U")
                || argument.starts_with("-O")
                || argument.starts_with("-g")
                || argument.starts_with("-W")
                || argument == "-w"
                || argument == "-pedantic"
                || argument == "-pedantic-errors"
                || argument.starts_with("-std=")
                || argument.starts_with("-f") =>
            {
                builder.flag(&argument);
            }
            _ if argument.starts_with("-I") => {
                builder.include(value_of("-I", &argument[2..])?);
            }
            _ if argument.starts_with("-L") => {
                invocation.library_dirs.push(PathBuf::from(value_of("-L", &argument[2..])?))
            }
            _ if argument.starts_with("-l") => invocation.library_names.push(value_of("-l", &argument[2..])?),
            _ if argument.starts_with("-mcpu=") => {
                invocation.mcpu = Some(chip(&argument, &argument["-mcpu=".len()..])?)
            }
            _ if argument.starts_with("-march=") => {
                invocation.march = Some(chip(&argument, &argument["-march=".len()..])?);
            }
            _ if argument.starts_with("-m") || argument.starts_with("--target=") => {}
            _ if argument.starts_with('-') => return Err(format!("unknown option {argument}\n{USAGE}")),
            _ => match Path::new(&argument).extension().and_then(|extension| extension.to_str()) {
                Some("o") => invocation.objects.push(argument.into()),
                Some("a") => invocation.libraries.push(argument.into()),
                Some("so") => return Err(format!("{argument}: a shared library; DPU programs link static libraries")),
                _ => invocation.sources.push(argument.into()),
            },
        }
    }
    Ok(Some(invocation))
}

/// `-c`: each source into a DPU object file.
fn compile_objects(invocation: &Invocation) -> Result<(), String> {
    if invocation.sources.is_empty() {
        return Err(format!("no source files\n{USAGE}"));
    }
    if invocation.output.is_some() && invocation.sources.len() > 1 {
        return Err("cannot specify -o when generating multiple output files".into());
    }
    for input in invocation.objects.iter().chain(&invocation.libraries) {
        eprintln!("dpu-upmem-dpurte-clang: warning: {}: linker input unused because -c is given", input.display());
    }
    for source in &invocation.sources {
        let object = match &invocation.output {
            Some(output) => output.clone(),
            None => PathBuf::from(source.file_name().unwrap_or(source.as_os_str())).with_extension("o"),
        };
        invocation.builder.compile_object(source, &object).map_err(|error| error.to_string())?;
    }
    Ok(())
}

/// Sources, objects and libraries into a simulated DPU binary.
fn link(mut invocation: Invocation) -> Result<(), String> {
    let libraries = find_libraries(&invocation.library_names, &invocation.library_dirs)?;
    let builder = &mut invocation.builder;
    let inputs = invocation.sources.len() + invocation.objects.len() + invocation.libraries.len() + libraries.len();
    if inputs == 0 {
        return Err(format!("no source files\n{USAGE}"));
    }
    for source in &invocation.sources {
        builder.source(source);
    }
    for object in &invocation.objects {
        builder.object(object);
    }
    for library in invocation.libraries.iter().chain(&libraries) {
        builder.library(library);
    }
    let output = invocation.output.unwrap_or_else(|| PathBuf::from("a.out"));
    let built = builder.build_kernel(&output).map_err(|error| error.to_string())?;
    for warning in &built.warnings {
        match warning.location() {
            Some(location) => eprintln!("{location}: warning: {}", warning.message()),
            None => eprintln!("dpu-upmem-dpurte-clang: warning: {}", warning.message()),
        }
    }
    Ok(())
}

/// The static library of each `-lNAME` (`-l:FILE` names the file itself), searched in the `-L` directories in
/// their order, as a linker does.
fn find_libraries(names: &[String], dirs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    names
        .iter()
        .map(|name| {
            let file = match name.strip_prefix(':') {
                Some(file) => file.to_owned(),
                None => format!("lib{name}.a"),
            };
            if let Some(found) = dirs.iter().map(|dir| dir.join(&file)).find(|path| path.is_file()) {
                return Ok(found);
            }
            let searched: Vec<String> = dirs.iter().map(|dir| dir.display().to_string()).collect();
            let shared = dirs.iter().map(|dir| dir.join(format!("lib{name}.so"))).find(|path| path.exists());
            Err(match shared {
                Some(shared) => {
                    format!(
                        "-l{name}: only {} was found, a shared library; DPU programs link static libraries",
                        shared.display()
                    )
                }
                None if searched.is_empty() => format!("-l{name}: no {file} (no -L directory given to search)"),
                None => format!("-l{name}: no {file} in {}", searched.join(", ")),
            })
        })
        .collect()
}
