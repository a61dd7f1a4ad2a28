//! What one host instruction of a kernel costs on a DPU, in DPU instructions.
//!
//! A DPU is a 32-bit RISC core with an 8x8-bit multiply step and a divide step and no floating-point unit:
//! 32- and 64-bit multiplies and divides are instruction sequences, and float and double arithmetic are
//! software routines of the compiler runtime. Each host instruction of a kernel's disassembly is sorted into a
//! class of DPU instruction ([`InstructionClass`]) whose cost is the number of DPU instructions that operation executes.
//! The costs and their sources are tabled in the crate docs ("Operation costs", in `lib.rs`); keep the two in
//! step.

use crate::narrow_operands::OperandWidth;

/// A class of DPU instruction, by the operation it serves: what [`DpuStats::instructions_by_class`] counts.
///
/// [`DpuStats::instructions_by_class`]: crate::DpuStats::instructions_by_class
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InstructionClass {
    /// Integer ALU operations and register moves: one DPU instruction each.
    Alu,
    /// Compares, branches, calls and returns: one DPU instruction each.
    CompareBranch,
    /// WRAM loads and stores (and the loads and stores of an x86-64 memory operand): one each.
    LoadStore,
    /// Multiplies of two sign- or zero-extended 8-bit values: one 8 x 8-bit multiply instruction.
    Mul8,
    /// Multiplies of two sign- or zero-extended 16-bit values (or a 16- and an 8-bit one): the DPU compiler's
    /// sequence of byte multiplies.
    Mul16,
    /// 32-bit multiplies: the compiler runtime's `mul_step` sequence.
    Mul32,
    /// 64-bit multiplies: the compiler runtime's byte-product routine.
    Mul64,
    /// 32-bit divides and remainders: the compiler runtime's `div_step` sequence.
    Div32,
    /// 64-bit divides and remainders: the compiler runtime's shift-subtract loop.
    Div64,
    /// Software float add and subtract.
    FloatAdd,
    /// Software float multiply.
    FloatMul,
    /// Software float divide and square root.
    FloatDiv,
    /// Software float compare, min and max.
    FloatCompare,
    /// Software double add and subtract.
    DoubleAdd,
    /// Software double multiply.
    DoubleMul,
    /// Software double divide and square root.
    DoubleDiv,
    /// Software double compare, min and max.
    DoubleCompare,
    /// int <-> float and float <-> double conversions.
    FloatConvert,
    /// int <-> double conversions.
    DoubleConvert,
    /// The SDK runtime's routines the simulator replaces (boot, barriers, mutexes, semaphores, handshakes,
    /// `mem_alloc`, `seqread`, DMA issue), charged as the SDK's sources execute them.
    SdkRoutine,
    /// Loads and stores of the stack (pushes and pops, and accesses through the stack pointer): one each, as
    /// [`InstructionClass::LoadStore`]. Counted apart because on x86-64 most of them are spills: values the host
    /// compiler, with 16 general-purpose registers, keeps on the stack across a loop, which a DPU's compiler, with
    /// 24, may keep in registers. They show how much of a kernel's count the host's register pressure may add.
    StackLoadStore,
}

impl InstructionClass {
    /// Every class, in the order of [`InstructionClass::index`].
    pub const ALL: [InstructionClass; 21] = [
        InstructionClass::Alu,
        InstructionClass::CompareBranch,
        InstructionClass::LoadStore,
        InstructionClass::Mul8,
        InstructionClass::Mul16,
        InstructionClass::Mul32,
        InstructionClass::Mul64,
        InstructionClass::Div32,
        InstructionClass::Div64,
        InstructionClass::FloatAdd,
        InstructionClass::FloatMul,
        InstructionClass::FloatDiv,
        InstructionClass::FloatCompare,
        InstructionClass::DoubleAdd,
        InstructionClass::DoubleMul,
        InstructionClass::DoubleDiv,
        InstructionClass::DoubleCompare,
        InstructionClass::FloatConvert,
        InstructionClass::DoubleConvert,
        InstructionClass::SdkRoutine,
        InstructionClass::StackLoadStore,
    ];

    /// The number of classes.
    pub const COUNT: usize = InstructionClass::ALL.len();

    /// The class's position in [`InstructionClass::ALL`] and in per-class arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// A short name for tables: `alu`, `float mul`, ...
    pub const fn name(self) -> &'static str {
        match self {
            InstructionClass::Alu => "alu",
            InstructionClass::CompareBranch => "compare/branch",
            InstructionClass::LoadStore => "load/store",
            InstructionClass::StackLoadStore => "stack load/store",
            InstructionClass::Mul8 => "mul8",
            InstructionClass::Mul16 => "mul16",
            InstructionClass::Mul32 => "mul32",
            InstructionClass::Mul64 => "mul64",
            InstructionClass::Div32 => "div32",
            InstructionClass::Div64 => "div64",
            InstructionClass::FloatAdd => "float add",
            InstructionClass::FloatMul => "float mul",
            InstructionClass::FloatDiv => "float div",
            InstructionClass::FloatCompare => "float compare",
            InstructionClass::DoubleAdd => "double add",
            InstructionClass::DoubleMul => "double mul",
            InstructionClass::DoubleDiv => "double div",
            InstructionClass::DoubleCompare => "double compare",
            InstructionClass::FloatConvert => "float convert",
            InstructionClass::DoubleConvert => "double convert",
            InstructionClass::SdkRoutine => "sdk routines",
        }
    }

    /// DPU instructions one operation of the class executes; see the crate docs, "Operation costs".
    pub const fn dpu_instructions(self) -> u32 {
        match self {
            InstructionClass::Alu
            | InstructionClass::CompareBranch
            | InstructionClass::LoadStore
            | InstructionClass::StackLoadStore
            | InstructionClass::SdkRoutine
            // One `mul_sl_sl`/`mul_sl_ul`/`mul_ul_ul` (the DPU backend's MUL8 selection).
            | InstructionClass::Mul8 => 1,
            // The backend's Mul16 expansion: low-byte product, then two cross-byte products and the high-byte
            // product, each with its `lsl_add` (the full path; 1 when both operands fit a byte).
            InstructionClass::Mul16 => 7,
            InstructionClass::Mul32 => 30,
            InstructionClass::Mul64 => 130,
            InstructionClass::Div32 => 27,
            InstructionClass::Div64 => 245,
            InstructionClass::FloatAdd => 66,
            InstructionClass::FloatMul => 179,
            InstructionClass::FloatDiv => 1024,
            InstructionClass::FloatCompare => 12,
            InstructionClass::DoubleAdd => 101,
            InstructionClass::DoubleMul => 695,
            InstructionClass::DoubleDiv => 2183,
            InstructionClass::DoubleCompare => 16,
            InstructionClass::FloatConvert => 20,
            InstructionClass::DoubleConvert => 30,
        }
    }
}

impl std::fmt::Display for InstructionClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// DPU instructions per class: of a block, or of what a DPU executed.
pub(crate) type ClassInstructions = [u32; InstructionClass::COUNT];

/// The instruction set of a disassembly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    X86_64,
    Aarch64,
}

impl Isa {
    /// The one kernels are compiled for: the host's.
    pub(crate) const HOST: Isa = if cfg!(target_arch = "aarch64") { Isa::Aarch64 } else { Isa::X86_64 };

    /// The instruction set named in `objdump`'s `file format` line, else the host's.
    pub(crate) fn of_disassembly(disassembly: &str) -> Isa {
        match disassembly.lines().find_map(|line| line.split_once("file format ")) {
            Some((_, format)) if format.contains("aarch64") => Isa::Aarch64,
            Some((_, format)) if format.contains("x86-64") => Isa::X86_64,
            _ => Isa::HOST,
        }
    }
}

/// Adds what one disassembled host instruction costs on a DPU to `block`, in DPU instructions by class: its
/// operation's, and on x86-64 the WRAM loads and stores a DPU, a load-store machine, needs for a memory operand.
/// `narrow` is the width of a 32-bit multiply's operands when both are known extended 8- or 16-bit values
/// ([`narrow_operands`](crate::narrow_operands)), which a DPU multiplies with its byte multiplies.
pub(crate) fn add_instruction(
    block: &mut ClassInstructions,
    isa: Isa,
    mnemonic: &str,
    operands: &str,
    narrow: Option<OperandWidth>,
) {
    let class = operation_class(isa, mnemonic, operands, narrow);
    block[class.index()] += class.dpu_instructions();
    if isa == Isa::X86_64 {
        let accesses = if x86_memory_operand_on_stack(operands) {
            InstructionClass::StackLoadStore
        } else {
            InstructionClass::LoadStore
        };
        block[accesses.index()] += x86_memory_accesses(mnemonic, operands);
    }
}

/// Whether an x86-64 instruction's memory operand is addressed through the stack pointer (`0x18(%rsp)`).
fn x86_memory_operand_on_stack(operands: &str) -> bool {
    x86_operands(operands).iter().any(|operand| operand.contains("(%rsp"))
}

/// Whether an aarch64 load or store addresses the stack (`[sp, #16]`).
fn aarch64_on_stack(operands: &str) -> bool {
    operands.contains("[sp")
}

/// The class of one disassembled host instruction's operation (not counting an x86-64 memory operand's loads
/// and stores): a 32-bit multiply of `narrow` operands is the DPU's byte multiplies.
pub(crate) fn operation_class(
    isa: Isa,
    mnemonic: &str,
    operands: &str,
    narrow: Option<OperandWidth>,
) -> InstructionClass {
    match (classify(isa, mnemonic, operands), narrow) {
        (InstructionClass::Mul32, Some(OperandWidth::Bits8)) => InstructionClass::Mul8,
        (InstructionClass::Mul32, Some(OperandWidth::Bits16)) => InstructionClass::Mul16,
        (class, _) => class,
    }
}

/// The loads and stores an x86-64 instruction's memory operand adds to its operation: one to read a source,
/// two to update a destination (`add %eax,(%rbx)`: load, add, store). Moves, pushes and pops are a load or a
/// store themselves; `lea` and jumps only compute an address.
fn x86_memory_accesses(mnemonic: &str, operands: &str) -> u32 {
    let is_transfer = ["mov", "lea", "push", "pop", "j", "call", "ret", "cmov", "set", "stos", "lods"]
        .iter()
        .any(|prefix| mnemonic.starts_with(prefix));
    if is_transfer {
        return 0;
    }
    let operands = x86_operands(operands);
    let Some(destination) = operands.last() else { return 0 };
    let only_reads = mnemonic.starts_with("cmp")
        || mnemonic.starts_with("test")
        || mnemonic.starts_with("ucomi")
        || mnemonic.starts_with("comi")
        || matches!(
            classify_x86(mnemonic, ""),
            Some(InstructionClass::Mul8 | InstructionClass::Mul16 | InstructionClass::Mul32 | InstructionClass::Div32)
        ) && operands.len() == 1;
    if destination.contains('(') && !only_reads {
        2
    } else {
        u32::from(operands.iter().any(|operand| operand.contains('(')))
    }
}

/// AT&T operands without the comment, split at the commas outside parentheses: `$0x1,0xc(%rbx,%rbp,4)` has two.
fn x86_operands(operands: &str) -> Vec<&str> {
    crate::disassembly::split_operands(operands.split('#').next().unwrap_or(""))
}

/// The class of one disassembled host instruction (x86-64 in AT&T syntax as `objdump` prints it, or aarch64).
/// Anything not recognised as a multiply, divide or floating-point operation is a one-instruction class.
fn classify(isa: Isa, mnemonic: &str, operands: &str) -> InstructionClass {
    match isa {
        Isa::X86_64 => classify_x86(mnemonic, operands).unwrap_or_else(|| simple_x86(mnemonic, operands)),
        Isa::Aarch64 => classify_aarch64(mnemonic, operands).unwrap_or_else(|| simple_aarch64(mnemonic, operands)),
    }
}

/// The class of an x86-64 instruction that costs one DPU instruction. A move to or from memory is a load or a
/// store; the memory operand of any other instruction is counted by [`x86_memory_accesses`].
fn simple_x86(mnemonic: &str, operands: &str) -> InstructionClass {
    let is_control = ["j", "call", "ret", "cmp", "test", "loop"].iter().any(|prefix| mnemonic.starts_with(prefix));
    let is_push_or_pop = mnemonic.starts_with("push") || mnemonic.starts_with("pop");
    let is_memory_move = mnemonic.starts_with("mov") && operands.split('#').next().unwrap_or("").contains('(');
    if is_control {
        InstructionClass::CompareBranch
    } else if is_push_or_pop || (is_memory_move && x86_memory_operand_on_stack(operands)) {
        InstructionClass::StackLoadStore
    } else if is_memory_move || mnemonic.starts_with("stos") || mnemonic.starts_with("lods") {
        InstructionClass::LoadStore
    } else {
        InstructionClass::Alu
    }
}

/// The class of an aarch64 instruction that costs one DPU instruction.
fn simple_aarch64(mnemonic: &str, operands: &str) -> InstructionClass {
    let is_branch = mnemonic == "b"
        || mnemonic.starts_with("b.")
        || matches!(mnemonic, "bl" | "br" | "blr" | "ret" | "cbz" | "cbnz" | "tbz" | "tbnz")
        || matches!(mnemonic, "cmp" | "cmn" | "tst" | "ccmp" | "ccmn");
    if is_branch {
        InstructionClass::CompareBranch
    } else if (mnemonic.starts_with("ld") || mnemonic.starts_with("st")) && aarch64_on_stack(operands) {
        InstructionClass::StackLoadStore
    } else if mnemonic.starts_with("ld") || mnemonic.starts_with("st") {
        InstructionClass::LoadStore
    } else {
        InstructionClass::Alu
    }
}

fn classify_x86(mnemonic: &str, operands: &str) -> Option<InstructionClass> {
    let wide = || mnemonic.ends_with('q') || x86_register_operands(operands).into_iter().any(is_x86_64bit_register);
    match mnemonic {
        "imul" | "imull" | "imulq" | "mul" | "mull" | "mulq" | "mulx" | "mulxl" | "mulxq" => {
            Some(if wide() { InstructionClass::Mul64 } else { x86_narrow_multiply(operands) })
        }
        // Byte and word multiplies (`mul %r13b`, `imulw 0x2(%rax)`) are the DPU's byte multiplies too.
        "imulb" | "mulb" => Some(InstructionClass::Mul8),
        "imulw" | "mulw" => Some(InstructionClass::Mul16),
        "div" | "divl" | "divq" | "idiv" | "idivl" | "idivq" | "divw" | "idivw" | "divb" | "idivb" => {
            Some(if wide() { InstructionClass::Div64 } else { InstructionClass::Div32 })
        }
        _ => classify_sse(mnemonic.strip_prefix('v').filter(|rest| is_sse(rest)).unwrap_or(mnemonic)),
    }
}

fn is_sse(mnemonic: &str) -> bool {
    classify_sse(mnemonic).is_some()
}

/// Scalar (and, counted per instruction, packed) SSE arithmetic.
fn classify_sse(mnemonic: &str) -> Option<InstructionClass> {
    if mnemonic.starts_with("cvt") {
        let double = mnemonic.contains("sd") || mnemonic.contains("pd");
        let float = mnemonic.contains("ss") || mnemonic.contains("ps");
        return Some(if double && !float { InstructionClass::DoubleConvert } else { InstructionClass::FloatConvert });
    }
    Some(match mnemonic {
        "addss" | "subss" | "addps" | "subps" => InstructionClass::FloatAdd,
        "mulss" | "mulps" => InstructionClass::FloatMul,
        "divss" | "divps" | "sqrtss" | "sqrtps" => InstructionClass::FloatDiv,
        "ucomiss" | "comiss" | "cmpss" | "minss" | "maxss" | "minps" | "maxps" => InstructionClass::FloatCompare,
        "addsd" | "subsd" | "addpd" | "subpd" => InstructionClass::DoubleAdd,
        "mulsd" | "mulpd" => InstructionClass::DoubleMul,
        "divsd" | "divpd" | "sqrtsd" | "sqrtpd" => InstructionClass::DoubleDiv,
        "ucomisd" | "comisd" | "minsd" | "maxsd" | "minpd" | "maxpd" => InstructionClass::DoubleCompare,
        _ => return None,
    })
}

/// The class of a multiply on byte or word registers (`mul %r13b`: 8 x 8 bits, `imul %cx,%ax`: 16 x 16), which
/// x86-64 compilers emit for products they truncate to 8 or 16 bits; else a 32-bit multiply.
fn x86_narrow_multiply(operands: &str) -> InstructionClass {
    let registers = x86_register_operands(operands);
    let byte = |name: &str| {
        matches!(
            name,
            "%al" | "%bl" | "%cl" | "%dl" | "%ah" | "%bh" | "%ch" | "%dh" | "%sil" | "%dil" | "%bpl" | "%spl"
        ) || name.starts_with("%r") && name.ends_with('b')
    };
    let word = |name: &str| {
        matches!(name, "%ax" | "%bx" | "%cx" | "%dx" | "%si" | "%di" | "%bp" | "%sp")
            || name.starts_with("%r") && name.ends_with('w')
    };
    if registers.is_empty() {
        InstructionClass::Mul32
    } else if registers.iter().all(|name| byte(name)) {
        InstructionClass::Mul8
    } else if registers.iter().all(|name| byte(name) || word(name)) {
        InstructionClass::Mul16
    } else {
        InstructionClass::Mul32
    }
}

/// The register operands of an x86-64 instruction, which give an operation's width; the registers inside a memory
/// operand (`0x8(%r14,%rbp,4)`) only compute its address.
fn x86_register_operands(operands: &str) -> Vec<&str> {
    x86_operands(operands).into_iter().map(str::trim).filter(|operand| operand.starts_with('%')).collect()
}

/// `%rax`, `%r8`, but not `%r8d`: a 64-bit general-purpose register operand.
pub(crate) fn is_x86_64bit_register(operand: &str) -> bool {
    let Some(name) = operand.trim().strip_prefix("%r") else { return false };
    let numbered = name
        .strip_prefix(|c: char| c.is_ascii_digit())
        .map(|rest| rest.trim_start_matches(|c: char| c.is_ascii_digit()));
    match numbered {
        Some(suffix) => suffix.is_empty(),
        None => name.len() == 2 && name.chars().all(|c| c.is_ascii_lowercase()),
    }
}

fn classify_aarch64(mnemonic: &str, operands: &str) -> Option<InstructionClass> {
    let first = operands.trim_start().chars().next();
    let wide = first == Some('x');
    let double = first == Some('d');
    Some(match mnemonic {
        "mul" | "madd" | "msub" | "mneg" | "smull" | "umull" | "smaddl" | "umaddl" | "smsubl" | "umsubl" => {
            if wide && !matches!(mnemonic, "smull" | "umull" | "smaddl" | "umaddl" | "smsubl" | "umsubl") {
                InstructionClass::Mul64
            } else {
                InstructionClass::Mul32
            }
        }
        "smulh" | "umulh" => InstructionClass::Mul64,
        "sdiv" | "udiv" => {
            if wide {
                InstructionClass::Div64
            } else {
                InstructionClass::Div32
            }
        }
        "fadd" | "fsub" => pick(double, InstructionClass::DoubleAdd, InstructionClass::FloatAdd),
        "fmul" | "fnmul" | "fmadd" | "fmsub" | "fnmadd" | "fnmsub" => {
            pick(double, InstructionClass::DoubleMul, InstructionClass::FloatMul)
        }
        "fdiv" | "fsqrt" => pick(double, InstructionClass::DoubleDiv, InstructionClass::FloatDiv),
        "fcmp" | "fcmpe" | "fccmp" | "fccmpe" | "fmin" | "fmax" | "fminnm" | "fmaxnm" => {
            // The compared registers come first: `fcmp s0, s1`.
            pick(double, InstructionClass::DoubleCompare, InstructionClass::FloatCompare)
        }
        "scvtf" | "ucvtf" | "fcvtzs" | "fcvtzu" | "fcvtas" | "fcvtau" | "fcvtms" | "fcvtmu" | "fcvtns" | "fcvtnu"
        | "fcvtps" | "fcvtpu" | "fcvt" => {
            let any_double = operands.split(',').any(|operand| operand.trim_start().starts_with('d'));
            let any_float = operands.split(',').any(|operand| operand.trim_start().starts_with('s'));
            pick(any_double && !any_float, InstructionClass::DoubleConvert, InstructionClass::FloatConvert)
        }
        _ => return None,
    })
}

fn pick(double: bool, if_double: InstructionClass, if_float: InstructionClass) -> InstructionClass {
    if double {
        if_double
    } else {
        if_float
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dpu_instructions(isa: Isa, mnemonic: &str, operands: &str) -> u32 {
        let mut block = [0; InstructionClass::COUNT];
        add_instruction(&mut block, isa, mnemonic, operands, None);
        block.iter().sum()
    }

    #[test]
    fn x86_integer_multiplies_and_divides_by_width() {
        assert_eq!(classify(Isa::X86_64, "imul", "%esi,%eax"), InstructionClass::Mul32);
        assert_eq!(classify(Isa::X86_64, "imul", "$0x2c,%rdi,%rax"), InstructionClass::Mul64);
        assert_eq!(classify(Isa::X86_64, "imul", "%r8d,%eax"), InstructionClass::Mul32);
        assert_eq!(classify(Isa::X86_64, "imul", "%r8,%rax"), InstructionClass::Mul64);
        // A memory operand's registers are its address, not the multiply's width.
        assert_eq!(classify(Isa::X86_64, "imul", "0x1004f8(%r14,%rbp,4),%eax"), InstructionClass::Mul32);
        assert_eq!(classify(Isa::X86_64, "imul", "0x8(%rsp),%rbx"), InstructionClass::Mul64);
        assert_eq!(classify(Isa::X86_64, "divl", "0x10(%rsp)"), InstructionClass::Div32);
        assert_eq!(classify(Isa::X86_64, "div", "%rcx"), InstructionClass::Div64);
        assert_eq!(classify(Isa::X86_64, "idiv", "%ecx"), InstructionClass::Div32);
        assert_eq!(classify(Isa::X86_64, "mul", "%r13b"), InstructionClass::Mul8);
        assert_eq!(classify(Isa::X86_64, "mulb", "0x4(%rax)"), InstructionClass::Mul8);
        assert_eq!(classify(Isa::X86_64, "imul", "%cx,%ax"), InstructionClass::Mul16);
        assert_eq!(classify(Isa::X86_64, "imulw", "0x4(%rax)"), InstructionClass::Mul16);
    }

    #[test]
    fn x86_scalar_floating_point() {
        assert_eq!(classify(Isa::X86_64, "addss", "%xmm1,%xmm0"), InstructionClass::FloatAdd);
        assert_eq!(classify(Isa::X86_64, "vmulsd", "%xmm1,%xmm0,%xmm0"), InstructionClass::DoubleMul);
        assert_eq!(classify(Isa::X86_64, "divss", "(%rax),%xmm0"), InstructionClass::FloatDiv);
        assert_eq!(classify(Isa::X86_64, "ucomisd", "%xmm1,%xmm0"), InstructionClass::DoubleCompare);
        assert_eq!(classify(Isa::X86_64, "cvtsi2sd", "%eax,%xmm0"), InstructionClass::DoubleConvert);
        assert_eq!(classify(Isa::X86_64, "cvtss2sd", "%xmm0,%xmm0"), InstructionClass::FloatConvert);
        assert_eq!(classify(Isa::X86_64, "cvttss2si", "%xmm0,%eax"), InstructionClass::FloatConvert);
    }

    #[test]
    fn x86_moves_and_alu_cost_one_instruction() {
        for (mnemonic, operands) in
            [("mov", "%eax,%ebx"), ("add", "$0x1,%rax"), ("movss", "(%rax),%xmm0"), ("jne", "1c")]
        {
            assert_eq!(classify(Isa::X86_64, mnemonic, operands).dpu_instructions(), 1, "{mnemonic}");
        }
    }

    #[test]
    fn x86_memory_operands_add_the_loads_and_stores_of_a_load_store_machine() {
        let cost = |mnemonic, operands| dpu_instructions(Isa::X86_64, mnemonic, operands);
        assert_eq!(cost("add", "%ecx,(%rbx,%rbp,4)"), 3);
        assert_eq!(cost("add", "0x4(%rax),%ecx"), 2);
        assert_eq!(cost("cmpl", "$0x3,0x8(%rax)"), 2);
        assert_eq!(cost("mov", "%eax,0xc(%rsp)"), 1);
        assert_eq!(cost("lea", "0x1(%rax,%rcx,4),%rdx"), 1);
        assert_eq!(cost("addss", "(%rax),%xmm0"), 1 + InstructionClass::FloatAdd.dpu_instructions());
        assert_eq!(cost("divl", "0x10(%rsp)"), 1 + InstructionClass::Div32.dpu_instructions());
        assert_eq!(cost("mulb", "0x10(%rsp)"), 1 + InstructionClass::Mul8.dpu_instructions());
        assert_eq!(cost("add", "%eax,%ecx"), 1);
        assert_eq!(dpu_instructions(Isa::Aarch64, "add", "w0, w0, #0x1"), 1);
    }

    #[test]
    fn aarch64_by_register_width() {
        assert_eq!(classify(Isa::Aarch64, "mul", "w0, w1, w2"), InstructionClass::Mul32);
        assert_eq!(classify(Isa::Aarch64, "madd", "x0, x1, x2, x3"), InstructionClass::Mul64);
        assert_eq!(classify(Isa::Aarch64, "udiv", "x0, x1, x2"), InstructionClass::Div64);
        assert_eq!(classify(Isa::Aarch64, "sdiv", "w0, w1, w2"), InstructionClass::Div32);
        assert_eq!(classify(Isa::Aarch64, "fadd", "s0, s0, s1"), InstructionClass::FloatAdd);
        assert_eq!(classify(Isa::Aarch64, "fmul", "d0, d0, d1"), InstructionClass::DoubleMul);
        assert_eq!(classify(Isa::Aarch64, "fcmp", "s0, #0.0"), InstructionClass::FloatCompare);
        assert_eq!(classify(Isa::Aarch64, "scvtf", "d0, w0"), InstructionClass::DoubleConvert);
        assert_eq!(classify(Isa::Aarch64, "fcvt", "d0, s0"), InstructionClass::FloatConvert);
        assert_eq!(classify(Isa::Aarch64, "add", "w0, w0, #0x1"), InstructionClass::Alu);
    }

    #[test]
    fn one_instruction_classes() {
        let x86 = |mnemonic, operands| classify(Isa::X86_64, mnemonic, operands);
        assert_eq!(x86("mov", "0x4(%rax),%ecx"), InstructionClass::LoadStore);
        assert_eq!(x86("movss", "%xmm0,(%rdi)"), InstructionClass::LoadStore);
        assert_eq!(x86("push", "%rbx"), InstructionClass::StackLoadStore);
        assert_eq!(x86("mov", "0x58(%rsp),%ecx"), InstructionClass::StackLoadStore);
        assert_eq!(x86("cmp", "%eax,%ecx"), InstructionClass::CompareBranch);
        assert_eq!(x86("jne", "1c <f+0x1c>"), InstructionClass::CompareBranch);
        assert_eq!(x86("ret", ""), InstructionClass::CompareBranch);
        assert_eq!(x86("lea", "0x1(%rax,%rcx,4),%rdx"), InstructionClass::Alu);
        let aarch64 = |mnemonic| classify(Isa::Aarch64, mnemonic, "w0, [x1]");
        assert_eq!(aarch64("ldr"), InstructionClass::LoadStore);
        assert_eq!(classify(Isa::Aarch64, "stp", "x29, x30, [sp, #-16]!"), InstructionClass::StackLoadStore);
        assert_eq!(aarch64("b.ne"), InstructionClass::CompareBranch);
        assert_eq!(aarch64("cbz"), InstructionClass::CompareBranch);
        assert_eq!(aarch64("orr"), InstructionClass::Alu);
    }

    #[test]
    fn an_x86_memory_operand_adds_loads_and_stores_to_its_operation() {
        let mut block = [0; InstructionClass::COUNT];
        add_instruction(&mut block, Isa::X86_64, "add", "%ecx,(%rbx,%rbp,4)", None);
        add_instruction(&mut block, Isa::X86_64, "addss", "(%rax),%xmm0", None);
        assert_eq!(block[InstructionClass::Alu.index()], 1);
        assert_eq!(block[InstructionClass::LoadStore.index()], 3);
        assert_eq!(block[InstructionClass::FloatAdd.index()], InstructionClass::FloatAdd.dpu_instructions());
        // A spilled operand is the stack's: `addl $0x4,0x18(%rsp)` loads, adds and stores.
        add_instruction(&mut block, Isa::X86_64, "addl", "$0x4,0x18(%rsp)", None);
        assert_eq!(block[InstructionClass::StackLoadStore.index()], 2);
        assert_eq!(block[InstructionClass::LoadStore.index()], 3);
    }

    #[test]
    fn a_multiply_of_narrow_operands_is_charged_as_the_dpu_compiler_emits_it() {
        let mut block = [0; InstructionClass::COUNT];
        add_instruction(&mut block, Isa::X86_64, "imul", "%ebp,%eax", Some(OperandWidth::Bits8));
        add_instruction(&mut block, Isa::Aarch64, "madd", "w0, w1, w2, w0", Some(OperandWidth::Bits16));
        // Only a 32-bit multiply narrows: a width given for anything else changes nothing.
        add_instruction(&mut block, Isa::X86_64, "add", "%ebp,%eax", Some(OperandWidth::Bits8));
        assert_eq!(block[InstructionClass::Mul8.index()], 1);
        assert_eq!(block[InstructionClass::Mul16.index()], 7);
        assert_eq!(block[InstructionClass::Mul32.index()], 0);
        assert_eq!(block[InstructionClass::Alu.index()], 1);
    }

    #[test]
    fn classes_are_indexed_in_order() {
        for (index, class) in InstructionClass::ALL.iter().enumerate() {
            assert_eq!(class.index(), index, "{class}");
        }
    }
}
