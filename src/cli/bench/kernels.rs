//! `pimgnn bench kernels`: each SpMM kernel on one simulated DPU against the DPU's lower bound (spmm_kernel.h):
//! the instructions the kernel executes and the cycles the simulator models per multiply-add, next to the fewest
//! instructions a multiply-add and a nonzero need on a DPU, by value type, format and feature width.

use std::time::Instant;

use anyhow::{bail, Context as _};
use comfy_table::{Cell, CellAlignment};

use pimgnn::pim::abi::FEATURE_CHUNK;
use pimgnn::pim::cost::{HardwareModel, NONZERO_LOWER_BOUND};
use pimgnn::pim::plan::{Format, Plan, XDelivery};
use pimgnn::pim::{PimElement, PimSpmm};
use pimgnn::{Csr, Dense, SpmmEngine};
use upmem::sim::{CompilerFamily, SetStats, SimConfig};
use upmem::{BackendKind, DpuSet, Topology};

use crate::cli::{pim_args, table};

/// The goal: modelled cycles within this factor of the lower bound.
const GOAL: f64 = 1.3;

/// Arguments of `pimgnn bench kernels`.
#[derive(clap::Args)]
pub struct BenchKernelsArgs {
    /// Feature widths, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,48,64,256",
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
    if args.features.is_empty() || args.dtype.is_empty() || args.format.is_empty() {
        bail!("--features, --dtype and --format each need at least one value");
    }
    let compiler = pim_args::kernels_compiler();
    println!(
        "one simulated DPU, {} tasklets, {} rows of {} nonzeros (columns spread over the rows), X whole in MRAM, \
         kernels built by {}; per multiply-add",
        args.tasklets,
        args.rows,
        args.row_nonzeros,
        compiler.map_or("an unrecorded compiler", CompilerFamily::name)
    );
    let mut table = table::with_header([
        "kernel",
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
                let started = Instant::now();
                let row = match dtype {
                    KernelType::F32 => measure::<f32>(args, format, features),
                    KernelType::I32 => measure::<i32>(args, format, features),
                    KernelType::I16 => measure::<i16>(args, format, features),
                    KernelType::I8 => measure::<i8>(args, format, features),
                }
                .with_context(|| format!("{dtype:?} {format} kernel at {features} features"))?;
                log::info!("{dtype:?} {format} at F = {features}: simulated in {:.1?}", started.elapsed());
                let ratio = row.cycles / row.bound;
                table.add_row([
                    Cell::new(format!("{} {format}", format!("{dtype:?}").to_lowercase())),
                    Cell::new(features).set_alignment(CellAlignment::Right),
                    Cell::new(format!("{:.2}", row.bound)).set_alignment(CellAlignment::Right),
                    Cell::new(format!("{:.2}", row.instructions)).set_alignment(CellAlignment::Right),
                    Cell::new(format!("{:.2}", row.cycles)).set_alignment(CellAlignment::Right),
                    Cell::new(format!("{ratio:.2}{}", goal_mark(ratio, row.dma_floor / row.bound)))
                        .set_alignment(CellAlignment::Right),
                    Cell::new(format!("{:.2}", row.dma_floor)).set_alignment(CellAlignment::Right),
                    Cell::new(format!("{:.0}%", row.dma_share * 100.0)).set_alignment(CellAlignment::Right),
                    Cell::new(&row.classes),
                ]);
            }
        }
    }
    println!("{table}");
    println!(
        "lower bound: the fewest DPU instructions of a multiply-add (load the feature, the product as the SDK's \
         compiler makes it, add) plus a nonzero's {NONZERO_LOWER_BOUND} over the features (spmm_kernel.h); * over \
         {GOAL}x the bound, ** where the DMA floor alone is (only fewer DMAs could reach {GOAL}x there, not fewer \
         instructions). Modelled cycles: the simulator's for the whole launch (boot, merge and barrier \
         included) over the multiply-adds. DMA floor: the DMA engine's cycles for each nonzero's X row and each \
         row's Y, which no kernel that reads X from MRAM goes below however few instructions it runs. Stack \
         load/store: the simulated kernel's stack accesses, charged as any load or store; most are spills of the \
         host compiler's 16 registers that a DPU's 24 may not need."
    );
    if compiler == Some(CompilerFamily::Gcc) {
        println!("Note: {}", pim_args::GCC_KERNELS);
    }
    Ok(())
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
) -> anyhow::Result<KernelRow> {
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
    let values = (0..rows * features).map(|i| T::from((i % 5) as i8 - 2)).collect();
    let x = Dense::from_vec(rows, features, values)?;
    engine.spmm(&x)?;
    let stats = engine.launch_stats()?.context("the simulator gave no statistics")?;
    let model = HardwareModel::default();
    let (x_bytes, y_bytes) = ((features * size_of::<T>()) as f64, (features * size_of::<T::Acc>()) as f64);
    // One DMA per chunk of features (spmm_kernel.h), each with its fixed cycles.
    let chunks = features.div_ceil(FEATURE_CHUNK) as f64;
    let x_reads = chunks * model.dma_read_alpha + model.dma_cycles_per_byte * x_bytes;
    let y_writes = chunks * model.dma_write_alpha + model.dma_cycles_per_byte * y_bytes;
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
