//! Why a DPU is in fault: the simulator says what the hardware cannot.

use std::fmt;

use crate::layout::{FaultRecord, NO_TASKLET};

/// The kind of a DPU fault (the DPU runtime's fault numbers where it has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaultKind {
    /// DMA misuse: a WRAM range outside WRAM (or, in strict mode, an unaligned address, a size outside 8..=2048
    /// or not a multiple of 8, an MRAM address outside the MRAM window or a transfer crossing its end, a seqread
    /// cache not aligned to its size, or an unaligned-DMA routine moving other bytes than asked).
    Dma,
    /// A load or store outside the DPU's memories.
    Memory,
    /// Runtime fault 1: `mem_alloc` past the end of WRAM.
    HeapFull,
    /// Runtime fault 2: integer division by zero.
    DivisionByZero,
    /// Runtime fault 3: a failed `assert`.
    Assert,
    /// Runtime fault 4: `halt()`.
    Halt,
    /// Runtime fault 5: a printf larger than the stdout buffer.
    PrintfOverflow,
    /// Runtime fault 8: `mram_write_unaligned` with WRAM and MRAM addresses not equal mod 8.
    WrongAlignment,
    /// Every live tasklet is blocked and one spins on a mutex (on hardware, a hang), or, in strict mode, they
    /// all stopped for ever at barriers, semaphores or handshakes (on hardware, the DPU ends). Also a handshake
    /// entry naming a running tasklet, whose resume fails and leaves the caller spinning.
    Deadlock,
    /// The DPU ran past the configured hang limit.
    Timeout,
    /// A tasklet overflowed its stack.
    StackOverflow,
    /// Another signal: illegal instruction, trap, abort in the C library, ...
    Signal,
    /// Strict mode: a synchronisation primitive used in a way the documentation forbids.
    SyncMisuse,
    /// More tasklets than hardware threads.
    TooManyTasklets,
    /// Globals and stacks exceed WRAM.
    WramOverflow,
    /// The kernel called `abort()` or `exit()` with a non-zero status.
    Abort,
    /// The worker running the DPU died without recording why.
    WorkerLost,
    /// A kind this version does not know.
    Unknown(u32),
}

impl FaultKind {
    pub(crate) fn from_raw(raw: u32) -> Self {
        match raw {
            1 => Self::Dma,
            2 => Self::Memory,
            3 => Self::HeapFull,
            4 => Self::DivisionByZero,
            5 => Self::Assert,
            6 => Self::Halt,
            7 => Self::PrintfOverflow,
            8 => Self::WrongAlignment,
            9 => Self::Deadlock,
            10 => Self::Timeout,
            11 => Self::StackOverflow,
            12 => Self::Signal,
            13 => Self::SyncMisuse,
            14 => Self::TooManyTasklets,
            15 => Self::WramOverflow,
            16 => Self::Abort,
            17 => Self::WorkerLost,
            other => Self::Unknown(other),
        }
    }

    pub(crate) const fn raw_worker_lost() -> u32 {
        17
    }

    /// A short human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dma => "DMA fault",
            Self::Memory => "memory fault",
            Self::HeapFull => "heap full",
            Self::DivisionByZero => "division by zero",
            Self::Assert => "assertion failed",
            Self::Halt => "halt",
            Self::PrintfOverflow => "printf overflow",
            Self::WrongAlignment => "wrong alignment",
            Self::Deadlock => "deadlock",
            Self::Timeout => "timeout",
            Self::StackOverflow => "stack overflow",
            Self::Signal => "signal",
            Self::SyncMisuse => "synchronisation misuse",
            Self::TooManyTasklets => "too many tasklets",
            Self::WramOverflow => "WRAM overflow",
            Self::Abort => "abort",
            Self::WorkerLost => "worker lost",
            Self::Unknown(_) => "unknown fault",
        }
    }
}

/// A DPU fault with its explanation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The DPU that faulted.
    pub dpu: u32,
    /// What happened.
    pub kind: FaultKind,
    /// The tasklet that was running, if any.
    pub tasklet: Option<u32>,
    /// The address involved (DMA or memory address), or 0.
    pub address: u64,
    /// The value involved (a DMA size, ...), or 0.
    pub value: u64,
    /// The native program counter when a signal reported the fault, or 0.
    pub pc: u64,
    /// The signal number, or 0.
    pub signal: i32,
    /// The explanation.
    pub message: String,
}

impl Fault {
    pub(crate) fn from_record(dpu: u32, record: &FaultRecord) -> Self {
        let end = record.message.iter().position(|&b| b == 0).unwrap_or(record.message.len());
        Fault {
            dpu,
            kind: FaultKind::from_raw(record.kind),
            tasklet: (record.tasklet != NO_TASKLET).then_some(record.tasklet),
            address: record.address,
            value: record.value,
            pc: record.pc,
            signal: record.signal,
            message: String::from_utf8_lossy(&record.message[..end]).into_owned(),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DPU {}", self.dpu)?;
        if let Some(tasklet) = self.tasklet {
            write!(f, ", tasklet {tasklet}")?;
        }
        write!(f, ": {}: {}", self.kind.name(), self.message)
    }
}
