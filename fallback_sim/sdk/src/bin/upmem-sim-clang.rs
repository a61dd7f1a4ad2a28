//! `upmem-sim-clang`: the `clang` that `fallback_sim/upmem_env.sh` puts on `PATH` (a link of that name to this
//! program), as the SDK's environment puts its own DPU-capable clang there, because some makefiles call
//! `clang --target=dpu-upmem-dpurte` directly.
//!
//! With `--target=dpu-upmem-dpurte` (or `-target dpu-upmem-dpurte`) it is `dpu-upmem-dpurte-clang`, found beside
//! this program, given the other arguments; as the SDK's clang, it builds for a v1A DPU unless `-mcpu=` or
//! `-march=` says otherwise (unlike `dpu-upmem-dpurte-clang`, it reads no `$DPU_ARCH_VERSION`). Any other command
//! line goes, untouched, to the host's clang: the next `clang` on `PATH` after this one (never this program
//! again, under whatever name or link).

use std::env;
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The SDK's DPU target triple.
const DPU_TARGET: &str = "dpu-upmem-dpurte";
/// The drop-in DPU compiler this program hands DPU builds to, in its own directory.
const DPU_COMPILER: &str = "dpu-upmem-dpurte-clang";
/// The name it is run by, and the host compiler it stands in front of.
const CLANG: &str = "clang";

fn main() -> ExitCode {
    let arguments: Vec<OsString> = env::args_os().skip(1).collect();
    let error = match dpu_arguments(&arguments) {
        Some(dpu_arguments) => run_dpu_compiler(dpu_arguments),
        None => run_host_clang(arguments),
    };
    eprintln!("upmem-sim clang: {error}");
    ExitCode::FAILURE
}

/// The arguments for `dpu-upmem-dpurte-clang` when `arguments` build for the DPU target (the last target option
/// names it, as the last one counts for clang): the others, with the SDK clang's default chip first unless they
/// name one.
fn dpu_arguments(arguments: &[OsString]) -> Option<Vec<OsString>> {
    let mut target = None;
    let mut rest = Vec::with_capacity(arguments.len() + 1);
    let mut arguments = arguments.iter();
    while let Some(argument) = arguments.next() {
        if argument == "-target" {
            // A `-target` without its value is the host clang's to report.
            target = Some(arguments.next()?.clone());
        } else if let Some(value) = argument.to_str().and_then(|argument| argument.strip_prefix("--target=")) {
            target = Some(value.into());
        } else {
            rest.push(argument.clone());
        }
    }
    if target? != DPU_TARGET {
        return None;
    }
    let names_chip = rest
        .iter()
        .filter_map(|argument| argument.to_str())
        .any(|argument| argument.starts_with("-mcpu=") || argument.starts_with("-march="));
    if !names_chip {
        rest.insert(0, "-mcpu=v1A".into());
    }
    Some(rest)
}

/// Runs `dpu-upmem-dpurte-clang`, from this program's own directory, in place of this process; returns why it
/// could not.
fn run_dpu_compiler(arguments: Vec<OsString>) -> String {
    let compiler = match env::current_exe() {
        Ok(this) => this.with_file_name(DPU_COMPILER),
        Err(error) => return format!("cannot find this program's directory, where {DPU_COMPILER} is: {error}"),
    };
    let error = Command::new(&compiler).args(arguments).exec();
    format!("running {}: {error}", compiler.display())
}

/// Runs the host's clang with `arguments` in place of this process; returns why it could not.
fn run_host_clang(arguments: Vec<OsString>) -> String {
    let Some(clang) = host_clang() else {
        return format!(
            "no other {CLANG} on PATH to pass this command line to (this one, upmem-sim's, builds only \
             --target={DPU_TARGET})"
        );
    };
    let error = Command::new(&clang).args(arguments).exec();
    format!("running {}: {error}", clang.display())
}

/// The first `clang` on `PATH` after this program's own entry that is not this program (whichever link leads
/// to it), so that two of them on `PATH` hand over in turn instead of to each other.
fn host_clang() -> Option<PathBuf> {
    let this = env::current_exe().and_then(fs::canonicalize).ok()?;
    let is_this = |path: &Path| fs::canonicalize(path).is_ok_and(|path| path == this);
    let candidates: Vec<PathBuf> = env::split_paths(&env::var_os("PATH")?).map(|dir| dir.join(CLANG)).collect();
    let after_this = candidates.iter().position(|path| is_this(path)).map_or(0, |index| index + 1);
    candidates.into_iter().skip(after_this).find(|path| is_executable(path) && !is_this(path))
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dpu_arguments_of(arguments: &[&str]) -> Option<Vec<String>> {
        let arguments: Vec<OsString> = arguments.iter().map(OsString::from).collect();
        dpu_arguments(&arguments)
            .map(|dpu| dpu.into_iter().map(|argument| argument.into_string().expect("UTF-8")).collect())
    }

    #[test]
    fn the_last_target_decides_and_the_chip_defaults_to_v1a() {
        assert_eq!(
            dpu_arguments_of(&["--target=dpu-upmem-dpurte", "-O2", "k.c"]).unwrap(),
            ["-mcpu=v1A", "-O2", "k.c"]
        );
        assert_eq!(
            dpu_arguments_of(&["-target", "dpu-upmem-dpurte", "-march=v1B", "k.c"]).unwrap(),
            ["-march=v1B", "k.c"]
        );
        assert!(dpu_arguments_of(&["--target=x86_64-linux-gnu", "--target=dpu-upmem-dpurte", "k.c"]).is_some());
        assert_eq!(dpu_arguments_of(&["--target=dpu-upmem-dpurte", "--target=x86_64-linux-gnu", "k.c"]), None);
        assert_eq!(dpu_arguments_of(&["-O2", "k.c"]), None);
        assert_eq!(dpu_arguments_of(&["k.c", "-target"]), None);
    }
}
