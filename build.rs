//! Builds the DPU kernels of `dpu/` for the simulator.

use std::path::PathBuf;

/// Kernels of `dpu/` and their tasklet counts.
const KERNELS: [(&str, u32); 1] = [("reduce", 16)];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    println!("cargo:rerun-if-changed=dpu");
    for (name, nr_tasklets) in KERNELS {
        let built = upmem_sim::KernelBuilder::new()
            .source(format!("dpu/{name}.c"))
            .include("dpu")
            .nr_tasklets(nr_tasklets)
            .flag("-O2")
            .flag("-Wall")
            .flag("-Werror")
            .cargo_metadata(true)
            .build(out.join(format!("{name}.dpusim")));
        if let Err(error) = built {
            panic!("building DPU kernel dpu/{name}.c for the simulator: {error}");
        }
    }
    println!("cargo:rustc-env=PIMGNN_DPU_DIR={}", out.display());
}
