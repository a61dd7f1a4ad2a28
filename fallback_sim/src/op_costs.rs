//! What one host instruction of a kernel costs on a DPU, in DPU instructions.
//!
//! A DPU is a 32-bit RISC core with an 8x8-bit multiply step and a divide step and no floating-point unit:
//! 32- and 64-bit multiplies and divides are instruction sequences, and float and double arithmetic are
//! software routines of the compiler runtime. Each host instruction of a kernel's disassembly is sorted into a
//! class of DPU operation ([`OpClass`]) whose cost is the number of DPU instructions that operation executes.
//! The costs and their sources are tabled in the crate docs ("Operation costs", in `lib.rs`); keep the two in
//! step.

/// A class of DPU operation, by what it costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpClass {
    /// Integer ALU, compare and branch, WRAM load and store, moves: one DPU instruction.
    Simple,
    Mul32,
    Mul64,
    Div32,
    Div64,
    FloatAdd,
    FloatMul,
    FloatDiv,
    FloatCompare,
    DoubleAdd,
    DoubleMul,
    DoubleDiv,
    DoubleCompare,
    /// int <-> float and float <-> double.
    FloatConvert,
    /// int <-> double.
    DoubleConvert,
}

impl OpClass {
    /// DPU instructions one operation of the class executes; see the crate docs, "Operation costs".
    pub(crate) const fn dpu_instructions(self) -> u32 {
        match self {
            OpClass::Simple => 1,
            OpClass::Mul32 => 30,
            OpClass::Mul64 => 130,
            OpClass::Div32 => 27,
            OpClass::Div64 => 200,
            OpClass::FloatAdd => 66,
            OpClass::FloatMul => 179,
            OpClass::FloatDiv => 1024,
            OpClass::FloatCompare => 12,
            OpClass::DoubleAdd => 101,
            OpClass::DoubleMul => 695,
            OpClass::DoubleDiv => 4100,
            OpClass::DoubleCompare => 16,
            OpClass::FloatConvert => 20,
            OpClass::DoubleConvert => 30,
        }
    }
}

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

/// What one disassembled host instruction costs on a DPU, in DPU instructions: its operation's class, and on
/// x86-64 the WRAM loads and stores a DPU, a load-store machine, needs for a memory operand.
pub(crate) fn dpu_instructions(isa: Isa, mnemonic: &str, operands: &str) -> u32 {
    let operation = classify(isa, mnemonic, operands).dpu_instructions();
    match isa {
        Isa::X86_64 => operation + x86_memory_accesses(mnemonic, operands),
        Isa::Aarch64 => operation,
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
        || matches!(classify_x86(mnemonic, ""), Some(OpClass::Mul32 | OpClass::Div32)) && operands.len() == 1;
    if destination.contains('(') && !only_reads {
        2
    } else {
        u32::from(operands.iter().any(|operand| operand.contains('(')))
    }
}

/// AT&T operands split at the commas outside parentheses: `$0x1,0xc(%rbx,%rbp,4)` has two.
fn x86_operands(operands: &str) -> Vec<&str> {
    let operands = operands.split('#').next().unwrap_or("").trim();
    if operands.is_empty() {
        return Vec::new();
    }
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (index, character) in operands.char_indices() {
        match character {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&operands[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&operands[start..]);
    parts
}

/// The class of one disassembled host instruction (x86-64 in AT&T syntax as `objdump` prints it, or aarch64).
/// Anything not recognised as a multiply, divide or floating-point operation is [`OpClass::Simple`].
fn classify(isa: Isa, mnemonic: &str, operands: &str) -> OpClass {
    match isa {
        Isa::X86_64 => classify_x86(mnemonic, operands),
        Isa::Aarch64 => classify_aarch64(mnemonic, operands),
    }
    .unwrap_or(OpClass::Simple)
}

fn classify_x86(mnemonic: &str, operands: &str) -> Option<OpClass> {
    let wide = || mnemonic.ends_with('q') || operands.split(',').any(is_x86_64bit_register);
    match mnemonic {
        "imul" | "imull" | "imulq" | "mul" | "mull" | "mulq" | "mulx" | "mulxl" | "mulxq" | "imulw" | "mulw" => {
            Some(if wide() { OpClass::Mul64 } else { OpClass::Mul32 })
        }
        "div" | "divl" | "divq" | "idiv" | "idivl" | "idivq" | "divw" | "idivw" | "divb" | "idivb" => {
            Some(if wide() { OpClass::Div64 } else { OpClass::Div32 })
        }
        _ => classify_sse(mnemonic.strip_prefix('v').filter(|rest| is_sse(rest)).unwrap_or(mnemonic)),
    }
}

fn is_sse(mnemonic: &str) -> bool {
    classify_sse(mnemonic).is_some()
}

/// Scalar (and, counted per instruction, packed) SSE arithmetic.
fn classify_sse(mnemonic: &str) -> Option<OpClass> {
    if mnemonic.starts_with("cvt") {
        let double = mnemonic.contains("sd") || mnemonic.contains("pd");
        let float = mnemonic.contains("ss") || mnemonic.contains("ps");
        return Some(if double && !float { OpClass::DoubleConvert } else { OpClass::FloatConvert });
    }
    Some(match mnemonic {
        "addss" | "subss" | "addps" | "subps" => OpClass::FloatAdd,
        "mulss" | "mulps" => OpClass::FloatMul,
        "divss" | "divps" | "sqrtss" | "sqrtps" => OpClass::FloatDiv,
        "ucomiss" | "comiss" | "cmpss" | "minss" | "maxss" | "minps" | "maxps" => OpClass::FloatCompare,
        "addsd" | "subsd" | "addpd" | "subpd" => OpClass::DoubleAdd,
        "mulsd" | "mulpd" => OpClass::DoubleMul,
        "divsd" | "divpd" | "sqrtsd" | "sqrtpd" => OpClass::DoubleDiv,
        "ucomisd" | "comisd" | "minsd" | "maxsd" | "minpd" | "maxpd" => OpClass::DoubleCompare,
        _ => return None,
    })
}

/// `%rax`, `%r8`, but not `%r8d`: a 64-bit general-purpose register operand.
fn is_x86_64bit_register(operand: &str) -> bool {
    let Some(name) = operand.trim().strip_prefix("%r") else { return false };
    let numbered = name
        .strip_prefix(|c: char| c.is_ascii_digit())
        .map(|rest| rest.trim_start_matches(|c: char| c.is_ascii_digit()));
    match numbered {
        Some(suffix) => suffix.is_empty(),
        None => name.len() == 2 && name.chars().all(|c| c.is_ascii_lowercase()),
    }
}

fn classify_aarch64(mnemonic: &str, operands: &str) -> Option<OpClass> {
    let first = operands.trim_start().chars().next();
    let wide = first == Some('x');
    let double = first == Some('d');
    Some(match mnemonic {
        "mul" | "madd" | "msub" | "mneg" | "smull" | "umull" | "smaddl" | "umaddl" | "smsubl" | "umsubl" => {
            if wide && !matches!(mnemonic, "smull" | "umull" | "smaddl" | "umaddl" | "smsubl" | "umsubl") {
                OpClass::Mul64
            } else {
                OpClass::Mul32
            }
        }
        "smulh" | "umulh" => OpClass::Mul64,
        "sdiv" | "udiv" => {
            if wide {
                OpClass::Div64
            } else {
                OpClass::Div32
            }
        }
        "fadd" | "fsub" => pick(double, OpClass::DoubleAdd, OpClass::FloatAdd),
        "fmul" | "fnmul" | "fmadd" | "fmsub" | "fnmadd" | "fnmsub" => {
            pick(double, OpClass::DoubleMul, OpClass::FloatMul)
        }
        "fdiv" | "fsqrt" => pick(double, OpClass::DoubleDiv, OpClass::FloatDiv),
        "fcmp" | "fcmpe" | "fccmp" | "fccmpe" | "fmin" | "fmax" | "fminnm" | "fmaxnm" => {
            // The compared registers come first: `fcmp s0, s1`.
            pick(double, OpClass::DoubleCompare, OpClass::FloatCompare)
        }
        "scvtf" | "ucvtf" | "fcvtzs" | "fcvtzu" | "fcvtas" | "fcvtau" | "fcvtms" | "fcvtmu" | "fcvtns" | "fcvtnu"
        | "fcvtps" | "fcvtpu" | "fcvt" => {
            let any_double = operands.split(',').any(|operand| operand.trim_start().starts_with('d'));
            let any_float = operands.split(',').any(|operand| operand.trim_start().starts_with('s'));
            pick(any_double && !any_float, OpClass::DoubleConvert, OpClass::FloatConvert)
        }
        _ => return None,
    })
}

fn pick(double: bool, if_double: OpClass, if_float: OpClass) -> OpClass {
    if double {
        if_double
    } else {
        if_float
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_integer_multiplies_and_divides_by_width() {
        assert_eq!(classify(Isa::X86_64, "imul", "%esi,%eax"), OpClass::Mul32);
        assert_eq!(classify(Isa::X86_64, "imul", "$0x2c,%rdi,%rax"), OpClass::Mul64);
        assert_eq!(classify(Isa::X86_64, "imul", "%r8d,%eax"), OpClass::Mul32);
        assert_eq!(classify(Isa::X86_64, "imul", "%r8,%rax"), OpClass::Mul64);
        assert_eq!(classify(Isa::X86_64, "divl", "0x10(%rsp)"), OpClass::Div32);
        assert_eq!(classify(Isa::X86_64, "div", "%rcx"), OpClass::Div64);
        assert_eq!(classify(Isa::X86_64, "idiv", "%ecx"), OpClass::Div32);
    }

    #[test]
    fn x86_scalar_floating_point() {
        assert_eq!(classify(Isa::X86_64, "addss", "%xmm1,%xmm0"), OpClass::FloatAdd);
        assert_eq!(classify(Isa::X86_64, "vmulsd", "%xmm1,%xmm0,%xmm0"), OpClass::DoubleMul);
        assert_eq!(classify(Isa::X86_64, "divss", "(%rax),%xmm0"), OpClass::FloatDiv);
        assert_eq!(classify(Isa::X86_64, "ucomisd", "%xmm1,%xmm0"), OpClass::DoubleCompare);
        assert_eq!(classify(Isa::X86_64, "cvtsi2sd", "%eax,%xmm0"), OpClass::DoubleConvert);
        assert_eq!(classify(Isa::X86_64, "cvtss2sd", "%xmm0,%xmm0"), OpClass::FloatConvert);
        assert_eq!(classify(Isa::X86_64, "cvttss2si", "%xmm0,%eax"), OpClass::FloatConvert);
    }

    #[test]
    fn x86_moves_and_alu_are_simple() {
        for (mnemonic, operands) in
            [("mov", "%eax,%ebx"), ("add", "$0x1,%rax"), ("movss", "(%rax),%xmm0"), ("jne", "1c")]
        {
            assert_eq!(classify(Isa::X86_64, mnemonic, operands), OpClass::Simple, "{mnemonic}");
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
        assert_eq!(cost("addss", "(%rax),%xmm0"), 1 + OpClass::FloatAdd.dpu_instructions());
        assert_eq!(cost("divl", "0x10(%rsp)"), 1 + OpClass::Div32.dpu_instructions());
        assert_eq!(cost("add", "%eax,%ecx"), 1);
        assert_eq!(dpu_instructions(Isa::Aarch64, "add", "w0, w0, #0x1"), 1);
    }

    #[test]
    fn aarch64_by_register_width() {
        assert_eq!(classify(Isa::Aarch64, "mul", "w0, w1, w2"), OpClass::Mul32);
        assert_eq!(classify(Isa::Aarch64, "madd", "x0, x1, x2, x3"), OpClass::Mul64);
        assert_eq!(classify(Isa::Aarch64, "udiv", "x0, x1, x2"), OpClass::Div64);
        assert_eq!(classify(Isa::Aarch64, "sdiv", "w0, w1, w2"), OpClass::Div32);
        assert_eq!(classify(Isa::Aarch64, "fadd", "s0, s0, s1"), OpClass::FloatAdd);
        assert_eq!(classify(Isa::Aarch64, "fmul", "d0, d0, d1"), OpClass::DoubleMul);
        assert_eq!(classify(Isa::Aarch64, "fcmp", "s0, #0.0"), OpClass::FloatCompare);
        assert_eq!(classify(Isa::Aarch64, "scvtf", "d0, w0"), OpClass::DoubleConvert);
        assert_eq!(classify(Isa::Aarch64, "fcvt", "d0, s0"), OpClass::FloatConvert);
        assert_eq!(classify(Isa::Aarch64, "add", "w0, w0, #0x1"), OpClass::Simple);
    }
}
