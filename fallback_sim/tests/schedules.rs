//! Tasklets on modelled time: each kernel here is correct on a DPU only because of how the DPU interleaves its
//! tasklets (tests/kernels/README.md, "Kernels that rely on the DPU's timing"). The default schedule runs them
//! correctly with 1, 2, 16 and 24 tasklets; the fast schedule (each tasklet runs until it blocks) breaks them,
//! which shows the two apart. The model is deterministic across runs and worker counts, tasklets waiting for
//! their DMA leave the pipeline to the others, a DMA costs the simulator one tasklet switch, and the shuffle
//! schedule finds a planted race.

mod common;

use std::sync::Arc;

use common::{build, machine_with, read_u32, read_u32s, read_u64s, write_u32};
use upmem_sim::{DpuStats, Machine, Program, Schedule, SimError, Topology};

const TASKLET_COUNTS: [u32; 4] = [1, 2, 16, 24];
/// Tasklet counts at which the fast schedule breaks every pattern. With 1 tasklet there is nothing to
/// interleave, and with 2 the fast schedule happens to produce the DPU's order for some of them.
const FAST_BREAKS_AT: [u32; 2] = [16, 24];
const DPUS: [u32; 4] = [0, 1, 2, 3];

fn program(kernel: &str, nr_tasklets: u32) -> Arc<Program> {
    let stack: &[(&str, &str)] = if nr_tasklets == 24 { &[("STACK_SIZE_DEFAULT", "256")] } else { &[] };
    build(kernel, nr_tasklets, stack)
}

/// Loads `kernel` on a 1 x 4 machine, lets `setup` write each DPU's inputs and launches. `Err` is the fault.
fn launch(
    kernel: &str,
    nr_tasklets: u32,
    schedule: Schedule,
    workers: usize,
    setup: impl Fn(&Machine, u32),
) -> Result<Machine, SimError> {
    let mut machine = machine_with(Topology::new(1, DPUS.len() as u32), |config| {
        config.schedule = schedule;
        config.workers = workers;
    });
    machine.load(&DPUS, &program(kernel, nr_tasklets)).unwrap();
    for dpu in DPUS {
        setup(&machine, dpu);
    }
    machine.launch(&DPUS).map(|()| machine)
}

// ---- Shared counter updated after a DMA ----------------------------------------------------------------------

const ROUNDS: u32 = 8;

fn counter_after_dma_expected(nr_tasklets: u32) -> Vec<u64> {
    let mut words = Vec::new();
    for round in 0..u64::from(ROUNDS) {
        for t in 0..u64::from(nr_tasklets) {
            let count = 1 + (7 * t + 3 * round) % 8;
            words.extend((0..count).map(|i| (round << 16) | (t << 8) | i));
        }
    }
    words
}

/// Each DPU's output words, or the fault.
fn counter_after_dma(nr_tasklets: u32, schedule: Schedule, workers: usize) -> Result<Vec<Vec<u64>>, SimError> {
    let machine =
        launch("counter_after_dma", nr_tasklets, schedule, workers, |m, dpu| write_u32(m, dpu, "nr_rounds", ROUNDS))?;
    let length = counter_after_dma_expected(nr_tasklets).len();
    Ok(DPUS.map(|dpu| read_u64s(&machine, dpu, "output", length)).to_vec())
}

#[test]
fn a_counter_updated_after_a_dma_is_read_while_the_dma_is_in_flight() {
    for nr_tasklets in TASKLET_COUNTS {
        let expected = counter_after_dma_expected(nr_tasklets);
        for (dpu, output) in counter_after_dma(nr_tasklets, Schedule::Modelled, 2).unwrap().iter().enumerate() {
            assert_eq!(output, &expected, "DPU {dpu}, {nr_tasklets} tasklets");
        }
    }
    for nr_tasklets in FAST_BREAKS_AT {
        let outputs = counter_after_dma(nr_tasklets, Schedule::Fast, 2).unwrap();
        assert_ne!(outputs[0], counter_after_dma_expected(nr_tasklets), "fast schedule, {nr_tasklets} tasklets");
    }
}

// ---- Handshake order ---------------------------------------------------------------------------------------

const END_MARKER: u64 = u64::MAX;

fn handshake_order_expected(nr_tasklets: u32) -> Vec<u64> {
    let mut words = Vec::new();
    for t in 0..u64::from(nr_tasklets) {
        let count = 1 + (3 * t + 2) % 7;
        words.extend((0..count).map(|i| (t << 8) | i));
    }
    words.push(END_MARKER);
    words
}

fn handshake_order(nr_tasklets: u32, schedule: Schedule, workers: usize) -> Result<Vec<Vec<u64>>, SimError> {
    let machine = launch("handshake_order", nr_tasklets, schedule, workers, |_, _| {})?;
    let length = handshake_order_expected(nr_tasklets).len();
    Ok(DPUS.map(|dpu| read_u64s(&machine, dpu, "output", length)).to_vec())
}

#[test]
fn after_a_handshake_the_notifier_is_ahead_of_the_waiter() {
    for nr_tasklets in TASKLET_COUNTS {
        let expected = handshake_order_expected(nr_tasklets);
        for (dpu, output) in handshake_order(nr_tasklets, Schedule::Modelled, 2).unwrap().iter().enumerate() {
            assert_eq!(output, &expected, "DPU {dpu}, {nr_tasklets} tasklets");
        }
    }
    for nr_tasklets in [2].into_iter().chain(FAST_BREAKS_AT) {
        let outputs = handshake_order(nr_tasklets, Schedule::Fast, 2).unwrap();
        assert_ne!(outputs[0], handshake_order_expected(nr_tasklets), "fast schedule, {nr_tasklets} tasklets");
    }
}

// ---- Unequal work after a barrier --------------------------------------------------------------------------

const ITEMS: [u32; 5] = [17, 4, 250, 99, 1];

fn unequal_work_checksum() -> u32 {
    ITEMS.iter().map(|item| (0..200).map(|k| (item * k) % 1021).sum::<u32>()).sum()
}

/// Each DPU's (iterations per tasklet, checksum), or the fault.
fn unequal_work(nr_tasklets: u32, schedule: Schedule, workers: usize) -> Result<Vec<(Vec<u32>, u32)>, SimError> {
    let machine = launch("unequal_work", nr_tasklets, schedule, workers, |machine, dpu| {
        write_u32(machine, dpu, "stack_size", ITEMS.len() as u32);
        let bytes: Vec<u8> = ITEMS.iter().flat_map(|item| item.to_le_bytes()).collect();
        machine.write_symbol(dpu, "items", 0, &bytes).unwrap();
    })?;
    Ok(DPUS
        .map(|dpu| (read_u32s(&machine, dpu, "iterations", nr_tasklets as usize), read_u32(&machine, dpu, "checksum")))
        .to_vec())
}

#[test]
fn a_tasklet_with_extra_work_after_a_barrier_falls_behind() {
    for nr_tasklets in TASKLET_COUNTS {
        let expected = (vec![ITEMS.len() as u32; nr_tasklets as usize], unequal_work_checksum());
        for (dpu, outcome) in unequal_work(nr_tasklets, Schedule::Modelled, 2).unwrap().iter().enumerate() {
            assert_eq!(outcome, &expected, "DPU {dpu}, {nr_tasklets} tasklets");
        }
    }
    // The tasklets that leave the loop early leave the others stopped at the barrier for ever, which ends a DPU
    // as if they had finished: the run completes with fewer iterations.
    for nr_tasklets in FAST_BREAKS_AT {
        let outcomes = unequal_work(nr_tasklets, Schedule::Fast, 2).unwrap();
        assert!(
            outcomes.iter().all(|(iterations, _)| iterations.iter().any(|&n| n < ITEMS.len() as u32)),
            "fast schedule, {nr_tasklets} tasklets: some tasklets leave early, {outcomes:?}"
        );
    }
}

// ---- Determinism -------------------------------------------------------------------------------------------

/// Everything a launch's timing model produces, per DPU.
fn timing(stats: &DpuStats) -> (u64, u64, u64, Vec<(u64, u64)>) {
    let tasklets = stats.tasklets.iter().map(|t| (t.instructions, t.cycles)).collect();
    (stats.cycles, stats.instructions, stats.dma_cycles, tasklets)
}

#[test]
fn outputs_and_cycle_counts_do_not_depend_on_runs_or_workers() {
    for schedule in [Schedule::Modelled, Schedule::Shuffle { seed: 7 }] {
        let mut runs = Vec::new();
        for workers in [1, 2, 1, 2] {
            let machine = launch("counter_after_dma", 16, schedule, workers, |m, dpu| {
                write_u32(m, dpu, "nr_rounds", ROUNDS);
            })
            .unwrap();
            let length = counter_after_dma_expected(16).len();
            let outputs: Vec<Vec<u64>> = DPUS.map(|dpu| read_u64s(&machine, dpu, "output", length)).to_vec();
            let timings: Vec<_> = DPUS.map(|dpu| timing(&machine.stats(dpu).unwrap())).to_vec();
            assert!(timings[0].0 > 0 && timings[0].1 > 0, "{schedule}: the model counted nothing");
            runs.push((workers, outputs, timings));
        }
        for (workers, outputs, timings) in &runs[1..] {
            assert_eq!(outputs, &runs[0].1, "{schedule}, {workers} workers: outputs");
            assert_eq!(timings, &runs[0].2, "{schedule}, {workers} workers: cycles and instructions");
        }
    }
}

// ---- The pipeline: a tasklet waiting for its DMA issues nothing ---------------------------------------------

const LOOP_ITERATIONS: u32 = 20_000;
const READS: u32 = 400;

/// Modelled cycles per instruction of the 16 - `nr_readers` tasklets that compute while the others read MRAM
/// back to back (dma_waits.c), the largest over DPU 0's tasklets, after checking every tasklet's result.
fn computing_interval(nr_readers: u32) -> f64 {
    let machine = launch("dma_waits", 16, Schedule::Modelled, 2, |machine, dpu| {
        write_u32(machine, dpu, "nr_readers", nr_readers);
        write_u32(machine, dpu, "block_bytes", 2048);
        write_u32(machine, dpu, "reads", READS);
        write_u32(machine, dpu, "iterations", LOOP_ITERATIONS);
        let blocks: Vec<u8> = (0..16u8).flat_map(|t| std::iter::repeat_n(t + 1, 2048)).collect();
        machine.write_symbol(dpu, "blocks", 0, &blocks).unwrap();
    })
    .unwrap();
    let loop_value = (0..LOOP_ITERATIONS).fold(0u32, |sum, i| (sum << 1) ^ i);
    for (t, sum) in read_u32s(&machine, 0, "sums", 16).into_iter().enumerate() {
        let expected = if (t as u32) < nr_readers { (t as u32 + 1) * READS } else { loop_value };
        assert_eq!(sum, expected, "tasklet {t}'s result, {nr_readers} readers");
    }
    let stats = machine.stats(0).unwrap();
    stats.tasklets[nr_readers as usize..]
        .iter()
        .map(|tasklet| tasklet.cycles as f64 / tasklet.instructions as f64)
        .fold(0.0, f64::max)
}

#[test]
fn tasklets_waiting_for_dma_leave_the_pipeline_to_the_others() {
    let all_compute = computing_interval(0);
    assert!((16.0..16.3).contains(&all_compute), "16 tasklets computing: each issues every {all_compute:.2} cycles");
    // The readers wait for the DMA engine nearly all the time: the 8 others issue as fast as one tasklet can.
    let beside_readers = computing_interval(8);
    assert!(
        (11.0..11.3).contains(&beside_readers),
        "8 tasklets computing beside 8 waiting for DMA: each issues every {beside_readers:.2} cycles"
    );
}

/// A DMA costs the simulator one tasklet switch under the modelled schedule: a tasklet that reaches its transfer
/// with others behind it leaves the transfer to the pick, which issues it at its turn without resuming it only to
/// give way again (pipeline.c). 16 tasklets gathering 8 bytes at a time, as an SpMM kernel gathers X rows: with
/// a few instructions between transfers, nearly every one finds others behind it.
#[test]
fn a_dma_costs_the_simulator_one_tasklet_switch() {
    let machine = launch("dma_waits", 16, Schedule::Modelled, 2, |machine, dpu| {
        write_u32(machine, dpu, "nr_readers", 16);
        write_u32(machine, dpu, "block_bytes", 8);
        write_u32(machine, dpu, "reads", READS);
        write_u32(machine, dpu, "iterations", 0);
        let blocks: Vec<u8> = (0..16u8).flat_map(|t| std::iter::repeat_n(t + 1, 2048)).collect();
        machine.write_symbol(dpu, "blocks", 0, &blocks).unwrap();
    })
    .unwrap();
    let sums = read_u32s(&machine, 0, "sums", 16);
    assert_eq!(sums, (1..=16).map(|t| t * READS).collect::<Vec<_>>());
    let stats = machine.stats(0).unwrap();
    let transfers = stats.dma_transfers();
    assert_eq!(transfers, 16 * u64::from(READS));
    let per_transfer = stats.switches as f64 / transfers as f64;
    assert!((0.9..1.1).contains(&per_transfer), "{} switches for {transfers} transfers", stats.switches);
}

// ---- Shuffle -----------------------------------------------------------------------------------------------

/// The planted race's final counter on DPU 0 (correct: 16 tasklets x 8 increments).
fn planted_race(schedule: Schedule) -> u32 {
    let machine = launch("planted_race", 16, schedule, 1, |_, _| {}).unwrap();
    read_u32(&machine, 0, "counter")
}

#[test]
fn the_shuffle_schedule_finds_a_planted_race() {
    let correct = 16 * 8;
    assert_eq!(planted_race(Schedule::Fast), correct, "the fast schedule hides the race");
    let found: Vec<u64> = (1..=8).filter(|&seed| planted_race(Schedule::Shuffle { seed }) != correct).collect();
    assert!(!found.is_empty(), "no seed in 1..=8 lost an update");
    let seed = found[0];
    assert_eq!(
        planted_race(Schedule::Shuffle { seed }),
        planted_race(Schedule::Shuffle { seed }),
        "a seed gives the same interleaving every time"
    );
}
