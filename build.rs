//! Builds the DPU kernels of `dpu/`: for the simulator (feature `simulator`), and for real DPUs when the UPMEM SDK is
//! installed.

/// Kernels built from one source each, with their tasklet counts.
const KERNELS: [(&str, u32); 1] = [("reduce", 16)];

/// SpMM kernel families (`dpu/spmm_<family>.c`), each built once per value type as `spmm_<family>_<type>`.
const SPMM_FAMILIES: [&str; 2] = ["csr", "coo"];
/// Value types of the SpMM kernels, as in `pimgnn::Element::NAME`.
const SPMM_TYPES: [&str; 4] = ["f32", "i32", "i16", "i8"];
/// Tasklets of every SpMM kernel (`SPMM_MAX_TASKLETS` in `dpu/spmm_args.h`); the host gives work to fewer.
const SPMM_TASKLETS: u32 = 24;

fn main() {
    println!("cargo:rerun-if-changed=dpu");
    for (name, nr_tasklets) in KERNELS {
        build(name, &format!("dpu/{name}.c"), nr_tasklets, None);
        // What `pimgnn check` reports as the kernel's tasklets.
        println!("cargo:rustc-env=PIMGNN_TASKLETS_{}={nr_tasklets}", name.to_uppercase());
    }
    for family in SPMM_FAMILIES {
        for ty in SPMM_TYPES {
            let define = format!("SPMM_TYPE_{}", ty.to_uppercase());
            build(&format!("spmm_{family}_{ty}"), &format!("dpu/spmm_{family}.c"), SPMM_TASKLETS, Some(&define));
        }
    }
}

fn build(name: &str, source: &str, nr_tasklets: u32, define: Option<&str>) {
    let mut builder = upmem::build::KernelBuilder::new();
    builder.source(source).include("dpu").nr_tasklets(nr_tasklets).flag("-O2").flag("-Wall").flag("-Werror");
    if let Some(define) = define {
        builder.define(define, None);
    }
    match upmem::build::kernel(name, &builder) {
        Ok(_) => {}
        // A build without the simulator on a machine without the UPMEM SDK (a CI check of the hardware backend):
        // the crate builds, and running the kernel says what is missing.
        Err(error @ upmem::Error::NoKernelCompiler(_)) => println!("cargo:warning={error}"),
        Err(error) => panic!("building DPU kernel {name} from {source}: {error}"),
    }
}
