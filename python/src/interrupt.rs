//! Long calls that Ctrl-C interrupts: the work runs on a thread of its own while the calling thread, without
//! the GIL, waits for it and checks Python's signals in between.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use pyo3::prelude::*;

use crate::errors;

/// How often a waiting call checks for Ctrl-C.
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// Runs `work` on a new thread and returns its result; a signal handler that raises (Ctrl-C's
/// `KeyboardInterrupt`) makes the call return that exception at once. The work then finishes on its own
/// thread and its result is dropped, releasing what it holds (an engine dropped meanwhile frees its DPUs
/// then).
pub(crate) fn run<R: Send + 'static>(py: Python<'_>, work: impl FnOnce() -> R + Send + 'static) -> PyResult<R> {
    let (sender, receiver) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("pimgnn-call".into())
        .spawn(move || {
            // The receiver is gone when the caller was interrupted: nobody waits for the result.
            let _ = sender.send(work());
        })
        .map_err(|error| errors::raise("Error", format!("cannot start a thread for the call: {error}")))?;
    let mut receiver = receiver;
    loop {
        // The receiver goes into the GIL-free wait and comes back, as only what is `Send` crosses it.
        let waited;
        (receiver, waited) = py.detach(move || {
            let waited = receiver.recv_timeout(SIGNAL_CHECK_INTERVAL);
            (receiver, waited)
        });
        match waited {
            Ok(result) => return Ok(result),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(errors::raise("Error", "the call panicked (a bug in pimgnn: please report it)".into()))
            }
        }
    }
}
