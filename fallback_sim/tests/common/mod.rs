//! Helpers shared by the simulator's integration tests: building test kernels once, and typed access to
//! `__host` variables.

#![allow(dead_code)] // each test binary uses its own subset

pub mod calibration;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use upmem_sim::{KernelBuilder, Machine, Program, SimConfig, SimulatedBuild as _, Topology};

/// Tasklet counts every facility is tested with.
pub const TASKLET_COUNTS: [u32; 4] = [1, 11, 16, 24];

pub fn kernel_source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels").join(format!("{name}.c"))
}

/// Builds `tests/kernels/<name>.c` with these settings, once per content and compiler (`CC`; cached in the
/// target directory).
pub fn build(name: &str, nr_tasklets: u32, defines: &[(&str, &str)]) -> Arc<Program> {
    build_source(&kernel_source(name), nr_tasklets, defines)
}

/// Builds the kernel at `source` with these settings, once per content (cached in the target directory).
pub fn build_source(source: &Path, nr_tasklets: u32, defines: &[(&str, &str)]) -> Arc<Program> {
    let name = source.file_stem().and_then(|stem| stem.to_str()).expect("a UTF-8 kernel file name");
    let text = std::fs::read(source).unwrap_or_else(|error| panic!("{}: {error}", source.display()));
    let mut hasher = DefaultHasher::new();
    (text, nr_tasklets, defines, runtime_fingerprint(), std::env::var_os("CC")).hash(&mut hasher);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dpusim-kernels");
    let output = dir.join(format!("{name}-{nr_tasklets}-{:016x}.dpusim", hasher.finish()));
    if !output.exists() {
        // Build under a unique name and rename, so that concurrent tests never see a partial binary.
        let partial = dir.join(format!("{name}-{}-{:?}.partial", std::process::id(), std::thread::current().id()));
        let mut builder = KernelBuilder::new();
        builder.source(source).nr_tasklets(nr_tasklets).flag("-O2").flag("-Wall").flag("-Werror");
        for (name, value) in defines {
            builder.define(name, Some(value));
        }
        builder.build(&partial).unwrap_or_else(|error| panic!("building {name}: {error}"));
        std::fs::rename(&partial, &output).expect("renaming the built kernel");
    }
    Arc::new(Program::from_file(&output).expect("loading the built kernel"))
}

/// A hash of every runtime file (headers, runtime, harness, linker script) and of the builder's sources (its
/// flags, block costs and build checks), so that cached kernels are rebuilt when either changes.
fn runtime_fingerprint() -> u64 {
    fn visit(dir: &Path, hasher: &mut DefaultHasher) {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(dir).expect("runtime directory").map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                visit(&path, hasher);
            } else {
                (path.to_string_lossy().into_owned(), std::fs::read(&path).expect("runtime file")).hash(hasher);
            }
        }
    }
    static FINGERPRINT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *FINGERPRINT.get_or_init(|| {
        let mut hasher = DefaultHasher::new();
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        visit(&crate_dir.join("runtime"), &mut hasher);
        for builder_source in ["block_costs.rs", "op_costs.rs"] {
            let path = crate_dir.join("src").join(builder_source);
            std::fs::read(&path).expect("builder source").hash(&mut hasher);
        }
        // The builder, and the build checks, whose findings a binary records.
        visit(&crate_dir.join("src/builder"), &mut hasher);
        visit(&crate_dir.join("src/build_checks"), &mut hasher);
        hasher.finish()
    })
}

/// A machine of `nr_ranks` x `dpus_per_rank` DPUs with a short hang limit.
pub fn machine(nr_ranks: u32, dpus_per_rank: u32) -> Machine {
    machine_with(Topology::new(nr_ranks, dpus_per_rank), |_| {})
}

pub fn machine_with(topology: Topology, adjust: impl FnOnce(&mut SimConfig)) -> Machine {
    let mut config = SimConfig::new(topology);
    config.hang_limit = Some(std::time::Duration::from_secs(20));
    adjust(&mut config);
    Machine::new(config).expect("creating the machine")
}

pub fn write_u32(machine: &Machine, dpu: u32, symbol: &str, value: u32) {
    machine.write_symbol(dpu, symbol, 0, &value.to_le_bytes()).expect("writing a __host u32");
}

pub fn write_u64(machine: &Machine, dpu: u32, symbol: &str, value: u64) {
    machine.write_symbol(dpu, symbol, 0, &value.to_le_bytes()).expect("writing a __host u64");
}

pub fn read_u32s(machine: &Machine, dpu: u32, symbol: &str, count: usize) -> Vec<u32> {
    let mut bytes = vec![0u8; count * 4];
    machine.read_symbol(dpu, symbol, 0, &mut bytes).expect("reading __host u32s");
    bytes.chunks_exact(4).map(|chunk| u32::from_le_bytes(chunk.try_into().unwrap())).collect()
}

pub fn read_u64s(machine: &Machine, dpu: u32, symbol: &str, count: usize) -> Vec<u64> {
    let mut bytes = vec![0u8; count * 8];
    machine.read_symbol(dpu, symbol, 0, &mut bytes).expect("reading __host u64s");
    bytes.chunks_exact(8).map(|chunk| u64::from_le_bytes(chunk.try_into().unwrap())).collect()
}

pub fn read_u32(machine: &Machine, dpu: u32, symbol: &str) -> u32 {
    read_u32s(machine, dpu, symbol, 1)[0]
}

pub fn read_u64(machine: &Machine, dpu: u32, symbol: &str) -> u64 {
    read_u64s(machine, dpu, symbol, 1)[0]
}
