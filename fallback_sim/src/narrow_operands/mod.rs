//! Which 32-bit host multiplies a DPU does with its 8- and 16-bit multiply instructions.
//!
//! C promotes `int8_t` and `int16_t` operands to `int`, so the host compiler multiplies them with a 32-bit
//! multiply. UPMEM's DPU compiler knows that both operands are sign- or zero-extended narrow values and selects
//! its 8 x 8-bit multiply instructions instead of the 32-bit `mul_step` sequence (see [`InstructionClass::Mul8`]
//! and [`InstructionClass::Mul16`] for what it emits). To charge the same, the kernel builder finds these
//! multiplies in the host disassembly: a forward "must" data-flow analysis over each function's control-flow
//! graph tracks the registers that certainly hold an extended 8- or 16-bit value on every path (set by an
//! extending load or move or an `and` with a mask of at most 16 bits, copied by register moves, cleared by any
//! other write), and a multiply of two such
//! registers is narrow. The coverage call the simulator puts in every basic block changes no register: on
//! x86-64 it preserves them all, and code compiled for an ordinary call reads none that a call may change. On
//! x86-64 it also tracks the stack slots such a register is spilled to: code compiled by GCC, which calls the
//! hook as an ordinary call, keeps the values live across blocks in the six callee-saved registers and the rest
//! on the stack, where a DPU, with 24 registers, keeps them in registers. The analysis reads only the kernel object, so its answer is the same on every build of
//! the same object; where it cannot tell (a memory or immediate operand, a computed jump), the multiply stays
//! a 32-bit one.
//!
//! [`InstructionClass::Mul8`]: crate::InstructionClass::Mul8
//! [`InstructionClass::Mul16`]: crate::InstructionClass::Mul16

mod aarch64;
mod x86;

use std::collections::{BTreeSet, HashMap};

use crate::block_costs;
use crate::disassembly;
use crate::op_costs::Isa;

/// The width of the narrow values a register holds, extended to 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum OperandWidth {
    Bits8,
    Bits16,
}

/// General-purpose registers tracked per instruction set (x86-64: 16; aarch64: x0 to x30).
const TRACKED_REGISTERS: usize = 31;

/// Stack slots tracked at once (x86-64 spills): GCC's build of the i8 SpMM batch spills eleven narrow values (its
/// eight factors and three masked bits of its size). A function spilling more narrow values loses the rest.
const TRACKED_SLOTS: usize = 16;

/// What each tracked register certainly holds (an extended narrow value of that width, or anything), and which
/// stack slots (by offset from the stack pointer) certainly hold one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Registers {
    registers: [Option<OperandWidth>; TRACKED_REGISTERS],
    slots: [Option<(i64, OperandWidth)>; TRACKED_SLOTS],
}

const NOTHING_KNOWN: Registers = Registers { registers: [None; TRACKED_REGISTERS], slots: [None; TRACKED_SLOTS] };

impl Registers {
    /// What the stack slot at `offset` certainly holds.
    fn slot(&self, offset: i64) -> Option<OperandWidth> {
        self.slots.iter().flatten().find(|&&(at, _)| at == offset).map(|&(_, width)| width)
    }

    /// Records what a write to the stack slot at `offset` leaves there (`None`: anything).
    fn set_slot(&mut self, offset: i64, width: Option<OperandWidth>) {
        for slot in &mut self.slots {
            if slot.is_some_and(|(at, _)| at == offset) {
                *slot = None;
            }
        }
        if let Some(width) = width {
            if let Some(free) = self.slots.iter_mut().find(|slot| slot.is_none()) {
                *free = Some((offset, width));
            }
        }
    }

    /// Forgets every stack slot (the stack pointer moved, or memory was written through it in a way not tracked).
    fn forget_slots(&mut self) {
        self.slots = [None; TRACKED_SLOTS];
    }
}

/// The width of the values an `and` with the immediate mask `immediate` (`0xfffc`, without its `$` or `#`) leaves:
/// 8 bits up to 0xff, 16 up to 0xffff.
fn mask_width(immediate: &str) -> Option<OperandWidth> {
    let mask = match immediate.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => immediate.parse::<u64>().ok()?,
    };
    match mask {
        0..=0xff => Some(OperandWidth::Bits8),
        0x100..=0xffff => Some(OperandWidth::Bits16),
        _ => None,
    }
}

impl std::ops::Index<usize> for Registers {
    type Output = Option<OperandWidth>;

    fn index(&self, register: usize) -> &Self::Output {
        &self.registers[register]
    }
}

impl std::ops::IndexMut<usize> for Registers {
    fn index_mut(&mut self, register: usize) -> &mut Self::Output {
        &mut self.registers[register]
    }
}

/// How control leaves an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    /// On to the next instruction (calls return).
    Next,
    /// A jump to `target` (`None`: computed), which may fall through when `conditional`.
    Jump { target: Option<u64>, conditional: bool },
    /// Out of the function.
    Return,
}

/// One disassembled instruction.
struct Instruction<'a> {
    offset: u64,
    mnemonic: &'a str,
    operands: &'a str,
    /// A call of the block hook, which changes no register the kernel's code goes on to read: on x86-64 it
    /// preserves them all (the harness's `hook.S`), and code compiled for an ordinary call never reads the
    /// registers a call may change before it writes them.
    block_hook: bool,
}

/// The offsets (in the disassembled section) of the 32-bit multiplies whose operands are both extended 8- or
/// 16-bit values, with the wider of the two widths.
pub(crate) fn narrow_multiplies(isa: Isa, disassembly: &str) -> HashMap<u64, OperandWidth> {
    let mut narrow = HashMap::new();
    let mut function: Vec<Instruction<'_>> = Vec::new();
    for line in disassembly.lines() {
        if disassembly::is_function_label(line) {
            analyse_function(isa, &function, &mut narrow);
            function.clear();
        } else if block_costs::is_call_to_trace_pc(line) {
            if let Some(call) = function.last_mut() {
                call.block_hook = true;
            }
        } else if let Some((offset, mnemonic, operands)) = disassembly::instruction(line) {
            let operands = disassembly::bare_operands(operands);
            function.push(Instruction { offset, mnemonic, operands, block_hook: false });
        }
    }
    analyse_function(isa, &function, &mut narrow);
    narrow
}

/// A basic block: instructions `start..end` of its function and the blocks control can go to next.
struct Block {
    start: usize,
    end: usize,
    successors: Vec<usize>,
}

fn analyse_function(isa: Isa, function: &[Instruction<'_>], narrow: &mut HashMap<u64, OperandWidth>) {
    if function.is_empty() {
        return;
    }
    let flows: Vec<Flow> = function.iter().map(|instruction| flow(isa, instruction)).collect();
    let blocks = basic_blocks(function, &flows);
    // A computed jump may land on any block: then nothing is known at any block's start.
    let computed_jump = flows.iter().any(|flow| matches!(flow, Flow::Jump { target: None, .. }));
    let mut entry: Vec<Option<Registers>> = vec![computed_jump.then_some(NOTHING_KNOWN); blocks.len()];
    entry[0] = Some(NOTHING_KNOWN);
    let mut pending: Vec<usize> = (0..blocks.len()).filter(|&block| entry[block].is_some()).collect();
    while let Some(block) = pending.pop() {
        let Some(mut registers) = entry[block] else { continue };
        for instruction in &function[blocks[block].start..blocks[block].end] {
            step(isa, instruction, &mut registers);
        }
        for &successor in &blocks[block].successors {
            let merged = match entry[successor] {
                Some(known) => meet(&known, &registers),
                None => registers,
            };
            if entry[successor] != Some(merged) {
                entry[successor] = Some(merged);
                pending.push(successor);
            }
        }
    }
    for (block, known) in blocks.iter().zip(entry) {
        let mut registers = known.unwrap_or(NOTHING_KNOWN);
        for instruction in &function[block.start..block.end] {
            if let Some(width) = narrow_product(isa, instruction, &registers) {
                narrow.insert(instruction.offset, width);
            }
            step(isa, instruction, &mut registers);
        }
    }
}

/// The function's basic blocks, the first being its entry: they start at the function's start, at every jump
/// target and after every jump or return.
fn basic_blocks(function: &[Instruction<'_>], flows: &[Flow]) -> Vec<Block> {
    let index_at: HashMap<u64, usize> =
        function.iter().enumerate().map(|(index, instruction)| (instruction.offset, index)).collect();
    let mut starts = BTreeSet::from([0]);
    for (index, flow) in flows.iter().enumerate() {
        if let Flow::Jump { target: Some(target), .. } = flow {
            starts.extend(index_at.get(target));
        }
        if *flow != Flow::Next && index + 1 < function.len() {
            starts.insert(index + 1);
        }
    }
    let starts: Vec<usize> = starts.into_iter().collect();
    let block_at = |index: usize| starts.binary_search(&index).ok();
    starts
        .iter()
        .enumerate()
        .map(|(block, &start)| {
            let end = starts.get(block + 1).copied().unwrap_or(function.len());
            let next = (end < function.len()).then_some(block + 1);
            let successors = match flows[end - 1] {
                Flow::Next => next.into_iter().collect(),
                Flow::Return => Vec::new(),
                Flow::Jump { target, conditional } => {
                    let jumped = target.and_then(|target| index_at.get(&target)).and_then(|&index| block_at(index));
                    jumped.into_iter().chain(next.filter(|_| conditional)).collect()
                }
            };
            Block { start, end, successors }
        })
        .collect()
}

/// What is known where two paths join: what both know, at the wider width.
fn meet(a: &Registers, b: &Registers) -> Registers {
    let both = |a: Option<OperandWidth>, b: Option<OperandWidth>| Some(a?.max(b?));
    let mut known = NOTHING_KNOWN;
    known.registers = std::array::from_fn(|register| both(a[register], b[register]));
    for (slot, &entry) in known.slots.iter_mut().zip(&a.slots) {
        *slot = entry.and_then(|(offset, width)| Some((offset, both(Some(width), b.slot(offset))?)));
    }
    known
}

fn flow(isa: Isa, instruction: &Instruction<'_>) -> Flow {
    match isa {
        Isa::X86_64 => x86::flow(instruction.mnemonic, instruction.operands),
        Isa::Aarch64 => aarch64::flow(instruction.mnemonic, instruction.operands),
    }
}

/// Applies what `instruction` writes to the registers.
fn step(isa: Isa, instruction: &Instruction<'_>, registers: &mut Registers) {
    if instruction.block_hook {
        return;
    }
    match isa {
        Isa::X86_64 => x86::step(instruction.mnemonic, instruction.operands, registers),
        Isa::Aarch64 => aarch64::step(instruction.mnemonic, instruction.operands, registers),
    }
}

/// The width of a 32-bit multiply's operands when both are known narrow values.
fn narrow_product(isa: Isa, instruction: &Instruction<'_>, registers: &Registers) -> Option<OperandWidth> {
    match isa {
        Isa::X86_64 => x86::narrow_product(instruction.mnemonic, instruction.operands, registers),
        Isa::Aarch64 => {
            let (a, b) = aarch64::multiply_operands(instruction.mnemonic, instruction.operands)?;
            Some(registers[a]?.max(registers[b]?))
        }
    }
}

#[cfg(test)]
mod tests;
