//! Per-DPU statistics of the last launch.

use std::time::Duration;

use crate::layout::TaskletStatsRecord;

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
    /// Native run time of the tasklet's code.
    pub native_time: Duration,
}

impl TaskletStats {
    pub(crate) fn from_record(record: &TaskletStatsRecord) -> Self {
        TaskletStats {
            dma_read_ops: record.dma_read_ops,
            dma_read_bytes: record.dma_read_bytes,
            dma_write_ops: record.dma_write_ops,
            dma_write_bytes: record.dma_write_bytes,
            sync_waits: record.sync_waits,
            native_time: Duration::from_nanos(record.native_ns),
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
    /// Modelled DPU cycles of the last launch: DMA cycles plus the compute estimate (see the crate docs).
    pub cycles: u64,
    /// The DMA part of `cycles`: the sum of alpha + bytes / 2 over every transfer.
    pub dma_cycles: u64,
    /// Per tasklet.
    pub tasklets: Vec<TaskletStats>,
}

impl DpuStats {
    /// Totals over the tasklets.
    pub fn total(&self) -> TaskletStats {
        self.tasklets.iter().fold(TaskletStats::default(), |sum, t| TaskletStats {
            dma_read_ops: sum.dma_read_ops + t.dma_read_ops,
            dma_read_bytes: sum.dma_read_bytes + t.dma_read_bytes,
            dma_write_ops: sum.dma_write_ops + t.dma_write_ops,
            dma_write_bytes: sum.dma_write_bytes + t.dma_write_bytes,
            sync_waits: sum.sync_waits + t.sync_waits,
            native_time: sum.native_time + t.native_time,
        })
    }
}
