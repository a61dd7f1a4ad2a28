//! A functional simulator of UPMEM DPUs: unchanged DPU C kernels run as native code in the DPU's own memory
//! map, each DPU's memories in shared memory, faults contained and explained.
//!
//! # Workflow
//!
//! 1. Write a DPU kernel in C against the UPMEM runtime headers (`<mram.h>`, `<defs.h>`, `<barrier.h>`, ...).
//! 2. Describe it with a [`KernelBuilder`] and build it with [`SimulatedBuild`] (from a `build.rs`) or the
//!    `dpu-upmem-dpurte-clang` command: the host C compiler produces a *simulated DPU binary* whose WRAM sits in
//!    a 64 KiB window at `0x00100000` and whose MRAM sits at the DPU's own MRAM window `0x08000000`, so kernels
//!    that keep MRAM addresses in `uint32_t` work unchanged.
//! 3. Create a [`Machine`] with a [`Topology`] (ranks, DPUs per rank, disabled DPUs, memory sizes).
//! 4. [`Machine::load`] a [`Program`] into DPUs, write inputs ([`Machine::write_symbol`], [`Machine::write`]),
//!    [`Machine::launch`] (or [`Machine::launch_async`] then [`Machine::wait`]), read results back, and read
//!    [`Machine::fault`], [`Machine::log`] and [`Machine::stats`].
//!
//! # Build checks
//!
//! A kernel that works here but not on a DPU is caught when it is built, where a declaration shows it:
//!
//! - **Shared layouts.** A simulated kernel is LP64: pointers, `size_t` and `uintptr_t` are 8 bytes, where a DPU
//!   has 4 (and `long` 8, 8-aligned, as here). The builder compiles kernels with `-g`, reads the binary's DWARF,
//!   and lays every `__host` and MRAM variable's type out again for a DPU (typedefs as the SDK's own headers
//!   define them); a difference names the variable, both sizes and the first member that differs.
//! - **IRAM.** A DPU holds [`ChipVersion::iram_instructions`]; the builder estimates the program's size ([`IramEstimate`]):
//!   its own code from the block costs below, each compiler-runtime multiply, divide or floating-point operation
//!   a `call`, plus the SDK runtime routines it links, sized from the SDK 2025.1's compiled runtime.
//!
//! Each finding is a [`BuildWarning`] ([`SimulatedBuild::build`] prints them, [`SimulatedBuild::build_kernel`]
//! returns them) and is recorded in the binary ([`Program::iram_estimate`], [`Program::layout_differences`]),
//! so that [`SimConfig::strict`] refuses the program in [`Machine::load`] ([`SimError::IramOverflow`],
//! [`SimError::LayoutMismatch`]).
//!
//! # How DPUs run
//!
//! Worker processes (one per host core by default) are started from the simulated binary. To run DPU `d`, a
//! worker maps `d`'s slices of the shared WRAM and MRAM files over the fixed windows (no copy) and runs the
//! kernel's `NR_TASKLETS` tasklets as coroutines, all starting at `main`. How they interleave is the
//! [`Schedule`] of [`SimConfig::schedule`]: by default on modelled time, as on a DPU (next section). Host reads
//! and writes are memory copies into the shared files.
//!
//! # Faults
//!
//! What a DPU would reject, the simulator rejects, and says why ([`Fault`]): DMA into or out of a range outside
//! WRAM, heap overflow, more than 24 tasklets, WRAM or MRAM overflow, deadlock (every live tasklet blocked, one
//! of them on a mutex, which a DPU spins on for ever; tasklets that all stopped at barriers, semaphores or
//! handshakes end a DPU as finished ones do, with a warning, and fault only in strict mode), `assert`, `halt`,
//! printf overflow, division by zero and any
//! signal, and a hang past [`SimConfig::hang_limit`]. The faulting DPU is in fault, the host process keeps
//! running, a worker that took a signal is replaced, and the next launch works. [`SimConfig::strict`] also
//! faults on what the documentation forbids but the hardware tolerates (unaligned DMA, DMA sizes outside 8..=2048
//! or not a multiple of 8, DMA crossing the end of MRAM, a seqread cache not aligned to its size, ...), which
//! by default is done as a DPU does it, with a warning.
//!
//! # Timing model
//!
//! Kernels that are correct on a DPU must be correct here, and many rely, knowingly or not, on how a DPU
//! interleaves its tasklets: all of them advance together, one instruction at a time in a shared pipeline, and
//! a DMA suspends its issuer for hundreds of cycles. So each tasklet runs on a clock in modelled DPU cycles:
//!
//! - **Instructions** are counted, not timed. Kernel sources are compiled with
//!   `-fsanitize-coverage=trace-pc`, which calls the harness at the start of every basic block; the block's
//!   cost, the DPU instructions its host instructions stand for ("Operation costs" below), is computed when the kernel is built from the disassembled kernel
//!   object and looked up by return address in one load. On x86-64 the call preserves every register and
//!   clang is told so, so that a kernel keeps its values in registers across blocks as a DPU with 24
//!   registers does, rather than spilling them around every call (loads and stores a DPU would not execute).
//!   gcc's instrumentation cannot be told so, and its kernels keep those spills: the builder prefers clang, and
//!   [`Program::host_compiler`] says which family built a program ([`CompilerFamily`]).
//!   The SDK routines the simulator replaces (barriers,
//!   mutexes, semaphores, handshakes, `mem_alloc`, `seqread`, `perfcounter`, DMA issue, the boot in
//!   `crt0`) charge the instructions the SDK's own sources execute. The same kernel and input give the same
//!   counts on every run, host and worker count.
//! - **The pipeline**: a tasklet issues at most one instruction every 11 cycles and the DPU at most one per
//!   cycle, in turn among the tasklets that can issue, so while `n` can, each issues one instruction every
//!   `max(11, n)` cycles. A tasklet waiting for its DMA transfer, blocked or finished issues nothing, and the
//!   others issue faster meanwhile: the model keeps one issue clock, the instructions each issuing tasklet has
//!   issued by a given cycle, and a tasklet's clock is its position on it. A tasklet that ran ahead keeps its
//!   position when a tasklet behind it later starts a DMA; only the cycle at which the issue clock reaches that
//!   position moves. (The fast and shuffle schedules, which run tasklets out of modelled order, count every
//!   runnable tasklet in `n` instead.)
//! - **DMA**: the engine serves one transfer at a time, in issue order, in `alpha + bytes / 2` cycles (alpha =
//!   77 for `mram_read`, 61 for `mram_write`, from the PrIM measurements); the issuer waits until its own
//!   transfer completes. The data moves when the transfer is issued.
//! - **Synchronisation**: a tasklet released by another (barrier, mutex, semaphore, handshake) resumes at its
//!   releaser's time plus what the SDK's routine still executes in each of them, so that, as on a DPU, after a
//!   handshake the notifier is a few instructions ahead of the waiter.
//! - **Scheduling** ([`Schedule::Modelled`]): the runnable tasklet furthest behind runs. Before and after a DMA,
//!   a synchronisation or a read of the cycle counter it lets every tasklet that is behind it run first, so these
//!   happen in modelled-time order; in its own code it gives way when it gets more than a quantum of 4,096 DPU
//!   instructions ahead of another runnable tasklet (65,536 cycles with 16 tasklets issuing). The quantum changes
//!   no modelled cycle, only how far apart in modelled time two tasklets' plain WRAM accesses can run.
//!   [`Schedule::Fast`] runs each tasklet until it blocks, round robin (faster, but kernels that rely on the
//!   DPU's interleaving can fail); [`Schedule::Shuffle`] perturbs the modelled order with a seeded generator to
//!   expose races.
//!
//! # Operation costs
//!
//! A block's cost is what its host instructions would execute on a DPU. Moves, integer ALU operations,
//! compares and branches, loads and stores cost one DPU instruction each; an x86-64 instruction with a memory
//! operand also costs the DPU's load (and store, if it updates memory). Loads and stores through the stack
//! pointer are counted in a class of their own ([`InstructionClass::StackLoadStore`]), at the same cost: most
//! are spills of the host compiler's 16 registers, which a DPU, with 24, may not need, so they bound how much of
//! a count the host's register pressure adds. A block that only jumps on costs nothing: such blocks are the
//! instrumentation's own (clang gives each critical edge one for its call), and a DPU's code branches straight to
//! the target. Kernels are compiled without loop
//! unrolling or vectorization, as the DPU's compiler shapes them. Multiplies, divides and floating point are
//! sequences or software routines on a DPU, which has only an 8x8-bit multiply step, a divide step and no
//! floating-point unit; they cost:
//!
//! | Operation (host instruction) | DPU instructions | Source |
//! |---|---:|---|
//! | multiply of two extended 8-bit values (`imul`, `mul` w on `movsbl`/`movzbl`, `ldrsb`/`sxtb` results) | 1 | UPMEM's LLVM fork (`llvm/lib/Target/DPU`): when both operands are sign- or zero-extended bytes, instruction selection emits one `mul_sl_sl`, `mul_sl_ul` or `mul_ul_ul` (`DPUISD::MUL8_SS`, `MUL8_SU`, `MUL8_UU` in `DPUInstrInfo.td`) |
//! | multiply of two extended 16-bit values (or a 16- and an 8-bit one) | 7 | the same backend's `Mul16SSrr`/`Mul16SUrr`/`Mul16UUrr` pseudo-instructions, expanded by `EmitMul16WithCustomInserter` (`DPUTargetLowering.cpp`): a low-byte product that jumps past the rest when both operands are small, else two cross-byte products and the high-byte product, each added in with an `lsl_add`: 1 to 7; we charge the full 7 |
//! | 32-bit multiply (`imul`, `mul` w) | 30 | compiler runtime `mul32.S` (`__mul32`): 4 to order the operands, then one `mul_step` per bit of the smaller operand until it is spent (0 to 32), 2 to return: 6 to 38; PrIM's int32 multiply, 10 MOPS, gives 30 |
//! | 64-bit multiply (`imul` on 64-bit registers, `mul` x, `umulh`) | 130 | `muldi3.c` (`__muldi3`): 36 byte products (`mul_ul_ul`, `mul_uh_ul`, ...) with their byte extractions, shifts and adds, "in the magnitude of 150 instructions" by its header; PrIM's int64 multiply, 2.6 MOPS, gives 130 |
//! | 32-bit divide or remainder (`div`, `idiv`, `udiv` w) | 27 | `udiv32.S` (`__udiv32`): 6 to count leading zeros and jump into an unrolled `div_step` chain, one `div_step` per quotient bit (1 to 32), 1 to return: 8 to 39, plus the sign handling of `div32.c`; PrIM's int32 divide, 11 MOPS, gives 27 |
//! | 64-bit divide or remainder | 245 | `udiv64.c` (`__udiv64`): a C shift-and-subtract loop on two-word values, one pass per quotient bit (up to 64); PrIM's int64 divide, 1.4 MOPS |
//! | float add, subtract (`addss`, `fadd` s) | 66 | LLVM's generic soft float (`addsf3.c`, `fp_add_impl.inc`; the DPU has no float routine of its own); PrIM's float add, 4.9 MOPS |
//! | float multiply (`mulss`, `fmul` s) | 179 | `mulsf3.c` (`fp_mul_impl.inc`): its 24 x 24-bit significand product is a 64-bit multiply on a DPU (`wideMultiply`); PrIM's float multiply, 1.9 MOPS |
//! | float divide, square root | 1,024 | `divsf3.c` (Newton-Raphson on multiply steps); PrIM's float divide, 0.34 MOPS |
//! | double add, subtract | 101 | `adddf3.c`, on two-word values; PrIM's double add, 3.3 MOPS |
//! | double multiply | 695 | `muldf3.c`: a 53 x 53-bit product from 32-bit multiplies; PrIM's double multiply, 0.5 MOPS |
//! | double divide, square root | 2,183 | `divdf3.c`; PrIM's double divide, 0.16 MOPS |
//! | float compare, min, max | 12 | estimate from `comparesf2.c`: unpack, sign and magnitude tests |
//! | double compare, min, max | 16 | estimate: as float, on two words (`comparedf2.c`) |
//! | int <-> float, float <-> double conversion | 20 | estimate from `floatsisf.c`, `fixsfsi.c`, `extendsfdf2.c`: normalise (count leading zeros, shift), round |
//! | int <-> double conversion | 30 | estimate: as float, on two words (`floatsidf.c`, `fixdfsi.c`) |
//!
//! C promotes 8- and 16-bit operands to `int`, so the host compiles their product as a 32-bit multiply; the
//! kernel builder finds the multiplies whose operands are both extended narrow values on every path to them
//! (a data-flow analysis of the disassembly, module `narrow_operands`) and charges them as the DPU compiler emits
//! them. PrIM publishes no 8- or 16-bit multiply throughput: the calibration checks these two against the
//! instruction counts above.
//!
//! The routines are those of UPMEM's compiler runtime (`compiler-rt/lib/builtins/dpu/` in UPMEM's LLVM fork for
//! the integer sequences; its build takes the floating-point routines from LLVM's generic builtins; the 2020
//! SDK ships the same files in `dpu-rt/src/syslib`). Where a routine's instruction count depends on its
//! operands, or on how the DPU compiler schedules C we cannot compile here, the constant is PrIM's measurement,
//! which the source's range brackets.
//!
//! PrIM (Gómez-Luna et al., "Benchmarking a New Paradigm: An Experimental Analysis of a Real
//! Processing-in-Memory Architecture", 2021) measures each operation at 16 tasklets on a 350 MHz DPU, where the
//! pipeline issues one instruction per cycle: 350 / MOPS DPU instructions per element, of which 5 are its
//! loop's own (load, store, index update, compare-and-branch, address; the int32 add loop runs at 6), so an
//! operation costs 350 / MOPS - 5. `cargo bench -p upmem-sim --bench calibration` measures these figures,
//! the MRAM read bandwidth and the saturation at 11 tasklets under the model, against PrIM's.
//!
//! [`DpuStats`] gives per launch and DPU the modelled cycles (when the last tasklet finished), the
//! instructions and the same by [`InstructionClass`] (the kernel's blocks' classes, and the SDK routines' charges),
//! the cycles the DMA engine was busy, and per tasklet its instructions (the launch's balance)
//! and finishing cycle. `perfcounter_get()` in kernels returns the running tasklet's clock (`COUNT_CYCLES`) or
//! the DPU's executed instructions (`COUNT_INSTRUCTIONS`). `CLOCKS_PER_SEC` is 350 MHz. The model is not
//! cycle-accurate: host instructions stand in for DPU instructions (with the costs above), and the pipeline's
//! finer rules (register file bank conflicts) are not modelled.
//!
//! # The SDK's runtime
//!
//! Every DPU runtime routine the simulator reimplements (synchronisation, DMA, sequential readers, allocators,
//! the DPU libc) follows the SDK 2025.1's compiled runtime, case by case: [`sdk_runtime`] has the table of what
//! the SDK does, where it was read and the test that checks it.
//!
//! # Who checks what
//!
//! The machine checks DPU indices, that DPUs are enabled, loaded and idle, and bounds of every host access.
//! Alignment rules of the SDK's host transfers are the business of the libdpu layer above it.
//!
//! The simulator runs on Linux, x86-64 and aarch64.

#[cfg(not(target_os = "linux"))]
compile_error!("upmem-sim runs on Linux (x86-64 and aarch64): it needs memfd, MAP_FIXED windows and Linux signals");

mod block_costs;
mod build_checks;
mod builder;
mod config;
mod control;
mod disassembly;
mod error;
mod fault;
mod layout;
mod machine;
mod memory;
mod narrow_operands;
mod op_costs;
mod overlay;
mod program;
mod runtime;
mod stats;
#[doc = include_str!("../docs/sdk-runtime.md")]
pub mod sdk_runtime {}
mod worker;

pub use build_checks::{BuildWarning, IramEstimate, LayoutDifference, MemberChange, MemberDifference, SourceLocation};
pub use builder::{BuildError, BuiltKernel, CompilerFamily, ObjectProblem, SimulatedBuild};
pub use config::{ParseScheduleError, Schedule, SimConfig};
pub use error::{Result, SimError};
pub use fault::{Fault, FaultKind};
pub use layout::{DMA_MAX, MRAM_WINDOW, WRAM_BASE};
pub use machine::{DpuState, Machine};
pub use op_costs::InstructionClass;
pub use program::Program;
// What the hardware shares, which this crate's API takes and returns.
pub use stats::{DpuStats, TaskletStats};
pub use upmem_types::{
    parse_chip_id, ChipVersion, KernelBuilder, MemoryKind, ParseChipVersionError, Symbol, Topology, CLOCK_HZ,
    DEFAULT_MRAM_SIZE, DEFAULT_WRAM_SIZE, MAX_TASKLETS, MRAM_BASE, MRAM_HEAP,
};
