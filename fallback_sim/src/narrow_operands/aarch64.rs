//! The register effects of aarch64 instructions that the narrow-operand analysis needs: extending loads and
//! moves, register copies, every other write, and multiplies.

use super::{Flow, OperandWidth, Registers};

/// Registers a call may change (AAPCS64: x0 to x18 and the link register x30).
const CALL_CLOBBERED: std::ops::RangeInclusive<usize> = 0..=18;
const LINK_REGISTER: usize = 30;

/// `w3` or `x3`: the register's index, and whether the operand is its 32-bit half.
fn register(operand: &str) -> Option<(usize, bool)> {
    let operand = operand.trim();
    let half = match operand.as_bytes().first()? {
        b'w' => true,
        b'x' => false,
        _ => return None,
    };
    let index: usize = operand[1..].parse().ok().filter(|&index| index < super::TRACKED_REGISTERS)?;
    Some((index, half))
}

pub(super) fn flow(mnemonic: &str, operands: &str) -> Flow {
    match mnemonic {
        "ret" | "brk" | "hlt" | "udf" => Flow::Return,
        "br" => Flow::Jump { target: None, conditional: false },
        "b" => Flow::Jump { target: crate::disassembly::branch_target(operands), conditional: false },
        "cbz" | "cbnz" | "tbz" | "tbnz" => {
            Flow::Jump { target: crate::disassembly::branch_target(operands), conditional: true }
        }
        _ if mnemonic.starts_with("b.") => {
            Flow::Jump { target: crate::disassembly::branch_target(operands), conditional: true }
        }
        _ => Flow::Next,
    }
}

/// The width of an extending load or move: `ldrsb`, `ldrh`, `sxtb`, `uxth`, ...
fn extension_width(mnemonic: &str) -> Option<OperandWidth> {
    match mnemonic {
        "sxtb" | "uxtb" | "ldrb" | "ldrsb" | "ldurb" | "ldursb" => Some(OperandWidth::Bits8),
        "sxth" | "uxth" | "ldrh" | "ldrsh" | "ldurh" | "ldursh" => Some(OperandWidth::Bits16),
        _ => None,
    }
}

/// Instructions that write no general-purpose register (stores write only memory, except the status register
/// of an exclusive store).
fn writes_nothing(mnemonic: &str) -> bool {
    let store = mnemonic.starts_with("st") && !mnemonic.starts_with("stx") && !mnemonic.starts_with("stlx");
    store
        || matches!(mnemonic, "cmp" | "cmn" | "tst" | "ccmp" | "ccmn" | "nop" | "prfm" | "dmb" | "dsb" | "isb" | "hint")
        || mnemonic.starts_with("fcmp")
        || mnemonic.starts_with("fccmp")
        || matches!(flow(mnemonic, ""), Flow::Jump { .. } | Flow::Return)
}

pub(super) fn step(mnemonic: &str, operands_text: &str, registers: &mut Registers) {
    let operands = crate::disassembly::split_operands(operands_text);
    // Pre- and post-indexed addressing (`[x1, #8]!`, `[x1], #8`) also writes the base register.
    if operands_text.contains("]!") || operands_text.contains("],") {
        let base = operands
            .iter()
            .find_map(|operand| operand.strip_prefix('['))
            .and_then(|inner| register(inner.split([',', ']']).next().unwrap_or("")));
        if let Some((index, _)) = base {
            registers[index] = None;
        }
    }
    if matches!(mnemonic, "bl" | "blr") {
        CALL_CLOBBERED.for_each(|index| registers[index] = None);
        registers[LINK_REGISTER] = None;
        return;
    }
    if writes_nothing(mnemonic) {
        return;
    }
    let destination = operands.first().and_then(|operand| register(operand));
    let Some((index, _)) = destination else { return };
    registers[index] = match (extension_width(mnemonic), operands.as_slice()) {
        (Some(width), _) => Some(width),
        // A register copy keeps what its source holds.
        (None, [_, source]) if mnemonic == "mov" => register(source).and_then(|(from, _)| registers[from]),
        // `and w0, w1, #0xfffc`: a mask of at most 16 bits leaves a zero-extended narrow value.
        (None, [_, _, mask]) if mnemonic == "and" => mask.strip_prefix('#').and_then(super::mask_width),
        _ => None,
    };
    if mnemonic.starts_with("ldp") || mnemonic.starts_with("ldnp") || mnemonic.starts_with("ldxp") {
        if let Some((second, _)) = operands.get(1).and_then(|operand| register(operand)) {
            registers[second] = None;
        }
    }
}

/// The two registers a 32-bit multiply multiplies (`mul w0, w1, w2`, `madd w0, w1, w2, w3`).
pub(super) fn multiply_operands(mnemonic: &str, operands_text: &str) -> Option<(usize, usize)> {
    let multiply = matches!(
        mnemonic,
        "mul" | "madd" | "msub" | "mneg" | "smull" | "umull" | "smaddl" | "umaddl" | "smsubl" | "umsubl"
    );
    if !multiply {
        return None;
    }
    match crate::disassembly::split_operands(operands_text).as_slice() {
        [_, a, b, ..] => match (register(a)?, register(b)?) {
            ((a, true), (b, true)) => Some((a, b)),
            _ => None,
        },
        _ => None,
    }
}
