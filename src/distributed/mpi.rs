//! Ranks over MPI (feature `mpi`, through rsmpi): rank 0's blocks, rows and model handed out to every rank, the
//! halo exchange as one `MPI_Alltoallv` per layer (and back for training's gradients), the sum of the ranks'
//! gradients, the same outcome on every rank when one fails, and the ranks' rows gathered on one rank.
//!
//! MPI must be initialised (an [`mpi::environment::Universe`] alive) before any of these is called; they all
//! run on the world communicator.

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Threading;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::{Count, Rank};

use crate::error::{Error, Result};
use crate::gnn::Model;
use crate::sparse::{Csr, Dense};

use super::block::add_rows;
use super::{AllReduce, HaloExchange, RankBlock};

/// A rank's halo exchange over MPI: every rank sends each other the rows it needs and receives its halo, in one
/// `MPI_Alltoallv` per call.
pub struct MpiHalo {
    send: Vec<Vec<u32>>,
    receive: Vec<usize>,
    local_rows: usize,
    halo_rows: usize,
}

impl MpiHalo {
    /// The exchange `block` needs (the block of this process's rank in the world communicator).
    pub fn new(block: &RankBlock) -> Self {
        MpiHalo {
            send: block.send.clone(),
            receive: block.receive.clone(),
            local_rows: block.nodes.len(),
            halo_rows: block.halo.len(),
        }
    }
}

/// Counts and displacements of `rows` per rank of `width` values each, in MPI's 32-bit counts.
fn partition_counts(rows: impl Iterator<Item = usize>, width: usize, what: &str) -> Result<(Vec<Count>, Vec<Count>)> {
    let (mut counts, mut displs, mut at) = (Vec::new(), Vec::new(), 0usize);
    for rows in rows {
        let count = rows * width;
        let fits = |value: usize| {
            Count::try_from(value).map_err(|_| Error::Capacity {
                what: format!("MPI's 32-bit counts for {what}"),
                needed: value as u64,
                limit: Count::MAX as u64,
            })
        };
        counts.push(fits(count)?);
        displs.push(fits(at)?);
        at += count;
    }
    Ok((counts, displs))
}

/// Counts and displacements of what this rank sends (`send` rows to each rank) and receives (`receive`
/// rows from each), `width` values a row, agreed on by every rank first: a rank that failed since the last
/// exchange (and waits in its own agreement) stops every rank instead of leaving them in this one.
fn agreed_counts(send: &[usize], receive: &[usize], width: usize) -> Result<[(Vec<Count>, Vec<Count>); 2]> {
    let counts = partition_counts(send.iter().copied(), width, "the rows sent to a rank").and_then(|sent| {
        let received = partition_counts(receive.iter().copied(), width, "the rows received from a rank")?;
        Ok([sent, received])
    });
    agree(counts)
}

impl MpiHalo {
    /// The halo exchange of `local`'s rows, once every rank has agreed on the counts: packing the rows to send,
    /// the `MPI_Alltoallv`, and the rank's own rows copied in front of the halo's; it returns the extended
    /// matrix's values.
    fn exchange<'a>(&'a self, local: &'a Dense<f32>) -> Result<impl FnOnce() -> Vec<f32> + Send + 'a> {
        let width = local.cols();
        let sent: Vec<usize> = self.send.iter().map(Vec::len).collect();
        let [(send_counts, send_displs), (receive_counts, receive_displs)] =
            agreed_counts(&sent, &self.receive, width)?;
        let (send, rows, local_values) = (&self.send, self.local_rows + self.halo_rows, self.local_rows * width);
        Ok(move || {
            let outgoing: Vec<f32> =
                send.iter().flatten().flat_map(|&row| local.row(row as usize).iter().copied()).collect();
            let mut values = Vec::with_capacity(rows * width);
            values.extend_from_slice(local.as_slice());
            values.resize(rows * width, 0.0);
            SimpleCommunicator::world().all_to_all_varcount_into(
                &Partition::new(&outgoing[..], send_counts, send_displs),
                &mut PartitionMut::new(&mut values[local_values..], receive_counts, receive_displs),
            );
            values
        })
    }
}

impl HaloExchange for MpiHalo {
    fn local_rows(&self) -> usize {
        self.local_rows
    }

    fn extend(&mut self, local: &Dense<f32>) -> Result<Dense<f32>> {
        let exchange = self.exchange(local)?;
        Dense::from_vec(self.local_rows + self.halo_rows, local.cols(), exchange())
    }

    /// The exchange runs on a thread of its own while `work` runs on the caller's, when MPI was initialised for
    /// calls from several threads one at a time (`MPI_THREAD_SERIALIZED`; `work` must call no MPI function);
    /// one after the other otherwise.
    fn extend_during(&mut self, local: &Dense<f32>, work: &mut dyn FnMut() -> Result<()>) -> Result<Dense<f32>> {
        let exchange = self.exchange(local)?;
        let (worked, values) =
            if matches!(mpi::environment::threading_support(), Threading::Serialized | Threading::Multiple) {
                std::thread::scope(|scope| {
                    let exchanging = scope.spawn(exchange);
                    let worked = work();
                    let values = exchanging.join().map_err(|_| Error::invalid("halo exchange", "its thread panicked"));
                    (worked, values)
                })
            } else {
                let values = exchange();
                (work(), Ok(values))
            };
        worked?;
        Dense::from_vec(self.local_rows + self.halo_rows, local.cols(), values?)
    }

    fn reduce(&mut self, extended: Dense<f32>) -> Result<Dense<f32>> {
        let world = SimpleCommunicator::world();
        let width = extended.cols();
        if extended.rows() != self.local_rows + self.halo_rows {
            return Err(Error::shape(
                "gradient rows to send back (the rank's rows and its halo's)",
                self.local_rows + self.halo_rows,
                extended.rows(),
            ));
        }
        // The halo's rows go back the way they came: to each owner as many as it sent, in the same order.
        let returned: Vec<usize> = self.send.iter().map(Vec::len).collect();
        let [(send_counts, send_displs), (receive_counts, receive_displs)] =
            agreed_counts(&self.receive, &returned, width)?;
        let mut incoming = vec![0f32; returned.iter().sum::<usize>() * width];
        world.all_to_all_varcount_into(
            &Partition::new(&extended.as_slice()[self.local_rows * width..], send_counts, send_displs),
            &mut PartitionMut::new(&mut incoming[..], receive_counts, receive_displs),
        );
        let mut values = extended.into_vec();
        values.truncate(self.local_rows * width);
        let mut local = Dense::from_vec(self.local_rows, width, values)?;
        let mut at = 0;
        for (peer, rows) in self.send.iter().enumerate() {
            let count = rows.len() * width;
            add_rows(rows, &incoming[at..at + count], &mut local, peer as u32)?;
            at += count;
        }
        Ok(local)
    }
}

/// The sum over the ranks of the world communicator, reduced on rank 0 and broadcast from there so that every
/// rank gets the same bits (an all-reduce may sum in a different order on each rank).
pub struct MpiSum;

impl AllReduce for MpiSum {
    fn sum(&mut self, values: &mut [f64]) -> Result<()> {
        let world = SimpleCommunicator::world();
        agree(Ok(()))?;
        let root = world.process_at_rank(0);
        if world.rank() == 0 {
            let mut sums = vec![0f64; values.len()];
            root.reduce_into_root(&values[..], &mut sums[..], SystemOperation::sum());
            values.copy_from_slice(&sums);
        } else {
            root.reduce_into(&values[..], SystemOperation::sum());
        }
        root.broadcast_into(values);
        Ok(())
    }
}

/// The same outcome on every rank: when any rank's `result` is an error, every rank returns
/// [`Error::Rank`] with the lowest failing rank and its error's message; else each its own value.
///
/// Every rank calls it at the same points, or at the point where it failed: each halo exchange agrees first, so
/// a rank that failed between two exchanges and agrees on its error meets the others at their next exchange.
/// An [`Error::Rank`] is already agreed on and passes through without communicating.
pub fn agree<T>(result: Result<T>) -> Result<T> {
    if let Err(Error::Rank { .. }) = result {
        return result;
    }
    let world = SimpleCommunicator::world();
    let failed = if result.is_err() { world.rank() } else { world.size() };
    let mut first = world.size();
    world.all_reduce_into(&failed, &mut first, SystemOperation::min());
    if first == world.size() {
        return result;
    }
    let message = result.as_ref().err().map(ToString::to_string).unwrap_or_default().into_bytes();
    let message = broadcast_vec(&world, first, message);
    Err(Error::Rank { rank: first as u32, message: String::from_utf8_lossy(&message).into_owned() })
}

/// `values` as rank `root` holds them, on every rank (what the others pass is ignored).
fn broadcast_vec<T: Equivalence + Copy + Default>(
    world: &SimpleCommunicator,
    root: Rank,
    mut values: Vec<T>,
) -> Vec<T> {
    let root = world.process_at_rank(root);
    let mut length = values.len() as u64;
    root.broadcast_into(&mut length);
    values.resize(length as usize, T::default());
    root.broadcast_into(&mut values[..]);
    values
}

/// Every rank's `rows` (its `nodes`' rows, of one width) in node order on rank 0, a matrix of `total_nodes`
/// rows; `None` on the other ranks.
pub fn gather_rows(nodes: &[u32], rows: &Dense<f32>, total_nodes: usize) -> Result<Option<Dense<f32>>> {
    let world = SimpleCommunicator::world();
    let root = world.process_at_rank(0);
    let width = rows.cols();
    let mut counts = vec![0 as Count; world.size() as usize];
    let mine = Count::try_from(nodes.len()).map_err(|_| Error::Capacity {
        what: "MPI's 32-bit counts for a rank's nodes".into(),
        needed: nodes.len() as u64,
        limit: Count::MAX as u64,
    })?;
    world.all_gather_into(&mine, &mut counts[..]);
    if world.rank() != 0 {
        root.gather_varcount_into(nodes);
        root.gather_varcount_into(rows.as_slice());
        return Ok(None);
    }
    let per_rank: Vec<usize> = counts.iter().map(|&count| count as usize).collect();
    let (node_counts, node_displs) = partition_counts(per_rank.iter().copied(), 1, "the nodes of a rank")?;
    let (row_counts, row_displs) = partition_counts(per_rank.iter().copied(), width, "the rows of a rank")?;
    let all = per_rank.iter().sum::<usize>();
    let mut ids = vec![0u32; all];
    root.gather_varcount_into_root(nodes, &mut PartitionMut::new(&mut ids[..], node_counts, node_displs));
    let mut values = vec![0f32; all * width];
    root.gather_varcount_into_root(rows.as_slice(), &mut PartitionMut::new(&mut values[..], row_counts, row_displs));
    let mut gathered = Dense::zeros(total_nodes, width);
    for (at, &node) in ids.iter().enumerate() {
        if node as usize >= total_nodes {
            return Err(Error::IndexOutOfRange {
                what: "node gathered from a rank".into(),
                index: node.into(),
                limit: total_nodes as u64,
            });
        }
        gathered.row_mut(node as usize).copy_from_slice(&values[at * width..(at + 1) * width]);
    }
    Ok(Some(gathered))
}

/// Every rank's `values` (the same count on each) one rank after another on rank 0; `None` on the others.
pub fn gather_fixed(values: &[f64]) -> Option<Vec<f64>> {
    let world = SimpleCommunicator::world();
    let root = world.process_at_rank(0);
    if world.rank() != 0 {
        root.gather_into(values);
        return None;
    }
    let mut all = vec![0f64; values.len() * world.size() as usize];
    root.gather_into_root(values, &mut all[..]);
    Some(all)
}

/// Rank 0's `parts` (one per rank; `None` on the other ranks) scattered in one `MPI_Scatterv`: each rank gets
/// its own. Every rank calls it at the same time.
pub fn scatter<T: Equivalence + Copy + Default>(parts: Option<&[Vec<T>]>) -> Result<Vec<T>> {
    let world = SimpleCommunicator::world();
    let root = world.process_at_rank(0);
    let mut length = 0u64;
    let Some(parts) = parts else {
        root.scatter_into(&mut length);
        let mut mine = vec![T::default(); length as usize];
        root.scatter_varcount_into(&mut mine[..]);
        return Ok(mine);
    };
    if parts.len() != world.size() as usize {
        return Err(Error::shape("parts to scatter (one per rank)", world.size() as usize, parts.len()));
    }
    let lengths: Vec<u64> = parts.iter().map(|part| part.len() as u64).collect();
    root.scatter_into_root(&lengths[..], &mut length);
    let (counts, displs) = partition_counts(parts.iter().map(Vec::len), 1, "the values scattered to a rank")?;
    let all: Vec<T> = parts.concat();
    let mut mine = vec![T::default(); length as usize];
    root.scatter_varcount_into_root(&Partition::new(&all[..], counts, displs), &mut mine[..]);
    Ok(mine)
}

/// Rank 0's `blocks` (one per rank; `None` on the other ranks) scattered: each rank gets its own.
pub fn scatter_blocks(blocks: Option<&[RankBlock]>) -> Result<RankBlock> {
    let field = |get: &dyn Fn(&RankBlock) -> Vec<u32>| blocks.map(|blocks| blocks.iter().map(get).collect::<Vec<_>>());
    let row_ptr = scatter(field(&|block| block.matrix.row_ptr().to_vec()).as_deref())?;
    let col_idx = scatter(field(&|block| block.matrix.col_idx().to_vec()).as_deref())?;
    let values = blocks.map(|blocks| blocks.iter().map(|block| block.matrix.values().to_vec()).collect::<Vec<_>>());
    let values = scatter(values.as_deref())?;
    let nodes = scatter(field(&|block| block.nodes.clone()).as_deref())?;
    let halo = scatter(field(&|block| block.halo.clone()).as_deref())?;
    let receive = field(&|block| block.receive.iter().map(|&rows| rows as u32).collect());
    let receive: Vec<usize> = scatter(receive.as_deref())?.into_iter().map(|rows| rows as usize).collect();
    // Each rank's lists of rows to send: their lengths, then their rows one list after another.
    let send_lengths = scatter(field(&|block| block.send.iter().map(|rows| rows.len() as u32).collect()).as_deref())?;
    let send_rows = scatter(field(&|block| block.send.concat()).as_deref())?;
    let mut rest = &send_rows[..];
    let mut send = Vec::with_capacity(send_lengths.len());
    for &length in &send_lengths {
        let length = (length as usize).min(rest.len());
        send.push(rest[..length].to_vec());
        rest = &rest[length..];
    }
    let rank = SimpleCommunicator::world().rank() as u32;
    let matrix = Csr::new(nodes.len(), nodes.len() + halo.len(), row_ptr, col_idx, values)?;
    Ok(RankBlock { rank, matrix, nodes, halo, receive, send })
}

/// Rank 0's `model` (`None` on the other ranks) on every rank, sent as the bytes of a safetensors file.
pub fn broadcast_model(model: Option<&Model>) -> Result<Model> {
    let world = SimpleCommunicator::world();
    let bytes = agree(model.map(Model::to_safetensors_bytes).transpose())?.unwrap_or_default();
    let bytes = broadcast_vec(&world, 0, bytes);
    Model::from_safetensors_bytes(&bytes, "the model rank 0 sent")
}

/// Rank 0's `values` (ignored on the other ranks) on every rank.
pub fn broadcast<T: Equivalence + Copy + Default>(values: Vec<T>) -> Vec<T> {
    broadcast_vec(&SimpleCommunicator::world(), 0, values)
}
