//! The drop-in toolchain beyond one-command builds: `dpu-upmem-dpurte-clang -c`, the link of DPU objects and
//! static libraries (and what it refuses, saying why), the warnings a `-Werror` build keeps as the SDK's clang 12
//! has them, and the `clang` of `upmem_env.sh` (`upmem-sim-clang` under that name), which builds
//! `--target=dpu-upmem-dpurte` for the simulator and hands every other command line to the host's clang.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use upmem_sim::Program;

const DPU_COMPILER: &str = env!("CARGO_BIN_EXE_dpu-upmem-dpurte-clang");
const UPMEM_SIM_CLANG: &str = env!("CARGO_BIN_EXE_upmem-sim-clang");

fn kernel(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels").join(format!("{name}.c"))
}

/// Runs `command` in `dir`; its output.
fn run_in(dir: &Path, command: &mut Command) -> Output {
    command
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("running {command:?}: {error}"))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_success(output: &Output, what: &str) {
    assert!(output.status.success(), "{what} failed:\n{}", stderr(output));
}

/// Asserts that `output` is a failure whose standard error contains `message`.
fn assert_refused(output: &Output, message: &str) {
    assert!(!output.status.success(), "succeeded, expected a failure saying {message:?}");
    assert!(stderr(output).contains(message), "expected {message:?} in:\n{}", stderr(output));
}

/// `dpu-upmem-dpurte-clang` with these arguments.
fn dpu_compiler(arguments: &[&str]) -> Command {
    let mut command = Command::new(DPU_COMPILER);
    command.args(arguments);
    command
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap_or_else(|error| panic!("writing {}: {error}", path.display()));
    path
}

const MAIN: &str = "#include <stdint.h>\n#include <defs.h>\n\nuint32_t twice(uint32_t value);\n\n\
                    __host uint32_t result;\n\nint main(void)\n{\n    result = twice(21);\n    return 0;\n}\n";
const TWICE: &str = "#include <stdint.h>\n\nuint32_t twice(uint32_t value)\n{\n    return 2 * value;\n}\n";
const UNUSED: &str = "#include <stdint.h>\n#include <attributes.h>\n\n__host uint32_t unused_member_marker;\n";

/// `ar rcs library members...` in `dir`.
fn archive(dir: &Path, library: &str, members: &[&str]) {
    assert_success(&run_in(dir, Command::new("ar").arg("rcs").arg(library).args(members)), "ar");
}

#[test]
fn objects_compiled_alone_and_static_libraries_link_in_any_order() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(dir, "main.c", MAIN);
    write(dir, "twice.c", TWICE);
    write(dir, "unused.c", UNUSED);
    // Several sources: each SOURCE.o in the current directory, as clang names them; -o names one.
    assert_success(&run_in(dir, &mut dpu_compiler(&["-O2", "--std=c11", "-c", "twice.c", "unused.c"])), "-c");
    assert_success(&run_in(dir, &mut dpu_compiler(&["-O2", "--std", "c11", "-c", "main.c", "-o", "entry.o"])), "-o");
    archive(dir, "libtwice.a", &["twice.o", "unused.o"]);

    let link = |arguments: &[&str]| {
        let output = run_in(dir, &mut dpu_compiler(arguments));
        assert_success(&output, &format!("linking {arguments:?}"));
        Program::from_file(dir.join(arguments.last().unwrap())).expect("a simulated DPU program")
    };
    for program in [
        link(&["entry.o", "-L.", "-ltwice", "-o", "from_object.dpusim"]),
        // The library before what needs it, as the SDK's linker (lld) accepts it.
        link(&["libtwice.a", "main.c", "-o", "from_source.dpusim"]),
    ] {
        assert!(program.symbol("result", 64 << 20).is_some(), "the kernel's own variable");
        assert!(program.symbol("unused_member_marker", 64 << 20).is_none(), "a member nothing needs is not linked");
    }
    // A library's member may hold main.
    archive(dir, "libentry.a", &["entry.o"]);
    link(&["-L", ".", "-lentry", "twice.o", "-o", "main_from_library.dpusim"]);
}

#[test]
fn the_link_refuses_what_is_not_a_dpu_object_saying_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(dir, "main.c", MAIN);
    write(dir, "twice.c", TWICE);
    assert_success(&run_in(dir, Command::new("cc").args(["-c", "twice.c", "-o", "host.o"])), "cc -c");
    assert_refused(
        &run_in(dir, &mut dpu_compiler(&["main.c", "host.o"])),
        "host.o: a host object file, not a DPU object: compile its source with `dpu-upmem-dpurte-clang -c`",
    );
    archive(dir, "libmixed.a", &["host.o"]);
    assert_refused(&run_in(dir, &mut dpu_compiler(&["main.c", "-L.", "-lmixed"])), "libmixed.a(host.o): a host object");
    // The header of an object of the SDK's compiler: ELF, 32-bit, little-endian, relocatable, machine 245 (DPU).
    let mut hardware = b"\x7fELF\x01\x01\x01\0\0\0\0\0\0\0\0\0\x01\0".to_vec();
    hardware.extend(245u16.to_le_bytes());
    hardware.resize(52, 0);
    fs::write(dir.join("sdk.o"), hardware).unwrap();
    assert_refused(
        &run_in(dir, &mut dpu_compiler(&["main.c", "sdk.o"])),
        "sdk.o: a DPU object compiled by the UPMEM SDK's compiler, for DPU hardware",
    );
    assert_refused(&run_in(dir, &mut dpu_compiler(&["main.c", "-L.", "-lnone"])), "-lnone: no libnone.a in .");
    fs::write(dir.join("libshared.so"), b"").unwrap();
    assert_refused(&run_in(dir, &mut dpu_compiler(&["main.c", "-L.", "-lshared"])), "a shared library");
    assert_refused(
        &run_in(dir, &mut dpu_compiler(&["-c", "-o", "both.o", "main.c", "twice.c"])),
        "cannot specify -o when generating multiple output files",
    );
}

/// `--std=` reaches the compiler: C11 has no `typeof` keyword, GNU C11 has.
#[test]
fn double_dash_std_is_the_standard_the_kernel_is_compiled_with() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(dir, "typeof.c", "int main(void)\n{\n    typeof(0) zero = 0;\n    return zero;\n}\n");
    assert_success(&run_in(dir, &mut dpu_compiler(&["--std=gnu11", "-c", "typeof.c"])), "--std=gnu11");
    assert!(!run_in(dir, &mut dpu_compiler(&["--std=c11", "-c", "typeof.c"])).status.success(), "--std=c11");
}

/// As with the SDK's compiler, a link runs the tasklets its own command line says (1 without -DNR_TASKLETS),
/// whatever its objects were compiled with, and says so.
#[test]
fn a_link_with_other_settings_than_its_objects_warns() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(dir, "main.c", MAIN);
    write(dir, "twice.c", TWICE);
    assert_success(&run_in(dir, &mut dpu_compiler(&["-DNR_TASKLETS=4", "-c", "twice.c"])), "-c");
    let output = run_in(dir, &mut dpu_compiler(&["main.c", "twice.o", "-o", "program.dpusim"]));
    assert_success(&output, "the link");
    assert!(
        stderr(&output).contains("warning: twice.o was compiled with NR_TASKLETS=4 and is linked with NR_TASKLETS=1"),
        "{}",
        stderr(&output)
    );
    assert_eq!(Program::from_file(dir.join("program.dpusim")).unwrap().nr_tasklets(), 1);
}

/// A kernel that builds with `-Wall -Werror` under the SDK's clang 12 builds with either host compiler: a variable
/// set but never read is a warning of clang 13 and gcc only. A warning clang 12 gives still fails the build.
#[test]
fn werror_fails_on_the_sdk_compilers_warnings_only() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let set_not_read =
        "int main(void)\n{\n    int last = 0;\n    for (int i = 0; i < 3; i++) {\n        last = i;\n    }\n    \
                        return 0;\n}\n";
    write(dir, "set_not_read.c", set_not_read);
    write(dir, "unused.c", "int main(void)\n{\n    int unused;\n    return 0;\n}\n");
    for compiler in ["clang", "gcc"] {
        let build = |source: &str| {
            run_in(dir, dpu_compiler(&["-O2", "-Wall", "-Wextra", "-Werror", "-c", source]).env("CC", compiler))
        };
        assert_success(&build("set_not_read.c"), &format!("{compiler}: -Werror over -Wunused-but-set-variable"));
        assert_refused(&build("unused.c"), "unused-variable");
    }
}

/// The `clang` of `upmem_env.sh`: a directory holding a link of that name to `upmem-sim-clang`.
fn upmem_env_clang(dir: &Path) -> PathBuf {
    let bin = dir.join("upmem-env-bin");
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(UPMEM_SIM_CLANG, bin.join("clang")).unwrap();
    bin
}

/// `dirs`, then the test's own `PATH`.
fn path_with(dirs: &[&Path]) -> OsString {
    let original = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(dirs.iter().map(|dir| dir.to_path_buf()).chain(std::env::split_paths(&original))).unwrap()
}

/// `clang ARGUMENTS` as a makefile runs it, with `path` as `PATH`; a hang (clangs handing the command line to
/// each other for ever) fails the test.
fn clang(dir: &Path, path: &OsString, arguments: &[&str]) -> Output {
    let mut child = Command::new("clang")
        .args(arguments)
        .env("PATH", path)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting clang");
    let start = Instant::now();
    while child.try_wait().expect("waiting for clang").is_none() {
        if start.elapsed() > Duration::from_secs(300) {
            child.kill().expect("killing clang");
            panic!("clang {arguments:?} did not finish");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("clang's output")
}

#[test]
fn clang_with_the_dpu_target_builds_for_the_simulator() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let path = path_with(&[&upmem_env_clang(dir)]);
    let empty = kernel("empty");
    let empty = empty.to_str().unwrap();
    for target in [&["--target=dpu-upmem-dpurte"][..], &["-target", "dpu-upmem-dpurte"]] {
        let mut arguments = target.to_vec();
        arguments.extend(["-O2", "-DNR_TASKLETS=4", "-o", "empty.dpusim", empty]);
        let output = clang(dir, &path, &arguments);
        assert_success(&output, &format!("clang {target:?}"));
        assert_eq!(Program::from_file(dir.join("empty.dpusim")).unwrap().nr_tasklets(), 4);
    }
    // The SDK's clang builds for v1A unless -mcpu or -march says otherwise, whatever $DPU_ARCH_VERSION says
    // (which its dpu-upmem-dpurte-clang reads): 24 tasklets fit a v1A DPU, not a v1B one.
    let tasklets_24 = ["--target=dpu-upmem-dpurte", "-DNR_TASKLETS=24", "-DSTACK_SIZE_DEFAULT=256", "-o", "k", empty];
    let on_v1b_machine = |command: &mut Command| run_in(dir, command.env("DPU_ARCH_VERSION", "v1B"));
    let mut through_clang = Command::new("clang");
    through_clang.args(tasklets_24).env("PATH", &path);
    assert_success(&on_v1b_machine(&mut through_clang), "clang --target=dpu-upmem-dpurte on a v1B machine");
    let refused = "uses 24 tasklets, but a v1B DPU has 16 hardware threads";
    assert_refused(&on_v1b_machine(&mut dpu_compiler(&tasklets_24[1..])), refused);
    let mut with_march = Command::new("clang");
    with_march.args(tasklets_24).arg("-march=v1B").env("PATH", &path);
    assert_refused(&run_in(dir, &mut with_march), refused);
}

#[test]
fn clang_hands_other_command_lines_to_the_host_clang_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let path = path_with(&[&upmem_env_clang(dir)]);
    let host_version = run_in(dir, Command::new("clang").arg("--version"));
    assert_success(&host_version, "the host's clang --version");
    let version = clang(dir, &path, &["--version"]);
    assert_eq!(String::from_utf8_lossy(&version.stdout), String::from_utf8_lossy(&host_version.stdout));

    write(dir, "hello.c", "#include <stdio.h>\nint main(void) { printf(\"hello %d\\n\", 42); return 0; }\n");
    assert_success(&clang(dir, &path, &["-O2", "-Wall", "-Werror", "hello.c", "-o", "hello"]), "a host build");
    let hello = run_in(dir, &mut Command::new(dir.join("hello")));
    assert_eq!(String::from_utf8_lossy(&hello.stdout), "hello 42\n");
    // Another target is the host clang's too: it names the triple it does not know.
    let other = clang(dir, &path, &["--target=dpu-upmem-other", "-c", "hello.c"]);
    assert!(!other.status.success() && stderr(&other).contains("dpu-upmem-other"), "{}", stderr(&other));
}

/// Two of them on `PATH` (the upmem_env.sh of two checkouts) hand the command line on in turn, never back.
#[test]
fn clangs_of_two_environments_hand_over_in_turn() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let copy = dir.join("other-checkout");
    fs::create_dir_all(&copy).unwrap();
    fs::copy(UPMEM_SIM_CLANG, copy.join("clang")).unwrap();
    let path = path_with(&[&copy, &upmem_env_clang(dir)]);
    assert_success(&clang(dir, &path, &["--version"]), "clang --version through two of them");
}

#[test]
fn without_a_host_clang_after_it_clang_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let alone = std::env::join_paths([upmem_env_clang(dir)]).unwrap();
    let output = clang(dir, &alone, &["--version"]);
    assert_refused(&output, "no other clang on PATH to pass this command line to");
}

#[test]
fn the_runtime_is_cached_in_the_users_cache_directory_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let build = |cache_variable: Option<&str>, cache_home: &Path, output: &str| {
        let mut command = dpu_compiler(&["-DNR_TASKLETS=2", "-o", output]);
        command.arg(kernel("empty")).env("XDG_CACHE_HOME", cache_home);
        match cache_variable {
            Some(value) => command.env("UPMEM_SIM_RUNTIME_CACHE", value),
            None => command.env_remove("UPMEM_SIM_RUNTIME_CACHE"),
        };
        assert_success(&run_in(dir.path(), &mut command), "building the empty kernel");
    };
    let entries = |cache: &Path| -> Vec<String> {
        let mut names: Vec<String> = match fs::read_dir(cache) {
            Ok(entries) => entries.map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned()).collect(),
            Err(_) => Vec::new(),
        };
        names.sort();
        names
    };

    let user_cache = dir.path().join("user-cache");
    build(None, &user_cache, "default.dpusim");
    let cached = entries(&user_cache.join("upmem-sim/runtime"));
    assert!(cached.len() == 2 && cached[0].starts_with("dpurt-") && cached[1].starts_with("harness-"), "{cached:?}");

    let other_cache = dir.path().join("other-cache");
    let other_home = dir.path().join("other-home");
    build(Some(other_cache.to_str().unwrap()), &other_home, "given.dpusim");
    assert_eq!(entries(&other_cache), cached);
    build(Some(""), &other_home, "uncached.dpusim");
    assert!(!other_home.exists(), "a build with UPMEM_SIM_RUNTIME_CACHE empty made a cache");
    for output in ["default.dpusim", "given.dpusim", "uncached.dpusim"] {
        Program::from_file(dir.path().join(output)).expect("a built kernel");
    }
}
