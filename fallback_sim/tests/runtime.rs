//! The DPU runtime facilities, one test each: every test kernel of `tests/kernels` that must not fault runs on
//! a 1 rank x 4 DPUs machine with every tasklet count it supports, and each DPU's results are checked (inputs
//! differ per DPU where the kernel takes any, so that a DPU reading another's memory would show).

mod common;

use std::sync::Arc;

use common::{build, machine_with, read_u32, read_u32s, read_u64, read_u64s, write_u32, write_u64, TASKLET_COUNTS};
use upmem_sim::{
    DpuState, Machine, MemoryKind, Program, Schedule, SimConfig, TaskletStats, Topology, MRAM_HEAP, WRAM_BASE,
};

const DPUS: [u32; 4] = [0, 1, 2, 3];

/// Modelled cycles of one DMA transfer: alpha + bytes / 2 (crate docs, "Timing model").
const READ_ALPHA: u64 = 77;
const WRITE_ALPHA: u64 = 61;
const CLOCKS_PER_SEC: u32 = 350_000_000;

/// The kernels' stack setting: 24 tasklets of the default 1024-byte stacks leave too little WRAM for some.
fn stack_defines(nr_tasklets: u32) -> &'static [(&'static str, &'static str)] {
    if nr_tasklets == 24 {
        &[("STACK_SIZE_DEFAULT", "256")]
    } else {
        &[]
    }
}

fn program(kernel: &str, nr_tasklets: u32) -> Arc<Program> {
    build(kernel, nr_tasklets, stack_defines(nr_tasklets))
}

/// A 1 x 4 machine with `kernel` built for `nr_tasklets` loaded on every DPU.
fn loaded(kernel: &str, nr_tasklets: u32, adjust: impl FnOnce(&mut SimConfig)) -> Machine {
    let mut machine = machine_with(Topology::new(1, DPUS.len() as u32), adjust);
    machine.load(&DPUS, &program(kernel, nr_tasklets)).unwrap();
    machine
}

/// The tasklets' interleaving is perturbed, so that a lock or barrier that does not hold loses updates.
fn shuffled(config: &mut SimConfig) {
    config.schedule = Schedule::Shuffle { seed: 1 };
}

fn launch(machine: &mut Machine, kernel: &str, nr_tasklets: u32) {
    machine.launch(&DPUS).unwrap_or_else(|error| panic!("{kernel} with {nr_tasklets} tasklets: {error}"));
    for dpu in DPUS {
        assert_eq!(machine.dpu_state(dpu).unwrap(), DpuState::Done, "{kernel}, DPU {dpu}, {nr_tasklets} tasklets");
    }
}

fn to_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|word| word.to_le_bytes()).collect()
}

fn to_words(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks_exact(8).map(|chunk| u64::from_le_bytes(chunk.try_into().unwrap())).collect()
}

fn read_bytes(machine: &Machine, dpu: u32, symbol: &str, length: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; length];
    machine.read_symbol(dpu, symbol, 0, &mut bytes).unwrap();
    bytes
}

fn heap_offset(machine: &Machine, dpu: u32) -> u64 {
    machine.symbol(dpu, MRAM_HEAP).unwrap().offset()
}

fn write_heap(machine: &Machine, dpu: u32, offset: u64, words: &[u64]) {
    machine.write(dpu, MemoryKind::Mram, heap_offset(machine, dpu) + offset, &to_bytes(words)).unwrap();
}

fn read_heap(machine: &Machine, dpu: u32, offset: u64, nr_words: usize) -> Vec<u64> {
    let mut bytes = vec![0u8; nr_words * 8];
    machine.read(dpu, MemoryKind::Mram, heap_offset(machine, dpu) + offset, &mut bytes).unwrap();
    to_words(&bytes)
}

fn sorted(mut values: Vec<u32>) -> Vec<u32> {
    values.sort_unstable();
    values
}

/// The DMA a tasklet is expected to do, to compare with [`Machine::stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Dma {
    read_ops: u64,
    read_bytes: u64,
    write_ops: u64,
    write_bytes: u64,
}

impl Dma {
    fn read(&mut self, bytes: u32) {
        self.read_ops += 1;
        self.read_bytes += u64::from(bytes);
    }

    fn write(&mut self, bytes: u32) {
        self.write_ops += 1;
        self.write_bytes += u64::from(bytes);
    }

    /// Sum of alpha + bytes / 2 over the transfers (every size is a multiple of 8, so no rounding).
    fn cycles(&self) -> u64 {
        READ_ALPHA * self.read_ops + WRITE_ALPHA * self.write_ops + (self.read_bytes + self.write_bytes) / 2
    }

    fn of(stats: &TaskletStats) -> Dma {
        Dma {
            read_ops: stats.dma_read_ops,
            read_bytes: stats.dma_read_bytes,
            write_ops: stats.dma_write_ops,
            write_bytes: stats.dma_write_bytes,
        }
    }
}

/// Checks the DPU's per-tasklet DMA counters and its DMA cycles against the expected transfers.
fn check_dma_stats(machine: &Machine, dpu: u32, expected: &[Dma], what: &str) {
    let stats = machine.stats(dpu).unwrap();
    assert_eq!(stats.nr_tasklets as usize, expected.len(), "{what}: tasklets of DPU {dpu}");
    let measured: Vec<Dma> = stats.tasklets.iter().map(Dma::of).collect();
    assert_eq!(measured, expected, "{what}: DMA per tasklet of DPU {dpu}");
    let dma_cycles: u64 = expected.iter().map(Dma::cycles).sum();
    assert_eq!(stats.dma_cycles, dma_cycles, "{what}: DMA cycles of DPU {dpu} (alpha + bytes / 2 per transfer)");
    assert!(stats.cycles >= stats.dma_cycles, "{what}: DPU {dpu} counts {} cycles in all", stats.cycles);
}

/// (index, size) of the `block_bytes` blocks `total_bytes` is cut into (the last one may be short).
fn blocks(total_bytes: u32, block_bytes: u32) -> impl Iterator<Item = (u32, u32)> {
    (0..total_bytes.div_ceil(block_bytes)).map(move |b| (b, block_bytes.min(total_bytes - b * block_bytes)))
}

#[test]
fn empty_kernel_completes_without_dma() {
    for nr_tasklets in TASKLET_COUNTS {
        let mut machine = loaded("empty", nr_tasklets, |_| {});
        launch(&mut machine, "empty", nr_tasklets);
        for dpu in DPUS {
            assert_eq!(machine.fault(dpu).unwrap(), None);
            let stats = machine.stats(dpu).unwrap();
            assert_eq!(stats.launches, 1, "DPU {dpu}, {nr_tasklets} tasklets");
            check_dma_stats(&machine, dpu, &vec![Dma::default(); nr_tasklets as usize], "empty");
        }
    }
}

#[test]
fn mram_read_and_write_through_arrays_heap_and_stack() {
    const ARRAY_WORDS: usize = 4096;
    const NR_WORDS: u32 = 3000; // the rest of `output` must stay untouched
    const HEAP_WORDS: usize = 5000;
    const HEAP_BYTES: u32 = (HEAP_WORDS as u32 - 1) * 8; // the last word the host wrote is not transformed
    const HEAP_OUTPUT_OFFSET: u64 = 1 << 20;
    const BLOCK_BYTES: u32 = 1024;
    let input = |dpu: u32| -> Vec<u64> {
        (0..ARRAY_WORDS as u64).map(|i| i * 0x9E37_79B9 + 1 + (u64::from(dpu) << 40)).collect()
    };
    let heap =
        |dpu: u32| -> Vec<u64> { (0..HEAP_WORDS as u64).map(|i| i * 7 + 3 + u64::from(dpu) * 100_000).collect() };
    let addend = |dpu: u32| 5 + u64::from(dpu);

    for nr_tasklets in TASKLET_COUNTS {
        let mut machine = loaded("mram_rw", nr_tasklets, shuffled);
        for dpu in DPUS {
            machine.write_symbol(dpu, "input", 0, &to_bytes(&input(dpu))).unwrap();
            write_u32(&machine, dpu, "nr_words", NR_WORDS);
            write_u64(&machine, dpu, "addend", addend(dpu));
            write_heap(&machine, dpu, 0, &heap(dpu));
            write_u32(&machine, dpu, "heap_bytes", HEAP_BYTES);
        }
        launch(&mut machine, "mram_rw", nr_tasklets);

        let tasklets = nr_tasklets as usize;
        for dpu in DPUS {
            let what = format!("DPU {dpu}, {nr_tasklets} tasklets");
            let input = input(dpu);
            let output = read_u64s(&machine, dpu, "output", ARRAY_WORDS);
            for i in 0..NR_WORDS as usize {
                assert_eq!(output[i], input[i].wrapping_mul(3).wrapping_add(addend(dpu)), "output[{i}], {what}");
            }
            assert!(output[NR_WORDS as usize..].iter().all(|&word| word == 0), "output past nr_words, {what}");

            let heap = heap(dpu);
            let transformed = read_heap(&machine, dpu, HEAP_OUTPUT_OFFSET, HEAP_WORDS);
            for i in 0..HEAP_WORDS - 1 {
                assert_eq!(transformed[i], !heap[i], "heap output word {i}, {what}");
            }
            assert_eq!(transformed[HEAP_WORDS - 1], 0, "heap output past heap_bytes, {what}");

            let table: Vec<u64> = (1000..1008).collect();
            assert_eq!(read_u64s(&machine, dpu, "table_copy", 8), table, "initialised __mram array, {what}");
            let stack_sum = input[..4].iter().sum::<u64>();
            assert_eq!(read_u64s(&machine, dpu, "stack_sums", tasklets), vec![stack_sum; tasklets], "{what}");
            let heap_symbol = machine.symbol(dpu, MRAM_HEAP).unwrap();
            assert_eq!(read_u32(&machine, dpu, "heap_pointer"), heap_symbol.address, "DPU_MRAM_HEAP_POINTER, {what}");

            // Block b goes to tasklet b % NR_TASKLETS; tasklet 0 also copies the table; all read 4 words to the stack.
            let mut expected = vec![Dma::default(); tasklets];
            expected[0].read(64);
            for total in [NR_WORDS * 8, HEAP_BYTES] {
                for (block, bytes) in blocks(total, BLOCK_BYTES) {
                    expected[block as usize % tasklets].read(bytes);
                    expected[block as usize % tasklets].write(bytes);
                }
            }
            for tasklet in &mut expected {
                tasklet.read(32);
            }
            check_dma_stats(&machine, dpu, &expected, &format!("mram_rw, {nr_tasklets} tasklets"));
        }
    }
}

#[test]
fn mram_unaligned_read_and_write_at_any_offset() {
    const BYTES: usize = 1024;
    const FILL: u8 = 0x11;
    const OFFSETS: [u32; 8] = [0, 1, 3, 7, 8, 13, 100, 767];
    const LENGTHS: [u32; 12] = [0, 1, 2, 5, 7, 8, 9, 15, 16, 17, 100, 256];
    let source = |dpu: u32| -> Vec<u8> { (0..BYTES as u32).map(|i| (i * 7 + 3 + dpu * 31) as u8).collect() };
    let cases: Vec<(u32, u32)> = OFFSETS
        .iter()
        .flat_map(|&offset| LENGTHS.iter().map(move |&length| (offset, length)))
        .filter(|&(offset, length)| (offset + length) as usize <= BYTES)
        // 0 bytes at an aligned address move 2,048 bytes on a DPU (tests/sdk_seqread.rs).
        .filter(|&(offset, length)| length > 0 || offset % 8 != 0)
        .collect();

    for nr_tasklets in TASKLET_COUNTS {
        // Strict mode faults on unaligned DMA: the unaligned helpers must only issue aligned transfers.
        for strict in [false, true] {
            let mut machine = loaded("mram_unaligned_rw", nr_tasklets, |config| config.strict = strict);
            for dpu in DPUS {
                machine.write_symbol(dpu, "source", 0, &source(dpu)).unwrap();
            }
            // Each DPU of a launch takes another (offset, length).
            for chunk in cases.chunks(DPUS.len()) {
                let dpus = &DPUS[..chunk.len()];
                for (&dpu, &(offset, length)) in dpus.iter().zip(chunk) {
                    machine.write_symbol(dpu, "target", 0, &[FILL; BYTES]).unwrap();
                    write_u32(&machine, dpu, "offset", offset);
                    write_u32(&machine, dpu, "length", length);
                }
                machine.launch(dpus).unwrap_or_else(|error| {
                    panic!("{chunk:?} on DPUs {dpus:?}, {nr_tasklets} tasklets, strict {strict}: {error}")
                });
                for (&dpu, &(offset, length)) in dpus.iter().zip(chunk) {
                    let what =
                        format!("offset {offset}, length {length}, DPU {dpu}, {nr_tasklets} tasklets, strict {strict}");
                    let (offset, length) = (offset as usize, length as usize);
                    let read_back = read_bytes(&machine, dpu, "read_back", 256);
                    assert_eq!(read_back[..length], source(dpu)[offset..offset + length], "read_back, {what}");
                    if length > 0 {
                        assert_eq!(read_u32(&machine, dpu, "read_offset") as usize, offset % 8, "{what}");
                    }
                    let mut target = vec![FILL; BYTES];
                    for (i, byte) in target[offset..offset + length].iter_mut().enumerate() {
                        *byte = (0xA0 + i) as u8;
                    }
                    assert_eq!(read_bytes(&machine, dpu, "target", BYTES), target, "target, {what}");
                }
            }
        }
    }
}

#[test]
fn heap_allocates_disjoint_blocks_and_keeps_its_pointer_across_launches() {
    const STRIDE: u32 = 24; // mem_alloc(20), rounded up to 8 bytes
    for nr_tasklets in TASKLET_COUNTS {
        let program = program("heap", nr_tasklets);
        // The heap starts after the globals and every tasklet's nominal stack.
        let heap_start = (WRAM_BASE + program.wram_used()) as u32;
        let blocks = |from: u32| -> Vec<u32> { (from..from + nr_tasklets).map(|k| heap_start + STRIDE * k).collect() };
        let mut machine = loaded("heap", nr_tasklets, |_| {});
        let check_launch = |machine: &mut Machine, reset_heap: u32, first_block: u32, when: &str| {
            for dpu in DPUS {
                write_u32(machine, dpu, "reset_heap", reset_heap);
            }
            launch(machine, "heap", nr_tasklets);
            for dpu in DPUS {
                let what = format!("{when}: DPU {dpu}, {nr_tasklets} tasklets");
                let addresses = sorted(read_u32s(machine, dpu, "block_addresses", nr_tasklets as usize));
                assert_eq!(addresses, blocks(first_block), "blocks {what}");
                let errors = read_u32s(machine, dpu, "overlap_errors", nr_tasklets as usize);
                assert_eq!(errors, vec![0; nr_tasklets as usize], "bytes of a block another tasklet wrote, {what}");
                if reset_heap == 1 {
                    assert_eq!(read_u32(machine, dpu, "heap_start"), heap_start, "mem_reset() {what}");
                }
            }
        };
        check_launch(&mut machine, 0, 0, "first launch after load, no mem_reset");
        check_launch(&mut machine, 1, 0, "with mem_reset");
        check_launch(&mut machine, 0, nr_tasklets, "next launch, no mem_reset: the heap pointer persists");
        check_launch(&mut machine, 1, 0, "mem_reset again");
        machine.load(&DPUS, &program).unwrap();
        check_launch(&mut machine, 0, 0, "first launch after a reload");
    }
}

/// Runs an allocator kernel: tasklet 0's single-tasklet checks, then a block per tasklet.
fn check_allocator(kernel: &str, expected_checks: u32) {
    for nr_tasklets in TASKLET_COUNTS {
        let mut machine = loaded(kernel, nr_tasklets, |_| {});
        launch(&mut machine, kernel, nr_tasklets);
        for dpu in DPUS {
            let what = format!("{kernel}, DPU {dpu}, {nr_tasklets} tasklets");
            let failed_line = read_u32(&machine, dpu, "first_failed_line");
            assert_eq!(read_u32(&machine, dpu, "checks_failed"), 0, "{what}: first failed check at line {failed_line}");
            assert_eq!(read_u32(&machine, dpu, "checks_passed"), expected_checks, "{what}");
            let errors = read_u32s(&machine, dpu, "block_errors", nr_tasklets as usize);
            assert_eq!(errors, vec![0; nr_tasklets as usize], "bytes of a block another tasklet wrote, {what}");
        }
    }
}

#[test]
fn buddy_allocator_allocates_frees_reallocates_and_coalesces() {
    check_allocator("buddy_allocator", 17);
}

#[test]
fn fsb_allocator_hands_out_disjoint_fixed_size_blocks() {
    check_allocator("fsb_allocator", 6);
}

#[test]
fn barriers_hold_every_tasklet_and_rearm() {
    for nr_tasklets in TASKLET_COUNTS {
        let tasklets = nr_tasklets as usize;
        let mut machine = loaded("barrier", nr_tasklets, shuffled);
        for launch_number in 1..=2 {
            launch(&mut machine, "barrier", nr_tasklets);
            for dpu in DPUS {
                let what = format!("launch {launch_number}, DPU {dpu}, {nr_tasklets} tasklets");
                // BARRIER_INIT barrier, all tasklets.
                assert_eq!(read_u32s(&machine, dpu, "errors", tasklets), vec![0; tasklets], "BARRIER_INIT, {what}");
                assert_eq!(read_u32s(&machine, dpu, "phases_done", tasklets), vec![5; tasklets], "{what}");
                // barrier_t filled by hand, one per group of tasklets.
                let group_errors = read_u32s(&machine, dpu, "group_errors", tasklets);
                assert_eq!(group_errors, vec![0; tasklets], "hand-filled barrier_t, {what}");
                assert_eq!(read_u32s(&machine, dpu, "group_phases_done", tasklets), vec![4; tasklets], "{what}");
            }
        }
    }
}

#[test]
fn mutexes_exclude_across_dma_and_trylock_fails_when_held() {
    for nr_tasklets in TASKLET_COUNTS {
        let mut machine = loaded("mutex", nr_tasklets, shuffled);
        launch(&mut machine, "mutex", nr_tasklets);
        let increments = 8 * u64::from(nr_tasklets);
        for dpu in DPUS {
            let what = format!("DPU {dpu}, {nr_tasklets} tasklets");
            assert_eq!(read_u64(&machine, dpu, "mutex_total"), increments, "counter under MUTEX_INIT, {what}");
            assert_eq!(read_u64(&machine, dpu, "null_total"), increments, "counter under NULL mutex ids, {what}");
            assert_eq!(read_u32(&machine, dpu, "trylock_errors"), 0, "mutex_trylock, {what}");
        }
    }
}

#[test]
fn virtual_mutexes_and_mutex_pools_exclude_across_dma() {
    for nr_tasklets in TASKLET_COUNTS {
        let mut machine = loaded("vmutex_pool", nr_tasklets, shuffled);
        launch(&mut machine, "vmutex_pool", nr_tasklets);
        let expected = vec![2 * u64::from(nr_tasklets); 64];
        for dpu in DPUS {
            let what = format!("DPU {dpu}, {nr_tasklets} tasklets");
            assert_eq!(read_u64s(&machine, dpu, "vmutex_counters", 64), expected, "counters under vmutexes, {what}");
            assert_eq!(read_u64s(&machine, dpu, "pool_counters", 64), expected, "counters under the pool, {what}");
        }
    }
}

#[test]
fn semaphores_run_a_bounded_producer_consumer_queue() {
    const ITEMS_PER_CONSUMER: u32 = 6;
    for nr_tasklets in TASKLET_COUNTS.into_iter().filter(|&n| n >= 2) {
        let tasklets = nr_tasklets as usize;
        let items = u64::from(ITEMS_PER_CONSUMER * (nr_tasklets - 1));
        let mut machine = loaded("semaphore", nr_tasklets, shuffled);
        for launch_number in 1..=2 {
            launch(&mut machine, "semaphore", nr_tasklets);
            for dpu in DPUS {
                let what = format!("launch {launch_number}, DPU {dpu}, {nr_tasklets} tasklets");
                assert_eq!(u64::from(read_u32(&machine, dpu, "produced")), items, "{what}");
                let mut counts = vec![ITEMS_PER_CONSUMER; tasklets];
                counts[0] = 0; // tasklet 0 produces
                assert_eq!(read_u32s(&machine, dpu, "consumed_count", tasklets), counts, "{what}");
                let consumed: u64 = read_u64s(&machine, dpu, "consumed_sum", tasklets).iter().sum();
                assert_eq!(consumed, (0..items).map(|i| 100 + i).sum::<u64>(), "sum of consumed items, {what}");
                let order_errors = read_u32s(&machine, dpu, "order_errors", tasklets);
                assert_eq!(order_errors, vec![0; tasklets], "items out of order, {what}");
            }
        }
    }
}

#[test]
fn handshakes_chain_tasklets_and_a_second_waiter_gets_ealready() {
    for nr_tasklets in TASKLET_COUNTS.into_iter().filter(|&n| n >= 3) {
        let mut machine = loaded("handshake", nr_tasklets, shuffled);
        launch(&mut machine, "handshake", nr_tasklets);
        for dpu in DPUS {
            let what = format!("DPU {dpu}, {nr_tasklets} tasklets");
            let order: Vec<u32> = (0..nr_tasklets).collect();
            assert_eq!(read_u32s(&machine, dpu, "chain_order", nr_tasklets as usize), order, "chain, {what}");
            assert_eq!(read_u32(&machine, dpu, "chain_errors"), 0, "chain waits that failed, {what}");
            assert_eq!(read_u32(&machine, dpu, "success_count"), 1, "waiters that got 0, {what}");
            assert_eq!(read_u32(&machine, dpu, "ealready_count"), 1, "waiters that got EALREADY, {what}");
            assert_eq!(read_u32(&machine, dpu, "other_count"), 0, "waiters that got something else, {what}");
        }
    }
}

#[test]
fn atomic_bits_work_as_locks() {
    for nr_tasklets in TASKLET_COUNTS {
        let mut machine = loaded("atomic_bit", nr_tasklets, shuffled);
        launch(&mut machine, "atomic_bit", nr_tasklets);
        for dpu in DPUS {
            let what = format!("DPU {dpu}, {nr_tasklets} tasklets");
            let buckets = read_u64s(&machine, dpu, "bucket_counters", 4);
            assert_eq!(buckets, vec![2 * u64::from(nr_tasklets); 4], "counters under ATOMIC_BIT_GET bits, {what}");
            let total = read_u64(&machine, dpu, "total_counter");
            assert_eq!(total, 8 * u64::from(nr_tasklets), "counter under ATOMIC_BIT_ACQUIRE, {what}");
            assert_eq!(read_u32(&machine, dpu, "lock_errors"), 0, "distinct bits are distinct locks, {what}");
        }
    }
}

#[test]
fn perfcounter_is_monotone_and_counts_dma_cycles() {
    const BLOCK_BYTES: u32 = 2048;
    const SMALL_BLOCKS: u64 = 16;
    const LARGE_BLOCKS: u64 = 256;
    let block_cycles = READ_ALPHA + u64::from(BLOCK_BYTES) / 2;
    for nr_tasklets in TASKLET_COUNTS {
        let mut machine = loaded("perfcounter", nr_tasklets, |_| {});
        launch(&mut machine, "perfcounter", nr_tasklets);
        for dpu in DPUS {
            let what = format!("DPU {dpu}, {nr_tasklets} tasklets");
            let samples = read_u64s(&machine, dpu, "samples", 3);
            assert!(samples[0] <= samples[1] && samples[1] <= samples[2], "samples {samples:?}, {what}");
            assert_eq!(read_u32(&machine, dpu, "monotone_errors"), 0, "counter went down, {what}");
            let small = read_u64(&machine, dpu, "small_cycles");
            let large = read_u64(&machine, dpu, "large_cycles");
            assert_eq!((small, large), (samples[1] - samples[0], samples[2] - samples[1]), "{what}");
            // The counter includes the DMA cost model, so it grows at least by the transfers' cycles.
            assert!(small >= SMALL_BLOCKS * block_cycles, "{small} cycles for {SMALL_BLOCKS} blocks, {what}");
            assert!(large >= LARGE_BLOCKS * block_cycles, "{large} cycles for {LARGE_BLOCKS} blocks, {what}");
            assert!(large > small, "16 times the DMA took {large} cycles, against {small}, {what}");
            assert_eq!(read_u32(&machine, dpu, "clocks_per_sec"), CLOCKS_PER_SEC, "CLOCKS_PER_SEC, {what}");

            // Only tasklet 0 reads.
            let mut expected = vec![Dma::default(); nr_tasklets as usize];
            for _ in 0..SMALL_BLOCKS + LARGE_BLOCKS {
                expected[0].read(BLOCK_BYTES);
            }
            check_dma_stats(&machine, dpu, &expected, &format!("perfcounter, {nr_tasklets} tasklets"));
            let stats = machine.stats(dpu).unwrap();
            assert!(
                stats.cycles >= samples[2],
                "the DPU's {} cycles include the counter's {}, {what}",
                stats.cycles,
                samples[2]
            );
        }
    }
}

#[test]
fn sequential_readers_sum_any_range() {
    const MAX_ELEMENTS: u32 = 8192;
    // (first_element, nr_elements): odd starts, a range clamped at the end of the array, an empty range.
    const RANGES: [(u32, u32); 8] = [(0, 8192), (3, 8000), (1, 1), (8190, 100), (5, 0), (7, 77), (4096, 4096), (2, 31)];
    let elements =
        |dpu: u32| -> Vec<u32> { (0..MAX_ELEMENTS).map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(dpu)).collect() };
    for nr_tasklets in TASKLET_COUNTS {
        let tasklets = nr_tasklets as usize;
        let mut machine = loaded("seqread_sum", nr_tasklets, shuffled);
        for dpu in DPUS {
            let bytes: Vec<u8> = elements(dpu).iter().flat_map(|element| element.to_le_bytes()).collect();
            machine.write_symbol(dpu, "elements", 0, &bytes).unwrap();
        }
        // Each DPU of a launch sums another range.
        for chunk in RANGES.chunks(DPUS.len()) {
            for (&dpu, &(first, count)) in DPUS.iter().zip(chunk) {
                write_u32(&machine, dpu, "first_element", first);
                write_u32(&machine, dpu, "nr_elements", count);
            }
            launch(&mut machine, "seqread_sum", nr_tasklets);
            for (&dpu, &(first, count)) in DPUS.iter().zip(chunk) {
                let what = format!("elements {first} + {count}, DPU {dpu}, {nr_tasklets} tasklets");
                let end = (first + count).min(MAX_ELEMENTS) as usize;
                let expected: u64 = elements(dpu)[first as usize..end].iter().map(|&e| u64::from(e)).sum();
                let sum: u64 = read_u64s(&machine, dpu, "partial_sums", tasklets).iter().sum();
                assert_eq!(sum, expected, "sum, {what}");
                assert_eq!(
                    read_u32s(&machine, dpu, "tell_errors", tasklets),
                    vec![0; tasklets],
                    "seqread_tell, {what}"
                );
                assert_eq!(
                    read_u32s(&machine, dpu, "seek_errors", tasklets),
                    vec![0; tasklets],
                    "seqread_seek, {what}"
                );
                assert_eq!(read_u32(&machine, dpu, "cache_bytes"), 256, "heap taken by seqread_alloc, {what}");
            }
        }
    }
}

#[test]
fn printf_puts_and_putchar_fill_the_log_which_each_launch_clears() {
    for nr_tasklets in TASKLET_COUNTS {
        let mut machine = loaded("printf", nr_tasklets, |_| {});
        let log = |machine: &Machine, dpu: u32| String::from_utf8(machine.log(dpu).unwrap()).unwrap();
        let check_log = |text: &str, id: u32, what: &str| {
            let first_lines = [
                format!("hello from dpu {id}"),
                "a line from puts".to_owned(),
                "x".to_owned(),
                "-42 42 beef str c 1099511627776 3.25".to_owned(),
                format!("tasklet 0 of {nr_tasklets}"),
            ];
            assert!(text.ends_with('\n'), "the log ends with a whole line, {what}: {text:?}");
            let lines: Vec<&str> = text.lines().collect();
            // Tasklet 0's lines in order; the other tasklets' lines, whole, in any order.
            let others: Vec<String> = (1..nr_tasklets).map(|t| format!("tasklet {t} of {nr_tasklets}")).collect();
            let of_tasklet_0: Vec<&str> =
                lines.iter().copied().filter(|line| !others.iter().any(|o| o == line)).collect();
            assert_eq!(of_tasklet_0, first_lines, "tasklet 0's lines, {what}: {text:?}");
            let mut expected: Vec<&str> = first_lines.iter().chain(&others).map(String::as_str).collect();
            let mut lines = lines;
            expected.sort_unstable();
            lines.sort_unstable();
            assert_eq!(lines, expected, "lines of the log, {what}");
        };

        for dpu in DPUS {
            write_u32(&machine, dpu, "dpu_id", 7 + dpu);
        }
        launch(&mut machine, "printf", nr_tasklets);
        let first_logs: Vec<String> = DPUS.iter().map(|&dpu| log(&machine, dpu)).collect();
        for dpu in DPUS {
            check_log(&first_logs[dpu as usize], 7 + dpu, &format!("DPU {dpu}, {nr_tasklets} tasklets"));
        }
        launch(&mut machine, "printf", nr_tasklets);
        for dpu in DPUS {
            let what = format!("relaunch, DPU {dpu}, {nr_tasklets} tasklets");
            assert_eq!(log(&machine, dpu), first_logs[dpu as usize], "the log is the last launch's, {what}");
        }
        for dpu in DPUS {
            write_u32(&machine, dpu, "dpu_id", 100 + dpu);
        }
        launch(&mut machine, "printf", nr_tasklets);
        for dpu in DPUS {
            check_log(&log(&machine, dpu), 100 + dpu, &format!("third launch, DPU {dpu}, {nr_tasklets} tasklets"));
        }
    }
}

#[test]
fn stream_reads_the_heap_in_2048_byte_blocks() {
    const BLOCK_BYTES: u32 = 2048;
    const STREAM_BYTES: u32 = 2 << 20;
    let words = |dpu: u32| -> Vec<u64> {
        (0..u64::from(STREAM_BYTES / 8)).map(|i| i * 0x0123_4567_89AB + 11 + u64::from(dpu)).collect()
    };
    for nr_tasklets in TASKLET_COUNTS {
        let tasklets = nr_tasklets as usize;
        let mut machine = loaded("stream", nr_tasklets, |_| {});
        for dpu in DPUS {
            write_heap(&machine, dpu, 0, &words(dpu));
            write_u32(&machine, dpu, "stream_bytes", STREAM_BYTES);
        }
        launch(&mut machine, "stream", nr_tasklets);
        for dpu in DPUS {
            let what = format!("DPU {dpu}, {nr_tasklets} tasklets");
            let checksum = read_u64s(&machine, dpu, "checksums", tasklets).iter().fold(0u64, |a, &b| a.wrapping_add(b));
            let expected = words(dpu).iter().fold(0u64, |a, &b| a.wrapping_add(b));
            assert_eq!(checksum, expected, "checksum, {what}");
            // Block b is read by tasklet b % NR_TASKLETS.
            let mut dma = vec![Dma::default(); tasklets];
            for (block, bytes) in blocks(STREAM_BYTES, BLOCK_BYTES) {
                dma[block as usize % tasklets].read(bytes);
            }
            check_dma_stats(&machine, dpu, &dma, &format!("stream, {nr_tasklets} tasklets"));
        }
    }
}
