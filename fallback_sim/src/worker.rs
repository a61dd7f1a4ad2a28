//! Worker processes: each runs a program's DPUs, one at a time, in the DPU's own memory map.
//!
//! A pool belongs to one program. For a launch the host writes the DPU ids into the control file's job list
//! and sends RUN to every worker; workers claim ids with an atomic counter (so load balances itself) and
//! answer DONE when the list is exhausted. A worker that dies (a kernel signal, the hang timer) is replaced,
//! and the replacement joins the job in progress.

use std::io::{ErrorKind, Read as _};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Result, SimError};
use crate::layout::{
    CMD_RUN, FD_CHANNEL, FD_CONTROL, FD_LOG, FD_MRAM, FD_OVERLAY, FD_SHARED, FD_WRAM, REPLY_DONE, REPLY_READY,
    WORKER_FLAG,
};
use crate::program::Program;

/// The descriptors every worker inherits, in the order of the fixed numbers `FD_CONTROL..=FD_LOG`.
#[derive(Clone, Copy)]
pub(crate) struct SharedFds {
    pub control: RawFd,
    pub wram: RawFd,
    pub mram: RawFd,
    pub log: RawFd,
    pub shared: RawFd,
    pub overlay: RawFd,
}

struct Worker {
    child: Child,
    channel: UnixStream,
    index: usize,
    /// Still working on the current job (RUN sent, DONE not yet received).
    busy: bool,
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the channel ends an idle worker; a busy one (a hung kernel) is killed.
        let _ = self.channel.shutdown(std::net::Shutdown::Both);
        if self.busy {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// The worker processes of one program.
pub(crate) struct WorkerPool {
    program: Arc<Program>,
    fds: SharedFds,
    workers: Vec<Worker>,
}

impl WorkerPool {
    /// Starts `count` workers; `first_index` is the first worker slot in the control file they use.
    pub fn start(program: Arc<Program>, fds: SharedFds, first_index: usize, count: usize) -> Result<Self> {
        let mut pool = WorkerPool { program, fds, workers: Vec::with_capacity(count) };
        for index in first_index..first_index + count {
            let worker = pool.spawn(index)?;
            pool.workers.push(worker);
        }
        log::debug!("started {count} simulator workers for {}", pool.program.path().display());
        Ok(pool)
    }

    pub fn program(&self) -> &Arc<Program> {
        &self.program
    }

    fn error(&self, reason: String) -> SimError {
        SimError::Worker { program: self.program.path().to_path_buf(), reason }
    }

    fn spawn(&self, index: usize) -> Result<Worker> {
        let (host_end, worker_end) =
            UnixStream::pair().map_err(|error| SimError::os("creating a worker channel", error))?;
        let sources = [
            self.fds.control,
            self.fds.wram,
            self.fds.mram,
            self.fds.log,
            worker_end.as_raw_fd(),
            self.fds.shared,
            self.fds.overlay,
        ];
        let mut command = Command::new(self.program.executable());
        // The program's own name, not its executable's (a descriptor for a program from memory), is what the
        // runtime's warnings call the kernel.
        command.arg0(self.program.path()).arg(WORKER_FLAG).arg(index.to_string()).stdin(Stdio::null());
        // SAFETY: the closure runs in the child between fork and exec and only calls async-signal-safe
        // functions (fcntl, dup2) on descriptors that are open in the child.
        unsafe {
            command.pre_exec(move || place_descriptors(&sources));
        }
        let mut child = spawn_when_not_busy(&mut command)
            .map_err(|error| self.error(format!("cannot start {}: {error}", self.program.path().display())))?;
        drop(worker_end);
        let mut channel = host_end;
        let mut ready = [0u8];
        match channel.read(&mut ready) {
            Ok(1) if ready[0] == REPLY_READY => Ok(Worker { child, channel, index, busy: false }),
            _ => {
                let status = child.wait().ok();
                Err(self.error(format!("worker {index} did not start ({})", describe_exit(status))))
            }
        }
    }

    /// Asks every worker to work on the job list just written into the control file.
    pub fn start_job(&mut self) {
        for worker in &mut self.workers {
            // A send fails only if the worker died; it stays busy so that `collect` sees it and replaces it.
            send_byte(&worker.channel, CMD_RUN);
            worker.busy = true;
        }
    }

    /// Waits up to `timeout` (forever with `None`) for the job's end; returns whether every worker finished.
    ///
    /// A worker that dies is reported to `on_death` (its slot index and how it ended) before it is replaced,
    /// so that the DPU it was running can be put in fault; the replacement joins the job when `job_left` says
    /// DPUs remain. `on_death` returns false when the death cannot be pinned on a DPU (a broken worker, not a
    /// kernel): the job is then abandoned with an error.
    pub fn collect(
        &mut self,
        timeout: Option<Duration>,
        job_left: &dyn Fn() -> bool,
        on_death: &mut dyn FnMut(usize, &str) -> bool,
    ) -> Result<bool> {
        let deadline = timeout.map(|timeout| Instant::now() + timeout);
        loop {
            let busy: Vec<usize> = (0..self.workers.len()).filter(|&i| self.workers[i].busy).collect();
            if busy.is_empty() {
                return Ok(true);
            }
            let wait = deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
            let mut fds: Vec<libc::pollfd> = busy
                .iter()
                .map(|&i| libc::pollfd { fd: self.workers[i].channel.as_raw_fd(), events: libc::POLLIN, revents: 0 })
                .collect();
            let millis = wait.map_or(-1, |duration| duration.as_millis().min(i32::MAX as u128) as i32);
            // SAFETY: fds is a valid array of fds.len() pollfd structures for the duration of the call.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
            if ready < 0 {
                let error = std::io::Error::last_os_error();
                if error.kind() == ErrorKind::Interrupted {
                    continue;
                }
                return Err(SimError::os("waiting for simulator workers", error));
            }
            if ready == 0 {
                return Ok(false);
            }
            for (slot, pollfd) in busy.iter().zip(&fds) {
                if pollfd.revents == 0 {
                    continue;
                }
                let worker = &mut self.workers[*slot];
                let mut reply = [0u8];
                match worker.channel.read(&mut reply) {
                    Ok(1) if reply[0] == REPLY_DONE => worker.busy = false,
                    Err(error) if error.kind() == ErrorKind::Interrupted => {}
                    _ => self.replace(*slot, job_left, on_death)?,
                }
            }
        }
    }

    /// Reaps a dead worker, reports it, and starts its replacement.
    fn replace(
        &mut self,
        slot: usize,
        job_left: &dyn Fn() -> bool,
        on_death: &mut dyn FnMut(usize, &str) -> bool,
    ) -> Result<()> {
        let index = self.workers[slot].index;
        let status = self.workers[slot].child.wait().ok();
        self.workers[slot].busy = false;
        let exit = describe_exit(status);
        if !on_death(index, &exit) {
            return Err(self.error(format!("worker {index} ended outside any DPU ({exit}); see its messages above")));
        }
        log::debug!("simulator worker {index} ended ({exit}); starting another");
        let mut replacement = self.spawn(index)?;
        if job_left() {
            replacement.busy = send_byte(&replacement.channel, CMD_RUN);
        }
        self.workers[slot] = replacement;
        Ok(())
    }

    /// Kills busy workers (a hung job that the caller gave up on); they are replaced on the next `collect`.
    pub fn kill_busy(&mut self) {
        for worker in self.workers.iter_mut().filter(|worker| worker.busy) {
            let _ = worker.child.kill();
        }
    }
}

/// Sends one byte without raising SIGPIPE when the worker is gone (the host may be a C program that does not
/// ignore SIGPIPE).
fn send_byte(channel: &UnixStream, byte: u8) -> bool {
    // SAFETY: sending one byte from a valid buffer on a connected socket we own.
    let sent = unsafe { libc::send(channel.as_raw_fd(), [byte].as_ptr().cast(), 1, libc::MSG_NOSIGNAL) };
    sent == 1
}

/// Moves `sources` to the fixed descriptor numbers 3.. in the child. Two passes, so that a source that
/// already sits on a target number is never overwritten before it is moved.
fn place_descriptors(sources: &[RawFd]) -> std::io::Result<()> {
    const SCRATCH: RawFd = 100;
    let mut scratch = [0; 7];
    for (slot, &fd) in sources.iter().enumerate() {
        // SAFETY: F_DUPFD on an open descriptor; async-signal-safe.
        let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD, SCRATCH) };
        if copy < 0 {
            return Err(std::io::Error::last_os_error());
        }
        scratch[slot] = copy;
    }
    let targets = [FD_CONTROL, FD_WRAM, FD_MRAM, FD_LOG, FD_CHANNEL, FD_SHARED, FD_OVERLAY];
    for (&copy, &target) in scratch.iter().zip(&targets) {
        // SAFETY: dup2 between open descriptors; the new descriptor does not inherit FD_CLOEXEC.
        if unsafe { libc::dup2(copy, target) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: closing our scratch copy, which nothing else uses.
        unsafe { libc::close(copy) };
    }
    Ok(())
}

fn describe_exit(status: Option<ExitStatus>) -> String {
    match status {
        None => "exit status unknown".into(),
        Some(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            _ => status.to_string(),
        },
    }
}

/// How long [`spawn_when_not_busy`] keeps retrying an executable that is open for writing somewhere.
const EXECUTABLE_BUSY_PATIENCE: Duration = Duration::from_secs(2);

/// Spawns `command`, retrying while exec fails with ETXTBSY.
///
/// A program loaded from memory is written to a temporary file and the writable descriptor closed before any
/// worker starts, but a thread that forks meanwhile (another DPU set starting its workers) holds a copy of that
/// descriptor until its child execs: for that moment the file counts as open for writing and cannot be
/// executed. The copy goes away on its own, so waiting it out is the whole fix.
fn spawn_when_not_busy(command: &mut Command) -> std::io::Result<Child> {
    let deadline = Instant::now() + EXECUTABLE_BUSY_PATIENCE;
    let mut pause = Duration::from_micros(200);
    loop {
        match command.spawn() {
            Err(error) if error.kind() == ErrorKind::ExecutableFileBusy && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            result => return result,
        }
    }
}
