//! `pimgnn bench kernels`: each SpMM kernel on one simulated DPU against the DPU's lower bound (spmm_kernel.h):
//! the instructions the kernel executes and the cycles the simulator models per multiply-add, next to the fewest
//! instructions a multiply-add and a nonzero need on a DPU, by value type, format, feature width and layout of X
//! (by column, and for `i8` and `i16` also per nonzero) and width of Y (in accumulators, and for `i8` also in 16
//! bits).

use std::time::Instant;

use anyhow::{bail, Context as _};
use comfy_table::{Cell, CellAlignment};

use pimgnn::pim::abi::{FEATURE_CHUNK, READ_ENTRIES};
use pimgnn::pim::cost::{HardwareModel, NONZERO_LOWER_BOUND};
use pimgnn::pim::plan::{Format, Plan, XDelivery};
use pimgnn::pim::{PimElement, PimSpmm};
use pimgnn::{Csr, Dense, Element as _, SpmmEngine};
use upmem::sim::{CompilerFamily, SetStats, SimConfig};
use upmem::{BackendKind, DpuSet, Topology};

use crate::cli::{pim_args, table};

/// The goal: modelled cycles within this factor of the lower bound.
const GOAL: f64 = 1.3;

/// Arguments of `pimgnn bench kernels`.
#[derive(clap::Args)]
pub struct BenchKernelsArgs {
    /// Feature widths, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "8,16,48,64,256",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4096))]
    features: Vec<usize>,
    /// Value types, comma-separated: f32, i32, i16, i8.
    #[arg(long, value_delimiter = ',', default_value = "i8,i16,i32,f32")]
    dtype: Vec<KernelType>,
    /// Formats, comma-separated: csr, coo.
    #[arg(long, value_delimiter = ',', default_value = "csr,coo")]
    format: Vec<Format>,
    /// Rows of the matrix.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    rows: u32,
    /// Nonzeros per row.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    row_nonzeros: u32,
    /// Widths of Y, comma-separated: 32 (accumulators), 16 (the i8 kernels' rows in 16 bits, as servers take
    /// them; other types only run at 32).
    #[arg(long = "y-bits", value_delimiter = ',', default_value = "32,16")]
    y_bits: Vec<YBits>,
    /// Tasklets (1 to 24); from 11 on the pipeline is full, and a cycle is an instruction.
    #[arg(long, default_value_t = 16, value_parser = pim_args::tasklets())]
    tasklets: u32,
}

/// A kernel's value type.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum KernelType {
    F32,
    I32,
    I16,
    I8,
}

impl KernelType {
    fn name(self) -> &'static str {
        match self {
            KernelType::F32 => f32::NAME,
            KernelType::I32 => i32::NAME,
            KernelType::I16 => i16::NAME,
            KernelType::I8 => i8::NAME,
        }
    }

    /// Whether the type's kernels can write Y in 16 bits.
    fn narrow_y(self) -> bool {
        match self {
            KernelType::F32 => f32::NARROW_Y.is_some(),
            KernelType::I32 => i32::NARROW_Y.is_some(),
            KernelType::I16 => i16::NARROW_Y.is_some(),
            KernelType::I8 => i8::NARROW_Y.is_some(),
        }
    }

    /// Whether the type's kernels can take X per nonzero.
    fn x_per_nonzero(self) -> bool {
        match self {
            KernelType::F32 => f32::X_PER_NONZERO,
            KernelType::I32 => i32::X_PER_NONZERO,
            KernelType::I16 => i16::X_PER_NONZERO,
            KernelType::I8 => i8::X_PER_NONZERO,
        }
    }
}

/// How the kernels write Y.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum YBits {
    /// In accumulators.
    #[value(name = "32")]
    Accumulators,
    /// In 16 bits but for the wide rows (`PimSpmm::set_y_in_16_bits`).
    #[value(name = "16")]
    Narrow,
}

/// How one run lays out X and Y.
#[derive(Clone, Copy, Debug)]
struct Layout {
    x_per_nonzero: bool,
    y_16: bool,
}

impl Layout {
    fn x_name(self) -> &'static str {
        if self.x_per_nonzero {
            "per nonzero"
        } else {
            "by column"
        }
    }

    fn y_bits(self) -> u32 {
        if self.y_16 {
            16
        } else {
            32
        }
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "X {}, Y in {} bits", self.x_name(), self.y_bits())
    }
}

/// One kernel run's figures, per multiply-add.
struct KernelRow {
    bound: f64,
    dma_floor: f64,
    instructions: f64,
    cycles: f64,
    dma_share: f64,
    classes: String,
}

/// Runs the benchmark and prints its table.
pub fn run(args: &BenchKernelsArgs) -> anyhow::Result<()> {
    if args.features.is_empty() || args.dtype.is_empty() || args.format.is_empty() || args.y_bits.is_empty() {
        bail!("--features, --dtype, --format and --y-bits each need at least one value");
    }
    let compiler = pim_args::kernels_compiler();
    println!(
        "one simulated DPU, {} tasklets, {} rows of {} nonzeros (columns spread over the rows), kernels built by {}; \
         per multiply-add",
        args.tasklets,
        args.rows,
        args.row_nonzeros,
        compiler.map_or("an unrecorded compiler", CompilerFamily::name)
    );
    let mut table = table::with_header([
        "kernel",
        "X",
        "Y bits",
        "F",
        "lower bound (MAC + nonzero's)",
        "instructions",
        "modelled cycles",
        "cycles / bound",
        "DMA floor",
        "DMA busy",
        "instructions by class",
    ]);
    for &dtype in &args.dtype {
        for &format in &args.format {
            for &features in &args.features {
                for y in args.y_bits.iter().filter(|&&y| y == YBits::Accumulators || dtype.narrow_y()) {
                    for x_per_nonzero in [false, true] {
                        if x_per_nonzero && !dtype.x_per_nonzero() {
                            continue;
                        }
                        let layout = Layout { x_per_nonzero, y_16: *y == YBits::Narrow };
                        let started = Instant::now();
                        let row = match dtype {
                            KernelType::F32 => measure::<f32>(args, format, features, layout),
                            KernelType::I32 => measure::<i32>(args, format, features, layout),
                            KernelType::I16 => measure::<i16>(args, format, features, layout),
                            KernelType::I8 => measure::<i8>(args, format, features, layout),
                        }
                        .with_context(|| format!("{dtype:?} {format} kernel at {features} features, {layout}"))?;
                        log::info!(
                            "{dtype:?} {format} at F = {features}, {layout}: simulated in {:.1?}",
                            started.elapsed()
                        );
                        table.add_row(table_row(&row, &format!("{} {format}", dtype.name()), layout, features));
                    }
                }
            }
        }
    }
    println!("{table}");
    println!(
        "lower bound: the fewest DPU instructions of a multiply-add (load the feature, the product as the SDK's \
         compiler makes it, add) plus a nonzero's {NONZERO_LOWER_BOUND} over the features (spmm_kernel.h); * over \
         {GOAL}x the bound, ** where the DMA floor alone is (only fewer DMAs could reach {GOAL}x there, not fewer \
         instructions). X by column: each nonzero reads its X row (a DMA per nonzero and chunk of features); per \
         nonzero: the host sends a row of X per nonzero in nonzero order, and the kernel reads them 32 at a time. \
         Modelled cycles: the simulator's for the whole launch (boot, merge and barrier included) over the \
         multiply-adds. Y bits: Y in accumulators, or in 16 bits (i8: a row's sums packed before its write, as \
         servers take Y; the pack is a row's, outside the bound). DMA floor: the DMA engine's cycles for the \
         kernel's reads of X and writes of Y, which no kernel with that layout goes below however few \
         instructions it runs. Stack load/store: the simulated \
         kernel's stack accesses, charged as any load or store; most are spills of the host compiler's 16 \
         registers that a DPU's 24 may not need."
    );
    if compiler == Some(CompilerFamily::Gcc) {
        println!("Note: {}", pim_args::GCC_KERNELS);
    }
    Ok(())
}

/// A table row of one kernel run.
fn table_row(row: &KernelRow, kernel: &str, layout: Layout, features: usize) -> [Cell; 11] {
    let ratio = row.cycles / row.bound;
    [
        Cell::new(kernel),
        Cell::new(layout.x_name()),
        Cell::new(layout.y_bits()).set_alignment(CellAlignment::Right),
        Cell::new(features).set_alignment(CellAlignment::Right),
        Cell::new(format!("{:.2}", row.bound)).set_alignment(CellAlignment::Right),
        Cell::new(format!("{:.2}", row.instructions)).set_alignment(CellAlignment::Right),
        Cell::new(format!("{:.2}", row.cycles)).set_alignment(CellAlignment::Right),
        Cell::new(format!("{ratio:.2}{}", goal_mark(ratio, row.dma_floor / row.bound)))
            .set_alignment(CellAlignment::Right),
        Cell::new(format!("{:.2}", row.dma_floor)).set_alignment(CellAlignment::Right),
        Cell::new(format!("{:.0}%", row.dma_share * 100.0)).set_alignment(CellAlignment::Right),
        Cell::new(&row.classes),
    ]
}

/// The mark of a row whose modelled cycles are `ratio` times the bound and whose DMA floor is `dma_floor_ratio`
/// times it: `*` over the goal, `**` when the DMA floor alone is.
fn goal_mark(ratio: f64, dma_floor_ratio: f64) -> &'static str {
    if ratio <= GOAL {
        ""
    } else if dma_floor_ratio > GOAL {
        " **"
    } else {
        " *"
    }
}

/// The matrix: `rows` rows of `row_nonzeros` nonzeros each, of value 1, columns spread by a multiplicative hash.
fn matrix<T: PimElement + From<i8>>(rows: u32, row_nonzeros: u32) -> anyhow::Result<Csr<T>> {
    let (rows, per_row) = (rows as usize, row_nonzeros as usize);
    let row_ptr: Vec<u32> = (0..=rows).map(|r| (r * per_row) as u32).collect();
    let cols: Vec<u32> = (0..rows * per_row).map(|k| ((k as u64 * 2_654_435_761) % rows as u64) as u32).collect();
    Ok(Csr::new(rows, rows, row_ptr, cols, vec![T::from(1); rows * per_row])?)
}

fn measure<T: PimElement + From<i8>>(
    args: &BenchKernelsArgs,
    format: Format,
    features: usize,
    layout: Layout,
) -> anyhow::Result<KernelRow> {
    let Layout { x_per_nonzero, y_16 } = layout;
    let a = matrix::<T>(args.rows, args.row_nonzeros)?;
    let macs = (a.nnz() * features) as f64;
    let plan = Plan {
        format,
        row_blocks: 1,
        split_rows: true,
        col_blocks: 1,
        feature_groups: 1,
        x: XDelivery::Whole,
        tasklets: args.tasklets,
    };
    let set =
        DpuSet::builder().backend(BackendKind::Simulator).simulator(SimConfig::new(Topology::new(1, 1))).allocate()?;
    let rows = a.nrows();
    let mut engine = PimSpmm::new(set, a, plan)?;
    engine.set_x_per_nonzero(Some(x_per_nonzero))?;
    engine.set_y_in_16_bits(Some(y_16))?;
    let values = (0..rows * features).map(|i| T::from((i % 5) as i8 - 2)).collect();
    let x = Dense::from_vec(rows, features, values)?;
    engine.spmm(&x)?;
    let stats = engine.launch_stats()?.context("the simulator gave no statistics")?;
    let model = HardwareModel::default();
    let y_value_bytes = if y_16 { size_of::<i16>() } else { size_of::<T::Acc>() };
    let (x_bytes, y_bytes) = ((features * size_of::<T>()) as f64, (features * y_value_bytes) as f64);
    // By column, a DMA per nonzero and chunk of features (spmm_kernel.h), each with its fixed cycles, and one per
    // row and chunk of Y; per nonzero, X and the values READ_ENTRIES at a time per unit of 8 bytes of features,
    // and one per row and unit of Y.
    let (x_reads, y_writes) = if x_per_nonzero {
        let units = (features * size_of::<T>()).div_ceil(8) as f64;
        let entries = READ_ENTRIES as f64;
        let x_and_value = 2.0 * model.dma_read_alpha / entries + model.dma_cycles_per_byte * (8.0 + 4.0);
        (units * x_and_value, units * model.dma_write_alpha + model.dma_cycles_per_byte * y_bytes)
    } else {
        let chunks = features.div_ceil(FEATURE_CHUNK) as f64;
        (
            chunks * model.dma_read_alpha + model.dma_cycles_per_byte * x_bytes,
            chunks * model.dma_write_alpha + model.dma_cycles_per_byte * y_bytes,
        )
    };
    Ok(KernelRow {
        bound: model.mac_cycles::<T>() + NONZERO_LOWER_BOUND / features as f64,
        dma_floor: (x_reads + y_writes / f64::from(args.row_nonzeros)) / features as f64,
        instructions: stats.instructions as f64 / macs,
        cycles: stats.cycles as f64 / macs,
        dma_share: stats.dma_cycles as f64 / stats.cycles as f64,
        classes: classes_per_mac(&stats, macs),
    })
}

/// The instruction classes that ran, largest first, per multiply-add.
fn classes_per_mac(stats: &SetStats, macs: f64) -> String {
    let per_mac = stats.classes_largest_first().into_iter().map(|(class, count)| (class, count as f64 / macs));
    // Classes below 0.005 per multiply-add would print as 0.00.
    per_mac
        .filter(|&(_, count)| count >= 0.005)
        .map(|(class, count)| format!("{class} {count:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}
