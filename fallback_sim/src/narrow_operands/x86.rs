//! The register effects of x86-64 instructions (AT&T syntax, as `objdump` prints them) that the narrow-operand
//! analysis needs: extending moves, register copies, every other write, and multiplies.

use super::{Flow, OperandWidth, Registers};

/// Registers a call may change (System V: the caller-saved rax, rcx, rdx, rsi, rdi, r8 to r11).
const CALL_CLOBBERED: [usize; 9] = [RAX, RCX, RDX, RSI, RDI, 8, 9, 10, 11];
const RAX: usize = 0;
const RCX: usize = 1;
const RDX: usize = 2;
const RSP: usize = 4;
const RBP: usize = 5;
const RSI: usize = 6;
const RDI: usize = 7;

/// How much of its register an operand names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// 8 or 16 bits: a write leaves the rest of the register as it was.
    Low,
    Bits32,
    Bits64,
}

/// `%eax`, `%al`, `%r9d`, ...: the index of its general-purpose register (rax 0, rcx 1, rdx 2, rbx 3, rsp 4,
/// rbp 5, rsi 6, rdi 7, r8 to r15 8 to 15) and the part named.
fn register(operand: &str) -> Option<(usize, Part)> {
    let name = operand.trim().strip_prefix('%')?;
    let legacy = [
        ["rax", "eax", "ax", "al", "ah"],
        ["rcx", "ecx", "cx", "cl", "ch"],
        ["rdx", "edx", "dx", "dl", "dh"],
        ["rbx", "ebx", "bx", "bl", "bh"],
        ["rsp", "esp", "sp", "spl", "-"],
        ["rbp", "ebp", "bp", "bpl", "-"],
        ["rsi", "esi", "si", "sil", "-"],
        ["rdi", "edi", "di", "dil", "-"],
    ];
    if let Some(index) = legacy.iter().position(|names| names.contains(&name)) {
        let part = match &name[..1] {
            "r" => Part::Bits64,
            "e" => Part::Bits32,
            _ => Part::Low,
        };
        return Some((index, part));
    }
    let numbered = name.strip_prefix('r')?;
    let digits = numbered.find(|c: char| !c.is_ascii_digit()).unwrap_or(numbered.len());
    let index: usize = numbered[..digits].parse().ok().filter(|index| (8..16).contains(index))?;
    match &numbered[digits..] {
        "" => Some((index, Part::Bits64)),
        "d" => Some((index, Part::Bits32)),
        "w" | "b" => Some((index, Part::Low)),
        _ => None,
    }
}

/// A register operand of 32 or 64 bits: its index.
fn whole_register(operand: &str) -> Option<usize> {
    register(operand).filter(|&(_, part)| part != Part::Low).map(|(index, _)| index)
}

pub(super) fn flow(mnemonic: &str, operands: &str) -> Flow {
    if mnemonic.starts_with("ret") || mnemonic == "ud2" || mnemonic == "hlt" {
        Flow::Return
    } else if mnemonic.starts_with('j') {
        let target = if operands.starts_with('*') { None } else { crate::disassembly::branch_target(operands) };
        Flow::Jump { target, conditional: !mnemonic.starts_with("jmp") }
    } else {
        Flow::Next
    }
}

/// The width of `movsbl`, `movzwq`, ...: an extending move of an 8- or 16-bit source to 32 or 64 bits.
fn extension_width(mnemonic: &str) -> Option<OperandWidth> {
    let rest = mnemonic.strip_prefix("movs").or_else(|| mnemonic.strip_prefix("movz"))?;
    let width = match rest.as_bytes().first()? {
        b'b' => OperandWidth::Bits8,
        b'w' => OperandWidth::Bits16,
        _ => return None,
    };
    matches!(&rest[1..], "l" | "q").then_some(width)
}

/// Instructions that write no general-purpose register.
fn writes_nothing(mnemonic: &str) -> bool {
    ["cmp", "test", "push", "j", "nop", "ucomis", "comis", "prefetch", "endbr"]
        .iter()
        .any(|prefix| mnemonic.starts_with(prefix))
        || matches!(mnemonic, "bt" | "btl" | "btq")
}

/// `0x8(%rsp)`, `(%rsp)`: a stack slot's offset from the stack pointer.
fn stack_slot(operand: &str) -> Option<i64> {
    let displacement = operand.trim().strip_suffix("(%rsp)")?;
    if displacement.is_empty() {
        return Some(0);
    }
    let (negative, digits) = match displacement.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, displacement),
    };
    let magnitude = i64::from_str_radix(digits.strip_prefix("0x")?, 16).ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// What a copy's source holds: a register's or a stack slot's tracked value.
fn source_width(source: &str, registers: &Registers) -> Option<OperandWidth> {
    match whole_register(source) {
        Some(from) => registers[from],
        None => stack_slot(source).and_then(|offset| registers.slot(offset)),
    }
}

pub(super) fn step(mnemonic: &str, operands_text: &str, registers: &mut Registers) {
    let operands = crate::disassembly::split_operands(operands_text);
    let destination = operands.last().and_then(|operand| register(operand));
    let whole_destination = operands.last().and_then(|operand| whole_register(operand));
    let writes_memory = !writes_nothing(mnemonic);
    if let Some(offset) = operands.last().and_then(|operand| stack_slot(operand)).filter(|_| writes_memory) {
        // A spill of a 32- or 64-bit register keeps what the register holds; any other write to the slot, nothing.
        let spilled = match operands.as_slice() {
            [source, _] if matches!(mnemonic, "mov" | "movl" | "movq") => {
                whole_register(source).and_then(|from| registers[from])
            }
            _ => None,
        };
        registers.set_slot(offset, spilled);
    }
    if destination.is_some_and(|(index, _)| index == RSP) {
        registers.forget_slots();
    }
    if let (Some(width), Some(index)) = (extension_width(mnemonic), whole_destination) {
        registers[index] = Some(width);
        return;
    }
    // `and $0xfffc,%r15d`: a mask of at most 16 bits leaves a zero-extended narrow value (the compiler's
    // `(uint16_t)(n * 4)`).
    let masked = match operands.as_slice() {
        [mask, _] if matches!(mnemonic, "and" | "andl" | "andq") => mask.strip_prefix('$').and_then(super::mask_width),
        _ => None,
    };
    if let (Some(width), Some(index)) = (masked, whole_destination) {
        registers[index] = Some(width);
        return;
    }
    if let ([source, _], Some(index)) = (operands.as_slice(), whole_destination) {
        // A register copy or a reload (or `movslq`, a sign extension of a value already narrow) keeps what its
        // source holds.
        if matches!(mnemonic, "mov" | "movl" | "movq" | "movslq") {
            registers[index] = source_width(source, registers);
            return;
        }
    }
    match mnemonic {
        "push" | "pushq" | "pop" | "popq" | "leave" | "leaveq" | "enter" => registers.forget_slots(),
        _ => {}
    }
    match mnemonic {
        "cwtl" => registers[RAX] = Some(OperandWidth::Bits16),
        "cltq" => {}
        "cltd" | "cqto" | "cwtd" => registers[RDX] = None,
        "leave" | "leaveq" => registers[RBP] = None,
        _ if mnemonic.starts_with("call") => CALL_CLOBBERED.iter().for_each(|&index| registers[index] = None),
        _ if mnemonic.starts_with("xchg") => exchange(&operands, registers),
        _ if ["xadd", "cmpxchg"].iter().any(|prefix| mnemonic.starts_with(prefix)) => {
            registers[RAX] = None;
            for (index, _) in operands.iter().filter_map(|operand| register(operand)) {
                registers[index] = None;
            }
        }
        _ if operands.len() == 1 && is_multiply_or_divide(mnemonic) => {
            registers[RAX] = None;
            registers[RDX] = None;
        }
        // String instructions (`rep stos %eax,%es:(%rdi)`) move rax, rcx, rsi and rdi.
        _ if mnemonic.starts_with("rep") || operands_text.contains("%es:") || operands_text.contains("%ds:") => {
            [RAX, RCX, RSI, RDI].iter().for_each(|&index| registers[index] = None);
        }
        _ if writes_nothing(mnemonic) => {}
        _ => {
            if let Some((index, _)) = destination {
                registers[index] = None;
            }
            // Instructions with an implied destination (`cpuid`, `rdtsc`, `syscall`, ...): nothing is kept.
            if operands.is_empty() {
                *registers = super::NOTHING_KNOWN;
            }
        }
    }
}

/// `xchg`: two registers swap what they hold, and `xchg %ax,%ax`, the two-byte nop compilers pad loop heads
/// with, changes nothing; a register exchanged with memory (or with part of a register) holds anything.
fn exchange(operands: &[&str], registers: &mut Registers) {
    let [a, b] = operands else { return };
    match (register(a), register(b)) {
        (Some(a), Some(b)) if a == b => {}
        (Some((a, Part::Bits32 | Part::Bits64)), Some((b, Part::Bits32 | Part::Bits64))) => {
            let held = registers[a];
            registers[a] = registers[b];
            registers[b] = held;
        }
        (a, b) => a.into_iter().chain(b).for_each(|(index, _)| registers[index] = None),
    }
}

fn is_multiply_or_divide(mnemonic: &str) -> bool {
    ["mul", "imul", "div", "idiv"].iter().any(|name| mnemonic.strip_prefix(name).is_some_and(|size| size.len() <= 1))
}

/// The width of a 32-bit two-operand multiply's factors (`imul %esi,%eax`, or `imul 0x8(%rsp),%eax` of a
/// spilled one) when both are known narrow values.
pub(super) fn narrow_product(mnemonic: &str, operands_text: &str, registers: &Registers) -> Option<OperandWidth> {
    if !matches!(mnemonic, "imul" | "imull") {
        return None;
    }
    match crate::disassembly::split_operands(operands_text).as_slice() {
        [a, b] => {
            let (b, Part::Bits32) = register(b)? else { return None };
            let a = match register(a) {
                Some((a, Part::Bits32)) => registers[a],
                Some(_) => None,
                None => registers.slot(stack_slot(a)?),
            };
            Some(a?.max(registers[b]?))
        }
        _ => None,
    }
}
