//! What every distributed command does: start MPI, turn a command-line step's error into one to agree on,
//! split the inputs on rank 0 (which reads them whole) and hand each rank its part, and print a table with a
//! column per rank.

use std::path::Path;

use anyhow::bail;
use comfy_table::Table;
use mpi::environment::{Threading, Universe};
use mpi::traits::Communicator as _;
use pimgnn::distributed::mpi::{broadcast, scatter};
use pimgnn::distributed::{PartitionMethod, RankBlock, RankPartition};
use pimgnn::{Csr, Dense};

use crate::cli::table;

/// MPI, started for this process (alive as long as the value), and this rank and the ranks' count.
pub fn start() -> anyhow::Result<(Universe, u32, u32)> {
    let Some((universe, _)) = mpi::initialize_with_threading(Threading::Serialized) else {
        bail!("MPI could not be initialised (or was already)");
    };
    let world = universe.world();
    let (rank, ranks) = (world.rank() as u32, world.size() as u32);
    Ok((universe, rank, ranks))
}

/// A command-line step's error as the library's, to agree on: `what` and the error's chain.
pub fn failed(what: &'static str) -> impl Fn(anyhow::Error) -> pimgnn::Error {
    move |error| pimgnn::Error::invalid(what, format!("{error:#}"))
}

/// What rank 0 hands out: the partition and every rank's block of the aggregation matrix.
pub struct Parts {
    pub partition: RankPartition,
    pub blocks: Vec<RankBlock>,
}

impl Parts {
    /// `matrix` (the aggregation matrix of `graph`) split over `ranks` ranks by the partition `source` names.
    pub fn new(source: &str, graph: &Csr<f32>, matrix: &Csr<f32>, ranks: u32) -> anyhow::Result<Self> {
        let partition = partition(source, graph, ranks)?;
        let blocks = (0..ranks).map(|rank| partition.block(matrix, rank)).collect::<pimgnn::Result<_>>()?;
        Ok(Parts { partition, blocks })
    }

    /// Each rank's rows of `values` (a row of `width` values per node of the graph), for [`scatter`].
    pub fn rows<T: Copy>(&self, values: &[T], width: usize) -> Vec<Vec<T>> {
        let rows = |block: &RankBlock| {
            let mut rows = Vec::with_capacity(block.nodes.len() * width);
            for &node in &block.nodes {
                rows.extend_from_slice(&values[node as usize * width..(node as usize + 1) * width]);
            }
            rows
        };
        self.blocks.iter().map(rows).collect()
    }
}

/// This rank's `rows` rows of rank 0's `matrix` (`Some` there only; its width is sent to every rank).
pub fn scatter_rows(parts: Option<&Parts>, matrix: Option<&Dense<f32>>, rows: usize) -> pimgnn::Result<Dense<f32>> {
    let width = broadcast(vec![matrix.map_or(0, |matrix| matrix.cols() as u64)])[0] as usize;
    let split = parts.zip(matrix).map(|(parts, matrix)| parts.rows(matrix.as_slice(), width));
    Dense::from_vec(rows, width, scatter(split.as_deref())?)
}

/// The partition `source` names of `graph` over `ranks` ranks.
fn partition(source: &str, graph: &Csr<f32>, ranks: u32) -> anyhow::Result<RankPartition> {
    match source.parse::<PartitionMethod>() {
        Ok(method) => Ok(RankPartition::new(graph, ranks, method)?),
        Err(_) => {
            let path = Path::new(source);
            let partition = RankPartition::load(path)?;
            if partition.ranks() != ranks || partition.owners().len() != graph.nrows() {
                bail!(
                    "{}: a partition of {} nodes over {} ranks, for a graph of {} nodes over {ranks} ranks",
                    path.display(),
                    partition.owners().len(),
                    partition.ranks(),
                    graph.nrows()
                );
            }
            Ok(partition)
        }
    }
}

/// A table with a column per rank after the first, `rows` (a label, then a cell per rank).
pub fn per_rank_table(ranks: u32, rows: impl IntoIterator<Item = (String, Vec<String>)>) -> Table {
    let mut header = vec!["per rank".to_owned()];
    header.extend((0..ranks).map(|rank| format!("rank {rank}")));
    let mut table = table::with_header(header);
    for (label, cells) in rows {
        table.add_row(std::iter::once(label).chain(cells));
    }
    table::fit_to_terminal(&mut table);
    table
}
