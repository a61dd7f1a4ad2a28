//! What every distributed command does on every rank: start MPI, turn a command-line step's error into one to
//! agree on, partition on rank 0 and share the partition, take a rank's rows of a node matrix, and print a
//! table with a column per rank.

use std::path::Path;

use anyhow::bail;
use comfy_table::Table;
use mpi::environment::{Threading, Universe};
use pimgnn::distributed::mpi::{agree, share_partition};
use pimgnn::distributed::{PartitionMethod, RankPartition};
use pimgnn::{Csr, Dense};

use crate::cli::table;

/// MPI, started for this process (alive as long as the value), and this rank and the ranks' count.
pub fn start() -> anyhow::Result<(Universe, u32, u32)> {
    let Some((universe, _)) = mpi::initialize_with_threading(Threading::Serialized) else {
        bail!("MPI could not be initialised (or was already)");
    };
    let world = mpi::topology::SimpleCommunicator::world();
    use mpi::traits::Communicator as _;
    let (rank, ranks) = (world.rank() as u32, world.size() as u32);
    Ok((universe, rank, ranks))
}

/// A command-line step's error as the library's, to agree on: `what` and the error's chain.
pub fn failed(what: &'static str) -> impl Fn(anyhow::Error) -> pimgnn::Error {
    move |error| pimgnn::Error::invalid(what, format!("{error:#}"))
}

/// The partition `source` names (a method, or a file of one for `ranks` ranks) of `graph`, made on rank 0 and
/// shared with every rank.
pub fn shared_partition(source: &str, graph: &Csr<f32>, rank: u32, ranks: u32) -> pimgnn::Result<RankPartition> {
    let partition = (rank == 0).then(|| partition(source, graph, ranks));
    share_partition(agree(partition.transpose().map_err(failed("--partition")))?)
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

/// `matrix`'s rows of `nodes`, in that order.
pub fn rows_of(matrix: &Dense<f32>, nodes: &[u32]) -> pimgnn::Result<Dense<f32>> {
    let values = nodes.iter().flat_map(|&node| matrix.row(node as usize).iter().copied()).collect();
    Dense::from_vec(nodes.len(), matrix.cols(), values)
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
