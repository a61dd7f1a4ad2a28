//! The SDK 2025.1's sequential readers (`seqread<S>_*`) and DMA routines (`mram_read`/`mram_write`,
//! `mram_read_unaligned`/`mram_write_unaligned`) as its compiled runtime executes them. Each test computes what
//! a DPU returns from a model written from the disassembly (librt_v1A.a: seqread<S>.c.obj, mram_unaligned.c.obj)
//! and the ISA's ldma/sdma, independently of the simulator's C, and checks that the simulated kernel got exactly
//! that, including where the SDK's routines do not do what their documentation says.

mod common;

use std::process::Command;
use std::sync::Arc;

use common::{build, machine_with, read_u32, read_u32s, write_u32};
use upmem_sim::{
    DpuStats, Fault, FaultKind, InstructionClass, Machine, MemoryKind, Program, SimError, SimulatedBuild as _,
    Topology, MRAM_BASE,
};

/// The cache sizes of the SDK's readers.
const CACHE_SIZES: [u32; 6] = [32, 64, 128, 256, 512, 1024];

// ---- Running a kernel on one DPU ---------------------------------------------------------------------------

/// A one-DPU machine (strict or not) with `program` loaded.
fn loaded(program: &Arc<Program>, strict: bool) -> Machine {
    let mut machine = machine_with(Topology::new(1, 1), |config| config.strict = strict);
    machine.load(&[0], program).unwrap();
    machine
}

/// Launches DPU 0 and returns its fault, or None when it completed.
fn launch_for_fault(machine: &mut Machine) -> Option<Fault> {
    match machine.launch(&[0]) {
        Ok(()) => None,
        Err(SimError::DpuFault { first, .. }) => Some(*first),
        Err(other) => panic!("launching: {other}"),
    }
}

/// The environment variable under which a test runs as the child of [`stderr_of`].
const CHILD: &str = "UPMEM_SIM_TEST_CHILD";

fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs test `name` of this binary again, in a child process, and returns the child's standard error: the
/// simulator's workers write their warnings there.
fn stderr_of(name: &str) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("running the test binary");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "the child run of {name} failed:\n{stderr}");
    stderr
}

// ---- The SDK's reader, from seqread<S>.c.obj ---------------------------------------------------------------

/// What `init` stores in `mram_addr` before it goes on as `seek` (`move r3, 0x4000000; sw r2, 4, r3`).
const NO_PAGE: u32 = 1 << 26;

/// A `seqreader_t` and the routines of seqread<size>.c.obj, on the DPU's 32-bit addresses. Each routine returns
/// its pointer and the MRAM page it read 2 * size bytes of into the cache, if it did, and counts the
/// instructions it executed (its own, return included; the caller's `call` is the caller's).
struct SdkReader {
    size: u32,
    cache: u32,
    mram_addr: u32,
    instructions: u64,
}

impl SdkReader {
    /// `sw r2, 0, r0; move; sw r2, 4, r3`, then seek's path with seek's two loads replaced by `add`: 11 or 7.
    fn init(size: u32, cache: u32, mram: u32) -> (SdkReader, u32, Option<u32>) {
        let mut reader = SdkReader { size, cache, mram_addr: NO_PAGE, instructions: 1 };
        let (pointer, page) = reader.seek(mram);
        (reader, pointer, page)
    }

    /// `sub; jltu r3, size` keeps the page when mram - mram_addr < size (unsigned), else `and; ldma; and; sw`.
    fn seek(&mut self, mram: u32) -> (u32, Option<u32>) {
        let into_page = mram.wrapping_sub(self.mram_addr);
        if into_page < self.size {
            self.instructions += 6;
            return (self.cache.wrapping_add(into_page), None);
        }
        self.instructions += 10;
        self.mram_addr = mram & !(self.size - 1);
        (self.cache.wrapping_add(mram & (self.size - 1)), Some(self.mram_addr))
    }

    /// `add r0, r0, r1, ncN`: returns unless the add carries out of the N = log2(size) low bits; else advances
    /// mram_addr by size, reloads and subtracts size.
    fn get(&mut self, pointer: u32, inc: u32) -> (u32, Option<u32>) {
        let mask = self.size - 1;
        let next = pointer.wrapping_add(inc);
        if (pointer & mask) + (inc & mask) < self.size {
            self.instructions += 2;
            return (next, None);
        }
        self.instructions += 8;
        self.mram_addr = self.mram_addr.wrapping_add(self.size);
        (next.wrapping_sub(self.size), Some(self.mram_addr))
    }

    /// `lw; and; add; jump`.
    fn tell(&mut self, pointer: u32) -> u32 {
        self.instructions += 4;
        self.mram_addr.wrapping_add(pointer & (self.size - 1))
    }
}

// ---- The test kernel: a reader walked through steps ------------------------------------------------------------

/// sdk_seqread_steps.c's sizes and markers.
const DATA_BYTES: u32 = 16384;
const GUARD_BYTE: u8 = 0xEE;
const OUTSIDE_AREA: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
enum Step {
    Get(u32),
    Seek(u32),
}

impl Step {
    fn encoded(self) -> u32 {
        match self {
            Step::Get(inc) => inc,
            Step::Seek(offset) => 1 << 24 | offset,
        }
    }
}

/// What the kernel reports for the init and after each step.
#[derive(Debug, PartialEq, Eq)]
struct Observed {
    positions: Vec<i32>,
    values: Vec<u32>,
    tells: Vec<u32>,
}

fn steps_kernel(size: u32) -> Arc<Program> {
    build("sdk_seqread_steps", 1, &[("SEQREAD_CACHE_SIZE", &size.to_string())])
}

/// The data bytes of DPU 0: no two 4-byte windows alike.
fn data_bytes() -> Vec<u8> {
    (0..DATA_BYTES).map(|i| (i.wrapping_mul(97) ^ (i >> 7)) as u8).collect()
}

/// Sets the kernel's inputs and writes the data.
fn prepare(machine: &Machine, skew: u32, start: u32, steps: &[Step]) {
    machine.write_symbol(0, "data", 0, &data_bytes()).unwrap();
    write_u32(machine, 0, "cache_skew", skew);
    write_u32(machine, 0, "start", start);
    write_u32(machine, 0, "nr_steps", steps.len() as u32);
    let encoded: Vec<u8> = steps.iter().flat_map(|step| step.encoded().to_le_bytes()).collect();
    machine.write_symbol(0, "steps", 0, &encoded).unwrap();
}

fn observed(machine: &Machine, steps: usize) -> Observed {
    Observed {
        positions: read_u32s(machine, 0, "positions", steps + 1).into_iter().map(|p| p as i32).collect(),
        values: read_u32s(machine, 0, "values", steps + 1),
        tells: read_u32s(machine, 0, "tells", steps + 1),
    }
}

/// What a DPU returns: the model reader walked through the steps, with the WRAM area (4 * size bytes from
/// `area`, guard bytes at first) receiving its page reads from the DPU's MRAM.
fn expected(machine: &Machine, size: u32, area: u32, skew: u32, start: u32, steps: &[Step]) -> (Observed, u64) {
    let data = read_u32(machine, 0, "data_address");
    let mut image = vec![GUARD_BYTE; 4 * size as usize];
    let load = |image: &mut Vec<u8>, page: Option<u32>, cache: u32| {
        if let Some(page) = page {
            // The engine aligns the WRAM address down to 8 (`@w = ra & 0xfffff8`).
            let at = ((cache & !7) - area) as usize;
            let mut bytes = vec![0u8; 2 * size as usize];
            machine.read(0, MemoryKind::Mram, u64::from(page) - MRAM_BASE, &mut bytes).unwrap();
            image[at..at + bytes.len()].copy_from_slice(&bytes);
        }
    };
    let cache = area + skew;
    let (mut reader, mut pointer, page) = SdkReader::init(size, cache, data + start);
    load(&mut image, page, cache);
    let mut seen = Observed { positions: Vec::new(), values: Vec::new(), tells: Vec::new() };
    let mut record = |reader: &mut SdkReader, image: &[u8], pointer: u32| {
        let position = pointer.wrapping_sub(area) as i32;
        seen.positions.push(position);
        let inside = position >= 0 && position as usize + 4 <= image.len();
        let at = position as usize;
        seen.values.push(if inside { u32::from_le_bytes(image[at..at + 4].try_into().unwrap()) } else { OUTSIDE_AREA });
        seen.tells.push(reader.tell(pointer));
    };
    record(&mut reader, &image, pointer);
    for &step in steps {
        let page;
        (pointer, page) = match step {
            Step::Get(inc) => reader.get(pointer, inc),
            Step::Seek(offset) => reader.seek(data + offset),
        };
        load(&mut image, page, cache);
        record(&mut reader, &image, pointer);
    }
    (seen, reader.instructions)
}

/// A walk for cache size `size` over `data` (the data's MRAM address): small steps over several pages, seeks
/// near and far, increments just below the page size, one of exactly the page size and one above it (which
/// the SDK leaves undefined), a seek to 12 bytes before the end of a page and two small steps (which carry out
/// of the page bits one step early when the cache is 8 bytes past a boundary), and tells after each.
fn walk(size: u32, data: u32) -> (u32, Vec<Step>) {
    let small = size / 8;
    let before_page_end = 3 * size + size - 12 - data % size;
    let mut steps = vec![Step::Get(small); 20];
    steps.extend([
        Step::Seek(2 * size + 4),
        Step::Seek(2 * size + 12),
        Step::Get(size - 4),
        Step::Get(size - 8),
        Step::Get(4),
        Step::Seek(4 * size + 20),
        Step::Get(size),
        Step::Seek(4 * size + 24),
        Step::Get(size + 4),
        Step::Seek(before_page_end),
        Step::Get(4),
        Step::Get(4),
        Step::Get(4),
        Step::Seek(12),
    ]);
    steps.extend([Step::Get(small); 6]);
    (12, steps)
}

/// The MRAM address of the kernel's data.
fn data_address(machine: &Machine) -> u32 {
    machine.symbol(0, "data").unwrap().address
}

/// The element the reader should point at after each step when it works as documented (increments below
/// the cache size), or None after an increment of the cache size or more, until the next seek.
fn documented(start: u32, steps: &[Step], size: u32) -> Vec<Option<u32>> {
    let data = data_bytes();
    let element =
        |offset: u32| Some(u32::from_le_bytes(data[offset as usize..offset as usize + 4].try_into().unwrap()));
    let mut offset = Some(start);
    let mut elements = vec![element(start)];
    for &step in steps {
        offset = match step {
            Step::Get(inc) if inc < size => offset.map(|at| at + inc),
            Step::Get(_) => None,
            Step::Seek(at) => Some(at),
        };
        elements.push(offset.and_then(element));
    }
    elements
}

#[test]
fn a_reader_with_an_aligned_cache_returns_the_documented_elements_for_every_cache_size() {
    for size in CACHE_SIZES {
        let program = steps_kernel(size);
        let mut machine = loaded(&program, false);
        let (start, steps) = walk(size, data_address(&machine));
        prepare(&machine, 0, start, &steps);
        machine.launch(&[0]).unwrap();
        let area = read_u32(&machine, 0, "area_address");
        assert_eq!(area % size, 0, "the kernel's area is aligned to {size}");
        let (model, _) = expected(&machine, size, area, 0, start, &steps);
        let seen = observed(&machine, steps.len());
        assert_eq!(seen, model, "seqread{size}: the kernel against the SDK's routines");
        let data = read_u32(&machine, 0, "data_address");
        for (index, element) in documented(start, &steps, size).into_iter().enumerate() {
            if let Some(element) = element {
                assert_eq!(seen.values[index], element, "seqread{size}, step {index}: the documented element");
                let offset = seen.tells[index] - data;
                assert_eq!(element, documented(offset, &[], size)[0].unwrap(), "seqread{size}, step {index}: tell");
            }
        }
    }
}

#[test]
fn a_reader_with_a_misaligned_cache_returns_what_a_dpu_returns() {
    for size in CACHE_SIZES {
        let program = steps_kernel(size);
        let mut machine = loaded(&program, false);
        let (start, steps) = walk(size, data_address(&machine));
        for skew in [8, size / 2, size - 8] {
            prepare(&machine, skew, start, &steps);
            machine.launch(&[0]).unwrap();
            let area = read_u32(&machine, 0, "area_address");
            let (model, _) = expected(&machine, size, area, skew, start, &steps);
            let seen = observed(&machine, steps.len());
            assert_eq!(seen, model, "seqread{size}, cache {skew} bytes past a boundary: against the SDK's routines");
            if skew == 8 {
                // The walk meets the bug: a refill before the pointer reached the cache's second half, and a
                // pointer before the cache (at guard bytes).
                let wrong = documented(start, &steps, size)
                    .into_iter()
                    .zip(&seen.values)
                    .filter(|(element, value)| element.is_some_and(|element| element != **value))
                    .count();
                assert!(wrong > 0, "seqread{size}, skew {skew}: a misaligned cache gives wrong elements on a DPU");
                assert!(
                    seen.positions.iter().any(|&position| position < skew as i32),
                    "seqread{size}: before the cache"
                );
                let data = data_address(&machine);
                assert_ne!(seen.tells[0] - data, start, "seqread{size}, skew {skew}: tell is off by the skew");
            }
        }
    }
}

#[test]
fn a_misaligned_cache_is_warned_about_naming_the_kernel_the_cache_and_its_alignment() {
    const NAME: &str = "a_misaligned_cache_is_warned_about_naming_the_kernel_the_cache_and_its_alignment";
    let size = 128;
    let program = steps_kernel(size);
    if is_child() {
        let mut machine = loaded(&program, false);
        prepare(&machine, 8, 12, &[Step::Get(4)]);
        machine.launch(&[0]).unwrap();
        return;
    }
    let stderr = stderr_of(NAME);
    let kernel = program.path().file_name().unwrap().to_string_lossy().into_owned();
    let warning = stderr
        .lines()
        .find(|line| line.contains("seqread128_init"))
        .unwrap_or_else(|| panic!("no warning in:\n{stderr}"));
    assert!(warning.starts_with(&format!("upmem-sim: warning: kernel {kernel}, DPU 0, tasklet 0: ")), "{warning}");
    assert!(warning.contains("8 bytes past a 128-byte boundary"), "the alignment it needs: {warning}");
    let mut machine = loaded(&program, false);
    prepare(&machine, 8, 12, &[]);
    machine.launch(&[0]).unwrap();
    // The kernel's own view of its WRAM addresses, the simulated WRAM window's (whose low bits are the DPU's).
    let cache = read_u32(&machine, 0, "area_address") + 8;
    assert!(warning.contains(&format!("the cache at WRAM {cache:#x} ")), "the cache's address {cache:#x}: {warning}");
    let aligned = stderr_of_aligned_run();
    assert!(!aligned.contains("seqread"), "an aligned cache is not warned about:\n{aligned}");
}

/// The standard error of a run of the steps kernel with an aligned cache (see
/// [`an_aligned_cache_runs_without_a_warning`]).
fn stderr_of_aligned_run() -> String {
    stderr_of("an_aligned_cache_runs_without_a_warning")
}

/// Run as a child by the warning test; on its own, a run with an aligned cache.
#[test]
fn an_aligned_cache_runs_without_a_warning() {
    let mut machine = loaded(&steps_kernel(128), false);
    prepare(&machine, 0, 12, &[Step::Get(4)]);
    machine.launch(&[0]).unwrap();
}

#[test]
fn a_misaligned_cache_faults_in_strict_mode_naming_the_cache_and_its_alignment() {
    for size in CACHE_SIZES {
        let mut machine = loaded(&steps_kernel(size), true);
        prepare(&machine, 8, 12, &[Step::Get(4)]);
        let fault = launch_for_fault(&mut machine).unwrap_or_else(|| panic!("seqread{size}: no fault"));
        let cache = read_u32(&machine, 0, "area_address") + 8;
        assert_eq!(
            (fault.kind, fault.address, fault.value),
            (FaultKind::Dma, u64::from(cache), u64::from(size)),
            "{fault}"
        );
        let phrase = format!("seqread{size}_init: the cache at WRAM {cache:#x} is 8 bytes past a {size}-byte boundary");
        assert!(fault.message.contains(&phrase), "{phrase:?} in {fault}");
        prepare(&machine, 0, 12, &[Step::Get(4)]);
        assert_eq!(launch_for_fault(&mut machine), None, "seqread{size}: an aligned cache in strict mode");
    }
}

#[test]
fn readers_charge_the_instructions_of_the_sdk_routines_paths() {
    for size in [32, 128, 1024] {
        let program = steps_kernel(size);
        let mut machine = loaded(&program, false);
        let (start, steps) = walk(size, data_address(&machine));
        let sdk_instructions = |machine: &mut Machine, steps: &[Step]| {
            prepare(machine, 0, start, steps);
            machine.launch(&[0]).unwrap();
            let stats: DpuStats = machine.stats(0).unwrap();
            let area = read_u32(machine, 0, "area_address");
            (stats.instructions_of(InstructionClass::SdkRoutine), expected(machine, size, area, 0, start, steps).1)
        };
        let (none, none_model) = sdk_instructions(&mut machine, &[]);
        let (all, all_model) = sdk_instructions(&mut machine, &steps);
        assert_eq!(all - none, all_model - none_model, "seqread{size}: the steps' instructions");
        let (single, single_model) = sdk_instructions(&mut machine, &steps[..1]);
        assert_eq!(single - none, single_model - none_model, "seqread{size}: one get in the page");
    }
}

#[test]
fn seqread_alloc_rounds_the_heap_pointer_up_to_the_cache_size_and_takes_two_pages_past_it() {
    let mut machine = loaded(&build("sdk_seqread_alloc", 1, &[]), false);
    machine.launch(&[0]).unwrap();
    let before = read_u32s(&machine, 0, "before", CACHE_SIZES.len());
    let caches = read_u32s(&machine, 0, "caches", CACHE_SIZES.len());
    let after = read_u32s(&machine, 0, "after", CACHE_SIZES.len());
    for (index, size) in CACHE_SIZES.into_iter().enumerate() {
        // mem_alloc(8) at `before` left the heap pointer 8 bytes on; seqread_alloc rounds it up to `size`.
        let heap = before[index] + 8;
        let cache = heap.next_multiple_of(size);
        assert_eq!(caches[index], cache, "seqread{size}_alloc after a heap pointer of {heap:#x}");
        assert_eq!(after[index], cache + 2 * size, "the heap after seqread{size}_alloc");
    }
    assert!(before.iter().zip(CACHE_SIZES).any(|(b, size)| (b + 8) % size != 0), "some heap pointer needs rounding");
}

// ---- DMA: mram_read/mram_write and the unaligned routines ---------------------------------------------------

/// What one ldma/sdma moves for a size the SDK's compiler encodes at run time: (size >> 3) - 1 in the 8-bit
/// length field, which the engine reads as (1 + field) 8-byte blocks (the ISA's ldma/sdma).
fn engine_length(size: u32) -> u32 {
    (((size >> 3).wrapping_sub(1) & 0xFF) + 1) * 8
}

/// sdk_dma.c's modes, sizes and fill.
const MODE_NONE: u32 = 0;
const MODE_READ: u32 = 1;
const MODE_WRITE: u32 = 2;
const MODE_READ_UNALIGNED: u32 = 3;
const MODE_WRITE_UNALIGNED: u32 = 4;
const MODE_SHARED_WORDS: u32 = 5;
const MODE_SEQREAD_AT_END: u32 = 6;
const MODE_SEQREAD_SENTINEL: u32 = 7;
const MRAM_BYTES: usize = 8192;
const BUFFER_BYTES: usize = 2048 + 32;
const ROUNDS: u32 = 16;
const TARGET_FILL: u8 = 0x11;

fn pattern() -> Vec<u8> {
    (0..BUFFER_BYTES).map(|i| (i * 13 + 5) as u8).collect()
}

fn source_bytes() -> Vec<u8> {
    (0..MRAM_BYTES).map(|i| (i * 7 + 3 + (i >> 8)) as u8).collect()
}

/// One sdk_dma operation on DPU 0; returns the fault if the DPU faulted.
fn dma_operation(machine: &mut Machine, mode: u32, offset: u32, length: u32, wram_skew: u32) -> Option<Fault> {
    machine.write_symbol(0, "source", 0, &source_bytes()).unwrap();
    machine.write_symbol(0, "target", 0, &[TARGET_FILL; MRAM_BYTES]).unwrap();
    machine.write_symbol(0, "counters", 0, &[0; 16]).unwrap();
    for (symbol, value) in [("mode", mode), ("offset", offset), ("length", length), ("wram_skew", wram_skew)] {
        write_u32(machine, 0, symbol, value);
    }
    launch_for_fault(machine)
}

/// Compares two memory images, reporting the first difference rather than both images.
fn assert_same_bytes(actual: &[u8], expected: &[u8], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: lengths");
    let differing: Vec<usize> = (0..actual.len()).filter(|&at| actual[at] != expected[at]).collect();
    if let Some(&first) = differing.first() {
        panic!(
            "{what}: {} bytes differ, the first at {first}: {:#04x} instead of {:#04x}",
            differing.len(),
            actual[first],
            expected[first]
        );
    }
}

fn symbol_bytes(machine: &Machine, symbol: &str, length: usize) -> Vec<u8> {
    let mut bytes = vec![0; length];
    machine.read_symbol(0, symbol, 0, &mut bytes).unwrap();
    bytes
}

/// The buffer after the engine moved `length` bytes of source from `from` (aligned down) to `to` (aligned down).
fn buffer_after_read(from: u32, to: u32, length: u32) -> Vec<u8> {
    let mut buffer = vec![0xEE; BUFFER_BYTES];
    let (from, to, length) = ((from & !7) as usize, (to & !7) as usize, length as usize);
    buffer[to..to + length].copy_from_slice(&source_bytes()[from..from + length]);
    buffer
}

fn dma_kernel(nr_tasklets: u32) -> Arc<Program> {
    build("sdk_dma", nr_tasklets, &[])
}

#[test]
fn mram_read_and_mram_write_move_what_the_length_field_says_for_run_time_sizes() {
    // (size, bytes the engine moves): sizes below 8 and 0 wrap to 2,048, above 2,048 modulo 2,048.
    for (size, moved) in [(8, 8), (12, 8), (2048, 2048), (0, 2048), (7, 2048), (2052, 2048), (2056, 8), (4104, 8)] {
        assert_eq!(engine_length(size), moved, "the model, size {size}");
    }
    let program = dma_kernel(1);
    let mut machine = loaded(&program, false);
    for (offset, size, skew) in
        [(0, 8, 0), (16, 12, 0), (8, 0, 0), (24, 7, 8), (4, 4096, 4), (0, 2056, 0), (40, 2048, 0)]
    {
        let what = format!("mram_read of {size} bytes from source + {offset} to buffer + {skew}");
        assert_eq!(dma_operation(&mut machine, MODE_READ, offset, size, skew), None, "{what}");
        let moved = engine_length(size);
        assert_same_bytes(
            &symbol_bytes(&machine, "buffer", BUFFER_BYTES),
            &buffer_after_read(offset, skew, moved),
            &what,
        );
        assert_eq!(machine.stats(0).unwrap().total().dma_read_bytes, u64::from(moved), "{what}");

        let what = format!("mram_write of {size} bytes from pattern + {skew} to target + {offset}");
        assert_eq!(dma_operation(&mut machine, MODE_WRITE, offset, size, skew), None, "{what}");
        let mut target = vec![TARGET_FILL; MRAM_BYTES];
        let (at, from) = ((offset & !7) as usize, (skew & !7) as usize);
        target[at..at + moved as usize].copy_from_slice(&pattern()[from..from + moved as usize]);
        assert_same_bytes(&symbol_bytes(&machine, "target", MRAM_BYTES), &target, &what);
    }
    // Strict mode: sizes outside the rules fault, naming what a DPU would have moved.
    let mut machine = loaded(&program, true);
    for (size, phrase) in [
        (0, "mram_read of 0 bytes: not between 8 and 2048 (a DPU moves 2048 bytes; strict mode)"),
        (2056, "mram_read of 2056 bytes: not between 8 and 2048 (a DPU moves 8 bytes; strict mode)"),
        (12, "mram_read of 12 bytes: not a multiple of 8 (a DPU moves 8 bytes; strict mode)"),
    ] {
        let fault = dma_operation(&mut machine, MODE_READ, 0, size, 0).unwrap_or_else(|| panic!("size {size}"));
        assert_eq!((fault.kind, fault.value), (FaultKind::Dma, u64::from(size)), "{fault}");
        assert!(fault.message.contains(phrase), "{phrase:?} in {fault}");
    }
}

#[test]
fn constant_dma_sizes_outside_the_rules_do_not_compile() {
    let dir = tempfile::tempdir().unwrap();
    for (call, message) in [
        ("mram_read(DPU_MRAM_HEAP_POINTER, buffer, 0)", "mram_read: nb_of_bytes must not be null"),
        ("mram_read(DPU_MRAM_HEAP_POINTER, buffer, 12)", "mram_read: nb_of_bytes must be a multiple of 8"),
        ("mram_write(buffer, DPU_MRAM_HEAP_POINTER, 4096)", "mram_write: nb_of_bytes must not be higher than 2048"),
        (
            "mram_write(buffer, DPU_MRAM_HEAP_POINTER, sizeof(buffer) - 4)",
            "mram_write: nb_of_bytes must be a multiple of 8",
        ),
        ("mram_read(DPU_MRAM_HEAP_POINTER, buffer, sizeof(buffer))", ""),
    ] {
        let source = dir.path().join("constant_size.c");
        let text = format!(
            "#include <stdint.h>\n#include <mram.h>\n__dma_aligned uint8_t buffer[64];\nint main(void) {{ {call}; return 0; }}\n"
        );
        std::fs::write(&source, text).unwrap();
        let built = upmem_sim::KernelBuilder::new().source(&source).build(dir.path().join("constant_size.dpusim"));
        match (built, message.is_empty()) {
            (Ok(_), true) => {}
            (Err(error), false) => assert!(error.to_string().contains(message), "{message:?} for {call}: {error}"),
            (outcome, _) => panic!("{call}: {outcome:?}"),
        }
    }
}

#[test]
fn dma_past_the_end_of_mram_goes_on_at_offset_0_with_a_warning_and_seqread_reads_ahead_there_silently() {
    const NAME: &str =
        "dma_past_the_end_of_mram_goes_on_at_offset_0_with_a_warning_and_seqread_reads_ahead_there_silently";
    let program = dma_kernel(1);
    if is_child() {
        let mut machine = loaded(&program, false);
        assert_eq!(dma_operation(&mut machine, MODE_SEQREAD_AT_END, 0, 0, 0), None);
        let mut fault_dma = machine_with(Topology::new(1, 1), |_| {});
        fault_dma.load(&[0], &build("fault_dma", 1, &[])).unwrap();
        write_u32(&fault_dma, 0, "mode", 4); // 16 bytes from MRAM's last word
        fault_dma.launch(&[0]).unwrap();
        return;
    }
    let stderr = stderr_of(NAME);
    assert!(!stderr.contains("seqread"), "seqread's read-ahead is not warned about:\n{stderr}");
    let crossing = "mram_read of 16 bytes at MRAM address 0xbfffff8 crosses the end of MRAM at 0xc000000: a DPU goes \
                    on at MRAM offset 0, and so does the simulator";
    assert!(stderr.contains(crossing), "no {crossing:?} in:\n{stderr}");

    // The reader's two elements are MRAM's last 8 bytes, in strict mode too (its second page is read ahead).
    let last = [0x81u8, 0x82, 0x83, 0x84, 0x91, 0x92, 0x93, 0x94];
    for strict in [false, true] {
        let mut machine = loaded(&program, strict);
        machine.write(0, MemoryKind::Mram, (64 << 20) - 8, &last).unwrap();
        assert_eq!(dma_operation(&mut machine, MODE_SEQREAD_AT_END, 0, 0, 0), None, "strict {strict}");
        let expected = [&last[..4], &last[4..]].map(|half| u32::from_le_bytes(half.try_into().unwrap()));
        assert_eq!(read_u32s(&machine, 0, "seq_values", 2), expected, "strict {strict}");
    }
}

/// What the SDK's mram_write_unaligned (mram_unaligned.c.obj) writes into `target` (MRAM bytes from the target
/// array's start) from `wram` (the pattern's bytes) for `nb` bytes from pattern + `from` to target + `dest`.
/// Both arrays are 8-aligned, so offsets and addresses agree mod 8.
fn sdk_write_unaligned(target: &mut [u8], wram: &[u8], from: usize, dest: usize, nb: u32) {
    let word = |at: usize| at & !7;
    if (dest as u32 | nb) & 7 == 0 {
        // `or; and; jz`: one sdma of nb as a run-time size.
        let length = engine_length(nb) as usize;
        target[dest..dest + length].copy_from_slice(&wram[word(from)..word(from) + length]);
        return;
    }
    assert_eq!(from & 7, dest & 7, "the model is for addresses that agree mod 8 (else fault 8)");
    let (mut source, mut left) = (from, nb as usize);
    if dest & 7 != 0 {
        // The head's loop: bytes up to the word's end or the count's.
        let head = left.min(word(dest) + 8 - dest);
        target[dest..dest + head].copy_from_slice(&wram[source..source + head]);
        source += head;
        left -= head;
        if left == 0 {
            return;
        }
    }
    // `and r4, r2, 0xf8`: the middle's size in 8 bits.
    let middle_at = word(dest + 7);
    let middle = left & 0xF8;
    target[middle_at..middle_at + middle].copy_from_slice(&wram[source..source + middle]);
    source += middle;
    if left > middle {
        // `and r2, r2, 7`: the tail's bytes, at the end of what the middle wrote.
        let tail = left & 7;
        target[middle_at + middle..middle_at + middle + tail].copy_from_slice(&wram[source..source + tail]);
    }
}

#[test]
fn mram_read_unaligned_is_one_ldma_whose_length_field_wraps() {
    let program = dma_kernel(1);
    let mut machine = loaded(&program, false);
    // (offset, length, WRAM skew): ordinary reads, 0 bytes at an aligned and an unaligned address, and more than
    // 2,040 bytes at an unaligned one (documented as valid up to 2,048).
    for (offset, length, skew) in
        [(3, 100, 0), (8, 17, 8), (0, 0, 0), (5, 0, 0), (4, 2045, 0), (1, 2048, 8), (7, 2041, 0)]
    {
        let what = format!("mram_read_unaligned of {length} bytes from source + {offset} to buffer + {skew}");
        assert_eq!(dma_operation(&mut machine, MODE_READ_UNALIGNED, offset, length, skew), None, "{what}");
        // `and r3, r0, ~7; and r0, r0, 7; add r2, r2, r0; add r2, r2, 7; lsr_add r2, -1, r2, 3; lsl_add; ldma`
        let moved = engine_length((length + offset % 8 + 7) & !7);
        assert_same_bytes(
            &symbol_bytes(&machine, "buffer", BUFFER_BYTES),
            &buffer_after_read(offset, skew, moved),
            &what,
        );
        assert_eq!(read_u32(&machine, 0, "returned"), skew + offset % 8, "the returned pointer, {what}");
    }
    let mut machine = loaded(&program, true);
    for (offset, length, moved) in [(0, 0, 2048), (4, 2045, 8)] {
        let fault = dma_operation(&mut machine, MODE_READ_UNALIGNED, offset, length, 0).unwrap();
        let phrase = "the SDK's routine reads it with one ldma, whose length field holds 8 to 2048 bytes (strict mode)";
        assert!(
            fault.message.contains(&format!("mram_read_unaligned of {length} bytes")) && fault.message.contains(phrase),
            "{fault}"
        );
        assert_eq!(fault.value, u64::from(length), "moving {moved} bytes: {fault}");
    }
}

#[test]
fn mram_write_unaligned_writes_what_the_sdk_routine_writes() {
    let program = dma_kernel(1);
    let mut machine = loaded(&program, false);
    // (offset, length, WRAM skew): the head only, the middle and tail, both ends, 0 bytes at an aligned address
    // (2,048 written), an aligned size from an unaligned WRAM address (no fault 8: the engine aligns it down),
    // and middles of 256 bytes or more, of which only the size's low 8 bits count.
    let cases = [
        (4, 2, 4),
        (0, 12, 0),
        (3, 100, 3),
        (5, 0, 5),
        (0, 0, 0),
        (16, 24, 4),
        (2, 255, 2),
        (4, 300, 4),
        (3, 600, 3),
        (1, 2047, 1),
        (8, 2048, 0),
    ];
    for (offset, length, skew) in cases {
        let what = format!("mram_write_unaligned of {length} bytes from pattern + {skew} to target + {offset}");
        assert_eq!(dma_operation(&mut machine, MODE_WRITE_UNALIGNED, offset, length, skew), None, "{what}");
        let mut expected = vec![TARGET_FILL; MRAM_BYTES];
        sdk_write_unaligned(&mut expected, &pattern(), skew as usize, offset as usize, length);
        assert_same_bytes(&symbol_bytes(&machine, "target", MRAM_BYTES), &expected, &what);
    }
    // Where a DPU writes other bytes than asked, strict mode faults.
    let mut machine = loaded(&program, true);
    for (offset, length, skew, phrase) in [
        (0, 0, 0, "one sdma, whose length field holds 8 to 2048 bytes (strict mode)"),
        (4, 300, 4, "the SDK's routine keeps the size of the aligned middle in 8 bits (strict mode)"),
    ] {
        let fault = dma_operation(&mut machine, MODE_WRITE_UNALIGNED, offset, length, skew).unwrap();
        assert!(
            fault.message.contains(&format!("mram_write_unaligned of {length} bytes"))
                && fault.message.contains(phrase),
            "{fault}"
        );
    }
    for (offset, length, skew) in [(4, 2, 4), (2, 255, 2), (3, 100, 3), (8, 2048, 0)] {
        assert_eq!(
            dma_operation(&mut machine, MODE_WRITE_UNALIGNED, offset, length, skew),
            None,
            "strict mode, {offset} {length}"
        );
    }
}

#[test]
fn partial_words_are_patched_under_a_lock_of_their_address() {
    // Tasklets write neighbouring bytes of the same words and update ints and bytes of shared words, with a
    // shuffled interleaving that switches tasklets at every DMA: an unlocked read-modify-write loses updates.
    for nr_tasklets in [4, 16] {
        let mut machine = machine_with(Topology::new(1, 1), |config| {
            config.schedule = upmem_sim::Schedule::Shuffle { seed: 3 };
        });
        machine.load(&[0], &dma_kernel(nr_tasklets)).unwrap();
        assert_eq!(dma_operation(&mut machine, MODE_SHARED_WORDS, 0, 0, 0), None);
        let written = (ROUNDS * nr_tasklets) as usize;
        let target = symbol_bytes(&machine, "target", MRAM_BYTES);
        assert_same_bytes(&target[..written], &pattern()[..written], &format!("every byte, {nr_tasklets} tasklets"));
        assert!(target[written..].iter().all(|&byte| byte == TARGET_FILL), "nothing else");
        let counters = read_u32s(&machine, 0, "counters", 4);
        assert_eq!(counters, vec![ROUNDS * nr_tasklets / 4; 4], "mram_update_int_atomic, {nr_tasklets} tasklets");
        let flags = symbol_bytes(&machine, "flags", nr_tasklets as usize);
        let expected: Vec<u8> = (1..=nr_tasklets as u8).collect();
        assert_eq!(flags, expected, "mram_write_byte_atomic, {nr_tasklets} tasklets");
    }
}

/// The instructions of `mode`'s routine: what tasklet 0 executes outside the kernel's code, beyond MODE_NONE's.
fn routine_instructions(machine: &mut Machine, mode: u32, offset: u32, length: u32, skew: u32) -> u64 {
    let sdk = |machine: &mut Machine, mode| {
        assert_eq!(dma_operation(machine, mode, offset, length, skew), None);
        machine.stats(0).unwrap().instructions_of(InstructionClass::SdkRoutine)
    };
    sdk(machine, mode) - sdk(machine, MODE_NONE)
}

/// Instructions of a path through a routine's disassembly, given as ranges of instruction indices.
fn path(ranges: &[(u32, u32)]) -> u64 {
    ranges.iter().map(|&(first, last)| u64::from(last - first + 1)).sum()
}

#[test]
fn unaligned_routines_charge_the_instructions_of_the_sdk_routines_paths() {
    let mut machine = loaded(&dma_kernel(1), false);
    // mram_read_unaligned: straight through (0-9).
    assert_eq!(routine_instructions(&mut machine, MODE_READ_UNALIGNED, 3, 20, 0), path(&[(0, 9)]));
    // mram_write_unaligned, aligned: the test (0-2), the sdma and return (44-49).
    assert_eq!(routine_instructions(&mut machine, MODE_WRITE_UNALIGNED, 8, 16, 0), path(&[(0, 2), (44, 49)]));
    // A head of 2 bytes that ends the write: the tests (0-5, 7), lock and ldma (8-30), the loop's entry (31), a
    // byte that loops (32-42), one that ends the count (32-43), sdma and unlock (52-69), return (80-81).
    let head = path(&[(0, 5), (7, 7), (8, 30), (31, 31), (32, 42), (32, 43), (52, 69), (80, 81)]);
    assert_eq!(routine_instructions(&mut machine, MODE_WRITE_UNALIGNED, 4, 2, 4), head);
    // 12 bytes at an aligned address: the tests (0-5, 7), a middle of 8 (70-79), a tail of 4: lock and ldma
    // (84-106), the loop's entry (107-108), 4 bytes (109-113), sdma, unlock and return (114-131).
    let tail = path(&[
        (0, 5),
        (7, 7),
        (70, 79),
        (84, 106),
        (107, 108),
        (109, 113),
        (109, 113),
        (109, 113),
        (109, 113),
        (114, 131),
    ]);
    assert_eq!(routine_instructions(&mut machine, MODE_WRITE_UNALIGNED, 0, 12, 0), tail);
}

#[test]
fn a_reader_initialised_within_a_page_of_the_sentinel_reads_nothing() {
    // sdk_dma.c's reader (the default SEQREAD_CACHE_SIZE, 256) at 8 bytes past `1 << 26`: init's sentinel test
    // (`add r3, r1, 0xfc000000; jltu r3, 256`) takes the page as loaded, so no ldma, and the pointer is
    // cache + 8, at the guard bytes the kernel put there.
    let mut machine = loaded(&dma_kernel(1), false);
    assert_eq!(dma_operation(&mut machine, MODE_SEQREAD_SENTINEL, 0, 0, 0), None);
    let (reader, pointer, page) = SdkReader::init(256, 0, NO_PAGE + 8);
    assert_eq!((pointer, page, reader.instructions), (8, None, 7), "the model");
    assert_eq!(read_u32(&machine, 0, "returned"), 8, "the pointer, from the cache");
    assert_eq!(read_u32s(&machine, 0, "seq_values", 1), [0xEEEE_EEEE], "the cache's guard bytes");
    assert_eq!(machine.stats(0).unwrap().total().dma_read_ops, 0, "no DMA");
}
