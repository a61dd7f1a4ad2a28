use super::*;

/// `objdump` output for the instructions `lines` (`offset:\tmnemonic operands`) in one function `f`.
fn function(format: &str, lines: &[&str]) -> String {
    let mut text = format!("k.o:     file format {format}\n\n0000000000000000 <f>:\n");
    for line in lines {
        text.push_str("  ");
        text.push_str(line);
        text.push('\n');
    }
    text
}

fn x86(lines: &[&str]) -> HashMap<u64, OperandWidth> {
    narrow_multiplies(Isa::X86_64, &function("elf64-x86-64", lines))
}

fn aarch64(lines: &[&str]) -> HashMap<u64, OperandWidth> {
    narrow_multiplies(Isa::Aarch64, &function("elf64-littleaarch64", lines))
}

/// The SpMM kernels' inner loop as gcc compiles it: the value is extended once before the loop, each feature
/// as it is loaded, and the loop's back edge leaves both alone.
const X86_LOOP: [&str; 9] = [
    "0:\tmov    0x4(%r13),%ebp",
    "4:\ttest   %r12d,%r12d",
    "7:\tje     30 <f+0x30>",
    "9:\tmovsbl %bpl,%ebp",
    "d:\tmov    $0x1,%r12d",
    "13:\tmovsbl 0x10(%r15,%r12,1),%eax",
    "19:\timul   %ebp,%eax",
    "1c:\tadd    %eax,0x20(%r15,%r12,4)",
    "24:\tjne    13 <f+0x13>",
];

#[test]
fn an_operand_extended_before_the_loop_stays_narrow_around_it() {
    assert_eq!(x86(&X86_LOOP), HashMap::from([(0x19, OperandWidth::Bits8)]));
}

#[test]
fn a_write_on_any_path_to_the_multiply_makes_it_a_32_bit_one() {
    let mut lines = X86_LOOP.to_vec();
    lines[7] = "1c:\tmov    0x20(%r15,%r12,4),%ebp";
    assert!(x86(&lines).is_empty(), "the back edge brings a 32-bit %ebp");
    let mut lines = X86_LOOP.to_vec();
    lines[4] = "d:\tcall   40 <g>";
    lines[5] = "13:\tmovsbl 0x10(%r15,%r12,1),%esi";
    lines[6] = "19:\timul   %esi,%eax";
    assert!(x86(&lines).is_empty(), "a call leaves %eax unknown");
}

#[test]
fn a_call_of_the_block_hook_leaves_every_register_as_it_was() {
    // Clang keeps the extended factor in a caller-saved register across the hook, which preserves them all.
    let lines = [
        "0:\tmovsbl (%rdi),%ecx",
        "3:\tcall   8 <f+0x8>",
        "\t\t\t4: R_X86_64_PLT32\t__sanitizer_cov_trace_pc-0x4",
        "8:\tmovsbl 0x10(%rsi),%eax",
        "c:\timul   %ecx,%eax",
    ];
    assert_eq!(x86(&lines), HashMap::from([(0xc, OperandWidth::Bits8)]));
    let mut other_call = lines.to_vec();
    other_call.remove(2);
    assert!(x86(&other_call).is_empty(), "any other call leaves %ecx unknown");
}

#[test]
fn a_mask_of_at_most_16_bits_makes_a_narrow_value_and_a_wider_one_does_not() {
    // The SpMM kernels' X row address, `(uint16_t)column * (uint16_t)(nr_features * 4)`, as gcc compiles it.
    let lines = [
        "0:\tlea    0x0(,%rbx,4),%r15d",
        "8:\tand    $0xfffc,%r15d",
        "f:\tmovzwl 0x0(%r13),%edi",
        "14:\timul   %r15d,%edi",
    ];
    assert_eq!(x86(&lines), HashMap::from([(0x14, OperandWidth::Bits16)]));
    let mut lines = lines.to_vec();
    lines[1] = "8:\tand    $0x1fffc,%r15d";
    assert!(x86(&lines).is_empty(), "17 bits");
    lines[1] = "8:\tand    $0xfc,%r15d";
    assert_eq!(x86(&lines), HashMap::from([(0x14, OperandWidth::Bits16)]), "the wider operand, movzwl's, counts");
}

#[test]
fn the_wider_operand_sets_the_width() {
    let mut lines = X86_LOOP.to_vec();
    lines[3] = "9:\tmovswl %bp,%ebp";
    assert_eq!(x86(&lines), HashMap::from([(0x19, OperandWidth::Bits16)]));
    lines[5] = "13:\tmovzwl 0x10(%r15,%r12,2),%eax";
    assert_eq!(x86(&lines), HashMap::from([(0x19, OperandWidth::Bits16)]));
}

#[test]
fn register_copies_keep_what_they_copy_and_partial_writes_do_not() {
    let copied = ["0:\tmovzbl (%rdi),%eax", "3:\tmov    %eax,%ecx", "5:\tmovsbl (%rsi),%edx", "8:\timul   %ecx,%edx"];
    assert_eq!(x86(&copied), HashMap::from([(0x8, OperandWidth::Bits8)]));
    let partial = ["0:\tmovzbl (%rdi),%eax", "3:\tmov    (%rsi),%ah", "5:\tmovsbl (%rsi),%edx", "8:\timul   %eax,%edx"];
    assert!(x86(&partial).is_empty());
    let memory = ["0:\tmovsbl (%rdi),%eax", "3:\timul   (%rsi),%eax"];
    assert!(x86(&memory).is_empty(), "a memory operand is not known narrow");
}

#[test]
fn after_a_computed_jump_only_what_a_block_sets_itself_is_known() {
    let lines = [
        "0:\tmovsbl (%rdi),%eax",
        "3:\tmovsbl (%rsi),%ecx",
        "6:\tjmp    *%rdx",
        "8:\timul   %ecx,%eax",
        "b:\tmovsbl (%rsi),%ecx",
        "e:\timul   %ecx,%eax",
        "11:\tmovsbl (%rdi),%eax",
        "14:\timul   %ecx,%eax",
        "17:\tret",
    ];
    assert_eq!(x86(&lines), HashMap::from([(0x14, OperandWidth::Bits8)]));
}

#[test]
fn facts_do_not_cross_functions() {
    let mut text = function("elf64-x86-64", &["0:\tmovsbl (%rdi),%eax", "3:\tmovsbl (%rsi),%ecx", "6:\tret"]);
    text.push_str("\n0000000000000010 <g>:\n  10:\timul   %ecx,%eax\n  13:\tret\n");
    assert!(narrow_multiplies(Isa::X86_64, &text).is_empty());
}

#[test]
fn aarch64_extending_loads_and_moves() {
    let lines = [
        "0:\tldrsb\tw1, [x0]",
        "4:\tsxtb\tw2, w3",
        "8:\tmadd\tw4, w1, w2, w4",
        "c:\tldrh\tw5, [x0, #2]",
        "10:\tmul\tw6, w5, w1",
        "14:\tldr\tw1, [x0], #4",
        "18:\tmul\tw6, w1, w2",
        "1c:\tldrsb\tw7, [x0, #1]!",
        "20:\tmul\tw6, w7, w0",
        "24:\tret",
    ];
    assert_eq!(aarch64(&lines), HashMap::from([(0x8, OperandWidth::Bits8), (0x10, OperandWidth::Bits16)]));
}

#[test]
fn aarch64_loops_and_calls() {
    let looped = [
        "0:\tsxtb\tw1, w1",
        "4:\tldrsb\tw2, [x0, x3]",
        "8:\tmadd\tw4, w1, w2, w4",
        "c:\tadd\tx3, x3, #0x1",
        "10:\tcmp\tx3, x5",
        "14:\tb.ne\t4 <f+0x4>",
        "18:\tret",
    ];
    assert_eq!(aarch64(&looped), HashMap::from([(0x8, OperandWidth::Bits8)]));
    let mut called = looped.to_vec();
    called[3] = "c:\tbl\t0 <g>";
    assert!(aarch64(&called).is_empty(), "the call may change w1 on the back edge");
    let masked = ["0:\tand\tw1, w6, #0xfffc", "4:\tldrh\tw2, [x0]", "8:\tmul\tw4, w1, w2"];
    assert_eq!(aarch64(&masked), HashMap::from([(0x8, OperandWidth::Bits16)]));
    let mut masked = masked.to_vec();
    masked[0] = "0:\tand\tw1, w6, #0xfffffffc";
    assert!(aarch64(&masked).is_empty(), "a 32-bit mask");
}

/// The batch loop as clang compiles it with coverage calls: two of the four extended factors are spilled before
/// the loop and reloaded in it, one into a register and one as the multiply's memory operand.
const X86_SPILLED: [&str; 12] = [
    "0:\tsub    $0x28,%rsp",
    "4:\tmovsbl 0x0(%r13),%eax",
    "9:\tmov    %eax,0x8(%rsp)",
    "d:\tmovsbl 0x4(%r13),%eax",
    "12:\tmov    %eax,0x14(%rsp)",
    "16:\tcall   100 <f+0x100>",
    "1b:\tmovsbl -0xc7(%r13,%r14,1),%eax",
    "24:\tmov    0x8(%rsp),%edx",
    "28:\timul   %edx,%eax",
    "2b:\tmovsbl -0x87(%r13,%r14,1),%ecx",
    "34:\timul   0x14(%rsp),%ecx",
    "39:\tjne    1b <f+0x1b>",
];

#[test]
fn a_narrow_value_spilled_to_the_stack_stays_narrow_when_reloaded() {
    assert_eq!(x86(&X86_SPILLED), HashMap::from([(0x28, OperandWidth::Bits8), (0x34, OperandWidth::Bits8)]));
}

/// GCC spills a batch's eight factors and the masked bits of its size that it tests (three more narrow values)
/// around the hook's calls: with 8 slots tracked, the i8 kernels' products by the last factors spilled counted
/// as 32-bit multiplies, and a kernel built by GCC ran twice the instructions of clang's at 64 features.
#[test]
fn a_batch_of_factors_spilled_with_its_masked_size_stays_narrow() {
    const SPILLED: u64 = 11;
    let mut lines = Vec::new();
    for k in 0..SPILLED {
        lines.push(format!("{:x}:\tmovsbl {:#x}(%r13),%eax", 0x10 * k, k));
        lines.push(format!("{:x}:\tmov    %eax,{:#x}(%rsp)", 0x10 * k + 8, 8 + 4 * k));
    }
    lines.push(format!("{:x}:\tcall   1000 <f+0x1000>", 0x10 * SPILLED));
    let products = 0x10 * SPILLED + 0x10;
    for k in 0..SPILLED {
        lines.push(format!("{:x}:\tmovsbl {:#x}(%r14),%ecx", products + 0x10 * k, k));
        lines.push(format!("{:x}:\timul   {:#x}(%rsp),%ecx", products + 0x10 * k + 8, 8 + 4 * k));
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let expected = (0..SPILLED).map(|k| (products + 0x10 * k + 8, OperandWidth::Bits8));
    assert_eq!(x86(&lines), HashMap::from_iter(expected));
}

#[test]
fn a_spill_slot_overwritten_or_moved_holds_anything() {
    let mut overwritten = X86_SPILLED;
    overwritten[5] = "16:\taddl   $0x1,0x8(%rsp)";
    assert_eq!(x86(&overwritten), HashMap::from([(0x34, OperandWidth::Bits8)]));
    let mut moved = X86_SPILLED;
    moved[5] = "16:\tsub    $0x8,%rsp";
    assert_eq!(x86(&moved), HashMap::new());
}

#[test]
fn the_two_byte_nop_before_a_loop_keeps_every_register_and_an_exchange_swaps_two() {
    // Clang pads a loop's head with `xchg %ax,%ax`; the factor extended into %eax before it stays narrow.
    let padded = ["0:\tmovsbl (%rdi),%eax", "3:\txchg   %ax,%ax", "5:\tmovsbl 0x10(%rsi),%edx", "9:\timul   %eax,%edx"];
    assert_eq!(x86(&padded), HashMap::from([(0x9, OperandWidth::Bits8)]));
    let mut swapped = padded.to_vec();
    swapped[1] = "3:\txchg   %eax,%ecx";
    swapped[3] = "9:\timul   %ecx,%edx";
    assert_eq!(x86(&swapped), HashMap::from([(0x9, OperandWidth::Bits8)]), "%ecx holds what %eax held");
    swapped[3] = "9:\timul   %eax,%edx";
    assert!(x86(&swapped).is_empty(), "%eax holds what %ecx held, unknown");
}
