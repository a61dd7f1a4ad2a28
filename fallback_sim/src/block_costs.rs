//! Instruction costs of a kernel's basic blocks, computed at build time from its disassembly.
//!
//! Simulated kernels are compiled with `-fsanitize-coverage=trace-pc`: the compiler calls
//! `__sanitizer_cov_trace_pc()` at the start of every basic block. The harness looks up the block's cost in a
//! table indexed by the call's return address minus the start of the kernel's `.text`, so the lookup is one
//! load. The cost of a block is what the DPU would execute for the host instructions from its call site to the
//! next call site or the end of the function, not counting padding; the first block of a function also counts
//! the prologue before its call. Each host instruction costs its operation class's DPU instructions
//! ([`op_costs`](crate::op_costs)): one for a move, an ALU operation, a branch, a load or a store, which are
//! alike on both machines, and a DPU instruction sequence or software routine's length for a multiply, a
//! divide or floating-point arithmetic. A 32-bit multiply whose operands are both extended 8- or 16-bit values
//! on every path to it ([`narrow_operands`](crate::narrow_operands)) costs the DPU's byte multiplies instead.
//!
//! A block that is only the hook's call and a jump costs nothing. Clang's edge coverage gives each critical edge
//! (from a block with two successors to one with two predecessors, a loop's back edge among them) a block of its
//! own for its call, which then jumps on; without the instrumentation the branch before it goes straight to the
//! target, as a DPU's compiled code does, and compilers fold any other block holding nothing but a jump into the
//! branches that reach it.

use std::fmt::Write as _;

use crate::disassembly::{instruction, is_function_label};
use crate::narrow_operands;
use crate::op_costs::{self, ClassInstructions, InstructionClass, Isa};

/// The callback of `-fsanitize-coverage=trace-pc`.
pub(crate) const TRACE_PC: &str = "__sanitizer_cov_trace_pc";

/// One instrumented call site: the offset of its return address in `.text` and its block's cost in DPU
/// instructions by class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockCost {
    pub return_offset: u64,
    pub by_class: ClassInstructions,
}

impl BlockCost {
    /// The block's DPU instructions.
    pub(crate) fn instructions(&self) -> u32 {
        self.by_class.iter().sum()
    }
}

/// Reads the output of `objdump -d -r --no-show-raw-insn` on one section and returns each call site's block cost,
/// in address order.
pub(crate) fn from_disassembly(disassembly: &str) -> Vec<BlockCost> {
    let isa = Isa::of_disassembly(disassembly);
    let narrow_multiplies = narrow_operands::narrow_multiplies(isa, disassembly);
    let mut sites: Vec<BlockCost> = Vec::new();
    // Instructions since the function's label, before its first call site.
    let mut prologue: ClassInstructions = [0; InstructionClass::COUNT];
    let mut in_block = false;
    let mut call_just_seen = false;
    // The shape of the block being counted (the current site's, once in a block).
    let mut block = BlockShape::default();
    for line in disassembly.lines() {
        if is_function_label(line) {
            std::mem::take(&mut block).finish(sites.last_mut().filter(|_| in_block));
            prologue = [0; InstructionClass::COUNT];
            in_block = false;
            call_just_seen = false;
        } else if is_call_to_trace_pc(line) {
            // The instruction just counted is the instrumentation's call, not the kernel's: the next block's.
            let counted = match sites.last_mut().filter(|_| in_block) {
                Some(site) => &mut site.by_class,
                None => &mut prologue,
            };
            let call = &mut counted[InstructionClass::CompareBranch.index()];
            *call = call.saturating_sub(1);
            block.instructions = block.instructions.saturating_sub(1);
            std::mem::take(&mut block).finish(sites.last_mut().filter(|_| in_block));
            call_just_seen = true;
        } else if let Some((offset, mnemonic, operands)) = instruction(line) {
            if call_just_seen {
                let by_class = if in_block { [0; InstructionClass::COUNT] } else { prologue };
                sites.push(BlockCost { return_offset: offset, by_class });
                in_block = true;
                call_just_seen = false;
            }
            if is_padding(mnemonic) {
                continue;
            }
            block.push(isa, mnemonic, operands);
            let counted = match sites.last_mut().filter(|_| in_block) {
                Some(site) => &mut site.by_class,
                None => &mut prologue,
            };
            op_costs::add_instruction(counted, isa, mnemonic, operands, narrow_multiplies.get(&offset).copied());
        }
    }
    block.finish(sites.last_mut().filter(|_| in_block));
    sites
}

/// What a block holds, as far as telling a jump-only block goes: its instructions after the hook's call, padding
/// aside, and whether the first of them is an unconditional jump to a fixed address.
#[derive(Default)]
struct BlockShape {
    instructions: u32,
    starts_with_jump: bool,
}

impl BlockShape {
    fn push(&mut self, isa: Isa, mnemonic: &str, operands: &str) {
        if self.instructions == 0 {
            self.starts_with_jump = match isa {
                Isa::X86_64 => matches!(mnemonic, "jmp" | "jmpq") && !operands.trim_start().starts_with('*'),
                Isa::Aarch64 => mnemonic == "b",
            };
        }
        self.instructions += 1;
    }

    /// At the block's end: a block that is only a jump costs nothing.
    fn finish(self, site: Option<&mut BlockCost>) {
        if let Some(site) = site.filter(|_| self.instructions == 1 && self.starts_with_jump) {
            site.by_class = [0; InstructionClass::COUNT];
        }
    }
}

/// The C source of the tables the harness indexes (see `dpusim/abi.h`): by return offset,
/// `__dpusim_site_instructions` and the run counts `__dpusim_site_runs`; by block index (0 is no block),
/// `__dpusim_block_sites` and `__dpusim_block_classes`, the block's instructions by class.
pub(crate) fn c_table(sites: &[BlockCost]) -> String {
    let length = sites.iter().map(|site| site.return_offset + 1).max().unwrap_or(1);
    let blocks = sites.len() + 1;
    let mut source = String::from(
        "/* Generated by the kernel builder: the instrumented basic blocks, by the offset of their trace-pc call's\n \
         * return address in the kernel's .text (their site) and by index. */\n\
         #include <dpusim/abi.h>\n",
    );
    let _ = writeln!(source, "const uint32_t __dpusim_site_instructions[{length}] = {{");
    for site in sites {
        let _ = writeln!(source, "    [{}] = {},", site.return_offset, site.instructions());
    }
    source.push_str("};\n");
    let _ = writeln!(source, "uint64_t __dpusim_site_runs[{length}];");
    let offsets: Vec<String> = sites.iter().map(|site| site.return_offset.to_string()).collect();
    let _ = writeln!(source, "const uint32_t __dpusim_block_sites[{blocks}] = {{0, {}}};", offsets.join(", "));
    let _ = writeln!(
        source,
        "const uint32_t __dpusim_block_classes[{blocks}][DPUSIM_INSTRUCTION_CLASSES] = {{\n    {{0}},"
    );
    for site in sites {
        let row: Vec<String> = site.by_class.iter().map(u32::to_string).collect();
        let _ = writeln!(source, "    {{{}}},", row.join(", "));
    }
    source.push_str("};\n");
    let _ = writeln!(source, "const uint32_t __dpusim_nr_blocks = {blocks};");
    source
}

/// `\t\t\t5: R_X86_64_PLT32\t__sanitizer_cov_trace_pc-0x4` (or `R_AARCH64_CALL26`): the relocation of a call to
/// the instrumentation, which follows the call.
pub(crate) fn is_call_to_trace_pc(line: &str) -> bool {
    let Some((_, relocation)) = line.trim_start().split_once(": ") else { return false };
    let mut fields = relocation.split_whitespace();
    let (Some(kind), Some(target)) = (fields.next(), fields.next()) else { return false };
    kind.starts_with("R_") && target.split(['+', '-']).next() == Some(TRACE_PC)
}

/// Alignment padding between blocks and functions, which the CPU never executes on the way.
pub(crate) fn is_padding(mnemonic: &str) -> bool {
    mnemonic.starts_with("nop") || matches!(mnemonic, "xchg" | "cs" | "data16" | "int3" | "udf")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block at `return_offset` with these DPU instructions by class.
    fn block(return_offset: u64, classes: &[(InstructionClass, u32)]) -> BlockCost {
        let mut by_class = [0; InstructionClass::COUNT];
        for &(class, instructions) in classes {
            by_class[class.index()] += instructions;
        }
        BlockCost { return_offset, by_class }
    }

    const X86: &str = "\
dpu_kernel.o:     file format elf64-x86-64


Disassembly of section .text:

0000000000000000 <f>:
   0:\tpush   %rbx
   1:\tcall   6 <f+0x6>
\t\t\t2: R_X86_64_PLT32\t__sanitizer_cov_trace_pc-0x4
   6:\tmov    %edi,%ebx
   8:\ttest   %edi,%edi
   a:\tje     14 <f+0x14>
   c:\tcall   11 <f+0x11>
\t\t\td: R_X86_64_PLT32\t__sanitizer_cov_trace_pc-0x4
  11:\timul   %edi,%ebx
  14:\tmov    %ebx,%eax
  16:\tpop    %rbx
  17:\tret
  18:\tnopl   0x0(%rax,%rax,1)
  1f:\tnop

0000000000000020 <g>:
  20:\tcall   25 <g+0x5>
\t\t\t21: R_X86_64_PLT32\t__sanitizer_cov_trace_pc-0x4
  25:\tcall   2a <g+0xa>
\t\t\t26: R_X86_64_PLT32\tmemcpy-0x4
  2a:\tret
";

    const AARCH64: &str = "\
dpu_kernel.o:     file format elf64-littleaarch64

0000000000000000 <f>:
   0:\tstp\tx29, x30, [sp, #-16]!
   4:\tmov\tx29, sp
   8:\tbl\t0 <__sanitizer_cov_trace_pc>
\t\t\t8: R_AARCH64_CALL26\t__sanitizer_cov_trace_pc
   c:\tmul\tw0, w0, w1
  10:\tldp\tx29, x30, [sp], #16
  14:\tret
";

    #[test]
    fn x86_blocks_count_up_to_the_next_call_site_or_function() {
        let sites = from_disassembly(X86);
        let expected = [
            // push (prologue) + mov, test, je
            block(
                0x6,
                &[
                    (InstructionClass::StackLoadStore, 1),
                    (InstructionClass::Alu, 1),
                    (InstructionClass::CompareBranch, 2),
                ],
            ),
            // imul (a 32-bit multiply's sequence), mov, pop, ret; the padding is not counted
            block(
                0x11,
                &[
                    (InstructionClass::Mul32, InstructionClass::Mul32.dpu_instructions()),
                    (InstructionClass::Alu, 1),
                    (InstructionClass::StackLoadStore, 1),
                    (InstructionClass::CompareBranch, 1),
                ],
            ),
            // a call to an uninstrumented function and ret
            block(0x25, &[(InstructionClass::CompareBranch, 2)]),
        ];
        assert_eq!(sites, expected);
    }

    #[test]
    fn aarch64_blocks_count_their_prologue() {
        // stp, mov (prologue) + mul (a 32-bit multiply's sequence), ldp, ret
        let expected = block(
            0xc,
            &[
                (InstructionClass::StackLoadStore, 2),
                (InstructionClass::Alu, 1),
                (InstructionClass::Mul32, InstructionClass::Mul32.dpu_instructions()),
                (InstructionClass::CompareBranch, 1),
            ],
        );
        assert_eq!(from_disassembly(AARCH64), [expected]);
    }

    #[test]
    fn a_block_of_only_a_jump_costs_nothing() {
        // A loop whose back edge clang gave a block of its own for the hook's call (`c:`), and an `else` arm that
        // does something before it jumps (`1b:`).
        let disassembly = "\
dpu_kernel.o:     file format elf64-x86-64

0000000000000000 <f>:
   0:\tcall   5 <f+0x5>
\t\t\t1: R_X86_64_PLT32\t__sanitizer_cov_trace_pc-0x4
   5:\tadd    $0x1,%eax
   8:\tcmp    %edi,%eax
   a:\tje     16 <f+0x16>
   c:\tcall   11 <f+0x11>
\t\t\td: R_X86_64_PLT32\t__sanitizer_cov_trace_pc-0x4
  11:\tjmp    0 <f>
  13:\tnop
  16:\tcall   1b <f+0x1b>
\t\t\t17: R_X86_64_PLT32\t__sanitizer_cov_trace_pc-0x4
  1b:\tadd    $0x1,%ecx
  1e:\tjmp    0 <f>
";
        let costs: Vec<u32> = from_disassembly(disassembly).iter().map(BlockCost::instructions).collect();
        assert_eq!(costs, [3, 0, 2]);
    }

    #[test]
    fn the_table_is_indexed_by_return_offset() {
        let table = c_table(&[block(6, &[(InstructionClass::Alu, 3), (InstructionClass::LoadStore, 1)])]);
        assert!(table.contains("__dpusim_site_instructions[7]"), "{table}");
        assert!(table.contains("[6] = 4,"), "{table}");
        assert!(table.contains("__dpusim_site_runs[7]"), "{table}");
        assert!(table.contains("__dpusim_block_sites[2] = {0, 6};"), "{table}");
        assert!(table.contains("__dpusim_block_classes[2]"), "{table}");
        assert!(table.contains("{3, 0, 1, 0,"), "{table}");
    }

    #[test]
    fn a_kernel_without_blocks_gets_a_one_entry_table() {
        assert!(c_table(&[]).contains("__dpusim_site_instructions[1]"));
    }
}
