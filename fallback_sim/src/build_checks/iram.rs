//! An estimate of a kernel's size in DPU instructions, what its IRAM must hold.
//!
//! A DPU program is the boot code, the kernel's own code and the SDK runtime routines it links. The kernel's own
//! code is counted from the block costs the builder computes for the timing model ([`crate::block_costs`]),
//! statically: each block's DPU instructions, except that a multiply, divide or floating-point operation that a
//! DPU does in a compiler-runtime routine is one `call` there, and the routine is counted once. UPMEM's LLVM fork
//! (`DPUTargetLowering.cpp`) makes 32- and 64-bit multiplies (`__mulsi3`, `__muldi3`) and divides (`__udiv32`,
//! `__div32`, and `__udivmodsi4`/`__divmodsi4` for a quotient with its remainder) library calls, and has no
//! floating-point unit, so every float and double operation is LLVM's soft-float routine; 8- and 16-bit
//! multiplies are inline byte multiplies. The routines' sizes, and those of the runtime functions the kernel
//! calls (`printf`, `mem_alloc`, `barrier_wait`, `seqread256_get`, `memcpy`, ...), are the SDK's own
//! ([`super::sdk_routines`]), with what they call in turn.
//!
//! Host instructions stand in for DPU instructions, so the kernel's part is approximate (a DPU compares and
//! branches in one instruction where x86-64 takes two, for instance); the runtime's part is exact for the
//! routines named.

use std::collections::{BTreeMap, BTreeSet};

use crate::block_costs::{self, BlockCost};
use crate::builder::CompilerFamily;
use crate::disassembly::{instruction, is_function_label};
use crate::narrow_operands::{self, OperandWidth};
use crate::op_costs::{self, InstructionClass, Isa};

use super::sdk_routines::{self, BOOTSTRAP};
use super::IramEstimate;
use upmem_types::ChipVersion;

/// Estimates a program's IRAM: `sites` are its blocks, `disassembly` the kernel object's code (for the
/// arithmetic routines its instructions need) and `functions` the names its sources call, define or inline
/// (those the SDK's runtime has are linked), for DPUs of `chip`, from the code of a `compiler`.
pub(crate) fn estimate<'a>(
    sites: &[BlockCost],
    disassembly: &str,
    functions: impl IntoIterator<Item = &'a str>,
    chip: ChipVersion,
    compiler: CompilerFamily,
) -> IramEstimate {
    let mut needed = arithmetic_routines(disassembly);
    needed.insert(BOOTSTRAP);
    let named = functions.into_iter().filter_map(sdk_routines::find).map(|routine| routine.name);
    needed.extend(named);
    IramEstimate { kernel_instructions: kernel_instructions(sites), runtime_routines: linked(needed), chip, compiler }
}

/// The DPU instructions of the kernel's own code.
fn kernel_instructions(sites: &[BlockCost]) -> u32 {
    sites
        .iter()
        .flat_map(|site| {
            InstructionClass::ALL.iter().map(|&class| static_instructions(class, site.by_class[class.index()]))
        })
        .sum()
}

/// What `executed` DPU instructions of `class` in one pass through a block occupy in IRAM: as many, unless the
/// class is a routine's, whose every operation is one `call`.
fn static_instructions(class: InstructionClass, executed: u32) -> u32 {
    if is_routine_call(class) {
        executed / class.dpu_instructions()
    } else {
        executed
    }
}

fn is_routine_call(class: InstructionClass) -> bool {
    !matches!(
        class,
        InstructionClass::Alu
            | InstructionClass::CompareBranch
            | InstructionClass::LoadStore
            | InstructionClass::StackLoadStore
            | InstructionClass::Mul8
            | InstructionClass::Mul16
            | InstructionClass::SdkRoutine
    )
}

/// `needed` and every routine they call, with their sizes.
fn linked(needed: BTreeSet<&'static str>) -> Vec<(&'static str, u32)> {
    let mut linked = BTreeMap::new();
    let mut pending: Vec<&str> = needed.into_iter().collect();
    while let Some(name) = pending.pop() {
        let Some(routine) = sdk_routines::find(name) else { continue };
        if linked.insert(routine.name, routine.instructions).is_none() {
            pending.extend(routine.calls);
        }
    }
    linked.into_iter().collect()
}

/// The compiler-runtime routines the instructions of the kernel's functions (those instrumented with block
/// costs, not the simulator's runtime) call on a DPU.
fn arithmetic_routines(disassembly: &str) -> BTreeSet<&'static str> {
    let isa = Isa::of_disassembly(disassembly);
    let narrow = narrow_operands::narrow_multiplies(isa, disassembly);
    let mut routines = BTreeSet::new();
    let mut function: Vec<&'static str> = Vec::new();
    let mut is_kernel_function = false;
    for line in disassembly.lines() {
        if is_function_label(line) {
            if is_kernel_function {
                routines.extend(function.iter());
            }
            function.clear();
            is_kernel_function = false;
        } else if block_costs::is_call_to_trace_pc(line) {
            is_kernel_function = true;
        } else if let Some((offset, mnemonic, operands)) = instruction(line) {
            function.extend(libcalls(isa, mnemonic, operands, narrow.get(&offset).copied()));
        }
    }
    if is_kernel_function {
        routines.extend(function);
    }
    routines
}

/// The routines a DPU calls for one host instruction's operation.
fn libcalls(isa: Isa, mnemonic: &str, operands: &str, narrow: Option<OperandWidth>) -> &'static [&'static str] {
    let signed = match isa {
        Isa::X86_64 => mnemonic.starts_with("idiv"),
        Isa::Aarch64 => mnemonic == "sdiv",
    };
    let subtracts = mnemonic.contains("sub");
    let root = mnemonic.contains("sqrt");
    match op_costs::operation_class(isa, mnemonic, operands, narrow) {
        InstructionClass::Mul32 => &["__mulsi3"],
        InstructionClass::Mul64 => &["__muldi3"],
        InstructionClass::Div32 if signed => &["__divmodsi4"],
        InstructionClass::Div32 => &["__udivmodsi4"],
        InstructionClass::Div64 if signed => &["__divdi3", "__moddi3"],
        InstructionClass::Div64 => &["__udivdi3", "__umoddi3"],
        InstructionClass::FloatAdd if subtracts => &["__subsf3"],
        InstructionClass::FloatAdd => &["__addsf3"],
        InstructionClass::FloatMul => &["__mulsf3"],
        // The SDK's runtime has no square root: a kernel that calls sqrtf does not link for a DPU at all.
        InstructionClass::FloatDiv | InstructionClass::DoubleDiv if root => &[],
        InstructionClass::FloatDiv => &["__divsf3"],
        // The host's compare does not show the predicate (the branch after it does): a compare is charged
        // the routines of `<` and `>`.
        InstructionClass::FloatCompare => &["__ltsf2", "__gtsf2"],
        InstructionClass::DoubleAdd if subtracts => &["__subdf3"],
        InstructionClass::DoubleAdd => &["__adddf3"],
        InstructionClass::DoubleMul => &["__muldf3"],
        InstructionClass::DoubleDiv => &["__divdf3"],
        InstructionClass::DoubleCompare => &["__ltdf2", "__gtdf2"],
        InstructionClass::FloatConvert | InstructionClass::DoubleConvert => conversion(isa, mnemonic, operands),
        _ => &[],
    }
}

/// The routine of a conversion between an integer, a float and a double.
fn conversion(isa: Isa, mnemonic: &str, operands: &str) -> &'static [&'static str] {
    let kind = match isa {
        Isa::X86_64 => x86_conversion(mnemonic.strip_prefix('v').unwrap_or(mnemonic), operands),
        Isa::Aarch64 => aarch64_conversion(mnemonic, operands),
    };
    match kind {
        Some(Conversion::ToFloat { from_double: true }) => &["__truncdfsf2"],
        Some(Conversion::ToDouble { from_float: true }) => &["__extendsfdf2"],
        Some(Conversion::FromInteger { to_double, wide, unsigned }) => match (to_double, wide, unsigned) {
            (false, false, false) => &["__floatsisf"],
            (false, false, true) => &["__floatunsisf"],
            (false, true, false) => &["__floatdisf"],
            (false, true, true) => &["__floatundisf"],
            (true, false, false) => &["__floatsidf"],
            (true, false, true) => &["__floatunsidf"],
            (true, true, false) => &["__floatdidf"],
            (true, true, true) => &["__floatundidf"],
        },
        Some(Conversion::ToInteger { from_double, wide, unsigned }) => match (from_double, wide, unsigned) {
            (false, false, false) => &["__fixsfsi"],
            (false, false, true) => &["__fixunssfsi"],
            (false, true, false) => &["__fixsfdi"],
            (false, true, true) => &["__fixunssfdi"],
            (true, false, false) => &["__fixdfsi"],
            (true, false, true) => &["__fixunsdfsi"],
            (true, true, false) => &["__fixdfdi"],
            (true, true, true) => &["__fixunsdfdi"],
        },
        _ => &[],
    }
}

/// What a conversion instruction converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conversion {
    ToFloat { from_double: bool },
    ToDouble { from_float: bool },
    FromInteger { to_double: bool, wide: bool, unsigned: bool },
    ToInteger { from_double: bool, wide: bool, unsigned: bool },
}

/// `cvtsi2ss`, `cvttsd2si`, `cvtss2sd`, ... (x86-64 has no unsigned conversions: compilers widen the value).
fn x86_conversion(mnemonic: &str, operands: &str) -> Option<Conversion> {
    // The scalar conversions take an operand-size suffix when the integer operand is in memory.
    let base = ["cvtsi2ss", "cvtsi2sd", "cvttss2si", "cvtss2si", "cvttsd2si", "cvtsd2si"]
        .into_iter()
        .find(|base| mnemonic.strip_prefix(base).is_some_and(|suffix| matches!(suffix, "" | "l" | "q")))
        .unwrap_or(mnemonic);
    let wide =
        (base != mnemonic && mnemonic.ends_with('q')) || operands.split(',').any(op_costs::is_x86_64bit_register);
    Some(match base {
        "cvtsi2ss" | "cvtdq2ps" => Conversion::FromInteger { to_double: false, wide, unsigned: false },
        "cvtsi2sd" | "cvtdq2pd" => Conversion::FromInteger { to_double: true, wide, unsigned: false },
        "cvttss2si" | "cvtss2si" | "cvttps2dq" | "cvtps2dq" => {
            Conversion::ToInteger { from_double: false, wide, unsigned: false }
        }
        "cvttsd2si" | "cvtsd2si" | "cvttpd2dq" | "cvtpd2dq" => {
            Conversion::ToInteger { from_double: true, wide, unsigned: false }
        }
        "cvtss2sd" | "cvtps2pd" => Conversion::ToDouble { from_float: true },
        "cvtsd2ss" | "cvtpd2ps" => Conversion::ToFloat { from_double: true },
        _ => return None,
    })
}

/// `scvtf s0, w1`, `fcvtzu x0, d1`, `fcvt d0, s1`: the destination register comes first.
fn aarch64_conversion(mnemonic: &str, operands: &str) -> Option<Conversion> {
    let mut registers = operands.split(',').map(|operand| operand.trim_start().chars().next());
    let (destination, source) = (registers.next()??, registers.next()??);
    let unsigned = mnemonic == "ucvtf" || mnemonic.ends_with('u');
    Some(match mnemonic {
        "scvtf" | "ucvtf" => Conversion::FromInteger { to_double: destination == 'd', wide: source == 'x', unsigned },
        "fcvt" if destination == 'd' => Conversion::ToDouble { from_float: source == 's' },
        "fcvt" => Conversion::ToFloat { from_double: source == 'd' },
        _ if mnemonic.starts_with("fcvt") => {
            Conversion::ToInteger { from_double: source == 'd', wide: destination == 'x', unsigned }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(classes: &[(InstructionClass, u32)]) -> BlockCost {
        let mut by_class = [0; InstructionClass::COUNT];
        for &(class, operations) in classes {
            by_class[class.index()] += operations * class.dpu_instructions();
        }
        BlockCost { return_offset: 0, by_class }
    }

    #[test]
    fn a_routine_operation_is_one_call_in_iram() {
        let sites = [
            block(&[(InstructionClass::Alu, 5), (InstructionClass::Mul32, 2), (InstructionClass::Mul16, 1)]),
            block(&[(InstructionClass::FloatDiv, 1), (InstructionClass::LoadStore, 3)]),
        ];
        // 5 + 2 calls + 7 (an inline 16-bit multiply), then 1 call + 3.
        assert_eq!(kernel_instructions(&sites), 5 + 2 + 7 + 1 + 3);
    }

    #[test]
    fn routines_bring_what_they_call_once() {
        let functions = ["printf", "mem_alloc", "__dpusim_mram_read", "main"];
        let estimate = estimate(&[], "", functions, ChipVersion::V1A, CompilerFamily::Clang);
        let names: Vec<&str> = estimate.runtime_routines.iter().map(|&(name, _)| name).collect();
        assert!(names.contains(&"__bootstrap") && names.contains(&"mem_alloc_nolock") && names.contains(&"memset"));
        assert!(!names.contains(&"main") && !names.contains(&"__dpusim_mram_read"));
        // crt0 11, printf and its helpers 270 (what the SDK's linked hello-world example holds besides its
        // main), mem_alloc 7 and mem_alloc_nolock 11.
        assert_eq!(estimate.instructions(), 11 + 270 + 7 + 11);
    }

    #[test]
    fn host_arithmetic_maps_to_the_dpu_routines() {
        let x86 = |mnemonic, operands| libcalls(Isa::X86_64, mnemonic, operands, None);
        assert_eq!(x86("imul", "%esi,%eax"), ["__mulsi3"]);
        assert_eq!(x86("imul", "%rsi,%rax"), ["__muldi3"]);
        assert_eq!(libcalls(Isa::X86_64, "imul", "%esi,%eax", Some(OperandWidth::Bits8)), [] as [&str; 0]);
        assert_eq!(x86("divl", "%ecx"), ["__udivmodsi4"]);
        assert_eq!(x86("idiv", "%rcx"), ["__divdi3", "__moddi3"]);
        assert_eq!(x86("subss", "%xmm1,%xmm0"), ["__subsf3"]);
        assert_eq!(x86("vmulsd", "%xmm1,%xmm0,%xmm0"), ["__muldf3"]);
        assert_eq!(x86("cvtsi2ss", "%eax,%xmm0"), ["__floatsisf"]);
        assert_eq!(x86("cvtsi2sdq", "%rax,%xmm0"), ["__floatdidf"]);
        assert_eq!(x86("cvttss2si", "%xmm0,%eax"), ["__fixsfsi"]);
        assert_eq!(x86("cvtss2sd", "%xmm0,%xmm0"), ["__extendsfdf2"]);
        assert_eq!(x86("add", "%eax,%ebx"), [] as [&str; 0]);
        let aarch64 = |mnemonic, operands| libcalls(Isa::Aarch64, mnemonic, operands, None);
        assert_eq!(aarch64("sdiv", "w0, w1, w2"), ["__divmodsi4"]);
        assert_eq!(aarch64("ucvtf", "d0, x1"), ["__floatundidf"]);
        assert_eq!(aarch64("fcvtzu", "w0, s1"), ["__fixunssfsi"]);
        assert_eq!(aarch64("fcvt", "s0, d1"), ["__truncdfsf2"]);
        assert_eq!(aarch64("fsqrt", "s0, s1"), [] as [&str; 0]);
    }

    #[test]
    fn only_the_kernels_functions_count() {
        let disassembly = "\
dpu_kernel.o:     file format elf64-x86-64

0000000000000000 <kernel>:
   0:\tcall   5 <kernel+0x5>
\t\t\t1: R_X86_64_PLT32\t__sanitizer_cov_trace_pc-0x4
   5:\timul   %esi,%eax
   8:\tret

0000000000000010 <runtime_helper>:
  10:\tdivss  %xmm1,%xmm0
  14:\tret
";
        assert_eq!(arithmetic_routines(disassembly), BTreeSet::from(["__mulsi3"]));
    }
}
