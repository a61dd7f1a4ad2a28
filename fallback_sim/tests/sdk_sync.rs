//! The synchronisation and tasklet routines in the cases where the SDK 2025.1's compiled DPU runtime does
//! something a reader of its documentation would not expect (misuse, hand-filled objects, edge counts, state
//! left by an earlier launch), checked against what its disassembly does. One DPU each; kernels
//! `tests/kernels/sdk_sync_*.c`.

mod common;

use common::{build, kernel_source, machine_with, read_u32, read_u32s, read_u64, read_u64s, write_u32};
use upmem_sim::{
    DpuState, Fault, FaultKind, KernelBuilder, Machine, SimConfig, SimError, SimulatedBuild as _, Topology,
};

const DPU: u32 = 0;

fn loaded(kernel: &str, nr_tasklets: u32, strict: bool) -> Machine {
    let mut machine = machine_with(Topology::new(1, 1), |config: &mut SimConfig| config.strict = strict);
    machine.load(&[DPU], &build(kernel, nr_tasklets, &[])).unwrap();
    machine
}

/// Runs `mode` and expects the DPU to finish.
fn run(machine: &mut Machine, mode: u32) {
    write_u32(machine, DPU, "mode", mode);
    machine.launch(&[DPU]).unwrap_or_else(|error| panic!("mode {mode}: {error}"));
    assert_eq!(machine.dpu_state(DPU).unwrap(), DpuState::Done, "mode {mode}");
}

/// Runs `mode` and returns the DPU's fault.
fn run_to_fault(machine: &mut Machine, mode: u32) -> Fault {
    write_u32(machine, DPU, "mode", mode);
    match machine.launch(&[DPU]) {
        Err(SimError::DpuFault { first, .. }) => *first,
        other => panic!("mode {mode} should fault, got {other:?}"),
    }
}

fn assert_fault(fault: &Fault, kind: FaultKind, phrase: &str) {
    assert_eq!(fault.kind, kind, "{fault}");
    assert!(fault.message.contains(phrase), "the message should contain {phrase:?}: {fault}");
}

/// A barrier_t or sem_t: [wait_queue, count, initial_count, lock].
fn wait_object(machine: &Machine, symbol: &str) -> [u8; 4] {
    let mut bytes = [0u8; 4];
    machine.read_symbol(DPU, symbol, 0, &mut bytes).unwrap();
    bytes
}

// ---- Barriers ----------------------------------------------------------------------------------------------

#[test]
fn a_barrier_of_count_one_with_nobody_queued_passes_without_re_arming() {
    let mut machine = loaded("sdk_sync_barrier", 2, false);
    run(&mut machine, 1);
    assert_eq!(read_u32s(&machine, DPU, "passes", 2), [2, 0], "both waits of tasklet 0 passed");
    let [wait_queue, count, initial_count, _] = wait_object(&machine, "lone_barrier");
    assert_eq!((wait_queue, count, initial_count), (0xFF, 1, 3), "nothing stored: count stays 1");
}

#[test]
fn a_barrier_of_count_zero_queues_for_ever_and_the_dpu_ends() {
    let mut machine = loaded("sdk_sync_barrier", 2, false);
    run(&mut machine, 2);
    assert_eq!(read_u32s(&machine, DPU, "passes", 2), [0, 0], "tasklet 0 never passed");
    let [wait_queue, count, initial_count, _] = wait_object(&machine, "zero_barrier");
    assert_eq!((wait_queue, count, initial_count), (0, 255, 0), "queued: count 0 - 1 as a byte");

    let mut strict = loaded("sdk_sync_barrier", 2, true);
    let fault = run_to_fault(&mut strict, 2);
    assert_fault(&fault, FaultKind::Deadlock, "0 at barrier");
    assert!(fault.message.contains("strict mode"), "{fault}");
}

#[test]
fn a_barrier_names_its_last_waiter_in_wait_queue_and_empties_it_on_release() {
    let mut machine = loaded("sdk_sync_barrier", 2, false);
    run(&mut machine, 3);
    assert_eq!(read_u32s(&machine, DPU, "passes", 2), [1, 1]);
    assert_eq!(read_u32(&machine, DPU, "seen_wait_queue"), 1, "tasklet 1 queued last");
    assert_eq!(read_u32(&machine, DPU, "seen_count"), 1, "one arrival still expected");
    let [wait_queue, count, initial_count, _] = wait_object(&machine, "pair_barrier");
    assert_eq!((wait_queue, count, initial_count), (0xFF, 2, 2), "released and re-armed");
}

// ---- Semaphores --------------------------------------------------------------------------------------------

#[test]
fn sem_give_resumes_a_queued_waiter_whatever_the_count() {
    let mut machine = loaded("sdk_sync_sem", 2, false);
    machine.launch(&[DPU]).unwrap();
    assert_eq!(read_u32(&machine, DPU, "seen_wait_queue"), 1, "tasklet 1 queued");
    assert_eq!(read_u32(&machine, DPU, "seen_count") as i32, -1, "the count went below 0");
    assert_eq!(read_u32(&machine, DPU, "taken"), 1, "sem_give resumed tasklet 1 though the count was 5");
    let [wait_queue, count, _, _] = wait_object(&machine, "semaphore");
    assert_eq!((wait_queue, count), (0xFF, 6), "the queue emptied and the count went up by one");
}

// ---- Handshakes --------------------------------------------------------------------------------------------

const NOT_CALLED: u32 = 0xFFFF;
/// EALREADY of the DPU's C library (errno.h of the SDK 2025.1), which kernels see in <errno.h>.
const EALREADY: u32 = 7;

#[test]
fn a_tasklet_waiting_for_itself_waits_until_another_waits_for_it() {
    let mut machine = loaded("sdk_sync_handshake", 2, false);
    run(&mut machine, 1);
    assert_eq!(read_u32s(&machine, DPU, "results", 2), [0, 0], "both waits return 0");
    assert_eq!(read_u32s(&machine, DPU, "returned", 2), [1, 1]);

    let mut strict = loaded("sdk_sync_handshake", 2, true);
    let fault = run_to_fault(&mut strict, 1);
    assert_fault(&fault, FaultKind::SyncMisuse, "handshake_wait_for(1) from tasklet 1 with 2 tasklets");
}

#[test]
fn waiting_for_a_tasklet_past_nr_tasklets_waits_for_ever() {
    let mut machine = loaded("sdk_sync_handshake", 2, false);
    run(&mut machine, 2);
    assert_eq!(read_u32s(&machine, DPU, "returned", 2), [0, 1], "tasklet 0 never returned");
    let mut strict = loaded("sdk_sync_handshake", 2, true);
    let fault = run_to_fault(&mut strict, 2);
    assert_fault(&fault, FaultKind::SyncMisuse, "waiting for a tasklet past NR_TASKLETS");
}

#[test]
fn waiting_for_a_tasklet_past_the_runtimes_24_entries_faults() {
    let mut machine = loaded("sdk_sync_handshake", 2, false);
    let fault = run_to_fault(&mut machine, 3);
    assert_fault(&fault, FaultKind::SyncMisuse, "handshake_wait_for(24)");
    assert!(fault.message.contains("24-entry __handshake_array"), "{fault}");
}

#[test]
fn a_second_waiter_gets_ealready_and_errno() {
    let mut machine = loaded("sdk_sync_handshake", 2, false);
    run(&mut machine, 4);
    assert_eq!(read_u32s(&machine, DPU, "results", 2), [EALREADY, 0], "tasklet 0 found tasklet 1 waiting");
    assert_eq!(read_u32(&machine, DPU, "errno_seen"), EALREADY, "errno is set too");
    assert_eq!(read_u32s(&machine, DPU, "returned", 2), [1, 1], "the notify resumed tasklet 1");
}

#[test]
fn a_notify_nobody_waited_for_stays_in_wram_for_the_next_launch() {
    let mut machine = loaded("sdk_sync_handshake", 2, false);
    run(&mut machine, 5);
    assert_eq!(read_u32s(&machine, DPU, "returned", 2), [1, 0], "tasklet 1 stopped in handshake_notify");
    // Tasklet 1's entry still names it: tasklet 0's wait resumes it, finished as it is, and returns at once.
    run(&mut machine, 6);
    assert_eq!(read_u32s(&machine, DPU, "results", 2), [0, NOT_CALLED]);
    assert_eq!(read_u32s(&machine, DPU, "returned", 2), [1, 1]);
}

// ---- Performance counter -----------------------------------------------------------------------------------

#[test]
fn perfcounter_values_are_multiples_of_16() {
    let mut machine = loaded("sdk_sync_perfcounter", 1, false);
    run(&mut machine, 1);
    let samples = read_u64s(&machine, DPU, "samples", 8);
    assert!(samples.windows(2).all(|pair| pair[0] < pair[1]), "increasing: {samples:?}");
    assert!(samples.iter().all(|sample| sample.is_multiple_of(16)), "time reads bits 4..35: {samples:?}");
    let config_value = read_u64(&machine, DPU, "config_value");
    assert!(config_value.is_multiple_of(16) && config_value > samples[7], "perfcounter_config's value {config_value}");
}

#[test]
fn perfcounter_config_keeps_the_low_two_bits_of_its_configuration() {
    let mut machine = loaded("sdk_sync_perfcounter", 1, false);
    run(&mut machine, 2);
    let samples = read_u64s(&machine, DPU, "samples", 8);
    assert!(samples.windows(2).all(|pair| pair[0] < pair[1]), "5 counts cycles as 1 does: {samples:?}");
}

#[test]
fn a_v1b_only_perfcounter_configuration_is_runtime_fault_9() {
    let mut machine = loaded("sdk_sync_perfcounter", 1, false);
    let fault = run_to_fault(&mut machine, 3);
    assert_fault(&fault, FaultKind::Abort, "runtime fault 9");
    assert_eq!(fault.value, 7, "COUNT_ENABLE_BOTH: {fault}");
}

// ---- Virtual mutexes and mutex pools -----------------------------------------------------------------------

#[test]
fn a_virtual_mutex_left_locked_stays_locked_in_the_next_launch() {
    const HELD: u32 = 11;
    let mut machine = loaded("sdk_sync_vmutex", 1, false);
    let bitfield = |machine: &Machine| {
        let mut bytes = [0u8; 4];
        machine.read_symbol(DPU, "__vmutex_bits_vmutexes", 0, &mut bytes).unwrap();
        bytes
    };
    run(&mut machine, 3);
    assert_eq!(bitfield(&machine), [0; 4], "every virtual mutex unlocked");
    run(&mut machine, 1);
    assert_eq!(bitfield(&machine), [0, 1 << (HELD % 8), 0, 0], "virtual mutex {HELD} is a WRAM bit");
    let fault = run_to_fault(&mut machine, 2);
    assert_fault(&fault, FaultKind::Deadlock, "a DPU would hang");
}

#[test]
fn pools_and_virtual_mutexes_the_sdk_refuses_do_not_compile() {
    let build = |case: &str| {
        let dir = tempfile::tempdir().unwrap();
        KernelBuilder::new()
            .source(kernel_source("sdk_sync_refused"))
            .nr_tasklets(1)
            .define("CASE", Some(case))
            .flag("-O2")
            .build(dir.path().join(format!("sdk_sync_refused-{case}.dpusim")))
    };
    build("0").unwrap_or_else(|error| panic!("a pool of 4 and 16 virtual mutexes over 2: {error}"));
    for (case, what) in [("1", "a pool of 3"), ("2", "12 virtual mutexes"), ("3", "3 hardware mutexes")] {
        let error = build(case).expect_err(what);
        assert!(error.to_string().contains("should be"), "{what}: {error}");
    }
}
