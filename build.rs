//! Builds the DPU kernels of `dpu/`: for the simulator always, and for real DPUs when the UPMEM SDK is installed.

/// Kernels of `dpu/` and their tasklet counts.
const KERNELS: [(&str, u32); 1] = [("reduce", 16)];

fn main() {
    println!("cargo:rerun-if-changed=dpu");
    for (name, nr_tasklets) in KERNELS {
        let built = upmem::build::KernelBuilder::new(name)
            .source(format!("dpu/{name}.c"))
            .include("dpu")
            .nr_tasklets(nr_tasklets)
            .flag("-O2")
            .flag("-Wall")
            .flag("-Werror")
            .build();
        if let Err(error) = built {
            panic!("building DPU kernel dpu/{name}.c: {error}");
        }
    }
}
