//! Builds the DPU kernels of `dpu/`: for the simulator (feature `simulator`), and for real DPUs when the UPMEM SDK is
//! installed.

/// Kernels of `dpu/` and their tasklet counts.
const KERNELS: [(&str, u32); 1] = [("reduce", 16)];

fn main() {
    println!("cargo:rerun-if-changed=dpu");
    for (name, nr_tasklets) in KERNELS {
        let mut builder = upmem::build::KernelBuilder::new();
        builder.source(format!("dpu/{name}.c")).include("dpu").nr_tasklets(nr_tasklets);
        builder.flag("-O2").flag("-Wall").flag("-Werror");
        match upmem::build::kernel(name, &builder) {
            Ok(_) => {}
            // A build without the simulator on a machine without the UPMEM SDK (a CI check of the hardware
            // backend): the crate builds, and running the kernel says what is missing.
            Err(error @ upmem::Error::NoKernelCompiler(_)) => println!("cargo:warning={error}"),
            Err(error) => panic!("building DPU kernel dpu/{name}.c: {error}"),
        }
    }
}
