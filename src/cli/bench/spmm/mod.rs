//! `pimgnn bench spmm`: SpMM `Y = A X` on the CPU against PIM (simulated without hardware), at several
//! feature widths.

use std::path::PathBuf;

use anyhow::Context as _;
mod graph;
mod runs;

use pimgnn::gnn::Dtype;
use runs::{PlanChoice, SpmmBenchConfig};
#[cfg(feature = "simulator")]
use upmem::sim::Schedule;
use upmem::BackendKind;

use crate::cli::{pim_args, progress};

/// Arguments of `pimgnn bench spmm`.
#[derive(clap::Args)]
pub struct BenchSpmmArgs {
    /// Graph: a Matrix Market file or a CSV edge list (default: R-MAT, 100,000 nodes, 1,000,000 edges).
    #[arg(long)]
    graph: Option<PathBuf>,
    /// Instead of the default R-MAT graph, a generated graph of a published dataset's size (see `pimgnn infer
    /// --workload`; seed 42).
    #[arg(long, conflicts_with = "graph", value_name = "DATASET")]
    workload: Option<pimgnn::graph::Dataset>,
    /// Feature widths, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,64,256",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    features: Vec<usize>,
    /// DPUs (1 to 2,560).
    #[arg(long, default_value_t = 2048, value_parser = pim_args::dpus())]
    dpus: u32,
    /// Tasklets per DPU (1 to 24).
    #[arg(long, default_value_t = 16, value_parser = pim_args::tasklets())]
    tasklets: u32,
    /// Plan: auto (the cost model's choice), pygim (PyGim's default), or e.g.
    /// csr:rows=1024,cols=2,groups=1,x=referenced,tasklets=16.
    #[arg(long, default_value = "auto")]
    plan: PlanChoice,
    /// Backend: auto (hardware if present), hw, or sim.
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    /// The simulator's tasklet schedules, comma-separated, one row each: modelled (the default everywhere else:
    /// hardware-like interleaving), fast (each tasklet runs until it blocks: raw speed, correct for kernels
    /// without races such as these, which the tests check under shuffle), shuffle:SEED.
    #[cfg(feature = "simulator")]
    #[arg(long, value_delimiter = ',', default_value = "modelled,fast")]
    schedules: Vec<Schedule>,
    /// Value types of the PIM SpMM, comma-separated, one row each: f32, or i32, i16, i8 quantized as
    /// aggregation quantizes (the error is against the CPU's f32 result).
    #[arg(long, value_delimiter = ',', default_value = "f32")]
    dtype: Vec<Dtype>,
}

/// Runs the benchmark and prints its table.
pub fn run(args: BenchSpmmArgs) -> anyhow::Result<()> {
    let plan = match args.plan {
        PlanChoice::Fixed(plan) => PlanChoice::Fixed(pimgnn::pim::plan::Plan { tasklets: args.tasklets, ..plan }),
        other => other,
    };
    let config = SpmmBenchConfig {
        graph: args.graph,
        workload: args.workload,
        features: args.features,
        dpus: args.dpus,
        tasklets: args.tasklets,
        plan,
        backend: args.backend,
        #[cfg(feature = "simulator")]
        schedules: args.schedules,
        dtypes: args.dtype,
    };
    let a = progress::step("loading the graph", || runs::load_graph(&config)).context("loading the graph")?;
    let name = match (&config.graph, config.workload) {
        (Some(path), _) => path.display().to_string(),
        (None, Some(dataset)) => format!("power-law graph of {dataset}'s size ({}), seed 42", dataset.shape().source),
        (None, None) => "R-MAT a=0.57 b=0.19 c=0.19, seed 42".into(),
    };
    println!(
        "graph: {name} ({} nodes, {} nonzeros); {} DPUs x {} tasklets; {}; CPU on {} threads",
        a.nrows(),
        a.nnz(),
        config.dpus,
        config.tasklets,
        config.dtypes.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        rayon::current_num_threads()
    );
    #[cfg(feature = "simulator")]
    let schedules = config.schedules.len();
    #[cfg(not(feature = "simulator"))]
    let schedules = 1;
    let runs = format!(
        "timing SpMM at {} feature width(s) on the CPU and, per width, in {} type(s) under {schedules} schedule(s) on \
         PIM",
        config.features.len(),
        config.dtypes.len(),
    );
    let rows = progress::step(&runs, || runs::run(&config, &a))?;
    println!("{}", runs::table(&rows));
    println!(
        "PIM ms: the second call (A stays on the DPUs), on the simulator under each schedule. The simulator runs the \
         plan cheapest to simulate among those predicted within {:.0}% of the fastest whose DPUs' MRAM holds at most \
         {} GiB in all (a broadcast X counts once: its pages are shared), when it saves at least {:.0}% of the \
         fastest's simulation work; when that is not the hardware's choice, the hardware choice is shown beside the \
         plan run.",
        pimgnn::pim::cost::SIMULATOR_TOLERANCE * 1e2,
        pimgnn::pim::simulator_mram_budget() >> 30,
        pimgnn::pim::cost::SIMULATOR_MIN_SAVING * 1e2
    );
    Ok(())
}
