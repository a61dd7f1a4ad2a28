//! `dpu-upmem-dpurte-clang`: builds DPU C sources into a simulated DPU binary, taking the UPMEM DPU compiler's
//! usual flags, so that unchanged UPMEM makefiles build for the simulator.
//!
//! Accepted: `-DNAME[=VALUE]` / `-D NAME`, `-UNAME`, `-I DIR` / `-IDIR`, `-isystem DIR`, `-include FILE`, `-O*`,
//! `-g*`, `-W*`, `-w`, `-std=*`, `-pedantic[-errors]`, `-f*`, `-pg` (defines `DPU_PROFILING`), `-o FILE`
//! (default `a.out`), `-mcpu=v1A|v1B` and C sources. The chip is that of `-mcpu=`, else of `$DPU_ARCH_VERSION`,
//! else v1B when the driver's first rank reports a chip id above 8, else v1A, as the SDK's wrapper chooses it: it
//! bounds NR_TASKLETS (24 on v1A, 16 on v1B) and defines `__dpu_v1A__` or `__dpu_v1B__`. Ignored, as they mean
//! nothing for a simulated DPU binary: other `-m*` options, `--target=*`, `-flto[=*]` / `-fno-lto` (the kernel's objects are combined and
//! their symbols hidden, which link-time optimisation would undo), and the dependency-file options `-M`, `-MM`,
//! `-MD`, `-MMD`, `-MP`, `-MF FILE`, `-MT TARGET`, `-MQ TARGET`. `--help` and `--version` print what they say.
//!
//! What the build checks find (a `__host` or MRAM variable laid out differently on a DPU, a program too large for
//! a DPU's IRAM) is printed to standard error as a compiler prints a warning, `file:line: warning: ...`; the
//! build still succeeds, as the program runs on the simulator.

use std::path::PathBuf;
use std::process::ExitCode;

use upmem_sim::{ChipVersion, KernelBuilder};

const USAGE: &str = "usage: dpu-upmem-dpurte-clang [-DNAME[=VALUE]] [-IDIR] [-O2] [-g] [-W...] [-o OUTPUT] SOURCE.c...
Builds UPMEM DPU C sources into a program for the upmem-sim simulator (not for DPU hardware).";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("dpu-upmem-dpurte-clang: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(arguments: Vec<String>) -> Result<(), String> {
    let mut builder = KernelBuilder::new();
    builder.chip(ChipVersion::compiler_target().map_err(|error| format!("${}: {error}", ChipVersion::ARCH_ENV_VAR))?);
    let mut output = PathBuf::from("a.out");
    let mut has_source = false;
    let mut arguments = arguments.into_iter();
    while let Some(argument) = arguments.next() {
        let mut value_of = |flag: &str, inline: &str| -> Result<String, String> {
            if inline.is_empty() {
                arguments.next().ok_or_else(|| format!("{flag} needs a value"))
            } else {
                Ok(inline.to_owned())
            }
        };
        match argument.as_str() {
            "--help" | "-h" => {
                println!("{USAGE}");
                return Ok(());
            }
            "--version" => {
                println!(
                    "dpu-upmem-dpurte-clang (upmem-sim {}) for the UPMEM DPU simulator",
                    env!("CARGO_PKG_VERSION")
                );
                return Ok(());
            }
            "-o" => output = PathBuf::from(value_of("-o", "")?),
            "-pg" => {
                builder.define("DPU_PROFILING", None);
            }
            "-c" => return Err("-c is not supported: give every source in one command".into()),
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
            _ if argument.starts_with("-mcpu=") => {
                builder.chip(argument["-mcpu=".len()..].parse().map_err(|error| format!("{argument}: {error}"))?);
            }
            _ if argument.starts_with("-m") || argument.starts_with("--target=") => {}
            _ if argument.starts_with('-') => return Err(format!("unknown option {argument}\n{USAGE}")),
            _ => {
                builder.source(&argument);
                has_source = true;
            }
        }
    }
    if !has_source {
        return Err(format!("no source files\n{USAGE}"));
    }
    let built = builder.build_kernel(&output).map_err(|error| error.to_string())?;
    for warning in &built.warnings {
        match warning.location() {
            Some(location) => eprintln!("{location}: warning: {}", warning.message()),
            None => eprintln!("dpu-upmem-dpurte-clang: warning: {}", warning.message()),
        }
    }
    Ok(())
}
