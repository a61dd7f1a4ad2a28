//! Per-DPU statistics of the last launch.

use std::time::Duration;

use crate::layout::TaskletStatsRecord;
use crate::op_costs::InstructionClass;

/// What one tasklet did during the last launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskletStats {
    /// `mram_read` calls.
    pub dma_read_ops: u64,
    /// Bytes read from MRAM.
    pub dma_read_bytes: u64,
    /// `mram_write` calls.
    pub dma_write_ops: u64,
    /// Bytes written to MRAM.
    pub dma_write_bytes: u64,
    /// Times the tasklet blocked at a barrier, mutex, semaphore or handshake.
    pub sync_waits: u64,
    /// DPU instructions the tasklet executed: its kernel code's basic blocks (counted at build time) and the
    /// SDK routines it called. Compare them across tasklets for the launch's balance.
    pub instructions: u64,
    /// The modelled cycle at which the tasklet finished.
    pub cycles: u64,
}

impl TaskletStats {
    pub(crate) fn from_record(record: &TaskletStatsRecord) -> Self {
        TaskletStats {
            dma_read_ops: record.dma_read_ops,
            dma_read_bytes: record.dma_read_bytes,
            dma_write_ops: record.dma_write_ops,
            dma_write_bytes: record.dma_write_bytes,
            sync_waits: record.sync_waits,
            instructions: record.instructions,
            cycles: record.cycles,
        }
    }
}

/// What a DPU did during its last launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DpuStats {
    /// Tasklets of the last launch.
    pub nr_tasklets: u32,
    /// Launches completed since the DPU's program was loaded.
    pub launches: u64,
    /// Modelled DPU cycles of the last launch: when its last tasklet finished (see the crate docs, "Timing
    /// model"). Deterministic: the same kernel, input and schedule give the same count. A prediction of the
    /// hardware's time only under a schedule that [predicts it](crate::Schedule::predicts_hardware_time).
    pub cycles: u64,
    /// Cycles the DMA engine was busy: the sum of alpha + bytes / 2 over every transfer. Transfers overlap
    /// with other tasklets' instructions, so this is not a part of `cycles` but at most all of it.
    pub dma_cycles: u64,
    /// DPU instructions executed by all tasklets.
    pub instructions: u64,
    /// `instructions` by class, indexed by [`InstructionClass::index`]; they add up to `instructions`. Use
    /// [`DpuStats::instructions_of`] to read one.
    pub instructions_by_class: [u64; InstructionClass::COUNT],
    /// Wall time the worker spent running the launch on this DPU.
    pub native_time: Duration,
    /// Context switches the simulator made to run the launch, between tasklets and to and from its scheduler:
    /// with the blocks' hook, what a launch costs to simulate besides the kernel's own code (not a DPU
    /// quantity). Deterministic, as the interleaving is. Under the modelled schedule a DMA costs at most one
    /// (pipeline.c), a block or a quantum's end another.
    pub switches: u64,
    /// Per tasklet.
    pub tasklets: Vec<TaskletStats>,
}

impl DpuStats {
    /// DPU instructions of one class in the last launch.
    pub fn instructions_of(&self, class: InstructionClass) -> u64 {
        self.instructions_by_class[class.index()]
    }

    /// The last launch's modelled time at the DPU's clock ([`CLOCK_HZ`](crate::CLOCK_HZ)).
    pub fn modelled_time(&self) -> Duration {
        Duration::from_secs_f64(self.cycles as f64 / crate::CLOCK_HZ as f64)
    }

    /// Bytes the DMA engine moved between MRAM and WRAM in the last launch, both ways.
    pub fn dma_bytes(&self) -> u64 {
        let total = self.total();
        total.dma_read_bytes + total.dma_write_bytes
    }

    /// DMA transfers (`mram_read` and `mram_write` calls) of the last launch.
    pub fn dma_transfers(&self) -> u64 {
        let total = self.total();
        total.dma_read_ops + total.dma_write_ops
    }

    /// Totals over the tasklets (`cycles`: the latest tasklet's).
    pub fn total(&self) -> TaskletStats {
        self.tasklets.iter().fold(TaskletStats::default(), |sum, t| TaskletStats {
            dma_read_ops: sum.dma_read_ops + t.dma_read_ops,
            dma_read_bytes: sum.dma_read_bytes + t.dma_read_bytes,
            dma_write_ops: sum.dma_write_ops + t.dma_write_ops,
            dma_write_bytes: sum.dma_write_bytes + t.dma_write_bytes,
            sync_waits: sum.sync_waits + t.sync_waits,
            instructions: sum.instructions + t.instructions,
            cycles: sum.cycles.max(t.cycles),
        })
    }
}
