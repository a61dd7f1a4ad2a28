//! The DPU libc and allocators as the UPMEM SDK 2025.1's compiled runtime has them (librt_v1A.a, read in its
//! disassembly): each test covers a case where the C standard, the host's C library or the simulator's former
//! runtime gives another result. Expected values follow from the SDK routines' algorithms, spelled out here.

mod common;

use common::{build, machine_with, read_u32s, write_u32};
use upmem_sim::{FaultKind, Machine, SimError, Topology, WRAM_BASE};

const WRAM_SIZE: u64 = 64 << 10;
const BUFFER_BYTES: usize = 256;

fn loaded(kernel: &str, nr_tasklets: u32) -> Machine {
    let mut machine = machine_with(Topology::new(1, 1), |_| {});
    machine.load(&[0], &build(kernel, nr_tasklets, &[])).unwrap();
    machine
}

fn read_i32s(machine: &Machine, symbol: &str, count: usize) -> Vec<i32> {
    read_u32s(machine, 0, symbol, count).into_iter().map(|word| word as i32).collect()
}

// ---- memcpy, memmove, memset ---------------------------------------------------------------------------------

/// The SDK's memcpy (memcpy.c.obj) on a byte array whose first byte is at WRAM address `base`: bytes up to the
/// destination's next word boundary, then words while source and destination agree modulo 4 (each a 4-byte
/// load then store), then bytes; every byte singly when they disagree. Always forward. Returns the
/// instructions it executes.
fn sdk_memcpy(memory: &mut [u8], base: u32, destination: usize, source: usize, length: usize) -> u64 {
    let address = |offset: usize| base as usize + offset;
    let end = destination + length;
    let word_up = |offset: usize| address(offset).div_ceil(4) * 4 - base as usize;
    let word_down = |offset: usize| address(offset) / 4 * 4 - base as usize;
    let mut instructions = 10;
    let mut head_end = word_up(destination);
    if head_end <= end {
        instructions += 1;
    } else {
        head_end = end;
    }
    if (address(source) ^ address(destination)) % 4 != 0 {
        instructions += 1;
        head_end = end;
    }
    let head = head_end - destination;
    for i in 0..head {
        memory[destination + i] = memory[source + i];
    }
    if head != 0 {
        instructions += 3 + 5 * head as u64;
    }
    instructions += 2;
    let words = if word_down(end) >= head_end {
        instructions += 2;
        (word_down(end) - head_end) / 4
    } else {
        0
    };
    instructions += 3;
    for word in 0..words {
        let (to, from) = (destination + head + 4 * word, source + head + 4 * word);
        let loaded: [u8; 4] = memory[from..from + 4].try_into().unwrap();
        memory[to..to + 4].copy_from_slice(&loaded);
    }
    if words != 0 {
        instructions += 2 + 5 * words as u64;
    }
    instructions += 2;
    let copied = head + 4 * words;
    for i in copied..length {
        memory[destination + i] = memory[source + i];
    }
    if length > copied {
        instructions += 2 + 6 * (length - copied) as u64;
    }
    instructions + 1
}

fn pattern() -> Vec<u8> {
    (0..BUFFER_BYTES).map(|i| (i as u8).wrapping_mul(37).wrapping_add(11)).collect()
}

struct Copy {
    mode: u32,
    destination: usize,
    source: usize,
    length: usize,
}

/// Runs one copy of sdk_libc_memcpy; returns the buffer after it and the launch's instructions.
fn run_copy(machine: &mut Machine, copy: &Copy) -> (Vec<u8>, u64) {
    machine.write_symbol(0, "buffer", 0, &pattern()).unwrap();
    write_u32(machine, 0, "mode", copy.mode);
    write_u32(machine, 0, "destination", copy.destination as u32);
    write_u32(machine, 0, "source", copy.source as u32);
    write_u32(machine, 0, "length", copy.length as u32);
    machine.launch(&[0]).unwrap();
    let mut buffer = vec![0; BUFFER_BYTES];
    machine.read_symbol(0, "buffer", 0, &mut buffer).unwrap();
    (buffer, machine.stats(0).unwrap().instructions)
}

#[test]
fn memcpy_copies_forward_over_overlapping_ranges_as_the_sdk_does() {
    let mut machine = loaded("sdk_libc_memcpy", 1);
    let base = machine.symbol(0, "buffer").unwrap().address;
    // Overlaps above and below the source at every distance up to 9 and every alignment of both pointers, the
    // LZ back-reference (21 bytes at distance 1) among them, and disjoint copies.
    let mut cases = vec![(1, 0, 21), (0, 1, 21), (64, 32, 40), (32, 64, 40), (100, 100, 7)];
    for distance in 1..=9 {
        for destination_offset in 0..4 {
            let destination = 40 + destination_offset;
            cases.push((destination, destination - distance, 23));
            cases.push((destination - distance, destination, 23));
        }
    }
    let (_, empty_copy) = run_copy(&mut machine, &Copy { mode: 0, destination: 16, source: 8, length: 0 });
    let mut memory = pattern();
    let empty_model = sdk_memcpy(&mut memory, base, 16, 8, 0);
    for (destination, source, length) in cases {
        let mut expected = pattern();
        let model = sdk_memcpy(&mut expected, base, destination, source, length);
        let (buffer, instructions) = run_copy(&mut machine, &Copy { mode: 0, destination, source, length });
        let what = format!("memcpy(buffer + {destination}, buffer + {source}, {length}), buffer at {base:#x}");
        assert_eq!(buffer, expected, "{what}");
        // The routine's own instructions: what the count grew by over a 0-byte copy's.
        assert_eq!(instructions - empty_copy, model - empty_model, "instructions of {what}");
    }
}

#[test]
fn a_constant_length_memcpy_is_the_sdk_call_not_the_host_compilers_inline_copy() {
    let mut machine = loaded("sdk_libc_memcpy", 1);
    let base = machine.symbol(0, "buffer").unwrap().address;
    let mut expected = pattern();
    sdk_memcpy(&mut expected, base, 1, 0, 21);
    assert!(expected[1..22].iter().all(|&byte| byte == pattern()[0]), "the first byte repeated");
    let (buffer, _) = run_copy(&mut machine, &Copy { mode: 1, destination: 1, source: 0, length: 21 });
    assert_eq!(buffer, expected, "memcpy(buffer + 1, buffer, 21) with a constant length");
    let mut expected = pattern();
    sdk_memcpy(&mut expected, base, 3, 0, 21);
    let (buffer, _) = run_copy(&mut machine, &Copy { mode: 1, destination: 3, source: 0, length: 21 });
    assert_eq!(buffer, expected, "memcpy(buffer + 3, buffer, 21) with a constant length");
}

#[test]
fn memmove_and_memset_give_the_c_results_and_charge_the_sdk_loops() {
    let mut machine = loaded("sdk_libc_memcpy", 1);
    let (_, empty_move) = run_copy(&mut machine, &Copy { mode: 2, destination: 8, source: 16, length: 0 });
    for (destination, source, length) in [(41, 40, 21), (40, 41, 21), (44, 40, 30), (40, 44, 30), (10, 90, 33)] {
        let mut expected = pattern();
        expected.copy_within(source..source + length, destination);
        let (buffer, instructions) = run_copy(&mut machine, &Copy { mode: 2, destination, source, length });
        assert_eq!(buffer, expected, "memmove(buffer + {destination}, buffer + {source}, {length})");
        assert!(instructions > empty_move + 5 * (length as u64 / 4), "memmove's loops are charged");
    }
    write_u32(&machine, 0, "value", 0x1A5);
    let (_, empty_set) = run_copy(&mut machine, &Copy { mode: 3, destination: 8, source: 0, length: 0 });
    let base = machine.symbol(0, "buffer").unwrap().address as usize;
    for (destination, length) in [(8, 32), (9, 32), (10, 3), (11, 1)] {
        let mut expected = pattern();
        expected[destination..destination + length].fill(0xA5);
        let (buffer, instructions) = run_copy(&mut machine, &Copy { mode: 3, destination, source: 0, length });
        assert_eq!(buffer, expected, "memset(buffer + {destination}, 0x1A5, {length})");
        // memset.c.obj: 3 instructions per head byte (up to a word boundary), per word and per tail byte,
        // around a fixed part.
        let head = ((4 - (base + destination) % 4) % 4).min(length);
        let loops = 3 * (head + (length - head) / 4 + (length - head) % 4) as u64;
        assert!(instructions - empty_set >= loops, "memset({destination}, {length}) charges its loops");
    }
}

// ---- strings, numbers, errno ---------------------------------------------------------------------------------

const NUMBER: &str = "99999999999999999999";

/// The SDK's atoi/atol: decimal digits accumulated with no overflow check, wrapping at the result's width.
fn wrapping_decimal(digits: &str) -> u64 {
    digits.bytes().fold(0u64, |value, digit| value.wrapping_mul(10).wrapping_add(u64::from(digit - b'0')))
}

#[test]
fn string_and_number_functions_follow_the_sdk_not_the_host() {
    let nr_tasklets = 4;
    let mut machine = loaded("sdk_libc_strings", nr_tasklets);
    let mut text = b"ab\xffa ".to_vec();
    let number_offset = text.len();
    text.extend_from_slice(NUMBER.as_bytes());
    machine.write_symbol(0, "text", 0, &[text.as_slice(), b"\0"].concat()).unwrap();
    write_u32(&machine, 0, "text_length", text.len() as u32);
    write_u32(&machine, 0, "number_offset", number_offset as u32);
    machine.launch(&[0]).unwrap();
    let results = read_i32s(&machine, "results", 14);
    let number = wrapping_decimal(NUMBER);
    let expected = [
        1,                                 // memchr(text, 0xFF): a signed char never equals 255
        2,                                 // memchr(text, -1): the 0xFF byte
        1,                                 // strchr(text, -1): an unsigned char never equals -1
        1,                                 // strchr(text, 'a' + 256): no conversion to char
        3,                                 // strrchr(text, 'a')
        i32::from(b'a') - i32::from(b'b'), // memcmp: the bytes' difference
        0,                                 // atoi(NULL)
        number as u32 as i32,              // atoi wraps at 32 bits (the host's saturates)
        number as u32 as i32,              // atol's low word...
        (number >> 32) as u32 as i32,      // ...and high word: wraps at 64 bits
        1,                                 // strerror(EINVAL) is the DPU's message for 28
        28,                                // strerror(1000) sets errno to the DPU's EINVAL
        28,                                // EINVAL
        49,                                // ENOMEM
    ];
    assert_eq!(results, expected);
    let errnos = read_i32s(&machine, "errnos", nr_tasklets as usize);
    assert_eq!(errnos, (0..nr_tasklets as i32).map(|t| 100 + t).collect::<Vec<_>>(), "one errno per tasklet");
}

// ---- mem_alloc, buddy, fsb -----------------------------------------------------------------------------------

/// Launches mode of sdk_libc_alloc on a fresh load; returns offsets[] and errors[].
fn alloc_mode(mode: u32, to_end: u32) -> (Vec<u32>, Vec<i32>, Result<(), SimError>, Machine) {
    let mut machine = loaded("sdk_libc_alloc", 1);
    write_u32(&machine, 0, "mode", mode);
    write_u32(&machine, 0, "to_end", to_end);
    let launched = machine.launch(&[0]);
    (read_u32s(&machine, 0, "offsets", 8), read_i32s(&machine, "errors", 3), launched, machine)
}

const EINVAL: i32 = 28;
const ENOMEM: i32 = 49;

#[test]
fn mem_alloc_zero_returns_the_pointer_as_is_and_the_last_byte_of_wram_is_never_allocated() {
    let program = build("sdk_libc_alloc", 1, &[]);
    // The heap starts after the globals, the stacks and 8 bytes per tasklet (link/dpu.lds: .data.sw_cache).
    let heap_start = WRAM_BASE + program.wram_used();
    let after_three_allocations = heap_start - WRAM_BASE + 16;
    let to_end = (WRAM_SIZE - after_three_allocations) as u32;
    let (offsets, _, launched, _) = alloc_mode(0, to_end);
    assert_eq!(offsets[..3], [0, 3, 8], "mem_alloc(3), mem_alloc(0), mem_alloc(8)");
    match launched {
        Err(SimError::DpuFault { first, .. }) => {
            assert_eq!(first.kind, FaultKind::HeapFull, "{first}");
            assert_eq!(first.value, u64::from(to_end), "{first}");
        }
        other => panic!("mem_alloc up to the end of WRAM is runtime fault 1, got {other:?}"),
    }
    let (_, _, launched, _) = alloc_mode(0, to_end - 1);
    assert!(launched.is_ok(), "a block ending one byte below the end fits: {launched:?}");
}

#[test]
fn the_buddy_allocator_keeps_its_bitmap_before_the_heap_and_reports_the_sdks_errors() {
    // A 2048-byte heap: max_power 11, 8 levels, a bitmap of 4 << (8 - 5) = 32 bytes before the heap.
    let (offsets, errors, launched, _) = alloc_mode(1, 0);
    launched.unwrap();
    let bitmap = 32;
    assert_eq!(offsets[0], bitmap, "the first 16-byte block is the heap's first");
    assert_eq!(offsets[1], bitmap + 16, "then its buddy");
    // The first 64-byte block is partly used: the next one.
    assert_eq!(offsets[2], bitmap + 64, "buddy_alloc(64)");
    assert_eq!(offsets[3], offsets[2], "buddy_free of a pointer inside a block frees the block");
    assert_eq!(offsets[4], offsets[0], "buddy_realloc(p, 0) frees p and returns p");
    assert_eq!(offsets[5], bitmap + 2048, "a second buddy_init takes no memory");
    assert_eq!(errors, [EINVAL, EINVAL, ENOMEM], "buddy_alloc(0), (heap + 1), (heap) with blocks in use");

    // 3000 bytes: the tree is 2048 bytes (the power of two below), a 2500-byte request passes the size test and
    // fails for want of a block.
    let (offsets, errors, launched, _) = alloc_mode(2, 0);
    launched.unwrap();
    assert_eq!(errors[0], ENOMEM, "buddy_alloc(2500) on a 3000-byte heap");
    assert_eq!(offsets[0], bitmap, "buddy_alloc(2048) on a 3000-byte heap");
}

#[test]
fn fsb_alloc_puts_its_blocks_first_and_the_list_head_after_them() {
    let (offsets, errors, launched, _) = alloc_mode(3, 0);
    launched.unwrap();
    // fsb_alloc(12, 5): 16-byte blocks; mem_alloc(5 * 16 + 4), the head in the last 4 bytes.
    let blocks: Vec<u32> = (0..5).map(|i| 16 * i).collect();
    assert_eq!(offsets[0], 80, "the allocator (the list head)");
    assert_eq!(offsets[1..6], blocks[..], "fsb_get hands the blocks out in address order");
    assert_eq!(errors[0], 1, "then NULL, and the head is NULL");
    assert_eq!(offsets[6], blocks[4], "the block freed last comes back first");
    assert_eq!(offsets[7], 84, "the next mem_alloc(0) is just past the 4-byte head");
}
