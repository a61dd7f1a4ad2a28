//! Broadcasts without copies: the same bytes sent to many DPUs are stored once and shared copy-on-write; a host
//! or kernel write to a shared page makes that page the writer's own, and nothing else changes. (A test binary
//! of its own: it measures the process's shared memory.)

mod common;

use common::{build, machine, read_u32, write_u32, write_u64};
use upmem_sim::{MemoryKind, MRAM_HEAP_SYMBOL};

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
    let heap = machine.symbol(0, MRAM_HEAP_SYMBOL).unwrap().offset();
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
