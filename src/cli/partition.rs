//! `pimgnn partition`: a graph's nodes split over processes, by ranges and by METIS, with what each rank holds
//! and receives per layer; saved to a file for distributed runs to load.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::Args;
use pimgnn::distributed::{PartitionMethod, RankPartition, RankStats};
use pimgnn::gnn::inputs;
use pimgnn::graph::Dataset;
use pimgnn::Csr;

use super::workload::RmatArgs;
use super::{progress, table};

/// Arguments of `pimgnn partition`.
#[derive(Args, Debug)]
pub struct PartitionArgs {
    /// Graph: Matrix Market (.mtx, row = target) or CSV edge list (.csv). Default: a generated R-MAT graph
    /// (--nodes, --edges).
    #[arg(long)]
    graph: Option<PathBuf>,
    /// Instead, a generated graph of a published dataset's size (reddit, products, proteins, arxiv, ...).
    #[arg(long, conflicts_with = "graph")]
    workload: Option<Dataset>,
    /// Seed of a generated graph.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    rmat: RmatArgs,
    /// Ranks (processes) to split over, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "4")]
    ranks: Vec<u32>,
    /// Methods, comma-separated: range (contiguous ids, balanced by edges), metis.
    #[arg(long, value_delimiter = ',', default_value = "range,metis")]
    method: Vec<PartitionMethod>,
    /// Feature width the halo volume per layer is given for (float32).
    #[arg(long, default_value_t = 256)]
    features: usize,
    /// Writes the partition to this file (one rank count and one method only).
    #[arg(long)]
    save: Option<PathBuf>,
}

/// Runs `pimgnn partition`.
pub fn run(args: &PartitionArgs) -> anyhow::Result<()> {
    if args.save.is_some() && (args.ranks.len() != 1 || args.method.len() != 1) {
        bail!("--save writes one partition: give one --ranks and one --method");
    }
    let (graph, description) = load_graph(args)?;
    println!("graph: {description}");
    for &method in &args.method {
        for &ranks in &args.ranks {
            let partition = progress::step(&format!("partitioning over {ranks} ranks by {method}"), || {
                RankPartition::new(&graph, ranks, method)
            })?;
            let stats = partition.stats(&graph)?;
            print_stats(&partition, &stats, args.features);
            if let Some(path) = &args.save {
                partition.save(path).with_context(|| format!("saving the partition to {}", path.display()))?;
                println!("saved to {}", path.display());
            }
        }
    }
    Ok(())
}

fn load_graph(args: &PartitionArgs) -> anyhow::Result<(Csr<f32>, String)> {
    let graph = match (&args.graph, args.workload) {
        (Some(path), _) => progress::step("reading the graph", || inputs::read_graph(path))
            .with_context(|| format!("loading {}", path.display()))?,
        (None, Some(dataset)) => {
            progress::step(&format!("generating a {dataset}-shaped graph"), || dataset.graph(args.seed))?
        }
        (None, None) => args.rmat.generate(args.seed)?,
    };
    let source = match (&args.graph, args.workload) {
        (Some(path), _) => path.display().to_string(),
        (None, Some(dataset)) => format!("generated {dataset}-shaped (seed {})", args.seed),
        (None, None) => format!("generated R-MAT (seed {})", args.seed),
    };
    let description = format!("{source}, {} nodes, {} edges", graph.nrows(), graph.nnz());
    Ok((graph, description))
}

fn print_stats(partition: &RankPartition, stats: &[RankStats], features: usize) {
    let mut table = table::with_header(["rank", "nodes", "edges", "halo nodes", "cut edges", "halo MB per layer"]);
    let megabytes = |rows: usize| format!("{:.2}", (rows * features * 4) as f64 / 1e6);
    for (rank, stat) in stats.iter().enumerate() {
        table.add_row([
            rank.to_string(),
            stat.nodes.to_string(),
            stat.edges.to_string(),
            stat.halo_nodes.to_string(),
            stat.cut_edges.to_string(),
            megabytes(stat.halo_nodes),
        ]);
    }
    let sum = |field: fn(&RankStats) -> usize| stats.iter().map(field).sum::<usize>();
    let halo = sum(|s| s.halo_nodes);
    table.add_row([
        "total".to_owned(),
        sum(|s| s.nodes).to_string(),
        sum(|s| s.edges).to_string(),
        halo.to_string(),
        sum(|s| s.cut_edges).to_string(),
        megabytes(halo),
    ]);
    table::fit_to_terminal(&mut table);
    let edges = sum(|s| s.edges).max(1);
    let largest = stats.iter().map(|s| s.edges).max().unwrap_or(0);
    println!(
        "\n{partition}: {:.1}% of the edges cut; the largest rank has {:.2}x the mean edges (halo at F = {features})",
        sum(|s| s.cut_edges) as f64 * 100.0 / edges as f64,
        largest as f64 * stats.len() as f64 / edges as f64
    );
    println!("{table}");
}
