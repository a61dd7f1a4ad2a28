//! The control file shared with the workers: the job list, worker slots and per-DPU records.

use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::Result;
use crate::fault::FaultKind;
use crate::layout::{self, control_layout, state, ControlHeader, DpuRecord, WorkerSlot, MAX_WORKERS, MESSAGE_SIZE};
use crate::memory::SharedFile;

/// The control file, mapped; every access to what workers also write goes through here.
pub(crate) struct Control {
    file: SharedFile,
    nr_dpus: u32,
    /// Byte offsets of the job list, the worker slots and the DPU records, as the header says.
    job_list: usize,
    workers: usize,
    records: usize,
}

impl Control {
    /// Creates the control file with its header, laid out as the header's offsets say (`control_layout`).
    pub fn new(header: ControlHeader) -> Result<Self> {
        let (_, _, _, total) = control_layout(header.nr_dpus);
        let file = SharedFile::new("control", total)?;
        // SAFETY: the file is at least one page, page-aligned, and no worker maps it yet.
        unsafe { ptr::write(file.ptr().cast::<ControlHeader>(), header) };
        Ok(Control {
            file,
            nr_dpus: header.nr_dpus,
            job_list: header.job_list_offset as usize,
            workers: header.workers_offset as usize,
            records: header.records_offset as usize,
        })
    }

    pub fn fd(&self) -> std::os::fd::RawFd {
        self.file.fd()
    }

    fn header(&self) -> *mut ControlHeader {
        self.file.ptr().cast()
    }

    fn record(&self, dpu: u32) -> *mut DpuRecord {
        assert!(dpu < self.nr_dpus, "DPU {dpu} of {}", self.nr_dpus);
        // SAFETY: dpu < nr_dpus, so the record lies within the control file.
        unsafe { self.file.ptr().add(self.records).cast::<DpuRecord>().add(dpu as usize) }
    }

    fn worker_slot(&self, index: usize) -> *mut WorkerSlot {
        assert!(index < MAX_WORKERS);
        // SAFETY: index < MAX_WORKERS, so the slot lies within the control file's slot array.
        unsafe { self.file.ptr().add(self.workers).cast::<WorkerSlot>().add(index) }
    }

    /// A DPU's state, written by workers with atomic stores.
    pub fn state(&self, dpu: u32) -> &AtomicU32 {
        // SAFETY: `state` is an aligned u32 in shared memory that lives as long as self, only ever accessed
        // atomically (the workers use __atomic builtins).
        unsafe { AtomicU32::from_ptr(ptr::addr_of_mut!((*self.record(dpu)).state)) }
    }

    fn job_next(&self) -> &AtomicU32 {
        // SAFETY: as for `state`: an aligned u32 of the header, claimed by workers with atomic adds.
        unsafe { AtomicU32::from_ptr(ptr::addr_of_mut!((*self.header()).job_next)) }
    }

    /// A copy of a DPU's record. Taken while no worker runs the DPU (callers check its state) or for
    /// statistics, where a torn read is harmless.
    pub fn read_record(&self, dpu: u32) -> DpuRecord {
        // SAFETY: the record is plain old data within the control file.
        unsafe { ptr::read_volatile(self.record(dpu)) }
    }

    /// A DPU's modelled cycles of its last launch, without copying its record.
    pub fn read_cycles(&self, dpu: u32) -> u64 {
        // SAFETY: `cycles` is an aligned u64 of the record within the control file; as for `read_record`, a torn
        // read is harmless for statistics.
        unsafe { ptr::read_volatile(ptr::addr_of!((*self.record(dpu)).cycles)) }
    }

    /// Clears a DPU's record (state idle). The DPU must be idle.
    pub fn reset_record(&self, dpu: u32) {
        // SAFETY: no worker touches an idle DPU's record; all-zero is a valid record.
        unsafe { ptr::write_bytes(self.record(dpu), 0, 1) };
    }

    /// Publishes a job: the DPU list, its size, and a fresh claim counter. No worker may be working.
    pub fn post_job(&self, dpus: &[u32]) {
        assert!(dpus.len() <= self.nr_dpus as usize);
        // SAFETY: between jobs no worker reads the list or the counters; the list has room for every DPU. The
        // byte the host then sends each worker publishes these writes.
        unsafe {
            let list = self.file.ptr().add(self.job_list).cast::<u32>();
            ptr::copy_nonoverlapping(dpus.as_ptr(), list, dpus.len());
            (*self.header()).job_count = dpus.len() as u32;
            (*self.header()).job_generation += 1;
        }
        self.job_next().store(0, Ordering::Release);
    }

    /// Whether DPUs of the current job are still unclaimed.
    pub fn job_left(&self) -> bool {
        // SAFETY: job_count is written by the host only, before the job starts.
        let count = unsafe { (*self.header()).job_count };
        self.job_next().load(Ordering::Acquire) < count
    }

    /// A worker died: the DPU it was running is in fault (its signal handler usually said why already).
    /// Returns false if it died outside any DPU, which no kernel can cause.
    pub fn record_casualty(&self, slot_index: usize, exit: &str) -> bool {
        let slot = self.worker_slot(slot_index);
        // SAFETY: the worker that owned the slot is dead and its replacement is not started yet.
        let dpu = unsafe { ptr::replace(ptr::addr_of_mut!((*slot).current_dpu), u32::MAX) };
        if dpu >= self.nr_dpus {
            return false;
        }
        if self.state(dpu).load(Ordering::Acquire) != state::FAULT {
            self.write_worker_lost(dpu, &format!("the worker running this DPU ended ({exit})"));
        }
        log::debug!("DPU {dpu} faulted and its worker ended ({exit})");
        true
    }

    /// Puts a DPU in fault for a worker that ended without saying why.
    pub fn write_worker_lost(&self, dpu: u32, message: &str) {
        let mut text = [0u8; MESSAGE_SIZE];
        let length = message.len().min(MESSAGE_SIZE - 1);
        text[..length].copy_from_slice(&message.as_bytes()[..length]);
        // SAFETY: the worker that ran this DPU is dead, so the record is ours to write.
        unsafe {
            (*self.record(dpu)).fault = layout::FaultRecord {
                kind: FaultKind::raw_worker_lost(),
                tasklet: layout::NO_TASKLET,
                address: 0,
                value: 0,
                pc: 0,
                signal: 0,
                reserved: 0,
                message: text,
            };
        }
        self.state(dpu).store(state::FAULT, Ordering::Release);
    }
}
