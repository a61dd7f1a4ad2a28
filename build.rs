//! Builds the DPU kernels of `dpu/`: for the simulator (feature `simulator`), and for real DPUs when the UPMEM SDK is
//! installed, each for both chip versions (a set loads the binary of its DPUs' chip).

use std::sync::atomic::{AtomicUsize, Ordering};

use upmem::ChipVersion;

/// Kernels built from one source each, with their tasklet counts.
const KERNELS: [(&str, u32); 1] = [("reduce", 16)];

/// SpMM kernel families (`dpu/spmm_<family>.c`), each built once per value type as `spmm_<family>_<type>`.
const SPMM_FAMILIES: [&str; 2] = ["csr", "coo"];
/// Value types of the SpMM kernels, as in `pimgnn::Element::NAME`.
const SPMM_TYPES: [&str; 4] = ["f32", "i32", "i16", "i8"];

fn main() {
    println!("cargo:rerun-if-changed=dpu");
    let mut kernels = Vec::new();
    for (name, nr_tasklets) in KERNELS {
        for chip in ChipVersion::ALL {
            kernels.push(Kernel {
                name: name.to_owned(),
                source: format!("dpu/{name}.c"),
                chip,
                nr_tasklets,
                define: None,
            });
        }
        // What `pimgnn check` reports as the kernel's tasklets.
        println!("cargo:rustc-env=PIMGNN_TASKLETS_{}={nr_tasklets}", name.to_uppercase());
    }
    for family in SPMM_FAMILIES {
        for ty in SPMM_TYPES {
            // As many tasklets as the chip has threads (at most SPMM_MAX_TASKLETS of dpu/spmm_args.h): the host
            // gives work to fewer.
            for chip in ChipVersion::ALL {
                kernels.push(Kernel {
                    name: format!("spmm_{family}_{ty}"),
                    source: format!("dpu/spmm_{family}.c"),
                    chip,
                    nr_tasklets: chip.hardware_threads(),
                    define: Some(format!("SPMM_TYPE_{}", ty.to_uppercase())),
                });
            }
        }
    }
    // A kernel's build runs mostly one process at a time: building as many kernels at once as there are cores
    // keeps them all busy.
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, usize::from).min(kernels.len());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(kernel) = kernels.get(next.fetch_add(1, Ordering::Relaxed)) {
                    kernel.build();
                }
            });
        }
    });
}

/// One kernel binary to build.
struct Kernel {
    name: String,
    source: String,
    chip: ChipVersion,
    nr_tasklets: u32,
    define: Option<String>,
}

impl Kernel {
    fn build(&self) {
        let Kernel { name, source, chip, nr_tasklets, define } = self;
        let mut builder = upmem::build::KernelBuilder::new();
        builder.source(source).include("dpu").chip(*chip).nr_tasklets(*nr_tasklets);
        builder.flag("-O2").flag("-Wall").flag("-Werror");
        if let Some(define) = define {
            builder.define(define, None);
        }
        match upmem::build::kernel(name, &builder) {
            Ok(_) => {}
            // A build without the simulator on a machine without the UPMEM SDK (a CI check of the hardware
            // backend): the crate builds, and running the kernel says what is missing.
            Err(error @ upmem::Error::NoKernelCompiler(_)) => println!("cargo:warning={error}"),
            Err(error) => panic!("building DPU kernel {name} from {source} for {chip} DPUs: {error}"),
        }
    }
}
