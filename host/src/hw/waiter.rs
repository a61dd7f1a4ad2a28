//! Polling an asynchronous launch without waiting for it.
//!
//! The SDK's `dpu_status` cannot do it: it calls `dpu_sync` on the set before it reads any rank's state (and
//! discards what `dpu_sync` returns), so it returns only once every DPU has stopped (the SDK 2025.1's libdpu,
//! `dpu_status`, disassembled). Reading each rank's state without that wait (`dpu_status_rank`, which reads the
//! rank's run context) is not right either: `dpu_launch(DPU_ASYNCHRONOUS)` only queues the launch to each rank's
//! job thread (`dpu_thread_job_do_jobs`), so a rank whose DPUs are not booted yet reads as done. The launch is
//! finished when `dpu_sync` returns, so a thread waits there and raises a flag; polling reads the flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use upmem_sys::{dpu_error_t, dpu_set_t};

use super::library::Library;
use crate::error::{Error, Result};

/// A thread waiting in `dpu_sync` for a set's queued work.
pub(crate) struct LaunchWaiter {
    finished: Arc<AtomicBool>,
    thread: JoinHandle<dpu_error_t>,
}

/// A set handed to the waiting thread.
struct SetForSync(dpu_set_t);

// SAFETY: a `dpu_set_t` is a value naming ranks or a DPU of libdpu, which may be synchronised from any thread;
// the owner of the set makes no other call on it while the thread waits (it only reads the flag, then joins).
unsafe impl Send for SetForSync {}

impl SetForSync {
    /// The set (a method, so that the thread's closure captures the whole `Send` value).
    fn set(&self) -> dpu_set_t {
        self.0
    }
}

impl LaunchWaiter {
    /// Starts a thread that calls `dpu_sync(set)` through `library`.
    pub fn start(library: Arc<Library>, set: dpu_set_t) -> Result<LaunchWaiter> {
        let sync = *library.dpu.dpu_sync.as_ref().map_err(|_| Error::MissingFunction("dpu_sync"))?;
        let finished = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&finished);
        let set = SetForSync(set);
        let thread = std::thread::Builder::new()
            .name("upmem-launch-wait".into())
            .spawn(move || {
                // SAFETY: `sync` is libdpu's dpu_sync, kept loaded by `library`, which this thread holds; the set
                // came from dpu_alloc on it and is not freed before the thread is joined.
                let status = unsafe { sync(set.set()) };
                drop(library);
                flag.store(true, Ordering::Release);
                status
            })
            .map_err(|error| Error::Io { what: "starting the thread that waits for the launch".into(), error })?;
        Ok(LaunchWaiter { finished, thread })
    }

    /// Whether `dpu_sync` has returned.
    pub fn finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    /// Waits for `dpu_sync` to return, and returns its status.
    pub fn join(self) -> Result<dpu_error_t> {
        self.thread.join().map_err(|_| Error::Io {
            what: "waiting for the launch".into(),
            error: std::io::Error::other("the thread waiting in dpu_sync panicked"),
        })
    }
}
