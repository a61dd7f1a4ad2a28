//! PrIM's characterisation of the real DPU (Gómez-Luna et al., "Benchmarking a New Paradigm: An Experimental
//! Analysis of a Real Processing-in-Memory Architecture", 2021; 350 MHz DPU) and the microbenchmarks that
//! measure the same figures under the simulator's timing model. PrIM did not measure 8- and 16-bit multiplies:
//! their reference is the throughput the DPU's instruction set gives them (see [`Reference::Derived`]).

use std::path::Path;
use std::sync::Arc;

use upmem_sim::{DpuStats, Program, CLOCK_HZ, MRAM_HEAP};

use super::{build, build_source, machine, write_u32};

/// The element types of the arithmetic microbenchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    Int8,
    Int16,
    Int32,
    Int64,
    Float,
    Double,
}

impl Element {
    fn c_type(self) -> &'static str {
        match self {
            Element::Int8 => "uint8_t",
            Element::Int16 => "uint16_t",
            Element::Int32 => "uint32_t",
            Element::Int64 => "uint64_t",
            Element::Float => "float",
            Element::Double => "double",
        }
    }

    /// 3 in the type's representation: a divisor that neither traps nor keeps values fixed.
    fn three(self) -> Vec<u8> {
        match self {
            Element::Int8 => vec![3],
            Element::Int16 => 3u16.to_le_bytes().to_vec(),
            Element::Int32 => 3u32.to_le_bytes().to_vec(),
            Element::Int64 => 3u64.to_le_bytes().to_vec(),
            Element::Float => 3f32.to_le_bytes().to_vec(),
            Element::Double => 3f64.to_le_bytes().to_vec(),
        }
    }

    pub fn bytes(self) -> u32 {
        match self {
            Element::Int8 => 1,
            Element::Int16 => 2,
            Element::Int32 | Element::Float => 4,
            Element::Int64 | Element::Double => 8,
        }
    }
}

/// What a microbenchmark's modelled throughput is compared with, in millions of operations per second.
#[derive(Clone, Copy, Debug)]
pub enum Reference {
    /// PrIM's measurement at 16 tasklets.
    Published(f64),
    /// No published figure: what a DPU issuing one instruction per cycle achieves when each element costs the
    /// loop's own instructions plus the operation's (PrIM's loop: 5, see the crate docs, "Operation costs").
    Derived(f64),
}

impl Reference {
    pub fn mops(self) -> f64 {
        match self {
            Reference::Published(mops) | Reference::Derived(mops) => mops,
        }
    }

    /// The figure for a table: `10 MOPS`, `58.3 MOPS (derived)`.
    pub fn describe(self) -> String {
        match self {
            Reference::Published(mops) => format!("{mops} MOPS"),
            Reference::Derived(mops) => format!("{mops:.1} MOPS (derived)"),
        }
    }
}

/// The instructions of PrIM's arithmetic loop per element besides the operation.
const LOOP_INSTRUCTIONS: u32 = 5;

/// DPU instructions of a multiply of two 8-bit values, from the SDK 2025.1's description of the instruction
/// set (`dpu/isa.py` of its Python package): one `mul_sl_sl`, `mul_sl_ul` or `mul_ul_ul`, which multiply the
/// low bytes of two registers.
pub const ISA_MUL8_INSTRUCTIONS: u32 = 1;

/// DPU instructions of a multiply of two 16-bit values from the same instruction set, which has byte multiplies
/// (`mul_{s,u}{l,h}_{s,u}{l,h}`: the low or high byte of each operand) and `lsl_add` (`rc = ra + (rb << n)`)
/// but no wider multiply: the four byte products `al bl`, `ah bl`, `al bh`, `ah bh`, and three `lsl_add` that
/// add the middle two shifted by 8 and the last by 16.
pub const ISA_MUL16_INSTRUCTIONS: u32 = 7;

/// The throughput of an operation of `instructions` DPU instructions in PrIM's loop at one instruction per cycle.
const fn derived_mops(instructions: u32) -> f64 {
    (CLOCK_HZ as f64 / 1e6) / (LOOP_INSTRUCTIONS + instructions) as f64
}

/// The DPU instructions of one operation that `operation`'s published throughput gives: `350 / MOPS - 5` (a
/// 350 MHz DPU issues one instruction per cycle at 16 tasklets; 5 are the loop's own).
pub fn published_instructions(operation: &Operation) -> u32 {
    let Reference::Published(mops) = operation.reference else {
        panic!("{} has no published throughput", operation.name)
    };
    ((CLOCK_HZ as f64 / 1e6) / mops - f64::from(LOOP_INSTRUCTIONS)).round() as u32
}

/// One arithmetic microbenchmark: `element = element OP operand` over a WRAM block.
#[derive(Clone, Copy, Debug)]
pub struct Operation {
    pub name: &'static str,
    pub element: Element,
    /// The C operator.
    pub operator: &'static str,
    /// The throughput at 16 tasklets to compare with.
    pub reference: Reference,
}

/// PrIM's arithmetic throughput at 16 tasklets (the paper's figure 5 and its section 3.1.2), and the 8- and
/// 16-bit multiplies' derived from the DPU's instruction set.
pub const OPERATIONS: [Operation; 14] = [
    Operation { name: "int32 add", element: Element::Int32, operator: "+", reference: Reference::Published(58.0) },
    Operation { name: "int32 multiply", element: Element::Int32, operator: "*", reference: Reference::Published(10.0) },
    Operation { name: "int32 divide", element: Element::Int32, operator: "/", reference: Reference::Published(11.0) },
    Operation { name: "int64 add", element: Element::Int64, operator: "+", reference: Reference::Published(50.0) },
    Operation { name: "int64 multiply", element: Element::Int64, operator: "*", reference: Reference::Published(2.6) },
    Operation { name: "int64 divide", element: Element::Int64, operator: "/", reference: Reference::Published(1.4) },
    Operation { name: "float add", element: Element::Float, operator: "+", reference: Reference::Published(4.9) },
    Operation { name: "float multiply", element: Element::Float, operator: "*", reference: Reference::Published(1.9) },
    Operation { name: "float divide", element: Element::Float, operator: "/", reference: Reference::Published(0.34) },
    Operation { name: "double add", element: Element::Double, operator: "+", reference: Reference::Published(3.3) },
    Operation {
        name: "double multiply",
        element: Element::Double,
        operator: "*",
        reference: Reference::Published(0.5),
    },
    Operation { name: "double divide", element: Element::Double, operator: "/", reference: Reference::Published(0.16) },
    Operation {
        name: "int8 multiply",
        element: Element::Int8,
        operator: "*",
        reference: Reference::Derived(derived_mops(ISA_MUL8_INSTRUCTIONS)),
    },
    Operation {
        name: "int16 multiply",
        element: Element::Int16,
        operator: "*",
        reference: Reference::Derived(derived_mops(ISA_MUL16_INSTRUCTIONS)),
    },
];

/// PrIM's MRAM read bandwidth of one DPU with 16 tasklets at 2,048-byte transfers, in MB/s.
pub const PUBLISHED_MRAM_READ_MBPS: f64 = 628.0;

/// The transfer size of [`PUBLISHED_MRAM_READ_MBPS`].
pub const MRAM_READ_BLOCK_BYTES: u32 = 2048;

/// The operation by name in [`OPERATIONS`].
pub fn operation(name: &str) -> Operation {
    *OPERATIONS.iter().find(|operation| operation.name == name).unwrap_or_else(|| panic!("no operation {name}"))
}

/// The arithmetic kernel of `operation` for `nr_tasklets`, built once (see [`build`]).
pub fn arithmetic_program(operation: &Operation, nr_tasklets: u32) -> Arc<Program> {
    let defines = [("TYPE", operation.element.c_type()), ("OP", operation.operator)];
    build("arithmetic", nr_tasklets, &defines)
}

/// The stream kernel of the MRAM read microbenchmark, built once.
fn stream_program() -> Arc<Program> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/kernels/stream.c");
    // The kernel's 2,048-byte blocks are a WRAM global, so the default 1 KiB stacks do.
    build_source(&source, 16, &[])
}

/// Builds the arithmetic kernels of these operations at these tasklet counts, and the stream kernel, on all
/// cores, so that measuring them later builds nothing (building is most of a run with an empty cache).
pub fn build_kernels(operations: &[(Operation, u32)]) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |threads| threads.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                match operations.get(index) {
                    Some((operation, nr_tasklets)) => drop(arithmetic_program(operation, *nr_tasklets)),
                    None if index == operations.len() => drop(stream_program()),
                    None => break,
                }
            });
        }
    });
}

/// The statistics of one launch of the arithmetic kernel on one DPU with `repeats` passes over the blocks.
pub fn arithmetic_stats(operation: &Operation, nr_tasklets: u32, repeats: u32) -> DpuStats {
    let program = arithmetic_program(operation, nr_tasklets);
    let mut machine = machine(1, 1);
    machine.load(&[0], &program).expect("loading the arithmetic kernel");
    machine.write_symbol(0, "operand", 0, &operation.element.three()).expect("writing operand");
    write_u32(&machine, 0, "repeats", repeats);
    machine.launch(&[0]).expect("launching the arithmetic kernel");
    machine.stats(0).expect("stats")
}

/// Modelled cycles of one launch of the arithmetic kernel on one DPU with `repeats` passes over the blocks.
fn arithmetic_cycles(operation: &Operation, nr_tasklets: u32, repeats: u32) -> u64 {
    arithmetic_stats(operation, nr_tasklets, repeats).cycles
}

/// The modelled throughput of `operation` on one DPU with `nr_tasklets`, in millions of operations per second:
/// the difference between a launch of three passes and one of one pass, which leaves out the boot and the
/// blocks' loads and stores.
pub fn modelled_mops(operation: &Operation, nr_tasklets: u32) -> f64 {
    const ARITHMETIC_BLOCK_BYTES: u32 = 1024; // as in arithmetic.c
    let once = arithmetic_cycles(operation, nr_tasklets, 1);
    let thrice = arithmetic_cycles(operation, nr_tasklets, 3);
    let operations = 2 * nr_tasklets * (ARITHMETIC_BLOCK_BYTES / operation.element.bytes());
    let seconds = (thrice - once) as f64 / CLOCK_HZ as f64;
    f64::from(operations) / seconds / 1e6
}

/// Modelled cycles of one DPU with 16 tasklets streaming `bytes` of MRAM in `MRAM_READ_BLOCK_BYTES` reads.
fn stream_cycles(bytes: u32) -> u64 {
    let program = stream_program();
    let mut machine = machine(1, 1);
    machine.load(&[0], &program).expect("loading the stream kernel");
    let heap = machine.symbol(0, MRAM_HEAP).expect("the MRAM heap");
    machine.write(0, upmem_sim::MemoryKind::Mram, heap.offset(), &vec![7u8; bytes as usize]).expect("filling MRAM");
    write_u32(&machine, 0, "bytes", bytes);
    write_u32(&machine, 0, "block_bytes", MRAM_READ_BLOCK_BYTES);
    write_u32(&machine, 0, "passes", 1);
    machine.launch(&[0]).expect("launching the stream kernel");
    machine.stats(0).expect("stats").cycles
}

/// The modelled MRAM read bandwidth of one DPU with 16 tasklets at `MRAM_READ_BLOCK_BYTES`, in MB/s: the
/// difference between streaming `2 * step_bytes` and `step_bytes` (the benchmark's: 1 MiB), which leaves out the
/// boot.
pub fn modelled_mram_read_mbps(step_bytes: u32) -> f64 {
    let seconds = (stream_cycles(2 * step_bytes) - stream_cycles(step_bytes)) as f64 / CLOCK_HZ as f64;
    f64::from(step_bytes) / seconds / 1e6
}
