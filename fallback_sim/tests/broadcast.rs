//! Broadcasts without copies: the same bytes sent to many DPUs are stored once and shared copy-on-write; a host
//! or kernel write to a shared page makes that page the writer's own, and nothing else changes. (A test binary
//! of its own: it measures the process's shared memory.)

mod common;

use common::{build, machine, read_u32, write_u32, write_u64};
use upmem_sim::{MemoryKind, MRAM_HEAP};

const NR_DPUS: u32 = 64;
const BYTES: usize = 2 << 20;
/// Where mram_rw writes its heap outputs (HEAP_OUTPUT_OFFSET), inside the broadcast range.
const OUTPUT_OFFSET: u64 = 1 << 20;

/// This process's resident shared memory (`RssShmem`), where the simulated DPUs' memories live.
fn resident_shared_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("reading /proc/self/status");
    let line = status.lines().find(|line| line.starts_with("RssShmem:")).expect("RssShmem in /proc/self/status");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("RssShmem in kB")
}

fn word(bytes: &[u8], index: usize) -> u64 {
    u64::from_le_bytes(bytes[8 * index..8 * index + 8].try_into().expect("8 bytes"))
}

#[test]
fn broadcast_pages_are_shared_and_a_write_makes_a_page_the_writers_own() {
    let program = build("mram_rw", 4, &[]);
    let mut machine = machine(1, NR_DPUS);
    let dpus: Vec<u32> = (0..NR_DPUS).collect();
    machine.load(&dpus, &program).unwrap();
    let heap = machine.symbol(0, MRAM_HEAP).unwrap().offset();
    let data: Vec<u8> = (0..BYTES).map(|i| (i * 7 % 251) as u8).collect();

    let before = resident_shared_kib();
    machine.broadcast(&dpus, MemoryKind::Mram, heap, &data).unwrap();
    let grown = resident_shared_kib().saturating_sub(before);
    let copies = NR_DPUS as usize * BYTES / 1024;
    assert!(grown < 3 * BYTES / 1024, "{NR_DPUS} DPUs x {BYTES} bytes grew memory by {grown} KiB ({copies} as copies)");

    let read = |machine: &upmem_sim::Machine, dpu: u32| {
        let mut bytes = vec![0u8; BYTES];
        machine.read(dpu, MemoryKind::Mram, heap, &mut bytes).unwrap();
        bytes
    };
    for dpu in [0, 1, NR_DPUS / 2, NR_DPUS - 1] {
        assert!(read(&machine, dpu) == data, "DPU {dpu} reads the broadcast bytes");
    }

    // A host write into a shared page: the writer sees it, the others do not.
    let at = 3 * 4096 + 5;
    machine.write(1, MemoryKind::Mram, heap + at as u64, &[0xEE; 3]).unwrap();
    let mut expected = data.clone();
    expected[at..at + 3].fill(0xEE);
    assert!(read(&machine, 1) == expected, "DPU 1 sees its write and the rest of the broadcast");
    assert!(read(&machine, 0) == data, "DPU 0 does not see DPU 1's write");

    // Kernel writes: every DPU writes ~word for its first heap_bytes / 8 words at heap + 1 MiB, inside the
    // broadcast; DPU 2 writes fewer words than the others.
    for &dpu in &dpus {
        write_u32(&machine, dpu, "nr_words", 4);
        write_u64(&machine, dpu, "addend", 0);
        write_u32(&machine, dpu, "heap_bytes", if dpu == 2 { 8 << 10 } else { 64 << 10 });
    }
    machine.launch(&dpus).unwrap();
    for dpu in [0, 2, 3] {
        let bytes = read(&machine, dpu);
        let written = read_u32(&machine, dpu, "heap_bytes") as usize / 8;
        let outputs = OUTPUT_OFFSET as usize / 8;
        for index in [0, written - 1, written, 4096] {
            let found = word(&bytes, outputs + index);
            let broadcast = word(&data, outputs + index);
            if index < written {
                assert_eq!(found, !word(&data, index), "DPU {dpu}, output word {index}: the kernel's write");
            } else {
                assert_eq!(found, broadcast, "DPU {dpu}, word {index} past its outputs: still the broadcast");
            }
        }
        let before_outputs = &bytes[..OUTPUT_OFFSET as usize];
        assert!(before_outputs == &data[..OUTPUT_OFFSET as usize], "DPU {dpu}: the rest is unchanged");
    }
}

#[test]
fn a_broadcast_over_part_of_an_earlier_one_keeps_the_rest_of_it() {
    const PAGE: usize = 4096;
    let mut machine = machine(1, 4);
    let dpus: Vec<u32> = (0..4).collect();
    let first: Vec<u8> = (0..64 * PAGE).map(|i| (i * 7 % 251) as u8).collect();
    let second: Vec<u8> = (0..64 * PAGE).map(|i| (i * 13 % 241) as u8 ^ 0x5A).collect();
    machine.broadcast(&dpus, MemoryKind::Mram, 0, &first).unwrap();
    // DPU 1 makes a page of the first broadcast its own, in the part the second does not cover.
    machine.write(1, MemoryKind::Mram, 5 * PAGE as u64 + 8, &[0xEE; 8]).unwrap();
    machine.broadcast(&dpus, MemoryKind::Mram, 32 * PAGE as u64, &second).unwrap();

    let mut expected = first[..32 * PAGE].to_vec();
    expected.extend_from_slice(&second);
    for &dpu in &dpus {
        let mut bytes = vec![0u8; 96 * PAGE];
        machine.read(dpu, MemoryKind::Mram, 0, &mut bytes).unwrap();
        let mut expected = expected.clone();
        if dpu == 1 {
            expected[5 * PAGE + 8..5 * PAGE + 16].fill(0xEE);
        }
        let differs = bytes.iter().zip(&expected).position(|(found, wanted)| found != wanted);
        assert_eq!(differs, None, "DPU {dpu}: first byte that differs from the two broadcasts");
    }
}

#[test]
fn a_repeated_broadcast_replaces_the_bytes_and_the_pages_made_own() {
    const PAGE: usize = 4096;
    let mut machine = machine(1, 4);
    let all: Vec<u32> = (0..4).collect();
    let layer = |seed: usize| -> Vec<u8> { (0..32 * PAGE).map(|i| ((i + seed) * 7 % 251) as u8).collect() };
    let read = |machine: &upmem_sim::Machine, dpu: u32| {
        let mut bytes = vec![0u8; 32 * PAGE];
        machine.read(dpu, MemoryKind::Mram, 0, &mut bytes).unwrap();
        bytes
    };
    machine.broadcast(&all, MemoryKind::Mram, 0, &layer(0)).unwrap();
    machine.write(1, MemoryKind::Mram, 3 * PAGE as u64, &[0xEE; 16]).unwrap();

    // The same DPUs and range again (the shared pages are rewritten in place): DPU 1's page is shared again.
    machine.broadcast(&all, MemoryKind::Mram, 0, &layer(1)).unwrap();
    for &dpu in &all {
        assert!(read(&machine, dpu) == layer(1), "DPU {dpu} reads the second broadcast");
    }
    // Every DPU still has its copy-on-write: a write is seen by its writer only.
    machine.write(2, MemoryKind::Mram, 5 * PAGE as u64, &[0xCC; 8]).unwrap();
    let mut written = layer(1);
    written[5 * PAGE..5 * PAGE + 8].fill(0xCC);
    assert!(read(&machine, 2) == written, "DPU 2 sees its write");
    assert!(read(&machine, 3) == layer(1), "DPU 3 does not see DPU 2's write");

    // Part of the DPUs: the others keep what they had.
    machine.broadcast(&all[..2], MemoryKind::Mram, 0, &layer(2)).unwrap();
    assert!(read(&machine, 0) == layer(2) && read(&machine, 1) == layer(2), "DPUs 0 and 1 read the third");
    assert!(read(&machine, 2) == written, "DPU 2 keeps the second broadcast and its write");
    assert!(read(&machine, 3) == layer(1), "DPU 3 keeps the second broadcast");
}
