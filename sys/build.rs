//! Build script of upmem-sys. It links nothing: `LibDpu::new` opens libdpu at run time, so no
//! `rustc-link-lib` is emitted despite `links = "dpu"`. Without the `bindgen` feature it does nothing else: the
//! checked-in `src/bindings.rs` is used. With it, it finds an SDK (see the crate docs for the order), regenerates
//! the bindings from its headers into `OUT_DIR/bindings.rs` and sets `cfg(upmem_sys_bindgen)` so that `lib.rs`
//! includes them.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(upmem_sys_bindgen)");
    println!("cargo::rerun-if-changed=build.rs");
    #[cfg(feature = "bindgen")]
    regenerate::run();
}

#[cfg(feature = "bindgen")]
#[path = "bindgen_config.rs"]
// Only the SDK's bindings are regenerated here; the simulator's extensions stay the checked-in file.
#[allow(dead_code)]
mod bindgen_config;

/// The `bindgen` feature: SDK detection and regeneration.
#[cfg(feature = "bindgen")]
mod regenerate {
    use std::ffi::{OsStr, OsString};
    use std::path::{Path, PathBuf};
    use std::process::{self, Command};
    use std::{env, fs};

    use crate::bindgen_config;

    /// Where the SDK's headers are installed by the .deb packages.
    const USR_INCLUDE_DPU: &str = "/usr/include/dpu";

    /// Where pkg-config finds `dpu.pc` (SDK tarballs and .deb packages put it in share/, not lib/).
    const SHARE_PKGCONFIG: &str = "share/pkgconfig";

    pub fn run() {
        println!("cargo::rerun-if-changed=bindgen_config.rs");
        if env_var("UPMEM_SYS_NO_SDK").is_some_and(|value| !value.is_empty() && value != "0") {
            return;
        }
        let (include_dirs, origin) = match find_sdk() {
            Some(found) => found,
            None => {
                let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set"));
                let fallback = manifest_dir.join("../fallback_sim/sdk/include/dpu");
                if !fallback.join("dpu.h").is_file() {
                    println!(
                        "cargo::warning=upmem-sys: no UPMEM SDK found and no simulator headers at {}: using the \
                         checked-in bindings. Set UPMEM_HOME to the SDK's install directory to regenerate them.",
                        fallback.display()
                    );
                    return;
                }
                println!(
                    "cargo::warning=upmem-sys: no UPMEM SDK found (tried $UPMEM_SYS_INCLUDE_DIR, \
                     $UPMEM_HOME/include/dpu/dpu.h, `pkg-config dpu`, `dpu-pkg-config --cflags dpu`, \
                     {USR_INCLUDE_DPU}/dpu.h): bindings generated from the simulator's headers. Set UPMEM_HOME to \
                     the SDK's install directory to use its headers."
                );
                (vec![fallback], "the simulator's headers".to_owned())
            }
        };
        println!("cargo::rerun-if-env-changed=LIBCLANG_PATH");
        if let Err(error) = clang_sys::load() {
            eprintln!(
                "error: upmem-sys: the `bindgen` feature regenerates the bindings with libclang, which could not \
                 be loaded: {error}\nInstall it (Debian: apt-get install libclang-dev) or set LIBCLANG_PATH; or \
                 build without the `bindgen` feature, or set UPMEM_SYS_NO_SDK=1, to use the checked-in bindings."
            );
            process::exit(1);
        }
        println!("cargo::rerun-if-changed={}", include_dirs[0].display());
        let bindings = match bindgen_config::builder(&include_dirs).generate() {
            Ok(bindings) => bindings.to_string(),
            Err(error) => {
                eprintln!("error: upmem-sys: bindgen failed on the headers of {origin} ({include_dirs:?}): {error}");
                process::exit(1);
            }
        };
        let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set")).join("bindings.rs");
        if let Err(error) = fs::write(&out, bindings) {
            eprintln!("error: upmem-sys: writing {}: {error}", out.display());
            process::exit(1);
        }
        println!("cargo::rustc-cfg=upmem_sys_bindgen");
    }

    /// The include directories of the first SDK found, the one holding `dpu.h` first, and where they come from.
    fn find_sdk() -> Option<(Vec<PathBuf>, String)> {
        if let Some(dir) = env_var("UPMEM_SYS_INCLUDE_DIR").filter(|dir| !dir.is_empty()).map(PathBuf::from) {
            if !dir.join("dpu.h").is_file() {
                eprintln!("error: upmem-sys: UPMEM_SYS_INCLUDE_DIR={} holds no dpu.h", dir.display());
                process::exit(1);
            }
            let origin = format!("UPMEM_SYS_INCLUDE_DIR={}", dir.display());
            return Some((vec![dir], origin));
        }
        let upmem_home = env_var("UPMEM_HOME").filter(|home| !home.is_empty()).map(PathBuf::from);
        if let Some(home) = &upmem_home {
            let dir = home.join("include/dpu");
            if dir.join("dpu.h").is_file() {
                return Some((vec![dir], format!("UPMEM_HOME={}", home.display())));
            }
            println!(
                "cargo::warning=upmem-sys: UPMEM_HOME={} has no include/dpu/dpu.h; looking for the SDK elsewhere",
                home.display()
            );
        }

        let mut pkg_config_path: Vec<PathBuf> =
            env_var("PKG_CONFIG_PATH").map(|path| env::split_paths(&path).collect()).unwrap_or_default();
        pkg_config_path.extend(upmem_home.iter().map(|home| home.join(SHARE_PKGCONFIG)));
        pkg_config_path.push(Path::new("/usr").join(SHARE_PKGCONFIG));
        // pkg-config and dpu-pkg-config are looked up in PATH.
        env_var("PATH");
        let pkg_config = env_var("PKG_CONFIG").filter(|program| !program.is_empty());
        let mut command = Command::new(pkg_config.as_deref().unwrap_or(OsStr::new("pkg-config")));
        if let Ok(path) = env::join_paths(&pkg_config_path) {
            command.env("PKG_CONFIG_PATH", path);
        }
        // No `--define-variable=prefix=$UPMEM_HOME`: an UPMEM_HOME holding the headers was taken above, and one that
        // does not would only hide the prefix of a dpu.pc that does.
        command.args(["--cflags-only-I", "dpu"]);
        if let Some(dirs) = include_dirs_of(command) {
            return Some((dirs, "`pkg-config dpu`".to_owned()));
        }

        let mut command = Command::new("dpu-pkg-config");
        command.args(["--cflags", "dpu"]);
        if let Some(dirs) = include_dirs_of(command) {
            return Some((dirs, "`dpu-pkg-config --cflags dpu`".to_owned()));
        }

        let usr = PathBuf::from(USR_INCLUDE_DPU);
        usr.join("dpu.h").is_file().then(|| (vec![usr], USR_INCLUDE_DPU.to_owned()))
    }

    /// The `-I` directories printed by a successful `command`, the one holding `dpu.h` (directly or in `dpu/`)
    /// first; `None` when the command cannot run, fails, or names no directory holding `dpu.h`.
    fn include_dirs_of(mut command: Command) -> Option<Vec<PathBuf>> {
        let output = command.output().ok().filter(|output| output.status.success())?;
        let flags = String::from_utf8(output.stdout).ok()?;
        let mut dirs: Vec<PathBuf> =
            flags.split_whitespace().filter_map(|flag| flag.strip_prefix("-I")).map(PathBuf::from).collect();
        let dpu_dir = dirs.iter().find_map(|dir| {
            [dir.clone(), dir.join("dpu")].into_iter().find(|candidate| candidate.join("dpu.h").is_file())
        })?;
        dirs.retain(|dir| *dir != dpu_dir);
        dirs.insert(0, dpu_dir);
        Some(dirs)
    }

    /// Reads an environment variable, telling cargo to rerun this script when it changes.
    fn env_var(name: &str) -> Option<OsString> {
        println!("cargo::rerun-if-env-changed={name}");
        env::var_os(name)
    }
}
