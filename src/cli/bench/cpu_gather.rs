//! `pimgnn bench cpu-gather`: the CPU SpMM against the memory-bound floor of any SpMM on a graph whose `X` is
//! far larger than the last-level cache: a tight loop that gathers the same rows of `X` and adds them up (the
//! product without its multiplications), run in the same process, interleaved, on an Erdős–Rényi graph
//! (default 1,000,000 nodes, 10,000,000 edges, F = 256: `X` and `Y` are 1 GB each). Both read every referenced
//! row of `X` and write `Y` once, so their bandwidths compare directly. Goal (issue 23): the SpMM at 0.8x the
//! gather's bandwidth or better.

use std::time::{Duration, Instant};

use anyhow::bail;
use clap::Args;
use comfy_table::{Cell, CellAlignment};
use rayon::prelude::*;

use pimgnn::{cpu, graph, Csr, Dense};

use crate::cli::{progress, table};

/// Arguments of `pimgnn bench cpu-gather`.
#[derive(Args, Debug)]
pub struct BenchCpuGatherArgs {
    /// Nodes of the Erdős–Rényi graph.
    #[arg(long, default_value_t = 1_000_000)]
    nodes: usize,
    /// Edges of the Erdős–Rényi graph (directed, drawn uniformly).
    #[arg(long, default_value_t = 10_000_000)]
    edges: usize,
    /// Feature width of X.
    #[arg(long, default_value_t = 256, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    features: usize,
    /// Timed runs of each, interleaved, after one warm-up run each; the median counts.
    #[arg(long, default_value_t = 5, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    runs: usize,
}

/// Rows per task of the gather: large enough that scheduling costs nothing, small enough to balance.
const GATHER_ROWS: usize = 1024;

/// `Y_i = sum_j X_j` over row `i`'s nonzeros `j`: the SpMM's memory traffic without its multiplications, in the
/// tightest loop the compiler vectorises (each output row accumulated in place), compiled for the widest vector
/// instructions this CPU has, as the SpMM's kernels are.
fn gather(a: &Csr<f32>, x: &Dense<f32>, y: &mut Dense<f32>) {
    let gather = Gather { row_ptr: a.row_ptr(), col_idx: a.col_idx(), x: x.as_slice(), features: x.cols() };
    y.as_mut_slice().par_chunks_mut(GATHER_ROWS * gather.features).enumerate().for_each(|(block, out)| {
        let first = block * GATHER_ROWS;
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: this CPU has AVX-512F, checked just above.
                return unsafe { gather_rows_avx512(&gather, first, out) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: this CPU has AVX2, checked just above.
                return unsafe { gather_rows_avx2(&gather, first, out) };
            }
        }
        gather.rows(first, out);
    });
}

/// A CSR structure and the `X` its rows gather from.
struct Gather<'a> {
    row_ptr: &'a [u32],
    col_idx: &'a [u32],
    x: &'a [f32],
    features: usize,
}

impl Gather<'_> {
    /// The rows of `out` (from row `first`), each the sum of its nonzeros' rows of `x`.
    #[inline(always)]
    fn rows(&self, first: usize, out: &mut [f32]) {
        let features = self.features;
        for (at, row) in out.chunks_exact_mut(features).enumerate() {
            let r = first + at;
            row.fill(0.0);
            for &column in &self.col_idx[self.row_ptr[r] as usize..self.row_ptr[r + 1] as usize] {
                let source = &self.x[column as usize * features..][..features];
                for (sum, value) in row.iter_mut().zip(source) {
                    *sum += value;
                }
            }
        }
    }
}

/// [`Gather::rows`] compiled for AVX-512F.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gather_rows_avx512(gather: &Gather<'_>, first: usize, out: &mut [f32]) {
    gather.rows(first, out);
}

/// [`Gather::rows`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gather_rows_avx2(gather: &Gather<'_>, first: usize, out: &mut [f32]) {
    gather.rows(first, out);
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

/// Runs the benchmark and prints its table.
pub fn run(args: &BenchCpuGatherArgs) -> anyhow::Result<()> {
    if args.nodes == 0 {
        bail!("--nodes must be at least 1");
    }
    let a = progress::step("generating the graph", || graph::try_erdos_renyi(args.nodes, args.edges, 5))?;
    let features = args.features;
    let x_bytes = (a.ncols() * features * 4) as u64;
    pimgnn::host_memory::check(
        || format!("host memory (bytes) for X and two Y of {} x {features} f32", a.ncols()),
        x_bytes.saturating_mul(3),
    )?;
    let x = Dense::from_vec(
        a.ncols(),
        features,
        (0..a.ncols() * features).into_par_iter().map(|i| (i % 1000) as f32 / 1000.0 - 0.5).collect(),
    )?;
    let mut y_spmm = Dense::zeros(a.nrows(), features);
    let mut y_gather = Dense::zeros(a.nrows(), features);
    cpu::spmm_into(&a, &x, &mut y_spmm)?;
    gather(&a, &x, &mut y_gather);
    // The graph's values are all 1, so both compute the same sums, in the same order.
    if y_spmm.as_slice() != y_gather.as_slice() {
        bail!("the gather and the SpMM disagree: the benchmark's gather is wrong");
    }
    let (mut spmm_times, mut gather_times) = (Vec::new(), Vec::new());
    let timing = format!("timing {} interleaved run(s) of each", args.runs);
    progress::step(&timing, || -> anyhow::Result<()> {
        for _ in 0..args.runs {
            let started = Instant::now();
            gather(&a, &x, &mut y_gather);
            gather_times.push(started.elapsed());
            let started = Instant::now();
            cpu::spmm_into(&a, &x, &mut y_spmm)?;
            spmm_times.push(started.elapsed());
        }
        Ok(())
    })?;
    let bytes = (a.nnz() + a.nrows()) as f64 * features as f64 * 4.0;
    println!(
        "Erdős–Rényi graph: {} nodes, {} nonzeros; F = {features}; X {:.2} GB; {} threads; median of {} runs",
        a.nrows(),
        a.nnz(),
        x_bytes as f64 / 1e9,
        rayon::current_num_threads(),
        args.runs
    );
    let gather_time = median(gather_times);
    let mut table = table::with_header(["contender", "ms", "GB/s (X rows read + Y written)", "against the gather"]);
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    let kernel = cpu::kernel::<f32>();
    for (name, time) in [
        ("plain gather of the rows, added up (tight loop)".to_owned(), gather_time),
        (format!("pimgnn CPU SpMM ({kernel})"), median(spmm_times)),
    ] {
        table.add_row([
            Cell::new(name),
            right(format!("{:.1}", time.as_secs_f64() * 1e3)),
            right(format!("{:.2}", bytes / time.as_secs_f64() / 1e9)),
            right(format!("{:.2}x", gather_time.as_secs_f64() / time.as_secs_f64())),
        ]);
    }
    table::fit_to_terminal(&mut table);
    println!("{table}");
    Ok(())
}
