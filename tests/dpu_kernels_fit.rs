//! The DPU kernels of `dpu/`, as the build script built them for the simulator, would work on a DPU as they do
//! there: each is estimated within a DPU's IRAM, and none has a `__host` or MRAM variable laid out differently on a
//! DPU (the build checks of `upmem_sim::SimulatedBuild`, recorded in each binary).

#![cfg(feature = "simulator")]

use upmem_sim::{ChipVersion, Program};

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
