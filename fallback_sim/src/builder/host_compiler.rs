//! The host C compiler that builds simulated kernels: which one it is, how it turns a kernel source into an
//! object, and the warning options that keep a kernel's `-Werror` build as the SDK's clang 12 has it.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{run, BuildError};

/// Warnings that clang 13 and later give under `-Wall`, `-Wextra` or by default and that the SDK's clang 12 does
/// not have: a kernel that builds with `-Werror` for a DPU builds here too, these left warnings.
/// `-Wunused-but-set-variable` (`-Wall`), `-Wunused-but-set-parameter` and `-Wnull-pointer-subtraction`
/// (`-Wextra`) are clang 13's; `-Wbitwise-instead-of-logical` (`-Wall`, through `-Wbool-operation`) clang 14's;
/// `-Warray-parameter` (`-Wall`) and `-Wdeprecated-non-prototype` (default) clang 15's;
/// `-Wsingle-bit-bitfield-constant-conversion` (default) clang 16's. A clang that does not know one is not given
/// it ([`HostCompiler::detect`] asks).
const CLANG_WARNINGS_AFTER_THE_SDK: [&str; 7] = [
    "unused-but-set-variable",
    "unused-but-set-parameter",
    "null-pointer-subtraction",
    "bitwise-instead-of-logical",
    "array-parameter",
    "deprecated-non-prototype",
    "single-bit-bitfield-constant-conversion",
];

/// Warnings of clang 12 that later clangs make errors by default (`-Wimplicit-function-declaration`,
/// `-Wimplicit-int` and `-Wint-conversion` in clang 15, `-Wincompatible-function-pointer-types` in clang 16): they
/// are warnings again unless the kernel's own flags make them errors, as they would with the SDK's compiler.
const CLANG_ERRORS_AFTER_THE_SDK: [&str; 4] =
    ["implicit-function-declaration", "implicit-int", "int-conversion", "incompatible-function-pointer-types"];

/// What gcc warns about by default or under `-Wall` and `-Wextra` where the SDK's clang 12 is silent, turned off,
/// so that a kernel that builds with `-Werror` for a DPU also builds with gcc. Most are gcc's own (no clang has a
/// warning of that name: gcc 12's set, compared with the options clang 14 knows); `-Wparentheses` (`a & b - 1`)
/// and `-Wunused-value` (a discarded value in a macro) are gcc's broader forms of clang's;
/// `-Wunused-but-set-variable`/`-parameter` came to clang only with 13; `-Wimplicit-fallthrough`, `-Wtype-limits`
/// and `-Wcast-function-type` are in gcc's `-Wextra`, not clang 12's. gcc ignores `-Wno-` options it does not
/// know, so older and newer gccs take the list as it is (gcc 13's `-Wenum-int-mismatch`, gcc 14's
/// `-Walloc-size` and `-Wcalloc-transposed-args` among them).
const GCC_WARNINGS_THE_SDK_LACKS: [&str; 37] = [
    "parentheses",
    "unused-value",
    "unused-but-set-variable",
    "unused-but-set-parameter",
    "maybe-uninitialized",
    "clobbered",
    "bool-compare",
    "array-compare",
    "array-parameter",
    "vla-parameter",
    "array-bounds",
    "zero-length-bounds",
    "restrict",
    "dangling-pointer",
    "use-after-free",
    "mismatched-dealloc",
    "memset-elt-size",
    "multistatement-macros",
    "nonnull-compare",
    "missing-attributes",
    "missing-parameter-type",
    "old-style-declaration",
    "override-init-side-effects",
    "format-overflow",
    "format-truncation",
    "stringop-overflow",
    "stringop-overread",
    "stringop-truncation",
    "aggressive-loop-optimizations",
    "switch-unreachable",
    "packed-not-aligned",
    "implicit-fallthrough",
    "type-limits",
    "cast-function-type",
    "enum-int-mismatch",
    "alloc-size",
    "calloc-transposed-args",
];

/// How clang marks the function definitions of a C99 `inline` definition (no `extern`, no `static`) in the IR of
/// an optimised translation unit: bodies it may inline, never emitted.
const INLINE_DEFINITION_LINKAGE: &str = "define available_externally ";
/// What they become: still inlinable, and emitted (a weak definition, so one external definition elsewhere wins)
/// wherever a call is left after optimisation.
const EMITTED_INLINE_LINKAGE: &str = "define linkonce_odr ";

/// Which family the host C compiler that built a simulated kernel is of ([`crate::Program::host_compiler`]). The
/// simulator counts the DPU instructions of the host's code, so the family shapes a kernel's modelled cycles and
/// IRAM estimate: the SDK's compiler is a clang, and gcc's x86-64 code for the same source counts more
/// instructions. Its instrumentation cannot be told that the block hook preserves every register
/// (`dpusim/coverage_hook.h`), so a kernel spills values around every block, and its code extends narrow values
/// apart from their loads: 1% to 18% more per multiply-add in pimgnn's SpMM kernels, up to 34% in its SDDMM
/// kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompilerFamily {
    /// A clang, as the SDK's compiler is.
    Clang,
    /// gcc, or another compiler that does not say it is a clang.
    Gcc,
}

impl CompilerFamily {
    /// The family's name, as builds record it.
    pub fn name(self) -> &'static str {
        match self {
            CompilerFamily::Clang => "clang",
            CompilerFamily::Gcc => "gcc",
        }
    }

    /// The family of `name` (as [`CompilerFamily::name`] gives it).
    pub fn from_name(name: &str) -> Option<CompilerFamily> {
        [CompilerFamily::Clang, CompilerFamily::Gcc].into_iter().find(|family| family.name() == name)
    }
}

/// The host C compiler, as a kernel build uses it.
#[derive(Clone, Debug)]
pub(super) struct HostCompiler {
    command: PathBuf,
    /// What `--version` printed, if it ran.
    version: Option<String>,
    family: CompilerFamily,
    /// The names of [`CLANG_WARNINGS_AFTER_THE_SDK`] and [`CLANG_ERRORS_AFTER_THE_SDK`] this clang knows.
    known_clang_warnings: Vec<&'static str>,
}

impl HostCompiler {
    /// The compiler `chosen`, else `clang` when one runs (the SDK's compiler is a clang; a `clang` on `PATH` may
    /// be the `clang` of `upmem_env.sh`, which runs only when a host clang follows it), else `cc`. Asks it what it
    /// is (`--version`; `cc` may be either family) and, for a clang, which of the warnings newer than the SDK's
    /// compiler it knows.
    pub(super) fn detect(chosen: Option<PathBuf>) -> HostCompiler {
        let version = |command: &Path| {
            let output = Command::new(command).arg("--version").stdin(Stdio::null()).output().ok()?;
            output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
        };
        let (command, version) = match chosen {
            Some(command) => {
                let version = version(&command);
                (command, version)
            }
            None => match version(Path::new("clang")) {
                Some(version) => (PathBuf::from("clang"), Some(version)),
                None => (PathBuf::from("cc"), version(Path::new("cc"))),
            },
        };
        let is_clang = version.as_ref().is_some_and(|version| version.contains("clang"));
        let family = if is_clang { CompilerFamily::Clang } else { CompilerFamily::Gcc };
        let mut compiler = HostCompiler { command, version, family, known_clang_warnings: Vec::new() };
        if is_clang {
            let names = CLANG_WARNINGS_AFTER_THE_SDK.iter().chain(&CLANG_ERRORS_AFTER_THE_SDK).copied();
            compiler.known_clang_warnings = compiler.known_warnings(names.collect());
        }
        compiler
    }

    /// A command running this compiler.
    pub(super) fn command(&self) -> Command {
        Command::new(&self.command)
    }

    /// The command and what its `--version` printed: which compiler this is, as far as its objects go.
    pub(super) fn identity(&self) -> (&Path, Option<&str>) {
        (&self.command, self.version.as_deref())
    }

    /// Its family.
    pub(super) fn family(&self) -> CompilerFamily {
        self.family
    }

    /// Whether it is a clang (as the SDK's compiler is).
    pub(super) fn is_clang(&self) -> bool {
        self.family == CompilerFamily::Clang
    }

    /// The options that follow a kernel's own flags so that warnings the SDK's clang 12 does not give never fail
    /// the build, and errors it did not make stay warnings unless `user_flags` ask otherwise.
    pub(super) fn sdk_warning_options(&self, user_flags: &[String]) -> Vec<OsString> {
        match self.family {
            CompilerFamily::Gcc => {
                GCC_WARNINGS_THE_SDK_LACKS.iter().map(|name| format!("-Wno-{name}").into()).collect()
            }
            CompilerFamily::Clang => {
                let made_errors = |name: &str| {
                    user_flags.iter().any(|flag| {
                        flag == "-Werror" || flag == "-pedantic-errors" || flag.strip_prefix("-Werror=") == Some(name)
                    })
                };
                self.known_clang_warnings
                    .iter()
                    .filter(|name| !CLANG_ERRORS_AFTER_THE_SDK.contains(name) || !made_errors(name))
                    .map(|name| format!("-Wno-error={name}").into())
                    .collect()
            }
        }
    }

    /// Compiles the kernel source `source` with `args` into `object`; `scratch` holds intermediate files.
    ///
    /// With clang, C99 `inline` definitions without an external definition in their translation unit link as
    /// they do with the SDK's compiler. That one inlines them at `-O2` where the host's compiler may leave a call
    /// (their inlining heuristics differ), which would find no definition. So the source is compiled in two
    /// steps: to LLVM IR, unoptimised, where such a definition is an `available_externally` function; then, with
    /// it made `linkonce_odr`, to the object. Calls the optimiser inlines give the same code as before; a call
    /// left gets the translation unit's inline definition as a weak definition, which an external definition
    /// elsewhere overrides, so programs that provide one keep their meaning (C99 6.7.4 leaves unspecified which
    /// of the two a call uses). Unoptimised builds emit no inline definitions, and leave the calls unresolved as
    /// the SDK's compiler does. (`-fgnu89-inline` would instead make every plain `inline` definition external,
    /// which breaks headers that define one for several files; gcc has no equivalent of this, and its builds
    /// link only the calls it inlines.)
    pub(super) fn compile_kernel_source(
        &self,
        args: &[OsString],
        source: &Path,
        object: &Path,
        scratch: &Path,
    ) -> Result<(), BuildError> {
        let step = format!("compiling {}", source.display());
        if !self.is_clang() {
            let mut compile = self.command();
            compile.args(args).arg("-c").arg(source).arg("-o").arg(object);
            return run(&step, &mut compile, "a C compiler (set CC)").map(drop);
        }
        let ir = scratch.join(format!("{}.ll", object.file_name().unwrap_or(source.as_os_str()).to_string_lossy()));
        let mut front_end = self.command();
        front_end.args(args).args(["-S", "-emit-llvm", "-Xclang", "-disable-llvm-passes"]);
        front_end.arg(source).arg("-o").arg(&ir);
        run(&step, &mut front_end, "a C compiler (set CC)")?;
        let text = fs::read_to_string(&ir).map_err(|error| BuildError::io(&ir, error))?;
        fs::write(&ir, emit_inline_definitions(&text)).map_err(|error| BuildError::io(&ir, error))?;
        let mut back_end = self.command();
        // The same arguments, so that the optimiser and the instrumentation run as in a one-step compile; those
        // of the front end alone (-D, -I, -std=, ...) mean nothing for IR.
        back_end.args(args).arg("-Wno-unused-command-line-argument").args(["-c", "-x", "ir"]);
        back_end.arg(&ir).arg("-o").arg(object);
        run(&step, &mut back_end, "a C compiler (set CC)").map(drop)
    }

    /// Which of `names` this clang knows as warning options. One question with all of them: a clang that does not
    /// know some names each in an "unknown warning option '-W...'" error (clang's wording since 3.x); should it
    /// word them otherwise, each name is asked about on its own.
    fn known_warnings(&self, names: Vec<&'static str>) -> Vec<&'static str> {
        let ask = |names: &[&str]| {
            let mut probe = self.command();
            probe.arg("-Werror=unknown-warning-option");
            probe.args(names.iter().map(|name| format!("-Wno-error={name}")));
            probe.args(["-fsyntax-only", "-x", "c", "/dev/null"]).stdout(Stdio::null());
            probe
                .output()
                .ok()
                .map(|output| (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned()))
        };
        match ask(&names) {
            Some((true, _)) => names,
            Some((false, errors)) => {
                let unknown = unknown_warning_options(&errors);
                if unknown.is_empty() {
                    names.into_iter().filter(|&name| ask(&[name]).is_some_and(|(known, _)| known)).collect()
                } else {
                    names.into_iter().filter(|name| !unknown.contains(name)).collect()
                }
            }
            None => Vec::new(),
        }
    }
}

/// The warning names of clang's "unknown warning option '-W...'" errors in `errors` (the option as clang quotes
/// it, `-Werror=NAME` for an unknown `-Wno-error=NAME`; a suggestion that follows is not taken).
fn unknown_warning_options(errors: &str) -> Vec<&str> {
    const UNKNOWN: &str = "unknown warning option '";
    errors
        .lines()
        .filter_map(|line| {
            let quoted = &line[line.find(UNKNOWN)? + UNKNOWN.len()..];
            let option = &quoted[..quoted.find('\'')?];
            ["-Wno-error=", "-Werror=", "-Wno-", "-W"].iter().find_map(|prefix| option.strip_prefix(prefix))
        })
        .collect()
}

/// `ir` (LLVM IR text) with every inline definition made a definition emitted where a call to it is left.
fn emit_inline_definitions(ir: &str) -> String {
    let mut emitted = String::with_capacity(ir.len());
    for line in ir.split_inclusive('\n') {
        match line.strip_prefix(INLINE_DEFINITION_LINKAGE) {
            Some(rest) => {
                emitted.push_str(EMITTED_INLINE_LINKAGE);
                emitted.push_str(rest);
            }
            None => emitted.push_str(line),
        }
    }
    emitted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inline_definitions_change_linkage() {
        let ir = "define dso_local i32 @main() #0 {\n\
                  declare i32 @external(i32)\n\
                  define available_externally dso_local i32 @square(i32 noundef %0) #1 {\n\
                  define internal i32 @local_function() {\n\
                  ; define available_externally in a comment\n";
        let expected = "define dso_local i32 @main() #0 {\n\
                        declare i32 @external(i32)\n\
                        define linkonce_odr dso_local i32 @square(i32 noundef %0) #1 {\n\
                        define internal i32 @local_function() {\n\
                        ; define available_externally in a comment\n";
        assert_eq!(emit_inline_definitions(ir), expected);
    }

    #[test]
    fn unknown_warning_options_are_read_from_clangs_errors() {
        let errors = "error: unknown warning option '-Werror=array-parameter'; did you mean '-Werror=array-bounds'? \
                      [-Werror,-Wunknown-warning-option]\n\
                      error: unknown warning option '-Wno-error=single-bit-bitfield-constant-conversion' \
                      [-Werror,-Wunknown-warning-option]\n\
                      error: something else entirely\n";
        assert_eq!(unknown_warning_options(errors), ["array-parameter", "single-bit-bitfield-constant-conversion"]);
    }
}
