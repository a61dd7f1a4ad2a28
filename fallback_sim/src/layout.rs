//! The memory map of a simulated DPU and the shared-memory records exchanged with the workers.
//!
//! These mirror `runtime/include/dpusim/abi.h`; the `abi_layout` test compiles a C probe against that header
//! and compares every size and offset with the ones here.

pub(crate) use upmem_types::{DEFAULT_MRAM_SIZE, DEFAULT_WRAM_SIZE, MAX_TASKLETS};

use crate::op_costs::InstructionClass;

/// Where a simulated DPU binary links and maps its WRAM.
pub const WRAM_BASE: u64 = 0x0010_0000;
/// The DPU's MRAM window size (64 MiB); an MRAM smaller than that leaves the rest unmapped.
pub const MRAM_WINDOW: u64 = 64 << 20;
/// The largest single DMA transfer.
pub const DMA_MAX: u32 = 2048;

pub(crate) const CONTROL_MAGIC: u64 = 0x444d_4953_554d_4953;
pub(crate) const ABI_VERSION: u32 = 4;
pub(crate) const KERNEL_MAGIC: u32 = 0x4450_5553;
pub(crate) const FLAG_STRICT: u32 = 1;
pub(crate) const SCHEDULE_FAST: u32 = 0;
pub(crate) const SCHEDULE_MODELLED: u32 = 1;
pub(crate) const SCHEDULE_SHUFFLE: u32 = 2;
pub(crate) const MAX_WORKERS: usize = 256;
pub(crate) const NO_TASKLET: u32 = u32::MAX;
pub(crate) const MESSAGE_SIZE: usize = 256;

pub(crate) const WORKER_FLAG: &str = "--dpusim-worker";
pub(crate) const FD_CONTROL: i32 = 3;
pub(crate) const FD_WRAM: i32 = 4;
pub(crate) const FD_MRAM: i32 = 5;
pub(crate) const FD_LOG: i32 = 6;
pub(crate) const FD_CHANNEL: i32 = 7;
pub(crate) const FD_SHARED: i32 = 8;
pub(crate) const FD_OVERLAY: i32 = 9;
/// The lowest descriptor number a worker does not get at a fixed number above: a descriptor of the host at or
/// above it is still the same file in a worker when the worker's `exec` runs.
pub(crate) const FD_FIRST_UNPLACED: i32 = FD_OVERLAY + 1;
pub(crate) const CMD_RUN: u8 = b'R';
pub(crate) const REPLY_READY: u8 = b'Y';
pub(crate) const REPLY_DONE: u8 = b'D';

/// `enum dpusim_dpu_state` (0 is idle: a zeroed record).
pub(crate) mod state {
    pub const QUEUED: u32 = 1;
    pub const RUNNING: u32 = 2;
    pub const DONE: u32 = 3;
    pub const FAULT: u32 = 4;
}

/// `struct dpusim_fault`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct FaultRecord {
    pub kind: u32,
    pub tasklet: u32,
    pub address: u64,
    pub value: u64,
    pub pc: u64,
    pub signal: i32,
    pub reserved: u32,
    pub message: [u8; MESSAGE_SIZE],
}

/// `struct dpusim_tasklet_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TaskletStatsRecord {
    pub dma_read_ops: u64,
    pub dma_read_bytes: u64,
    pub dma_write_ops: u64,
    pub dma_write_bytes: u64,
    pub sync_waits: u64,
    pub instructions: u64,
    pub cycles: u64,
}

/// `struct dpusim_dpu_record`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct DpuRecord {
    pub state: u32,
    pub nr_tasklets: u32,
    pub launches: u64,
    pub cycles: u64,
    pub dma_cycles: u64,
    pub instructions: u64,
    pub native_ns: u64,
    pub switches: u64,
    pub log_length: u64,
    pub log_capacity: u64,
    pub class_instructions: [u64; InstructionClass::COUNT],
    pub fault: FaultRecord,
    pub tasklets: [TaskletStatsRecord; MAX_TASKLETS],
}

/// `struct dpusim_worker_slot`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorkerSlot {
    pub pid: i32,
    pub current_dpu: u32,
    pub dpus_run: u64,
}

/// `struct dpusim_control`, the first page of the control file.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct ControlHeader {
    pub magic: u64,
    pub abi_version: u32,
    pub nr_dpus: u32,
    pub wram_size: u64,
    pub mram_size: u64,
    pub log_size: u64,
    pub flags: u32,
    pub hang_limit_ms: u32,
    pub job_list_offset: u64,
    pub workers_offset: u64,
    pub records_offset: u64,
    pub record_size: u64,
    pub job_generation: u64,
    pub job_count: u32,
    pub job_next: u32,
    pub schedule: u32,
    pub reserved: u32,
    pub shuffle_seed: u64,
}

/// `struct dpusim_kernel_info`, read from the binary's `.dpusim.info` section.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelInfo {
    pub magic: u32,
    pub abi_version: u32,
    pub nr_tasklets: u32,
    pub stdout_capacity: u32,
    pub stack_sizes: [u32; MAX_TASKLETS],
}

/// Offsets of the parts of the control file for `nr_dpus` DPUs: (job list, worker slots, records, total).
pub(crate) fn control_layout(nr_dpus: u32) -> (usize, usize, usize, usize) {
    let page = 4096;
    let round = |n: usize| n.div_ceil(page) * page;
    let job_list = round(std::mem::size_of::<ControlHeader>());
    let workers = job_list + round(nr_dpus as usize * 4);
    let records = workers + round(MAX_WORKERS * std::mem::size_of::<WorkerSlot>());
    let total = records + round(nr_dpus as usize * std::mem::size_of::<DpuRecord>());
    (job_list, workers, records, total)
}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};
    use std::path::Path;
    use std::process::Command;

    use upmem_types::MRAM_BASE;

    use super::*;

    /// Compiles a probe against abi.h that prints each size and offset, and compares them with the Rust mirror.
    #[test]
    fn shared_structures_match_abi_header() {
        let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime/include");
        let dir = tempfile::tempdir().expect("temporary directory");
        let probe = dir.path().join("probe.c");
        let mut source =
            String::from("#include <stdio.h>\n#include <stddef.h>\n#include <dpusim/abi.h>\nint main(void) {\n");
        let mut expected = Vec::new();
        let mut check = |c_expression: &str, rust_value: usize| {
            source.push_str(&format!("    printf(\"%zu\\n\", (size_t)({c_expression}));\n"));
            expected.push((c_expression.to_owned(), rust_value));
        };
        check("sizeof(struct dpusim_fault)", size_of::<FaultRecord>());
        check("offsetof(struct dpusim_fault, message)", offset_of!(FaultRecord, message));
        check("offsetof(struct dpusim_fault, signal)", offset_of!(FaultRecord, signal));
        check("sizeof(struct dpusim_tasklet_stats)", size_of::<TaskletStatsRecord>());
        check("offsetof(struct dpusim_tasklet_stats, instructions)", offset_of!(TaskletStatsRecord, instructions));
        check("offsetof(struct dpusim_tasklet_stats, cycles)", offset_of!(TaskletStatsRecord, cycles));
        check("offsetof(struct dpusim_dpu_record, instructions)", offset_of!(DpuRecord, instructions));
        check("offsetof(struct dpusim_dpu_record, native_ns)", offset_of!(DpuRecord, native_ns));
        check("offsetof(struct dpusim_dpu_record, switches)", offset_of!(DpuRecord, switches));
        check("sizeof(struct dpusim_dpu_record)", size_of::<DpuRecord>());
        check("offsetof(struct dpusim_dpu_record, launches)", offset_of!(DpuRecord, launches));
        check("offsetof(struct dpusim_dpu_record, log_capacity)", offset_of!(DpuRecord, log_capacity));
        check("offsetof(struct dpusim_dpu_record, fault)", offset_of!(DpuRecord, fault));
        check("offsetof(struct dpusim_dpu_record, class_instructions)", offset_of!(DpuRecord, class_instructions));
        check("DPUSIM_INSTRUCTION_CLASSES", InstructionClass::COUNT);
        check("DPUSIM_CLASS_SDK_ROUTINE", InstructionClass::SdkRoutine.index());
        check("offsetof(struct dpusim_dpu_record, tasklets)", offset_of!(DpuRecord, tasklets));
        check("sizeof(struct dpusim_worker_slot)", size_of::<WorkerSlot>());
        check("offsetof(struct dpusim_worker_slot, dpus_run)", offset_of!(WorkerSlot, dpus_run));
        check("sizeof(struct dpusim_control)", size_of::<ControlHeader>());
        check("offsetof(struct dpusim_control, flags)", offset_of!(ControlHeader, flags));
        check("offsetof(struct dpusim_control, record_size)", offset_of!(ControlHeader, record_size));
        check("offsetof(struct dpusim_control, job_count)", offset_of!(ControlHeader, job_count));
        check("offsetof(struct dpusim_control, job_next)", offset_of!(ControlHeader, job_next));
        check("offsetof(struct dpusim_control, schedule)", offset_of!(ControlHeader, schedule));
        check("offsetof(struct dpusim_control, shuffle_seed)", offset_of!(ControlHeader, shuffle_seed));
        check("sizeof(struct dpusim_kernel_info)", size_of::<KernelInfo>());
        check("DPUSIM_WRAM_BASE", WRAM_BASE as usize);
        check("DPUSIM_MRAM_BASE", MRAM_BASE as usize);
        check("DPUSIM_MAX_TASKLETS", MAX_TASKLETS);
        check("DPUSIM_CLOCK_HZ", upmem_types::CLOCK_HZ as usize);
        check("DPUSIM_DMA_READ_ALPHA", upmem_types::DMA_READ_ALPHA_CYCLES as usize);
        check("DPUSIM_DMA_WRITE_ALPHA", upmem_types::DMA_WRITE_ALPHA_CYCLES as usize);
        check("DPUSIM_MESSAGE_SIZE", MESSAGE_SIZE);
        check("DPUSIM_MAX_WORKERS", MAX_WORKERS);
        check("DPUSIM_ABI_VERSION", ABI_VERSION as usize);
        check("DPUSIM_KERNEL_MAGIC", KERNEL_MAGIC as usize);
        check("DPUSIM_CONTROL_MAGIC", CONTROL_MAGIC as usize);
        check(
            "DPUSIM_FD_CONTROL * 1000 + DPUSIM_FD_WRAM * 100 + DPUSIM_FD_MRAM * 10 + DPUSIM_FD_LOG",
            (FD_CONTROL * 1000 + FD_WRAM * 100 + FD_MRAM * 10 + FD_LOG) as usize,
        );
        check("DPUSIM_FD_CHANNEL", FD_CHANNEL as usize);
        check("DPUSIM_FD_SHARED * 10 + DPUSIM_FD_OVERLAY", (FD_SHARED * 10 + FD_OVERLAY) as usize);
        check("sizeof(struct dpusim_overlay)", size_of::<crate::overlay::OverlayRecord>());
        check("offsetof(struct dpusim_overlay, owned)", offset_of!(crate::overlay::OverlayRecord, owned));
        check("DPUSIM_OVERLAY_STRIDE", crate::overlay::STRIDE);
        check("DPUSIM_PAGE_SIZE", crate::overlay::PAGE);
        check(
            "DPUSIM_CMD_RUN * 65536 + DPUSIM_REPLY_READY * 256 + DPUSIM_REPLY_DONE",
            usize::from(CMD_RUN) * 65536 + usize::from(REPLY_READY) * 256 + usize::from(REPLY_DONE),
        );
        check("DPUSIM_FLAG_STRICT", FLAG_STRICT as usize);
        check(
            "DPUSIM_SCHEDULE_FAST * 100 + DPUSIM_SCHEDULE_MODELLED * 10 + DPUSIM_SCHEDULE_SHUFFLE",
            (SCHEDULE_FAST * 100 + SCHEDULE_MODELLED * 10 + SCHEDULE_SHUFFLE) as usize,
        );
        check(
            "DPUSIM_DPU_QUEUED * 100 + DPUSIM_DPU_RUNNING * 10 + DPUSIM_DPU_DONE",
            (state::QUEUED * 100 + state::RUNNING * 10 + state::DONE) as usize,
        );
        check("DPUSIM_DPU_FAULT", state::FAULT as usize);
        source.push_str("    return 0;\n}\n");
        std::fs::write(&probe, source).expect("writing the probe");
        let binary = dir.path().join("probe");
        let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let status = Command::new(compiler)
            .arg("-I")
            .arg(&include)
            .arg(&probe)
            .arg("-o")
            .arg(&binary)
            .status()
            .expect("running cc");
        assert!(status.success(), "the ABI probe did not compile");
        let output = Command::new(&binary).output().expect("running the probe");
        let printed = String::from_utf8(output.stdout).expect("UTF-8");
        let values: Vec<usize> = printed.lines().map(|line| line.parse().expect("a number")).collect();
        assert_eq!(values.len(), expected.len());
        for ((expression, rust), c) in expected.iter().zip(values) {
            assert_eq!(c, *rust, "{expression}: C says {c}, Rust says {rust}");
        }
    }
}
