//! DPU faults, one test per kind: on a 1 rank x 3 DPUs machine, DPU 1 misbehaves while DPUs 0 and 2 behave.
//! Each test checks that the launch reports DPU 1's fault (kind, tasklet, an explaining message), that DPUs 0
//! and 2 completed with correct results, and that the next launch, with every DPU behaving, succeeds: the
//! machine recovers, and a worker that a signal killed has been replaced. Programs the simulator cannot run
//! (WRAM overflow, too many tasklets) are refused when they are built.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{build, kernel_source, machine_with, read_u32, read_u32s, read_u64, write_u32};
use upmem_sim::{
    BuildError, DpuState, Fault, FaultKind, KernelBuilder, Machine, MemoryKind, Program, SimConfig, SimError,
    SimulatedBuild as _, Topology, MRAM_BASE, MRAM_HEAP, WRAM_BASE,
};

const DPUS: [u32; 3] = [0, 1, 2];
/// The DPU that misbehaves; the others behave.
const FAULTY: u32 = 1;
const NR_TASKLETS: u32 = 4;
const MRAM_SIZE: u64 = 64 << 20;
const WRAM_SIZE: u64 = 64 << 10;

/// A 1 x 3 machine with `kernel` built for `nr_tasklets` loaded on every DPU.
fn loaded(kernel: &str, nr_tasklets: u32, adjust: impl FnOnce(&mut SimConfig)) -> Machine {
    let mut machine = machine_with(Topology::new(1, DPUS.len() as u32), adjust);
    machine.load(&DPUS, &build(kernel, nr_tasklets, &[])).unwrap();
    machine
}

fn set_mode(mode: u32) -> impl Fn(&Machine, u32) {
    move |machine, dpu| write_u32(machine, dpu, "mode", mode)
}

/// Launches every DPU, DPU 1 prepared by `misbehave` and the others by `behave`. Checks that the launch fails
/// with DPU 1's fault (and only it), that the other DPUs completed and pass `check`, and returns the fault.
fn launch_with_faulty_dpu(
    machine: &mut Machine,
    misbehave: impl Fn(&Machine, u32),
    behave: impl Fn(&Machine, u32),
    check: impl Fn(&Machine, u32),
) -> Fault {
    for dpu in DPUS {
        if dpu == FAULTY {
            misbehave(machine, dpu);
        } else {
            behave(machine, dpu);
        }
    }
    let fault = match machine.launch(&DPUS) {
        Err(SimError::DpuFault { count, first }) => {
            assert_eq!(count, 1, "only DPU {FAULTY} faults; first: {first}");
            assert_eq!(first.dpu, FAULTY, "the faulty DPU: {first}");
            *first
        }
        other => panic!("the launch should report DPU {FAULTY}'s fault, got {other:?}"),
    };
    assert_eq!(machine.dpu_state(FAULTY).unwrap(), DpuState::Fault);
    assert_eq!(machine.fault(FAULTY).unwrap().as_ref(), Some(&fault), "Machine::fault agrees with the launch");
    assert_eq!(machine.faults(), std::slice::from_ref(&fault), "the machine's faults");
    for dpu in DPUS.into_iter().filter(|&dpu| dpu != FAULTY) {
        assert_eq!(machine.dpu_state(dpu).unwrap(), DpuState::Done, "DPU {dpu} beside the faulty one");
        assert_eq!(machine.fault(dpu).unwrap(), None, "DPU {dpu} beside the faulty one");
        check(machine, dpu);
    }
    fault
}

/// The next launch with every DPU behaving succeeds, and every DPU passes `check`.
fn relaunch_behaving(machine: &mut Machine, behave: impl Fn(&Machine, u32), check: impl Fn(&Machine, u32)) {
    for dpu in DPUS {
        behave(machine, dpu);
    }
    machine.launch(&DPUS).unwrap_or_else(|error| panic!("the launch after the fault: {error}"));
    for dpu in DPUS {
        assert_eq!(machine.dpu_state(dpu).unwrap(), DpuState::Done, "DPU {dpu} after the fault");
        check(machine, dpu);
    }
    assert_eq!(machine.faults(), [], "no fault left after a good launch");
}

/// Checks the fault's kind, tasklet and that its message explains it (contains `phrase`).
fn assert_fault(fault: &Fault, kind: FaultKind, tasklet: Option<u32>, phrase: &str) {
    assert_eq!(fault.kind, kind, "{fault}");
    assert_eq!(fault.tasklet, tasklet, "tasklet of {fault}");
    assert!(fault.message.contains(phrase), "the message should contain {phrase:?}: {fault}");
    let shown = fault.to_string();
    assert!(shown.starts_with(&format!("DPU {FAULTY}")) && shown.contains(kind.name()), "{shown}");
}

// ---- DMA ------------------------------------------------------------------------------------------------------

const DMA_WORD: u64 = 0x0102_0304_0506_0708;
const DMA_WRITE_PATTERN: u64 = 0x1122_3344_5566_7788;

/// fault_dma.c reads the first word of the MRAM heap: a different one per DPU.
fn heap_word(dpu: u32) -> u64 {
    DMA_WORD + u64::from(dpu)
}

fn heap_offset(machine: &Machine, dpu: u32) -> u64 {
    machine.symbol(dpu, MRAM_HEAP).unwrap().offset()
}

fn read_heap_word(machine: &Machine, dpu: u32) -> u64 {
    let mut bytes = [0u8; 8];
    machine.read(dpu, MemoryKind::Mram, heap_offset(machine, dpu), &mut bytes).unwrap();
    u64::from_le_bytes(bytes)
}

/// Writes the DPU's heap word and the mode.
fn dma_mode(mode: u32) -> impl Fn(&Machine, u32) {
    move |machine, dpu| {
        machine.write(dpu, MemoryKind::Mram, heap_offset(machine, dpu), &heap_word(dpu).to_le_bytes()).unwrap();
        write_u32(machine, dpu, "mode", mode);
    }
}

/// Mode 0 (and the aligned-down modes 8 and 10) read the heap word.
fn dma_read_heap_word(machine: &Machine, dpu: u32) {
    assert_eq!(read_u32(machine, dpu, "done"), 1, "DPU {dpu} finished");
    assert_eq!(read_u64(machine, dpu, "result"), heap_word(dpu), "the word DPU {dpu} read from its heap");
}

#[test]
fn dma_outside_wram_faults() {
    for strict in [false, true] {
        let mut machine = loaded("fault_dma", NR_TASKLETS, |config| config.strict = strict);
        let fault = launch_with_faulty_dpu(&mut machine, dma_mode(11), dma_mode(0), dma_read_heap_word);
        assert_fault(&fault, FaultKind::Dma, Some(0), "mram_read of 8 bytes at WRAM address");
        assert_eq!(fault.value, 8, "the DMA size, strict {strict}: {fault}");
        assert!(fault.message.contains("outside WRAM"), "{fault}");
        assert!(fault.address >= WRAM_BASE + WRAM_SIZE, "the WRAM address is past WRAM: {fault}");
        relaunch_behaving(&mut machine, dma_mode(0), dma_read_heap_word);
    }
}

#[test]
fn dma_sizes_and_addresses_are_read_as_the_engine_reads_them_by_default_and_fault_in_strict_mode() {
    let mram_end = MRAM_BASE + MRAM_SIZE;
    // Default mode: 12 bytes move 8 and 4096 or 0 bytes move 2048 (the length field counts 8-byte blocks
    // minus one, modulo 256), the address just past MRAM's end is MRAM offset 0 (the engine takes addresses
    // modulo the MRAM size), and a transfer crossing the end goes on at offset 0.
    let mut machine = loaded("fault_dma", NR_TASKLETS, |_| {});
    for mode in [1, 2, 12] {
        relaunch_behaving(&mut machine, dma_mode(mode), dma_read_heap_word);
    }
    for mode in [3, 5, 6, 7] {
        relaunch_behaving(&mut machine, dma_mode(mode), |machine, dpu| {
            assert_eq!(read_u32(machine, dpu, "done"), 1, "DPU {dpu} finished, mode {mode}");
        });
    }
    relaunch_behaving(&mut machine, dma_mode(4), |machine, dpu| {
        let mut words = [0u8; 16];
        machine.read(dpu, MemoryKind::Mram, MRAM_SIZE - 8, &mut words[..8]).unwrap();
        machine.read(dpu, MemoryKind::Mram, 0, &mut words[8..]).unwrap();
        let last_then_first = [&words[..8], &words[8..]].map(|word| u64::from_le_bytes(word.try_into().unwrap()));
        let read = [read_u64(machine, dpu, "result"), read_u64(machine, dpu, "second")];
        assert_eq!(read, last_then_first, "16 bytes from MRAM's last word: it, then offset 0, DPU {dpu}");
    });
    // (mode, phrase, faulting address or None, size)
    let cases: [(u32, &str, Option<u64>, u64); 8] = [
        (1, "mram_read of 12 bytes: not a multiple of 8 (a DPU moves 8 bytes; strict mode)", None, 12),
        (2, "mram_read of 4096 bytes: not between 8 and 2048 (a DPU moves 2048 bytes; strict mode)", None, 4096),
        (3, "mram_read of 8 bytes at MRAM address 0xc000000, outside the MRAM window", Some(mram_end), 8),
        (4, "mram_read of 16 bytes at MRAM address 0xbfffff8: crosses the end of MRAM", Some(mram_end - 8), 16),
        (5, "mram_write of 12 bytes: not a multiple of 8 (a DPU moves 8 bytes; strict mode)", None, 12),
        (6, "mram_write of 4096 bytes: not between 8 and 2048 (a DPU moves 2048 bytes; strict mode)", None, 4096),
        (7, "mram_write of 8 bytes at MRAM address 0xc000000, outside the MRAM window", Some(mram_end), 8),
        (12, "mram_read of 0 bytes: not between 8 and 2048 (a DPU moves 2048 bytes; strict mode)", None, 0),
    ];
    let mut machine = loaded("fault_dma", NR_TASKLETS, |config| config.strict = true);
    for (mode, phrase, address, size) in cases {
        let fault = launch_with_faulty_dpu(&mut machine, dma_mode(mode), dma_mode(0), dma_read_heap_word);
        assert_fault(&fault, FaultKind::Dma, Some(0), phrase);
        assert_eq!(fault.value, size, "the DMA size, mode {mode}: {fault}");
        if let Some(address) = address {
            assert_eq!(fault.address, address, "the MRAM address, mode {mode}: {fault}");
        }
        relaunch_behaving(&mut machine, dma_mode(0), dma_read_heap_word);
    }
}

#[test]
fn unaligned_dma_is_aligned_down_by_default_and_faults_in_strict_mode() {
    // Default mode: the engine ignores the low three bits of both addresses, as the hardware does.
    let mut machine = loaded("fault_dma", NR_TASKLETS, |_| {});
    for mode in [8, 10] {
        for dpu in DPUS {
            dma_mode(mode)(&machine, dpu);
        }
        machine.launch(&DPUS).unwrap_or_else(|error| panic!("unaligned read, mode {mode}: {error}"));
        for dpu in DPUS {
            dma_read_heap_word(&machine, dpu);
        }
    }
    for dpu in DPUS {
        dma_mode(9)(&machine, dpu);
    }
    machine.launch(&DPUS).unwrap_or_else(|error| panic!("unaligned write: {error}"));
    for dpu in DPUS {
        assert_eq!(read_u32(&machine, dpu, "done"), 1, "DPU {dpu}");
        assert_eq!(read_heap_word(&machine, dpu), DMA_WRITE_PATTERN, "the write at heap + 4 lands at heap + 0");
    }

    // Strict mode: the documentation forbids it, so it faults.
    let mut machine = loaded("fault_dma", NR_TASKLETS, |config| config.strict = true);
    for (mode, phrase) in [
        (8, "mram_read with unaligned address"),
        (9, "mram_write with unaligned address"),
        (10, "mram_read with unaligned address"),
    ] {
        let fault = launch_with_faulty_dpu(&mut machine, dma_mode(mode), dma_mode(0), dma_read_heap_word);
        assert_fault(&fault, FaultKind::Dma, Some(0), phrase);
        assert!(fault.message.contains("strict mode"), "{fault}");
        assert_eq!(fault.address % 8, 4, "the unaligned address, mode {mode}: {fault}");
        if mode == 9 {
            assert_eq!(read_heap_word(&machine, FAULTY), heap_word(FAULTY), "the refused write wrote nothing");
        }
        relaunch_behaving(&mut machine, dma_mode(0), dma_read_heap_word);
    }
}

// ---- Memory, heap, arithmetic ------------------------------------------------------------------------------------

#[test]
fn loads_and_stores_outside_the_memories_fault() {
    let mut machine = loaded("fault_memory", NR_TASKLETS, |_| {});
    let done = |machine: &Machine, dpu: u32| assert_eq!(read_u32(machine, dpu, "done"), 1, "DPU {dpu} finished");
    for (mode, phrase) in [
        (1, "past the 65536 bytes of WRAM"),
        (2, "past the 65536 bytes of WRAM"),
        (3, "access to 0x4000000, outside the DPU's memories"),
    ] {
        let fault = launch_with_faulty_dpu(&mut machine, set_mode(mode), set_mode(0), done);
        assert_fault(&fault, FaultKind::Memory, Some(0), phrase);
        assert!(fault.message.starts_with("memory fault"), "{fault}");
        if mode == 3 {
            assert_eq!(fault.address, 0x0400_0000, "{fault}");
        } else {
            let offset = fault.address.wrapping_sub(WRAM_BASE);
            assert!((512 << 10..(512 << 10) + WRAM_SIZE).contains(&offset), "512 KiB past a global: {fault}");
        }
        relaunch_behaving(&mut machine, set_mode(0), done);
    }
}

#[test]
fn mem_alloc_past_the_end_of_wram_is_heap_full() {
    const CHUNK_BYTES: u64 = 1024;
    let program = build("fault_heap_full", NR_TASKLETS, &[]);
    // The heap ends where the configured WRAM does, as DMA's bounds do.
    for wram_size in [WRAM_SIZE, WRAM_SIZE / 2] {
        let mut machine = loaded("fault_heap_full", NR_TASKLETS, |config| config.topology.wram_size = wram_size);
        let one_allocation = |machine: &Machine, dpu: u32| {
            assert_eq!(read_u32(machine, dpu, "allocations"), 1, "DPU {dpu} allocated one chunk");
        };
        let fault = launch_with_faulty_dpu(&mut machine, set_mode(1), set_mode(0), one_allocation);
        assert_fault(&fault, FaultKind::HeapFull, Some(0), "heap full: mem_alloc(1024)");
        assert!(fault.message.contains("passes the end of WRAM"), "{fault}");
        assert_eq!(fault.value, CHUNK_BYTES, "the size asked: {fault}");
        // The heap starts after the globals, the stacks and the SDK's 8-byte software cache per tasklet; every
        // chunk that ends below the end of WRAM was allocated (the SDK's mem_alloc faults on one that ends there).
        let fitting = (wram_size - program.wram_used() - 1) / CHUNK_BYTES;
        let allocations = u64::from(read_u32(&machine, FAULTY, "allocations"));
        assert_eq!(allocations, fitting, "chunks allocated before the fault, {wram_size}-byte WRAM");
        assert_eq!(
            fault.address,
            WRAM_BASE + program.wram_used() + fitting * CHUNK_BYTES,
            "the block refused, {wram_size}-byte WRAM: {fault}"
        );
        relaunch_behaving(&mut machine, set_mode(0), one_allocation);
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn integer_division_by_zero_faults() {
    // (mode, quotient with divisor 7): i32 /, i64 /, u32 %.
    let mut machine = loaded("fault_div_zero", NR_TASKLETS, |_| {});
    for (mode, quotient) in [(1, 142), (2, 142), (3, 6)] {
        let divide_by = |divisor: u32| {
            move |machine: &Machine, dpu: u32| {
                write_u32(machine, dpu, "mode", mode);
                write_u32(machine, dpu, "divisor", divisor);
            }
        };
        let check = |machine: &Machine, dpu: u32| {
            assert_eq!(read_u32(machine, dpu, "done"), 1, "DPU {dpu}, mode {mode}");
            assert_eq!(read_u64(machine, dpu, "quotient"), quotient, "1000 by 7 on DPU {dpu}, mode {mode}");
        };
        let fault = launch_with_faulty_dpu(&mut machine, divide_by(0), divide_by(7), check);
        assert_fault(&fault, FaultKind::DivisionByZero, Some(0), "integer division by zero");
        assert_eq!(fault.signal, libc::SIGFPE, "{fault}");
        assert_ne!(fault.pc, 0, "the native program counter of the division: {fault}");
        relaunch_behaving(&mut machine, divide_by(7), check);
    }
}

// ---- Runtime faults --------------------------------------------------------------------------------------------

#[test]
fn failed_assert_faults_with_file_line_and_expression() {
    const ASSERT_LINE: u64 = 36;
    let mut machine = loaded("fault_assert", NR_TASKLETS, |_| {});
    let set_value = |value: u32| move |machine: &Machine, dpu: u32| write_u32(machine, dpu, "value", value);
    let all_passed = |machine: &Machine, dpu: u32| {
        assert_eq!(read_u32s(machine, dpu, "passed", NR_TASKLETS as usize), [1; NR_TASKLETS as usize], "DPU {dpu}");
    };
    let fault = launch_with_faulty_dpu(&mut machine, set_value(7), set_value(42), all_passed);
    assert_fault(
        &fault,
        FaultKind::Assert,
        Some(0),
        "fault_assert.c:36: main: Assertion `value == EXPECTED_VALUE' failed.",
    );
    assert_eq!(fault.value, ASSERT_LINE, "the line of the assert: {fault}");
    let source = kernel_source("fault_assert");
    assert!(fault.message.starts_with(source.to_str().unwrap()), "the message names the source file: {fault}");
    relaunch_behaving(&mut machine, set_value(42), all_passed);
}

#[test]
fn halt_faults_in_the_tasklet_that_calls_it() {
    const HALTING_TASKLET: u32 = 2;
    let mut machine = loaded("fault_halt", NR_TASKLETS, |_| {});
    for dpu in DPUS {
        write_u32(&machine, dpu, "halting_tasklet", HALTING_TASKLET);
    }
    let all_finished = |machine: &Machine, dpu: u32| {
        let finished = read_u32s(machine, dpu, "finished", NR_TASKLETS as usize);
        assert_eq!(finished, [1; NR_TASKLETS as usize], "DPU {dpu}");
    };
    let fault = launch_with_faulty_dpu(&mut machine, set_mode(1), set_mode(0), all_finished);
    assert_fault(&fault, FaultKind::Halt, Some(HALTING_TASKLET), "halt() called by tasklet 2");
    assert_eq!(read_u32s(&machine, FAULTY, "finished", NR_TASKLETS as usize)[HALTING_TASKLET as usize], 0);
    relaunch_behaving(&mut machine, set_mode(0), all_finished);
}

#[test]
fn printf_larger_than_the_stdout_buffer_faults_and_the_log_keeps_the_last_bytes() {
    let mut machine = loaded("fault_printf_overflow", NR_TASKLETS, |_| {});
    let log = |machine: &Machine, dpu: u32| String::from_utf8(machine.log(dpu).unwrap()).unwrap();
    let short = move |machine: &Machine, dpu: u32| assert_eq!(log(machine, dpu), "short\n", "log of DPU {dpu}");
    let fault = launch_with_faulty_dpu(&mut machine, set_mode(1), set_mode(0), short);
    assert_fault(
        &fault,
        FaultKind::PrintfOverflow,
        Some(0),
        "printf of 201 bytes does not fit the 64-byte stdout buffer",
    );
    assert_eq!(fault.value, 201, "the message's size: {fault}");

    // 20 lines of 8 bytes, each fitting: no fault, and the 64-byte ring keeps the last 8 lines.
    for dpu in DPUS {
        set_mode(if dpu == FAULTY { 2 } else { 0 })(&machine, dpu);
    }
    machine.launch(&DPUS).unwrap_or_else(|error| panic!("lines that fit: {error}"));
    let last_lines: String = (12..20).map(|line| format!("line {line}\n")).collect();
    assert_eq!(log(&machine, FAULTY), last_lines, "the ring keeps the last 64 bytes");
    short(&machine, 0);
    short(&machine, 2);

    relaunch_behaving(&mut machine, set_mode(0), short);
}

#[test]
fn mram_write_unaligned_with_addresses_differing_mod_8_is_wrong_alignment() {
    const FILL: u8 = 0x11;
    let mut machine = loaded("fault_unaligned_write", NR_TASKLETS, |_| {});
    let prepare = |mode: u32| {
        move |machine: &Machine, dpu: u32| {
            machine.write_symbol(dpu, "target", 0, &[FILL; 64]).unwrap();
            write_u32(machine, dpu, "mode", mode);
        }
    };
    let written = |machine: &Machine, dpu: u32| {
        assert_eq!(read_u32(machine, dpu, "done"), 1, "DPU {dpu}");
        let mut expected = [FILL; 64];
        for i in 0..10 {
            expected[11 + i] = 0x50 + i as u8;
        }
        let mut target = [0u8; 64];
        machine.read_symbol(dpu, "target", 0, &mut target).unwrap();
        assert_eq!(target, expected, "MRAM target of DPU {dpu}");
    };
    let fault = launch_with_faulty_dpu(&mut machine, prepare(1), prepare(0), written);
    assert_fault(&fault, FaultKind::WrongAlignment, Some(0), "the addresses differ modulo 8");
    assert!(fault.message.contains("mram_write_unaligned"), "{fault}");
    relaunch_behaving(&mut machine, prepare(0), written);
}

// ---- Hangs -----------------------------------------------------------------------------------------------------

#[test]
fn mutex_deadlocks_fault_and_tasklets_stopped_for_ever_fault_in_strict_mode() {
    // (mode, what the message says the tasklets wait for, faults by default). A mutex waiter spins on a DPU,
    // which then hangs: a fault in every mode. A tasklet waiting at a barrier, a semaphore or a handshake has
    // stopped, and a DPU whose tasklets all stopped is done (sdk_sync.rs): only strict mode faults.
    let cases = [
        (1, "0 on mutex", true),
        (2, "0 at barrier", false),
        (3, "0 waits for tasklet 1;", false),
        (4, "0 on mutex", true),
        (5, "0 on semaphore", false),
    ];
    for strict in [false, true] {
        let mut machine = loaded("fault_deadlock", NR_TASKLETS, |config| config.strict = strict);
        for (mode, phrase, _) in cases.into_iter().filter(|&(_, _, by_default)| strict || by_default) {
            let fault = launch_with_faulty_dpu(&mut machine, set_mode(mode), set_mode(0), |_, _| {});
            // Found by the scheduler between tasklets, so no tasklet was running.
            assert_fault(&fault, FaultKind::Deadlock, None, "deadlock: every live tasklet is blocked:");
            assert!(fault.message.contains(phrase), "mode {mode} should say {phrase:?}: {fault}");
            let why = if mode == 1 || mode == 4 { "a DPU would hang" } else { "strict mode" };
            assert!(fault.message.contains(why), "mode {mode}, strict {strict}: {fault}");
            match mode {
                1 => assert!(fault.message.contains("1 on mutex"), "both tasklets wait: {fault}"),
                2 => {
                    for tasklet in 0..NR_TASKLETS {
                        assert!(fault.message.contains(&format!(" {tasklet} at barrier")), "{fault}");
                    }
                }
                _ => {}
            }
            relaunch_behaving(&mut machine, set_mode(0), |_, _| {});
        }
    }
}

#[test]
fn a_dpu_running_past_the_hang_limit_times_out() {
    let hang_limit = Duration::from_secs(1);
    let mut machine = loaded("fault_hang", NR_TASKLETS, |config| config.hang_limit = Some(hang_limit));
    let started = std::time::Instant::now();
    let fault = launch_with_faulty_dpu(&mut machine, set_mode(1), set_mode(0), |_, _| {});
    assert!(started.elapsed() >= hang_limit, "stopped after {:?}", started.elapsed());
    assert_fault(&fault, FaultKind::Timeout, Some(0), "still running after the 1000 ms hang limit");
    assert_eq!(fault.signal, libc::SIGALRM, "{fault}");
    relaunch_behaving(&mut machine, set_mode(0), |_, _| {});
}

#[test]
fn unbounded_recursion_is_a_stack_overflow() {
    let mut machine = loaded("fault_stack_overflow", NR_TASKLETS, |_| {});
    let depth = |max_depth: u32| move |machine: &Machine, dpu: u32| write_u32(machine, dpu, "max_depth", max_depth);
    let returned = |machine: &Machine, dpu: u32| {
        assert_eq!(read_u32(machine, dpu, "done"), 1, "DPU {dpu}");
        assert_eq!(read_u32(machine, dpu, "result"), 136, "sum of the frames of DPU {dpu}");
    };
    let fault = launch_with_faulty_dpu(&mut machine, depth(u32::MAX), depth(16), returned);
    assert_fault(&fault, FaultKind::StackOverflow, Some(0), "tasklet 0 overflowed its stack");
    assert_eq!(read_u32(&machine, FAULTY, "done"), 0, "the recursion never returned");
    relaunch_behaving(&mut machine, depth(16), returned);
}

/// The harness runs on the tasklet's native stack below the kernel's frames (the block hook's slow path saves
/// every register, the timing model's calls under it reach the tasklet switch): none of that counts against the
/// tasklet's budget, so a kernel of a few bytes of frames passes strict mode with a 64-byte stack.
#[test]
fn the_harness_frames_below_a_kernel_do_not_count_against_its_stack() {
    let program = build("stack_shallow", 16, &[("STACK_SIZE_DEFAULT", "64")]);
    let mut machine = machine_with(Topology::new(1, 1), |config| config.strict = true);
    machine.load(&[0], &program).unwrap();
    machine.launch(&[0]).expect("no stack overflow reported");
}

// ---- Signals and the C library ---------------------------------------------------------------------------------

/// DPU 1 executes an illegal instruction on a machine of `workers` worker processes: a signal fault, and the
/// worker it killed is replaced. Twice: the second time, the replacement must handle signals as well.
fn an_illegal_instruction_kills_its_worker_which_is_replaced(workers: usize) {
    #[cfg(target_arch = "x86_64")]
    const TRAP: (i32, &str) = (libc::SIGILL, "Illegal instruction");
    #[cfg(target_arch = "aarch64")]
    const TRAP: (i32, &str) = (libc::SIGTRAP, "Trace/breakpoint trap");
    let mut machine = loaded("fault_illegal", NR_TASKLETS, |config| config.workers = workers);
    let done = |machine: &Machine, dpu: u32| assert_eq!(read_u32(machine, dpu, "done"), 1, "DPU {dpu}");
    for _ in 0..2 {
        let fault = launch_with_faulty_dpu(&mut machine, set_mode(1), set_mode(0), done);
        assert_fault(&fault, FaultKind::Signal, Some(0), TRAP.1);
        assert_eq!(fault.signal, TRAP.0, "{fault}");
        assert_ne!(fault.pc, 0, "the native program counter of the trap: {fault}");
        relaunch_behaving(&mut machine, set_mode(0), done);
    }
}

/// One worker runs DPUs 0, 1 and 2 in turn, so DPU 2 is still queued when DPU 1's trap kills it: only the
/// replacement can run DPU 2, whatever the machine. (With a worker per core, another worker may have taken DPU 2
/// already, and on three cores or more every DPU starts at once.)
#[test]
fn an_illegal_instruction_kills_the_only_worker_and_its_replacement_runs_the_queued_dpus() {
    an_illegal_instruction_kills_its_worker_which_is_replaced(1);
}

/// As above with the default worker per core: the replacement joins workers that are still running.
#[test]
fn an_illegal_instruction_is_a_signal_fault_and_its_worker_is_replaced_beside_the_others() {
    an_illegal_instruction_kills_its_worker_which_is_replaced(SimConfig::new(Topology::new(1, 1)).workers);
}

#[test]
fn abort_faults_and_exit_ends_the_tasklet_whatever_its_status() {
    let mut machine = loaded("fault_abort", NR_TASKLETS, |_| {});
    let all_finished = |machine: &Machine, dpu: u32| {
        let finished = read_u32s(machine, dpu, "finished", NR_TASKLETS as usize);
        assert_eq!(finished, [1; NR_TASKLETS as usize], "DPU {dpu}");
    };
    let fault = launch_with_faulty_dpu(&mut machine, set_mode(1), set_mode(0), all_finished);
    assert_fault(&fault, FaultKind::Abort, Some(0), "abort() called by tasklet 0");
    assert_eq!(fault.value, 0, "{fault}");
    relaunch_behaving(&mut machine, set_mode(0), all_finished);

    // exit(status) ends tasklet 0 as a return from main would, whatever the status (the SDK's exit.c.obj is one
    // `stop`): no fault.
    for status_mode in [2, 3] {
        for dpu in DPUS {
            set_mode(if dpu == FAULTY { status_mode } else { 0 })(&machine, dpu);
        }
        machine.launch(&DPUS).unwrap_or_else(|error| panic!("exit() is not a fault (mode {status_mode}): {error}"));
        assert_eq!(read_u32(&machine, FAULTY, "before_exit"), 1);
        let mut finished = [1; NR_TASKLETS as usize];
        finished[0] = 0;
        let what = format!("tasklet 0 ended at exit() (mode {status_mode})");
        assert_eq!(read_u32s(&machine, FAULTY, "finished", NR_TASKLETS as usize), finished, "{what}");
        all_finished(&machine, 0);
        all_finished(&machine, 2);
    }
}

// ---- Programs refused at build time ----------------------------------------------------------------------------

fn try_build(kernel: &str, nr_tasklets: u32, stack_size: &str) -> Result<std::path::PathBuf, BuildError> {
    let dir = tempfile::tempdir().unwrap();
    KernelBuilder::new()
        .source(kernel_source(kernel))
        .nr_tasklets(nr_tasklets)
        .define("STACK_SIZE_DEFAULT", Some(stack_size))
        .flag("-O2")
        .build(dir.path().join(format!("{kernel}.dpusim")))
}

#[test]
fn wram_overflow_is_refused_when_building() {
    // 48 KiB of globals plus 24 stacks of 1 KiB.
    let error = try_build("fault_wram_overflow", 24, "1024").unwrap_err();
    match &error {
        BuildError::Invalid(SimError::WramOverflow { needed, available, .. }) => {
            // The kernel's globals and stacks and the SDK's 8-byte software cache per tasklet, plus the runtime's
            // few globals (their size depends on the compiler).
            let kernel = 48 * 1024 + 24 * 1024 + 8 * 24;
            assert!((kernel..kernel + 1024).contains(needed), "{error}");
            assert_eq!(*available, WRAM_SIZE, "{error}");
            assert!(
                error.to_string().contains(&format!(
                    "needs {needed} bytes of WRAM (globals and tasklet stacks) but a DPU has 65536"
                )),
                "{error}"
            );
        }
        other => panic!("expected a WRAM overflow, got {other}"),
    }

    // With one stack it fits and runs.
    let program: Arc<Program> = build("fault_wram_overflow", 1, &[("STACK_SIZE_DEFAULT", "1024")]);
    let mut machine = machine_with(Topology::new(1, DPUS.len() as u32), |_| {});
    machine.load(&DPUS, &program).unwrap();
    machine.launch(&DPUS).unwrap();
    for dpu in DPUS {
        assert_eq!(read_u32(&machine, dpu, "touched"), 1, "DPU {dpu}");
    }
}

#[test]
fn more_than_24_tasklets_are_refused_when_building() {
    let error = try_build("empty", 25, "256").unwrap_err();
    assert!(matches!(error, BuildError::CommandFailed { .. }), "{error}");
    assert!(error.to_string().contains("NR_TASKLETS must be in 1..24"), "{error}");
}
