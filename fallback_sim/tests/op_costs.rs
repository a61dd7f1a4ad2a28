//! Operation costs under the timing model: kernels that differ only in their arithmetic's type differ in
//! modelled time as on a real DPU (PrIM's throughput figures, see `common/calibration.rs`).

mod common;

use common::calibration::{arithmetic_stats, modelled_mops, operation};
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
    // 4 tasklets x 1,024 bytes of floats, one multiply each.
    let multiplies = 4 * 1024 / 4;
    let float_mul = InstructionClass::FloatMul.dpu_instructions();
    assert_eq!(float.instructions_of(InstructionClass::FloatMul), u64::from(multiplies * float_mul));
    assert_eq!(integer.instructions_of(InstructionClass::FloatMul), 0);
    assert!(float.instructions_of(InstructionClass::FloatMul) > float.instructions / 2, "{float:?}");
}

/// PrIM did not measure 8- and 16-bit multiplies: the modelled throughput is checked against the one derived
/// from the DPU compiler's instructions for them, and the multiplies are counted in their own classes.
#[test]
fn narrow_multiplies_run_as_the_dpu_compilers_instructions_for_them() {
    for (name, class) in [("int8 multiply", InstructionClass::Mul8), ("int16 multiply", InstructionClass::Mul16)] {
        let narrow = operation(name);
        let ratio = modelled_mops(&narrow, 16) / narrow.reference.mops();
        assert!(TOLERANCE.contains(&ratio), "{name}: modelled / derived {ratio:.2}");
        let stats = arithmetic_stats(&narrow, 4, 1);
        // 4 tasklets x 1,024 bytes of elements, one multiply each.
        let multiplies = u64::from(4 * 1024 / narrow.element.bytes());
        assert_eq!(stats.instructions_of(class), multiplies * u64::from(class.dpu_instructions()), "{stats:?}");
        assert_eq!(stats.instructions_of(InstructionClass::Mul32), 0, "{name}: {stats:?}");
    }
}
