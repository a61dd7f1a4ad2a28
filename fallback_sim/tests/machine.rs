//! The machine: isolation of DPU memories, persistence across launches, reset on reload, MRAM addresses,
//! topologies with disabled DPUs, asynchronous launches, and the errors of misuse.

mod common;

use std::sync::Arc;

use common::{build, machine, machine_with, read_u32, read_u32s, read_u64, read_u64s, write_u32};
use upmem_sim::{DpuState, MemoryKind, Program, SimError, Topology, MRAM_BASE, MRAM_HEAP};

const ID_STRIDE: u32 = 1000;
const HEAP_TAG: u64 = 1 << 31;

/// Every DPU writes its own id into WRAM, a named MRAM array and the MRAM heap; nobody sees another's.
fn check_isolation(topology: Topology, nr_tasklets: u32) {
    let program = build("isolation", nr_tasklets, &[]);
    let mut machine = machine_with(topology, |_| {});
    let dpus: Vec<u32> = machine.topology().enabled_dpus().collect();
    machine.load(&dpus, &program).unwrap();
    for &dpu in &dpus {
        write_u32(&machine, dpu, "dpu_id", dpu + 7);
    }
    machine.launch(&dpus).unwrap();
    let heap = machine.symbol(dpus[0], MRAM_HEAP).unwrap();
    for &dpu in &dpus {
        let id = dpu + 7;
        let tasklets = nr_tasklets as usize;
        let wram: Vec<u32> = (0..nr_tasklets).map(|t| id * ID_STRIDE + t).collect();
        assert_eq!(read_u32s(&machine, dpu, "wram_ids", tasklets), wram, "WRAM of DPU {dpu}");
        let mram: Vec<u64> = (0..u64::from(nr_tasklets)).map(|t| (u64::from(id) << 32) | t).collect();
        assert_eq!(read_u64s(&machine, dpu, "mram_ids", tasklets), mram, "MRAM array of DPU {dpu}");
        let mut bytes = vec![0u8; tasklets * 8];
        machine.read(dpu, MemoryKind::Mram, heap.offset(), &mut bytes).unwrap();
        let words: Vec<u64> = bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        let expected: Vec<u64> = mram.iter().map(|word| word | HEAP_TAG).collect();
        assert_eq!(words, expected, "MRAM heap of DPU {dpu}");
        assert_eq!(machine.dpu_state(dpu).unwrap(), DpuState::Done);
    }
}

#[test]
fn dpus_are_isolated_on_a_full_server_with_disabled_dpus() {
    let topology = Topology::full_server().with_disabled([0, 63, 64, 1000, 2559]);
    check_isolation(topology, 16);
}

#[test]
fn dpus_are_isolated_for_every_tasklet_count() {
    for nr_tasklets in common::TASKLET_COUNTS {
        check_isolation(Topology::new(2, 8).with_disabled([3]), nr_tasklets);
    }
}

#[test]
fn mram_addresses_are_the_dpus_own() {
    let program = build("isolation", 4, &[]);
    let heap = program.symbol(MRAM_HEAP, 64 << 20).unwrap();
    let array = program.symbol("mram_ids", 64 << 20).unwrap();
    assert_eq!(u64::from(array.address) & !(MRAM_BASE - 1), MRAM_BASE, "named MRAM arrays live at 0x08000000");
    assert!(heap.address >= array.address + array.size, "the MRAM heap follows the MRAM variables");
    assert_eq!(heap.address % 8, 0);
    assert_eq!(u64::from(heap.size), (64 << 20) - heap.offset(), "the heap symbol spans the rest of MRAM");
    let host = program.symbol("wram_ids", 64 << 20).unwrap();
    assert!(u64::from(host.address) < 64 << 10, "WRAM symbols have DPU WRAM addresses");
}

/// MRAM variables that fill all 64 MiB put the MRAM heap at MRAM's end, empty, as the SDK's linker script allows
/// (`__sys_used_mram_end` may be the end of its `mram` region): the program loads, the heap symbol is there with
/// size 0, and the kernel reaches MRAM's last word.
#[test]
fn mram_variables_may_fill_all_of_mram() {
    const MRAM_SIZE: u64 = 64 << 20;
    let program = build("mram_full", 1, &[]);
    assert_eq!(program.mram_used(), MRAM_SIZE);
    let heap = program.symbol(MRAM_HEAP, MRAM_SIZE).expect("the heap symbol at the end of MRAM");
    assert_eq!((u64::from(heap.address), heap.size), (MRAM_BASE + MRAM_SIZE, 0), "an empty heap at MRAM's end");
    let mut machine = machine(1, 1);
    machine.load(&[0], &program).unwrap();
    machine.launch(&[0]).unwrap();
    assert_eq!(u64::from(read_u32(&machine, 0, "heap_pointer")), MRAM_BASE + MRAM_SIZE, "DPU_MRAM_HEAP_POINTER");
    let mut last = [0; 8];
    machine.read(0, MemoryKind::Mram, MRAM_SIZE - 8, &mut last).unwrap();
    assert_eq!(u64::from_le_bytes(last), 0x0123_4567_89AB_CDEF, "MRAM's last word, written by the kernel");
}

/// First writes into fresh MRAM, a push to one DPU and a broadcast to the others, at offsets and of lengths
/// that are not whole pages: the host reads their bytes with zeroes around them, and so do the DPUs' kernels.
#[test]
fn first_writes_into_fresh_memory_land_with_zeroes_around_them() {
    const PAGE: usize = 4096;
    // mram_rw writes ~(heap word i) at heap + 1 MiB + 8 i for its first heap_bytes / 8 words.
    const KERNEL_READ: u32 = 64 << 10;
    const OUTPUT: u64 = 1 << 20;
    let program = build("mram_rw", 4, &[]);
    let mut machine = machine(1, 4);
    let dpus: Vec<u32> = (0..4).collect();
    machine.load(&dpus, &program).unwrap();
    let heap = machine.symbol(0, MRAM_HEAP).unwrap().offset();
    let pattern = |length: usize, seed: u64| -> Vec<u8> {
        (0..length as u64).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8 ^ seed as u8).collect()
    };
    let pushed = pattern((1 << 20) + 24, 0x11);
    let broadcast = pattern((2 << 20) + 40, 0x22);
    let skip = 8;
    machine.write(0, MemoryKind::Mram, heap + skip as u64, &pushed).unwrap();
    machine.broadcast(&dpus[1..], MemoryKind::Mram, heap + skip as u64, &broadcast).unwrap();

    let written = |dpu: u32| if dpu == 0 { &pushed } else { &broadcast };
    for &dpu in &dpus {
        let data = written(dpu);
        let mut seen = vec![0xAA; skip + data.len() + 3 * PAGE];
        machine.read(dpu, MemoryKind::Mram, heap, &mut seen).unwrap();
        assert_eq!(seen[..skip], [0; 8], "DPU {dpu}: zeroes before the write");
        assert!(seen[skip..skip + data.len()] == data[..], "DPU {dpu}: the bytes written");
        assert!(seen[skip + data.len()..].iter().all(|&byte| byte == 0), "DPU {dpu}: zeroes after the write");
    }

    for &dpu in &dpus {
        write_u32(&machine, dpu, "nr_words", 0);
        write_u32(&machine, dpu, "heap_bytes", KERNEL_READ);
    }
    machine.launch(&dpus).unwrap();
    for &dpu in &dpus {
        let mut heap_bytes = vec![0; skip];
        heap_bytes.extend_from_slice(&written(dpu)[..KERNEL_READ as usize - skip]);
        let mut outputs = vec![0u8; KERNEL_READ as usize];
        machine.read(dpu, MemoryKind::Mram, heap + OUTPUT, &mut outputs).unwrap();
        let inverted: Vec<u8> = heap_bytes.iter().map(|byte| !byte).collect();
        assert!(outputs == inverted, "DPU {dpu}: the kernel read the bytes written and the zeroes before them");
    }
}

#[test]
fn state_persists_across_launches_and_reload_resets_it() {
    for nr_tasklets in common::TASKLET_COUNTS {
        let program = build("persistence", nr_tasklets, &[]);
        let mut machine = machine(1, 4);
        let dpus = [0, 1, 2, 3];
        machine.load(&dpus, &program).unwrap();
        for launch in 1..=3u32 {
            machine.launch(&dpus).unwrap();
            for dpu in dpus {
                assert_eq!(read_u32(&machine, dpu, "bss_count"), launch);
                assert_eq!(read_u32(&machine, dpu, "data_count"), 100 + launch);
                assert_eq!(read_u64(&machine, dpu, "mram_count"), 1000 + u64::from(launch));
                assert_eq!(machine.stats(dpu).unwrap().launches, u64::from(launch));
            }
        }
        // Reloading one DPU resets its globals and __mram variables; the others keep counting.
        machine.load(&[1], &program).unwrap();
        machine.launch(&dpus).unwrap();
        assert_eq!(read_u32(&machine, 0, "bss_count"), 4);
        assert_eq!(read_u32(&machine, 1, "bss_count"), 1);
        assert_eq!(read_u32(&machine, 1, "data_count"), 101);
        assert_eq!(read_u64(&machine, 1, "mram_count"), 1001);
    }
}

#[test]
fn asynchronous_launch_reports_status_then_completes() {
    let program = build("isolation", 16, &[]);
    let mut machine = machine(4, 64);
    let dpus: Vec<u32> = machine.topology().enabled_dpus().collect();
    machine.load(&dpus, &program).unwrap();
    for &dpu in &dpus {
        write_u32(&machine, dpu, "dpu_id", dpu);
    }
    machine.launch_async(&dpus).unwrap();
    assert!(matches!(machine.launch_async(&dpus), Err(SimError::LaunchInProgress)));
    loop {
        let (done, fault) = machine.status(&dpus).unwrap();
        assert!(!fault);
        if done {
            break;
        }
        std::thread::yield_now();
    }
    machine.wait().unwrap();
    assert_eq!(read_u32s(&machine, 255, "wram_ids", 2), [255 * ID_STRIDE, 255 * ID_STRIDE + 1]);
}

#[test]
fn a_subset_of_dpus_runs_alone() {
    let program = build("persistence", 1, &[]);
    let mut machine = machine(1, 8);
    let all: Vec<u32> = (0..8).collect();
    machine.load(&all, &program).unwrap();
    machine.launch(&[2, 5]).unwrap();
    for dpu in all {
        let expected = if dpu == 2 || dpu == 5 { 1 } else { 0 };
        assert_eq!(read_u32(&machine, dpu, "bss_count"), expected, "DPU {dpu}");
    }
}

#[test]
fn two_programs_run_in_one_launch() {
    let isolation = build("isolation", 8, &[]);
    let persistence = build("persistence", 8, &[]);
    let mut machine = machine(1, 4);
    machine.load(&[0, 2], &isolation).unwrap();
    machine.load(&[1, 3], &persistence).unwrap();
    write_u32(&machine, 0, "dpu_id", 5);
    write_u32(&machine, 2, "dpu_id", 6);
    machine.launch(&[0, 1, 2, 3]).unwrap();
    assert_eq!(read_u32(&machine, 2, "wram_ids"), 6 * ID_STRIDE);
    assert_eq!(read_u32(&machine, 3, "bss_count"), 1);
}

/// Loading other DPUs while a launch runs may end the worker pool of a program no longer loaded anywhere; the
/// launch still finds its own pool.
#[test]
fn loading_other_dpus_during_a_launch_keeps_its_pool() {
    let isolation = build("isolation", 1, &[]);
    let persistence = build("persistence", 1, &[]);
    let mut machine = machine(1, 2);
    machine.load(&[0], &isolation).unwrap();
    machine.load(&[1], &persistence).unwrap();
    // Pools start on a program's first launch: isolation's first, then persistence's.
    machine.launch(&[0]).unwrap();
    machine.launch_async(&[1]).unwrap();
    machine.load(&[0], &persistence).unwrap();
    machine.wait().unwrap();
    assert_eq!(read_u32(&machine, 1, "bss_count"), 1);
    machine.launch(&[0, 1]).unwrap();
    assert_eq!(read_u32(&machine, 0, "bss_count"), 1);
    assert_eq!(read_u32(&machine, 1, "bss_count"), 2);
}

#[test]
fn misuse_is_a_clear_error() {
    let program = build("persistence", 1, &[]);
    let mut machine = machine_with(Topology::new(1, 4).with_disabled([2]), |_| {});
    assert!(matches!(machine.load(&[9], &program), Err(SimError::NoSuchDpu { dpu: 9, nr_dpus: 4 })));
    assert!(matches!(machine.load(&[2], &program), Err(SimError::DpuDisabled(2))));
    assert!(matches!(machine.launch(&[0]), Err(SimError::NoProgramLoaded(0))));
    machine.load(&[0], &program).unwrap();
    let error = machine.write_symbol(0, "bss_count", 2, &[0; 4]).unwrap_err();
    assert!(matches!(error, SimError::OutOfBounds { offset: 2, length: 4, size: 4, .. }), "{error}");
    let error = machine.read_symbol(0, "no_such_symbol", 0, &mut [0; 4]).unwrap_err();
    assert!(matches!(error, SimError::UnknownSymbol { .. }), "{error}");
    let error = machine.write(0, MemoryKind::Wram, 65530, &[0; 8]).unwrap_err();
    assert!(error.to_string().contains("WRAM of DPU 0 has 65536 bytes"), "{error}");
    let error = machine.read(0, MemoryKind::Mram, (64 << 20) - 4, &mut [0; 8]).unwrap_err();
    assert!(matches!(error, SimError::OutOfBounds { .. }), "{error}");
    machine.load(&[1], &program).unwrap();
    let error = machine.launch(&[0, 1, 0]).unwrap_err();
    assert!(matches!(error, SimError::DuplicateDpu(0)), "{error}");
    assert_eq!(machine.dpu_state(0).unwrap(), DpuState::Idle, "a refused launch runs nothing");
}

/// Two host threads writing the same DPU range take turns: the range holds one writer's bytes, never a mix.
#[test]
fn host_writes_to_one_dpu_from_two_threads_take_turns() {
    const BYTES: usize = 4 << 20;
    let machine = machine(1, 1);
    let patterns = [vec![0x11u8; BYTES], vec![0x22u8; BYTES]];
    for round in 0..20 {
        std::thread::scope(|scope| {
            for pattern in &patterns {
                scope.spawn(|| machine.write(0, MemoryKind::Mram, 0, pattern).expect("writing MRAM"));
            }
        });
        let mut read = vec![0u8; BYTES];
        machine.read(0, MemoryKind::Mram, 0, &mut read).unwrap();
        assert!(read.iter().all(|byte| *byte == read[0]), "round {round}: the writes interleaved");
    }
}

#[test]
fn invalid_topologies_are_refused() {
    for topology in [
        Topology::new(0, 64),
        Topology::new(1, 65),
        Topology::new(1, 4).with_disabled([4]),
        Topology { wram_size: 1000, ..Topology::new(1, 1) },
        Topology { mram_size: 128 << 20, ..Topology::new(1, 1) },
    ] {
        let error = upmem_sim::Machine::new(upmem_sim::SimConfig::new(topology.clone())).err();
        assert!(matches!(error, Some(SimError::InvalidConfig(_))), "{topology:?} gave {error:?}");
    }
}

#[test]
fn hardware_binaries_and_other_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // An ELF header for machine 245 (EM_DPU), as dpu-upmem-dpurte-clang from the SDK writes.
    let mut elf = vec![0u8; 64];
    elf[..4].copy_from_slice(b"\x7fELF");
    elf[4] = 1; // 32-bit
    elf[5] = 1; // little-endian
    elf[18..20].copy_from_slice(&245u16.to_le_bytes());
    let path = dir.path().join("dpu_code");
    std::fs::write(&path, &elf).unwrap();
    let error = Program::from_file(&path).unwrap_err();
    assert!(matches!(error, SimError::HardwareBinary(_)), "{error}");
    assert!(error.to_string().contains("dpu-upmem-dpurte-clang"), "{error}");

    std::fs::write(&path, b"#!/bin/sh\n").unwrap();
    assert!(matches!(Program::from_file(&path), Err(SimError::InvalidProgram { .. })));
    assert!(matches!(Program::from_file(dir.path().join("missing")), Err(SimError::Os { .. })));
    let host_binary = std::env::current_exe().unwrap();
    assert!(matches!(Program::from_file(host_binary), Err(SimError::InvalidProgram { .. })));
}

/// Held by the tests that load programs from memory: one of them counts the files of such programs that the whole
/// process holds open, which another's would add to.
static MEMORY_PROGRAMS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The files named like a program loaded from memory that this process holds open (`/proc/self/fd`), as their
/// descriptors' targets: an unlinked file's ends with " (deleted)".
fn open_memory_program_files() -> Vec<String> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .map(|target| target.to_string_lossy().into_owned())
        .filter(|target| target.contains("upmem-sim-program-"))
        .collect()
}

#[test]
fn programs_load_from_memory_and_run_from_a_file_no_directory_names() {
    let _alone = MEMORY_PROGRAMS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let built = build("persistence", 2, &[]);
    let bytes = std::fs::read(built.path()).unwrap();
    let program = Arc::new(Program::from_bytes(&bytes).unwrap());
    assert_eq!(program.path(), std::path::Path::new("<loaded from memory>"));
    let mut machine = machine(1, 2);
    machine.load(&[0, 1], &program).unwrap();
    machine.launch(&[0, 1]).unwrap();
    assert_eq!(read_u32(&machine, 1, "bss_count"), 1);
    // While workers run it, the program's executable is already unlinked: a crash cannot leave it behind.
    let held = open_memory_program_files();
    assert!(held.len() == 1 && held[0].ends_with(" (deleted)"), "the program's files: {held:?}");
    drop(machine);
    drop(program);
    assert_eq!(open_memory_program_files(), Vec::<String>::new(), "the descriptor goes with the program");
}

#[test]
fn programs_loaded_from_memory_start_while_other_threads_load_and_start_theirs() {
    let _alone = MEMORY_PROGRAMS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Each load writes an executable; another thread's worker fork can hold the write descriptor for a moment,
    // which makes exec fail with "Text file busy" unless the start waits it out.
    const THREADS: usize = 6;
    const ROUNDS: usize = 24;
    let bytes = std::fs::read(build("persistence", 1, &[]).path()).unwrap();
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                for round in 0..ROUNDS {
                    let program = Arc::new(Program::from_bytes(&bytes).unwrap());
                    let mut machine = machine(1, 1);
                    machine.load(&[0], &program).unwrap_or_else(|error| panic!("round {round}: {error}"));
                    machine.launch(&[0]).unwrap_or_else(|error| panic!("round {round}: {error}"));
                    assert_eq!(read_u32(&machine, 0, "bss_count"), 1);
                }
            });
        }
    });
}

#[test]
fn reset_clears_memories_and_unloads() {
    let program = build("isolation", 2, &[]);
    let mut machine = machine(1, 1);
    machine.load(&[0], &program).unwrap();
    write_u32(&machine, 0, "dpu_id", 3);
    machine.launch(&[0]).unwrap();
    machine.reset(&[0]).unwrap();
    assert!(matches!(machine.program(0), Err(SimError::NoProgramLoaded(0))));
    let mut mram = [0xffu8; 64];
    machine.read(0, MemoryKind::Mram, 0, &mut mram).unwrap();
    assert_eq!(mram, [0; 64]);
}

/// A worker keeps a broadcast's shared pages mapped from one DPU to the next when their shared ranges are the
/// same: the DPUs still read their own view of the broadcast, including a DPU that owns one of those pages (a
/// host write) and the DPUs run after it.
#[test]
fn dpus_run_one_after_another_read_their_own_view_of_a_broadcast() {
    const NR_DPUS: u32 = 6;
    const SHARED: usize = 128 << 10;
    const READ: u32 = 64 << 10;
    // mram_rw writes ~(heap word i) at heap + 1 MiB + 8 i, outside the broadcast: its pages stay shared.
    const OUTPUT: usize = 1 << 20;
    let program = build("mram_rw", 4, &[]);
    let mut machine = machine_with(Topology::new(1, NR_DPUS), |config| config.workers = 1);
    let dpus: Vec<u32> = (0..NR_DPUS).collect();
    machine.load(&dpus, &program).unwrap();
    let heap = machine.symbol(0, MRAM_HEAP).unwrap().offset();
    let data: Vec<u64> = (0..SHARED as u64 / 8).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let bytes: Vec<u8> = data.iter().flat_map(|word| word.to_le_bytes()).collect();
    machine.broadcast(&dpus, MemoryKind::Mram, heap, &bytes).unwrap();
    let (owner, owned_word, own_value) = (2u32, 5000usize, 0x0123_4567_89AB_CDEFu64);
    machine.write(owner, MemoryKind::Mram, heap + 8 * owned_word as u64, &own_value.to_le_bytes()).unwrap();
    for &dpu in &dpus {
        write_u32(&machine, dpu, "nr_words", 4);
        write_u32(&machine, dpu, "heap_bytes", READ);
    }
    machine.launch(&dpus).unwrap();
    for &dpu in &dpus {
        let mut outputs = vec![0u8; READ as usize];
        machine.read(dpu, MemoryKind::Mram, heap + OUTPUT as u64, &mut outputs).unwrap();
        for word in [0, 511, 512, owned_word, READ as usize / 8 - 1] {
            let found = u64::from_le_bytes(outputs[8 * word..8 * word + 8].try_into().unwrap());
            let input = if dpu == owner && word == owned_word { own_value } else { data[word] };
            assert_eq!(found, !input, "DPU {dpu}, heap word {word}");
        }
    }
}

/// A host read of memory nothing wrote returns zeroes and commits nothing: read through the shared mapping, it
/// would commit a zeroed page per page read (1 GiB here).
#[test]
fn reading_never_written_memory_returns_zeroes_and_commits_nothing() {
    const NR_DPUS: u32 = 64;
    const BYTES: usize = 16 << 20;
    let machine = machine(1, NR_DPUS);
    let held = machine.held_memory().unwrap();
    let zeroes = vec![0u8; BYTES];
    let mut out = vec![0xAA; BYTES];
    for dpu in 0..NR_DPUS {
        out.fill(0xAA);
        machine.read(dpu, MemoryKind::Mram, 0, &mut out).unwrap();
        assert!(out == zeroes, "DPU {dpu} reads zeroes from MRAM nothing wrote");
    }
    let wram = machine.topology().wram_size as usize;
    machine.read(0, MemoryKind::Wram, 0, &mut out[..wram]).unwrap();
    assert!(out[..wram] == zeroes[..wram], "zeroes from WRAM nothing wrote");
    assert_eq!(machine.held_memory().unwrap(), held, "bytes held before and after the reads");
}

/// Reads that cross a DPU's own pages, holes, and pages it shares from a broadcast (one of them made its own by
/// a write) return what the DPU holds, and commit nothing.
#[test]
fn a_read_across_own_pages_holes_and_broadcast_pages_returns_what_the_dpu_holds() {
    const PAGE: usize = 4096;
    const SIZE: usize = 128 * PAGE;
    let mut machine = machine(1, 4);
    let dpus: Vec<u32> = (0..4).collect();
    let pattern =
        |length: usize, seed: usize| -> Vec<u8> { (0..length).map(|i| ((i * 7 + seed) % 251) as u8).collect() };
    let broadcast = pattern(32 * PAGE, 1);
    machine.broadcast(&dpus, MemoryKind::Mram, 16 * PAGE as u64, &broadcast).unwrap();
    let mut expected = vec![vec![0u8; SIZE]; dpus.len()];
    for &dpu in &dpus {
        expected[dpu as usize][16 * PAGE..48 * PAGE].copy_from_slice(&broadcast);
    }
    // DPU 1 makes a page of the broadcast its own and writes past it; DPU 2 writes past it.
    for (dpu, offset, data) in [
        (1, 20 * PAGE + 100, vec![0xEE; 8]),
        (1, 60 * PAGE + 40, pattern(30 * PAGE, 2)),
        (2, 100 * PAGE, pattern(PAGE, 3)),
    ] {
        machine.write(dpu, MemoryKind::Mram, offset as u64, &data).unwrap();
        expected[dpu as usize][offset..offset + data.len()].copy_from_slice(&data);
    }

    let held = machine.held_memory().unwrap();
    for &dpu in &dpus {
        for (offset, length) in [(5, 120 * PAGE), (30 * PAGE + 7, 40 * PAGE), (70 * PAGE + 1, 58 * PAGE - 1)] {
            let mut out = vec![0xAA; length];
            machine.read(dpu, MemoryKind::Mram, offset as u64, &mut out).unwrap();
            let wanted = &expected[dpu as usize][offset..offset + length];
            let differs = out.iter().zip(wanted).position(|(found, wanted)| found != wanted);
            assert_eq!(differs, None, "DPU {dpu}, {length} bytes at {offset}: first byte that differs");
        }
    }
    assert_eq!(machine.held_memory().unwrap(), held, "bytes held before and after the reads");
}
