//! DPUs of either chip version: a set says which it has and how many threads its DPUs run, and refuses a program
//! with more tasklets than that, on the simulator and on the hardware backend (over the simulator's libdpu, with
//! the profile key the SDK's `dpu_v1B_mode` sets: `chipId=0x42`).

mod common;

use std::path::Path;

use upmem::build::KernelBuilder;
use upmem::sim::SimConfig;
use upmem::{BackendKind, ChipVersion, DpuSet, DpuSetBuilder, Error, Kernel, Topology};

fn echo_builder(nr_tasklets: u32, chip: ChipVersion) -> KernelBuilder {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("dpu/echo.c");
    let mut builder = KernelBuilder::new();
    builder.source(source).nr_tasklets(nr_tasklets).define("STACK_SIZE_DEFAULT", Some("512")).flag("-O2").chip(chip);
    builder
}

/// `host/dpu/echo.c` built with `nr_tasklets` tasklets for `chip` into `dir`.
fn echo(dir: &Path, nr_tasklets: u32, chip: ChipVersion) -> Kernel {
    upmem::build::kernel_into(&format!("echo{nr_tasklets}"), &echo_builder(nr_tasklets, chip), dir)
        .expect("building echo")
}

#[test]
fn a_v1b_build_refuses_more_than_16_tasklets_as_the_sdk_linker_does() {
    let dir = tempfile::tempdir().unwrap();
    let error = upmem::build::kernel_into("echo24", &echo_builder(24, ChipVersion::V1B), dir.path()).unwrap_err();
    assert!(error.to_string().contains("v1B DPU has 16 hardware threads"), "{error}");
}

/// On `builder`'s v1B DPUs: the set reports the chip, a kernel with no v1B binary is refused saying so, a binary
/// of 24 tasklets given as a v1B one is refused by the load naming the limit, and a 16-tasklet v1B build runs.
fn v1b_runs_16_tasklets(builder: &DpuSetBuilder, refused: impl Fn(&Error) -> bool) {
    let dir = tempfile::tempdir().unwrap();
    let set = builder.allocate().unwrap();
    assert_eq!(set.chip(), ChipVersion::V1B);
    assert_eq!(set.hardware_threads(), 16);
    let v1a = echo(dir.path(), 24, ChipVersion::V1A);
    let error = set.load(&v1a).err().expect("a kernel built for v1A only loaded on v1B DPUs");
    assert!(matches!(error, Error::KernelUnavailable { .. }) && error.to_string().contains("v1B"), "{error}");
    let mislabelled =
        v1a.clone().with_binaries(ChipVersion::V1B, v1a.simulator_binary(ChipVersion::V1A).map(Into::into), None);
    let error = builder.allocate().unwrap().load(&mislabelled).err().expect("a 24-tasklet program loaded on v1B DPUs");
    assert!(refused(&error), "{error:?}");

    let mut set = builder.allocate().unwrap().load(&echo(dir.path(), 16, ChipVersion::V1B)).unwrap();
    set.broadcast("input", 0, &[7u32; 8]).unwrap();
    set.launch().unwrap();
    let outputs: Vec<Vec<u32>> = set.gather("output", 0, 8).unwrap();
    assert!(outputs.iter().all(|output| output == &[14; 8]), "{outputs:?}");
}

#[test]
fn the_simulator_runs_v1b_dpus() {
    let config = SimConfig::new(Topology::new(1, 4).with_chip(ChipVersion::V1B));
    let mut builder = DpuSet::builder();
    builder.backend(BackendKind::Simulator).simulator(config).dpus(4);
    v1b_runs_16_tasklets(&builder, |error| {
        let text = error.to_string();
        text.contains("24 tasklets") && text.contains("v1B DPU has 16 hardware threads")
    });
}

#[test]
fn the_hardware_backend_reads_the_chip_of_its_ranks() {
    let mut builder = DpuSet::builder();
    builder
        .backend(BackendKind::Hardware)
        .libdpu(common::simulator_libdpu())
        .profile("backend=simulator,chipId=0x42,nrRanks=2,nrDpusPerRank=4")
        .dpus(8);
    v1b_runs_16_tasklets(
        &builder,
        |error| matches!(error, Error::Dpu { call: "dpu_load", code, .. } if *code == upmem_sys::DPU_ERR_TOO_MANY_TASKLETS),
    );
}

#[test]
fn sets_default_to_v1a_dpus() {
    let set = DpuSet::builder().backend(BackendKind::Simulator).dpus(1).allocate().unwrap();
    assert_eq!((set.chip(), set.hardware_threads()), (ChipVersion::V1A, 24));
}
