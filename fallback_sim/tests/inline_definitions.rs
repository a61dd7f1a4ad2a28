//! C99 `inline` definitions without an external definition link as they do with the SDK's compiler: a call the
//! host compiler leaves (the DPU's clang may inline where the host's does not) uses the inline definition; and a
//! program that does provide an external definition keeps it for such calls.

mod common;

use common::{kernel_source, machine, read_u32, write_u32};
use upmem_sim::{KernelBuilder, Program, SimulatedBuild as _};

const INPUT: u32 = 0x1234_5678;

/// `scramble` of `inline_definitions/scramble.h`.
fn scramble(value: u32) -> u32 {
    let mut state = value.wrapping_mul(0x9E37_79B1);
    for round in 0..8u32 {
        state ^= state >> 15;
        state = state.wrapping_mul(0x85EB_CA77);
        state ^= state >> 13;
        state = state.wrapping_mul(0xC2B2_AE3D);
        state = state.wrapping_add(round.wrapping_mul(0x27D4_EB2F));
        state = state.rotate_left(7);
        state ^= value.wrapping_add(round);
        state = state.wrapping_mul(0x1656_67B1);
        state = state.rotate_left(13);
        state = state.wrapping_add(0x61C8_8647);
    }
    state ^ (state >> 16)
}

/// Builds `inline_definitions/calls.c` with `second` at -O2 with clang (the SDK's compiler is one), runs it once,
/// and returns its outputs `direct`, `through_pointer` and `next`.
fn run_with(second: &str) -> [u32; 3] {
    let dir = tempfile::tempdir().expect("temporary directory");
    let binary = KernelBuilder::new()
        .source(kernel_source("inline_definitions/calls"))
        .source(kernel_source(&format!("inline_definitions/{second}")))
        .compiler("clang")
        .flag("-O2")
        .flag("-Wall")
        .flag("-Werror")
        .build(dir.path().join("inline_definitions.dpusim"))
        .unwrap_or_else(|error| panic!("building calls.c with {second}.c: {error}"));
    let mut machine = machine(1, 1);
    machine.load(&[0], &Program::from_file(&binary).expect("loading the kernel").into()).unwrap();
    write_u32(&machine, 0, "input", INPUT);
    machine.launch(&[0]).unwrap();
    ["direct", "through_pointer", "next"].map(|output| read_u32(&machine, 0, output))
}

#[test]
fn calls_left_to_an_inline_definition_link_to_it() {
    let [direct, through_pointer, next] = run_with("next");
    assert_eq!(direct, scramble(INPUT), "a direct call");
    assert_eq!(through_pointer, scramble(INPUT), "a call through a pointer");
    assert_eq!(next, scramble(INPUT + 1), "a call from the other source file with the same inline definition");
}

#[test]
fn an_external_definition_elsewhere_is_the_one_calls_left_use() {
    let [_, through_pointer, next] = run_with("external");
    assert_eq!(through_pointer, !INPUT, "a call through a pointer uses the external definition");
    assert_eq!(next, !(INPUT + 1), "the external definition's own file");
}
