//! `pimgnn infer --distributed`: rank 0 reads the inputs and hands out the parts, then one forward pass, the
//! halo exchanged at every layer (during the interior rows' aggregation where [`Aggregator::for_rank`] splits
//! them); rank 0 gathers the logits and prints every rank's nodes, halo, DPUs and phases with the halo exchange
//! predicted over a stated network.

use std::time::{Duration, Instant};

use pimgnn::distributed::mpi::{agree, broadcast_model, gather_fixed, gather_rows, scatter_blocks, MpiHalo};
use pimgnn::distributed::RankBlock;
use pimgnn::gnn::{Aggregator, EngineOptions, Inference, Overlap, INTERIOR_PHASE};
use pimgnn::io::npy;
use pimgnn::spmm::Phase;
use pimgnn::Dense;

use super::ranks::{failed, per_rank_table, scatter_rows, start, Parts};
use super::{InferArgs, NetworkArgs};
use crate::cli::output;

/// The rows of the table's phases, each with the engine's phases it sums (the rest count as dense).
const PHASES: [(&str, &[&str]); 5] = [
    ("halo exchange", &["halo exchange"]),
    ("send X (and quantize)", &["send X", "send values", "quantize", "quantize values", "features with ones"]),
    ("kernel (the CPU SpMM on cpu)", &["kernel", "cpu spmm"]),
    ("gather (and dequantize)", &["gather", "dequantize"]),
    ("merge", &["merge"]),
];
/// The last phase row: the dense steps, and the merge when it overlaps them.
const DENSE: &str = "dense (and the merge it overlaps)";
/// Values a rank reports: nodes, halo nodes, DPUs, then each phase row's wall and predicted seconds.
const REPORT: usize = 3 + 2 * (PHASES.len() + 1);

/// What a rank holds once set up.
struct Rank {
    block: RankBlock,
    features: Dense<f32>,
    aggregator: Aggregator,
    model: pimgnn::gnn::Model,
    /// What rank 0 prints (`None` on the others).
    heading: Option<Heading>,
}

/// What rank 0 says of the run before its table.
struct Heading {
    description: String,
    partition: String,
    /// Nodes of the whole graph.
    nodes: usize,
}

/// Runs `pimgnn infer --distributed`.
pub fn infer(args: &InferArgs) -> anyhow::Result<()> {
    let (_universe, rank, ranks) = start()?;
    if let Some(output) = &args.output {
        agree(output::check_writable("--output", output).map_err(failed("--output")))?;
    }
    let started = Instant::now();
    let mut set_up = set_up(args, rank, ranks)?;
    let setup_time = started.elapsed();
    if let Some(heading) = &set_up.heading {
        println!("workload: {}", heading.description);
        println!("partition: {}", heading.partition);
        println!("plan (rank 0): {}", set_up.aggregator.plan());
    }
    let overlap = if args.no_overlap { Overlap::Sequential } else { Overlap::Overlapped };
    let inference = agree(set_up.model.forward_with(&set_up.features, &mut set_up.aggregator, overlap))?;
    let report = report(&set_up, &inference, &args.network);
    let nodes = set_up.heading.as_ref().map_or(0, |heading| heading.nodes);
    let logits = gather_rows(&set_up.block.nodes, &inference.logits, nodes)?;
    let reports = gather_fixed(&report);
    let (Some(logits), Some(reports)) = (logits, reports) else { return Ok(()) };
    print_table(&reports, ranks, setup_time, &args.network);
    if let Some(output) = &args.output {
        npy::write_dense_f32(output, &logits)?;
        println!("logits: {} ({} x {} float32)", output.display(), logits.rows(), logits.cols());
    }
    Ok(())
}

/// Rank 0 reads (or generates) the workload, partitions it and sends every rank its block, its feature rows
/// and the model; each rank loads its block into its engine. Every step ends with every rank agreeing.
fn set_up(args: &InferArgs, rank: u32, ranks: u32) -> pimgnn::Result<Rank> {
    let load = || args.workload.load().map(Some).map_err(failed("input"));
    let workload = agree(if rank == 0 { load() } else { Ok(None) })?;
    let parts = workload.as_ref().map(|workload| {
        let matrix = workload.model.architecture().aggregation().matrix(&workload.graph).map_err(anyhow::Error::from);
        matrix.and_then(|matrix| Parts::new(&args.distributed.partition, &workload.graph, &matrix, ranks))
    });
    let parts = agree(parts.transpose().map_err(failed("--partition")))?;
    let block = scatter_blocks(parts.as_ref().map(|parts| &parts.blocks[..]))?;
    let features =
        scatter_rows(parts.as_ref(), workload.as_ref().map(|workload| &workload.features), block.nodes.len())?;
    let model = broadcast_model(workload.as_ref().map(|workload| &workload.model))?;
    let options: EngineOptions = args.pim_args.engine_options(args.backend.backend, model.aggregation_widths());
    let (aggregation, exchange) = (model.architecture().aggregation(), Box::new(MpiHalo::new(&block)));
    let aggregator = if args.no_overlap {
        Aggregator::for_aggregation(aggregation, block.matrix.clone(), args.dtype, &options)
            .and_then(|aggregator| aggregator.with_halo(exchange))
    } else {
        Aggregator::for_rank(&block, aggregation, args.dtype, &options, exchange)
    };
    let heading = workload.zip(parts).map(|(workload, parts)| Heading {
        description: workload.description,
        partition: parts.partition.to_string(),
        nodes: workload.graph.nrows(),
    });
    Ok(Rank { aggregator: agree(aggregator)?, heading, model, block, features })
}

/// This rank's values for the table ([`REPORT`] of them): the halo exchange predicted with the network
/// model (what it receives or sends, whichever is more, at the bandwidth, and one latency per peer) less the
/// interior rows' phases that ran during it, the PIM phases as the engine predicts them, the host's at their
/// wall time.
fn report(rank: &Rank, inference: &Inference, network: &NetworkArgs) -> Vec<f64> {
    let peers = rank.block.receive.iter().zip(&rank.block.send).filter(|(&from, to)| from > 0 || !to.is_empty());
    let halo_rows = rank.block.halo.len().max(rank.block.send.iter().map(Vec::len).sum());
    let allocated = rank.aggregator.allocated_dpus().unwrap_or(0);
    let mut values = vec![rank.block.nodes.len() as f64, rank.block.halo.len() as f64, allocated as f64];
    values.resize(REPORT, 0.0);
    let latency = peers.count() as f64 * network.network_latency_us * 1e-6;
    let on_hardware = |phase: &Phase| phase.predicted.unwrap_or(phase.wall).as_secs_f64();
    for (layer, width) in inference.layers.iter().zip(rank.model.aggregation_widths()) {
        let during_exchange: f64 =
            layer.phases.iter().filter(|phase| phase.name.starts_with(INTERIOR_PHASE)).map(on_hardware).sum();
        for phase in &layer.phases {
            let name = phase.name.strip_prefix(INTERIOR_PHASE).unwrap_or(&phase.name);
            let row = PHASES.iter().position(|(_, names)| names.contains(&name));
            let predicted = match row {
                Some(0) => {
                    let exchange = (halo_rows * width * 4) as f64 / (network.network_gbps * 1e9) + latency;
                    (exchange - during_exchange).max(0.0)
                }
                _ => on_hardware(phase),
            };
            let row = row.unwrap_or(PHASES.len());
            values[3 + 2 * row] += phase.wall.as_secs_f64();
            values[4 + 2 * row] += predicted;
        }
    }
    values
}

/// Rank 0's table of every rank's report (phases as rows, ranks as columns), and the run's total: the
/// slowest rank's.
fn print_table(reports: &[f64], ranks: u32, setup: Duration, network: &NetworkArgs) {
    let reports: Vec<&[f64]> = reports.chunks(REPORT).take(ranks as usize).collect();
    let ms = |wall: f64, predicted: f64| format!("{:.2} ({:.2})", wall * 1e3, predicted * 1e3);
    let total = |values: &[f64], first: usize| values[3..].iter().skip(first).step_by(2).sum::<f64>();
    let mut rows: Vec<(String, Vec<String>)> = ["nodes", "halo nodes", "DPUs"]
        .into_iter()
        .enumerate()
        .map(|(at, what)| (what.to_owned(), reports.iter().map(|values| format!("{}", values[at])).collect()))
        .collect();
    let names = PHASES.iter().map(|(name, _)| *name).chain([DENSE]);
    for (phase, name) in names.enumerate() {
        let cells = reports.iter().map(|values| ms(values[3 + 2 * phase], values[4 + 2 * phase])).collect();
        rows.push((format!("{name}, ms (predicted)"), cells));
    }
    let cells = reports.iter().map(|values| ms(total(values, 0), total(values, 1))).collect();
    rows.push(("total, ms (predicted)".to_owned(), cells));
    println!("{}", per_rank_table(ranks, rows));
    let slowest = |first| reports.iter().map(|values| total(values, first)).fold(0.0, f64::max);
    println!(
        "over {ranks} ranks: {:.2} ms predicted (the slowest rank; PIM phases on hardware, halo exchange over \
         {} GB/s with {} us per message, host steps at wall time), {:.2} ms wall; setup {:.2} s",
        slowest(1) * 1e3,
        network.network_gbps,
        network.network_latency_us,
        slowest(0) * 1e3,
        setup.as_secs_f64()
    );
}
