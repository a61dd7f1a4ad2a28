//! The DPU kernels of `dpu/`, as the build script built them for the simulator, would work on a DPU as they do
//! there: each is estimated within a DPU's IRAM, and none has a `__host` or MRAM variable laid out differently on a
//! DPU (the build checks of `upmem_sim::SimulatedBuild`, recorded in each binary).

#![cfg(feature = "simulator")]

use std::path::Path;
use std::process::Command;

use upmem::build::KernelBuilder;
use upmem_sim::{ChipVersion, Program, SimulatedBuild as _};

#[test]
fn every_kernel_fits_a_dpus_iram_and_shares_dpu_layouts_with_the_host() {
    let reduce = pimgnn::kernel("reduce");
    let binary =
        reduce.simulator_binary(ChipVersion::V1A).expect("the build script builds the kernels for the simulator");
    let dir = binary.parent().expect("the kernels' directory");
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(dir).expect("listing the kernels") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_none_or(|extension| extension != "dpusim") {
            continue;
        }
        let program = Program::from_file(&path).expect("reading a kernel");
        let estimate = program.iram_estimate().expect("the build recorded an estimate");
        // `name.v1B.dpusim` is the v1B build (upmem::Kernel::file_name).
        let chip = if path.to_string_lossy().contains(".v1B.") { ChipVersion::V1B } else { ChipVersion::V1A };
        assert!(estimate <= chip.iram_instructions(), "{} is estimated at {estimate} DPU instructions", path.display());
        assert_eq!(program.layout_differences(), [] as [String; 0], "{}", path.display());
        checked.push(path);
    }
    // reduce, and each SpMM family for each value type, for both chips.
    assert!(checked.len() >= 18, "only {checked:?}");
}

/// The IRAM estimate counts the host compiler's instructions, so the same source estimates larger from one
/// compiler than from another (gcc's kernels spill around the block hook's calls, which clang is told preserve
/// every register: `dpusim/coverage_hook.h`). The build script uses
/// whichever the machine has; each SpMM kernel fits a v1B DPU (the smaller IRAM) as gcc and as clang build it.
/// A compiler that is missing skips its builds, unless `CI` is set (`.ci/run` installs both).
#[test]
fn every_spmm_kernel_fits_as_gcc_and_as_clang_build_it() {
    let in_ci = std::env::var("CI").is_ok_and(|value| !value.is_empty() && value != "false" && value != "0");
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::thread::scope(|scope| {
        for compiler in ["gcc", "clang"] {
            let runs = Command::new(compiler).arg("--version").output().is_ok_and(|out| out.status.success());
            if !runs {
                assert!(!in_ci, "{compiler} does not run (CI is set, so a missing compiler is a failure)");
                eprintln!("skipping the builds with {compiler}: it does not run");
                continue;
            }
            let dir = dir.path();
            scope.spawn(move || {
                for family in ["csr", "coo"] {
                    for ty in ["f32", "i32", "i16", "i8"] {
                        let name = format!("spmm_{family}_{ty}_{compiler}");
                        let estimate = v1b_iram_estimate(family, ty, compiler, &dir.join(&name));
                        let limit = ChipVersion::V1B.iram_instructions();
                        assert!(estimate <= limit, "{name} is estimated at {estimate} DPU instructions, over {limit}");
                    }
                }
            });
        }
    });
}

/// The IRAM estimate of SpMM kernel `family` for value type `ty`, built by `compiler` for a v1B DPU into `output`.
fn v1b_iram_estimate(family: &str, ty: &str, compiler: &str, output: &Path) -> u32 {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut builder = KernelBuilder::new();
    builder.source(format!("{root}/dpu/spmm_{family}.c")).include(format!("{root}/dpu")).compiler(compiler);
    builder.chip(ChipVersion::V1B).nr_tasklets(ChipVersion::V1B.hardware_threads());
    builder.flag("-O2").define(&format!("SPMM_TYPE_{}", ty.to_uppercase()), None);
    let binary = builder.build(output).unwrap_or_else(|e| panic!("building {}: {e}", output.display()));
    Program::from_file(&binary).expect("reading a kernel").iram_estimate().expect("the build recorded an estimate")
}
