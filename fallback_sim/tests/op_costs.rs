//! Operation costs under the timing model against figures from outside the cost table (`InstructionClass::
//! dpu_instructions`): kernels that differ only in their arithmetic's type differ in modelled time as on a real
//! DPU (PrIM's throughput figures, see `common/calibration.rs`), narrow multiplies cost what the DPU's
//! instruction set needs for them, and the integer sequences what the SDK's compiled routines execute.

mod common;

use common::calibration::{
    arithmetic_stats, modelled_mops, operation, published_instructions, ISA_MUL16_INSTRUCTIONS, ISA_MUL8_INSTRUCTIONS,
};
use upmem_sim::InstructionClass;

/// The calibration's tolerance on a modelled figure over its published one.
const TOLERANCE: std::ops::RangeInclusive<f64> = 0.75..=1.33;

fn assert_relative_time_as_published(integer: &str, float: &str) {
    let (integer, float) = (operation(integer), operation(float));
    let modelled = modelled_mops(&integer, 16) / modelled_mops(&float, 16);
    let published = integer.reference.mops() / float.reference.mops();
    assert!(
        TOLERANCE.contains(&(modelled / published)),
        "{} takes {modelled:.2} x the time of {}; on a DPU {published:.2} x",
        float.name,
        integer.name
    );
}

#[test]
fn float_addition_is_as_much_slower_than_integer_addition_as_on_a_dpu() {
    assert_relative_time_as_published("int32 add", "float add");
}

#[test]
fn float_and_double_multiplication_are_as_much_slower_than_integer_multiplication_as_on_a_dpu() {
    assert_relative_time_as_published("int32 multiply", "float multiply");
    assert_relative_time_as_published("int64 multiply", "double multiply");
}

#[test]
fn throughput_grows_with_tasklets_until_the_pipeline_is_full_at_eleven() {
    let add = operation("int32 add");
    let [one, eleven, sixteen] = [1, 11, 16].map(|nr_tasklets| modelled_mops(&add, nr_tasklets));
    assert!((eleven / one - 11.0).abs() < 0.5, "1 tasklet: {one:.2} MOPS, 11: {eleven:.2}");
    assert!((sixteen / eleven - 1.0).abs() < 0.05, "11 tasklets: {eleven:.2} MOPS, 16: {sixteen:.2}");
}

#[test]
fn instructions_by_class_add_up_and_name_the_kernels_arithmetic() {
    let float = arithmetic_stats(&operation("float multiply"), 4, 1);
    let integer = arithmetic_stats(&operation("int32 add"), 4, 1);
    for stats in [&float, &integer] {
        assert_eq!(stats.instructions_by_class.iter().sum::<u64>(), stats.instructions, "{stats:?}");
        assert!(stats.instructions_of(InstructionClass::LoadStore) > 0, "{stats:?}");
        assert!(stats.instructions_of(InstructionClass::CompareBranch) > 0, "{stats:?}");
        assert!(stats.instructions_of(InstructionClass::SdkRoutine) > 0, "the boot: {stats:?}");
    }
    // 4 tasklets x 1,024 bytes of floats, one multiply each, at what PrIM's float multiply throughput gives.
    let multiplies = 4 * 1024 / 4;
    let float_mul = published_instructions(&operation("float multiply"));
    assert_eq!(float.instructions_of(InstructionClass::FloatMul), u64::from(multiplies * float_mul));
    assert_eq!(integer.instructions_of(InstructionClass::FloatMul), 0);
    assert!(float.instructions_of(InstructionClass::FloatMul) > float.instructions / 2, "{float:?}");
}

/// PrIM did not measure 8- and 16-bit multiplies: the modelled throughput is checked against the one derived
/// from the instructions the DPU's instruction set needs for them, and the multiplies are counted in their own
/// classes at that many instructions.
#[test]
fn narrow_multiplies_run_as_the_dpu_instruction_sets_byte_multiplies() {
    for (name, class, instructions) in [
        ("int8 multiply", InstructionClass::Mul8, ISA_MUL8_INSTRUCTIONS),
        ("int16 multiply", InstructionClass::Mul16, ISA_MUL16_INSTRUCTIONS),
    ] {
        let narrow = operation(name);
        let ratio = modelled_mops(&narrow, 16) / narrow.reference.mops();
        assert!(TOLERANCE.contains(&ratio), "{name}: modelled / derived {ratio:.2}");
        let stats = arithmetic_stats(&narrow, 4, 1);
        // 4 tasklets x 1,024 bytes of elements, one multiply each.
        let multiplies = u64::from(4 * 1024 / narrow.element.bytes());
        assert_eq!(stats.instructions_of(class), multiplies * u64::from(instructions), "{stats:?}");
        assert_eq!(stats.instructions_of(InstructionClass::Mul32), 0, "{name}: {stats:?}");
    }
}

/// The integer sequences against the SDK 2025.1's compiled compiler runtime (`librt_v1A.a`, disassembled with
/// the SDK's own `dpu/disasm.py`): a 32-bit multiply or divide costs one step instruction per operand bit it
/// processes, so the table's figure (PrIM's throughput) must lie within the routine's shortest and longest
/// paths; a 64-bit multiply is a routine without branches, which every call executes whole.
#[test]
fn integer_sequences_cost_what_the_sdks_compiled_routines_execute() {
    // `mul32.c.obj`, `__mulsi3`: `jgtu` and two moves order the operands, a move clears the product, then one
    // `mul_step` per bit of the smaller operand until it is spent (1 to 32: each exits when the rest is zero),
    // a move and the return jump: 6 + 1 to 6 + 32.
    let mul32 = 6 + 1..=6 + 32;
    // `udiv32.c.obj`, `__udiv32`: two `clz` and a `sub` that leaves through two instructions when the divisor
    // is the larger (5 in all), else two moves and a jump into the `div_step` chain, one `div_step` per quotient
    // bit (1 to 32) and two jumps out: 5 to 8 + 32. The signed `__div32` (`div32.c.obj`) adds 7 (both operands
    // non-negative) to 17 (negations before and after) around its call.
    let div32 = 5..=8 + 32 + 17;
    // `mul64.c.obj`, `__muldi3`: 123 instructions and no branch before its return, plus the caller's `call`
    // and up to three moves of its operands and result into and out of the argument registers: 124 to 127.
    // PrIM's figure has two significant digits (2.6 MOPS: 127 to 132 instructions), so the table may exceed
    // the routine's path by that much.
    let mul64 = 124..=127 * 105 / 100;
    for (class, sdk) in
        [(InstructionClass::Mul32, mul32), (InstructionClass::Div32, div32), (InstructionClass::Mul64, mul64)]
    {
        let table = class.dpu_instructions();
        assert!(sdk.contains(&table), "{class}: the table's {table} instructions, the SDK's routine {sdk:?}");
    }
}
