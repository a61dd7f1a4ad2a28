//! The checks a kernel's build makes for what works on the simulator but not on a DPU: `__host` and MRAM
//! variables laid out differently on a DPU, and programs too large for its IRAM. Both are build warnings, are
//! recorded in the binary, and make strict mode refuse the program at load.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{kernel_source, machine_with, read_u32, write_u32};
use upmem_sim::{
    BuildWarning, BuiltKernel, ChipVersion, CompilerFamily, KernelBuilder, LayoutDifference, MemberChange,
    MemberDifference, Program, SimError, SimulatedBuild as _, Topology,
};

/// Builds `tests/kernels/<name>.c` as the tests' kernels are built, returning what the build checks found.
fn build_checked(name: &str, nr_tasklets: u32) -> (BuiltKernel, Arc<Program>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut builder = KernelBuilder::new();
    builder.source(kernel_source(name)).nr_tasklets(nr_tasklets).flag("-O2").flag("-Wall").flag("-Werror");
    let built = builder.build_kernel(dir.path().join(format!("{name}.dpusim"))).expect("building");
    let program = Program::from_bytes(&std::fs::read(&built.path).expect("reading the binary")).expect("loading");
    (built, Arc::new(program))
}

fn layout_differences(built: &BuiltKernel) -> Vec<&LayoutDifference> {
    built
        .warnings
        .iter()
        .filter_map(|warning| match warning {
            BuildWarning::LayoutDiffers(difference) => Some(difference),
            _ => None,
        })
        .collect()
}

fn strict_machine() -> upmem_sim::Machine {
    machine_with(Topology::new(1, 1), |config| config.strict = true)
}

#[test]
fn shared_variables_laid_out_differently_on_a_dpu_are_warned_of_and_only_they() {
    let (built, program) = build_checked("build_check_layouts", 1);
    let differences = layout_differences(&built);
    let names: Vec<&str> = differences.iter().map(|difference| difference.variable.as_str()).collect();
    // Not `samples` (a long is 8 bytes and 8-aligned on a DPU too), `params` (fixed-width types), `plain_words`,
    // nor `scratch` (a WRAM global the host does not reach).
    assert_eq!(names, ["args", "cursor", "nodes"], "{:#?}", built.warnings);
    assert_eq!(built.warnings.len(), 3, "{:#?}", built.warnings);

    let args = differences[0];
    assert_eq!((args.attribute, args.type_name.as_str()), ("__host", "struct dpu_args"));
    assert_eq!((args.simulated_size, args.dpu_size), (24, 12));
    let buffer = MemberDifference {
        path: "buffer".into(),
        type_name: "char *".into(),
        change: MemberChange::Size { simulated: 8, dpu: 4 },
    };
    assert_eq!(args.member.as_ref(), Some(&buffer));
    let location = args.declared_at.as_ref().expect("a declaration line");
    assert!(location.file.ends_with("build_check_layouts.c") && location.line == 42, "{location}");
    let message = BuildWarning::LayoutDiffers(args.clone()).message();
    assert!(
        message.starts_with(
            "__host variable `args` (struct dpu_args): 24 bytes in the simulated kernel, 12 on a DPU; member \
             `buffer` (char *) is 8 bytes here, 4 on a DPU"
        ),
        "{message}"
    );

    let cursor = differences[1];
    assert_eq!((cursor.type_name.as_str(), cursor.simulated_size, cursor.dpu_size), ("size_t", 8, 4));
    assert_eq!(cursor.member, None);

    let nodes = differences[2];
    assert_eq!((nodes.attribute, nodes.type_name.as_str()), ("__mram_noinit", "struct node[64]"));
    assert_eq!((nodes.simulated_size, nodes.dpu_size), (1024, 512));
    let next = nodes.member.as_ref().expect("a member");
    assert_eq!((next.path.as_str(), next.type_name.as_str()), ("[0].next", "uintptr_t"));
    assert_eq!(next.change, MemberChange::BitOffset { simulated: 64, dpu: 32 });

    // The binary records them, as the build printed them.
    let recorded: Vec<String> = built.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(program.layout_differences(), recorded);
}

#[test]
fn strict_mode_refuses_a_program_whose_shared_layouts_differ_on_a_dpu() {
    let (_, program) = build_checked("build_check_layouts", 1);
    match strict_machine().load(&[0], &program) {
        Err(SimError::LayoutMismatch { differences, .. }) => assert_eq!(differences.len(), 3, "{differences:?}"),
        other => panic!("strict mode loaded a program with layout differences: {other:?}"),
    }
    common::machine(1, 1).load(&[0], &program).expect("the default mode loads it, with the build's warning");
}

#[test]
fn a_program_too_large_for_iram_is_warned_of_runs_by_default_and_is_refused_in_strict_mode() {
    let (built, program) = build_checked("build_check_iram_overflow", 1);
    assert!(built.iram.instructions() > ChipVersion::V1A.iram_instructions(), "{:?}", built.iram);
    assert!(
        matches!(built.warnings.as_slice(), [BuildWarning::IramOverflow { estimate, .. }] if *estimate == built.iram),
        "{:#?}",
        built.warnings
    );
    assert_eq!(program.iram_estimate(), Some(built.iram.instructions()));
    let compiled = format!("of kernel code as {} compiles it", built.iram.compiler.name());
    assert!(built.warnings[0].message().contains(&compiled), "{}", built.warnings[0].message());
    assert_eq!(program.host_compiler(), Some(built.iram.compiler));

    let mut machine = common::machine(1, 1);
    machine.load(&[0], &program).expect("the default mode loads it");
    write_u32(&machine, 0, "selector", 0);
    write_u32(&machine, 0, "input", 1);
    machine.launch(&[0]).expect("launching");
    assert_eq!(read_u32(&machine, 0, "output"), 109);

    match strict_machine().load(&[0], &program) {
        Err(SimError::IramOverflow { estimated, available, .. }) => {
            assert_eq!((estimated, available), (built.iram.instructions(), ChipVersion::V1A.iram_instructions()));
        }
        other => panic!("strict mode loaded a program too large for IRAM: {other:?}"),
    }
}

/// The build records the family of the host compiler whose code the simulator counts: each of gcc and clang
/// that runs here builds a small kernel, and the binary says which built it.
#[test]
fn the_binary_records_which_compiler_family_built_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut built = 0;
    for (compiler, family) in [("gcc", CompilerFamily::Gcc), ("clang", CompilerFamily::Clang)] {
        if !std::process::Command::new(compiler).arg("--version").output().is_ok_and(|out| out.status.success()) {
            continue;
        }
        let mut builder = KernelBuilder::new();
        builder.source(kernel_source("build_check_small")).nr_tasklets(16).flag("-O2").compiler(compiler);
        let binary = builder.build(dir.path().join(compiler)).expect("building");
        assert_eq!(Program::from_file(&binary).expect("loading").host_compiler(), Some(family), "{compiler}");
        built += 1;
    }
    assert!(built > 0, "neither gcc nor clang runs");
}

#[test]
fn the_estimate_of_a_small_kernel_is_close_to_its_hand_count() {
    // The hand count in the kernel's top comment: the SDK routines exactly, main as the DPU compiler emits it.
    const HAND_COUNT: u32 = 94;
    let (built, _) = build_checked("build_check_small", 16);
    assert_eq!(built.iram.runtime_routines, [("__bootstrap", 11), ("__mulsi3", 40), ("barrier_wait", 31)]);
    let estimate = built.iram.instructions();
    assert!(estimate.abs_diff(HAND_COUNT) * 10 <= HAND_COUNT, "estimated {estimate}, counted {HAND_COUNT}");
    assert!(built.warnings.is_empty(), "{:#?}", built.warnings);
}

/// The tasklet count a test kernel's header comment gives as ` * NR_TASKLETS = N.`, the count it is built with.
fn documented_tasklets(source: &str) -> Option<u32> {
    source.lines().find_map(|line| {
        line.trim_start_matches([' ', '*']).strip_prefix("NR_TASKLETS = ")?.strip_suffix('.')?.parse().ok()
    })
}

#[test]
fn every_test_kernel_fits_a_dpus_iram() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("listing the test kernels") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_stem().and_then(|stem| stem.to_str()).expect("a UTF-8 name").to_owned();
        if path.extension().is_none_or(|extension| extension != "c") || name == "build_check_iram_overflow" {
            continue;
        }
        // Built as their tests build them (so that the builds are shared): a kernel whose header says
        // "NR_TASKLETS = N." with N tasklets, fault kernels with 4 but the WRAM-overflow one, which only fits
        // with one; the arithmetic kernel takes its operation from the command line (a double divide is its
        // largest).
        let source = std::fs::read_to_string(&path).expect("reading a test kernel");
        let nr_tasklets = match (documented_tasklets(&source), name.as_str()) {
            (Some(nr_tasklets), _) => nr_tasklets,
            (None, "fault_wram_overflow") => 1,
            (None, _) if name.starts_with("fault_") => 4,
            (None, _) => 16,
        };
        let defines: &[(&str, &str)] = if name == "arithmetic" { &[("TYPE", "double"), ("OP", "/")] } else { &[] };
        let program = common::build(&name, nr_tasklets, defines);
        let estimate = program.iram_estimate().expect("an estimate");
        assert!(estimate <= ChipVersion::V1A.iram_instructions(), "{name} is estimated at {estimate} DPU instructions");
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} test kernels found in {}", dir.display());
}
