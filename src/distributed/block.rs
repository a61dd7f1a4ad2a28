//! One rank's block of a partitioned aggregation matrix, and the feature rows it exchanges with the others at
//! every layer ([`RankBlock`]); [`HaloExchange`] is how those rows arrive, whatever carries them.

use crate::error::{Error, Result};
use crate::sparse::{Csr, Dense};

use super::RankPartition;

/// One rank's part of a partitioned aggregation matrix: its nodes' rows, with the columns renumbered so that
/// its own nodes come first (in [`RankBlock::nodes`]' order) and its halo after (in [`RankBlock::halo`]'s),
/// each row's entries in their order in the whole matrix (so each row sums as it would on one server). The rows
/// that reference no halo node (its interior, [`RankBlock::interior_rows`]) come first, so that they can be
/// aggregated while the halo is on its way.
#[derive(Clone, Debug, PartialEq)]
pub struct RankBlock {
    /// The rank.
    pub rank: u32,
    /// Its rows: `nodes.len()` x (`nodes.len() + halo.len()`).
    pub matrix: Csr<f32>,
    /// The nodes it owns, those of its interior rows first, each part ascending: row `i` of
    /// [`RankBlock::matrix`] is node `nodes[i]`.
    pub nodes: Vec<u32>,
    /// The remote nodes its rows reference, by owner and then id: column `nodes.len() + k` is `halo[k]`.
    pub halo: Vec<u32>,
    /// Halo rows it receives from each rank, in rank order (0 from itself); they arrive in [`RankBlock::halo`]'s
    /// order.
    pub receive: Vec<usize>,
    /// For each rank, the rows of its own (positions in [`RankBlock::nodes`]) that rank needs, in the order of
    /// that rank's halo (empty for itself).
    pub send: Vec<Vec<u32>>,
}

/// How a rank gets the feature rows of its halo before it aggregates: an MPI all-to-all between servers, or any
/// other transport. An [`Aggregator`](crate::gnn::Aggregator) given one
/// ([`Aggregator::with_halo`](crate::gnn::Aggregator::with_halo)) takes the rank's own feature rows per call and aggregates over them and
/// the halo's.
pub trait HaloExchange: Send {
    /// Rows of the features each call gives: the rank's own nodes.
    fn local_rows(&self) -> usize;

    /// `local` followed by the halo's rows, of `local`'s width, in the order of the block's columns. Every rank
    /// calls it for the same layer at the same time.
    fn extend(&mut self, local: &Dense<f32>) -> Result<Dense<f32>>;

    /// The way back, for training's backward pass: `extended` has a row per column of the block (the rank's
    /// own rows, then the halo's, as [`HaloExchange::extend`] returns them), holding this rank's part of each
    /// row's gradient; every halo row goes back to its owner. Returns the rank's own rows, to each of which the
    /// parts the other ranks sent back are added, in rank order. Every rank calls it at the same time.
    fn reduce(&mut self, extended: Dense<f32>) -> Result<Dense<f32>>;

    /// [`HaloExchange::extend`], running `work` while the halo's rows are on their way. This default runs them
    /// one after the other; a transport that can move rows while the caller computes overlaps them. The
    /// exchange takes place whether `work` fails or not (the other ranks are in it), and `work`'s error comes
    /// first.
    fn extend_during(&mut self, local: &Dense<f32>, work: &mut dyn FnMut() -> Result<()>) -> Result<Dense<f32>> {
        let worked = work();
        let extended = self.extend(local);
        worked.and(extended)
    }
}

/// How the ranks of a distributed training run sum their parameter gradients and losses: every rank passes
/// its values and gets the sum over all ranks, the same on every rank (so that every rank steps its optimiser
/// to the same weights).
pub trait AllReduce: Send {
    /// Replaces `values` by their sum over all ranks. Every rank calls it at the same time, with as many values.
    fn sum(&mut self, values: &mut [f64]) -> Result<()>;
}

/// How a rank of a distributed training run talks to the others: the halo's rows both ways, and the sums of
/// losses and gradients.
pub struct RankTransport {
    /// The halo's feature rows in, their gradients back.
    pub exchange: Box<dyn HaloExchange>,
    /// Sums over the ranks.
    pub sum: Box<dyn AllReduce>,
}

impl RankBlock {
    /// How many of the first rows reference none of the halo's columns: the rows that can be aggregated before
    /// the halo arrives (the block puts all such rows first).
    pub fn interior_rows(&self) -> usize {
        let local = self.nodes.len() as u32;
        (0..self.matrix.nrows()).take_while(|&row| self.matrix.row(row).0.iter().all(|&col| col < local)).count()
    }

    /// `local`'s rows [`RankBlock::send`] lists for `peer`, packed row after row.
    pub fn rows_for(&self, peer: u32, local: &Dense<f32>) -> Vec<f32> {
        self.send[peer as usize].iter().flat_map(|&row| local.row(row as usize).iter().copied()).collect()
    }

    /// The rows of `extended` (a row per column of the block) of the halo nodes `peer` owns, packed row after
    /// row: what [`HaloExchange::reduce`] sends back to `peer`.
    pub fn halo_rows_of(&self, peer: u32, extended: &Dense<f32>) -> Vec<f32> {
        let first = self.nodes.len() + self.receive[..peer as usize].iter().sum::<usize>();
        let rows = first..first + self.receive[peer as usize];
        extended.as_slice()[rows.start * extended.cols()..rows.end * extended.cols()].to_vec()
    }

    /// Adds `returned` (rows in the order of [`RankBlock::send`]'s list for `peer`, packed) to `local`'s rows.
    pub fn add_returned(&self, peer: u32, returned: &[f32], local: &mut Dense<f32>) -> Result<()> {
        add_rows(&self.send[peer as usize], returned, local, peer)
    }
}

/// Adds `returned` (packed rows, one per entry of `rows`) to `local`'s `rows`; `peer` sent them.
pub(crate) fn add_rows(rows: &[u32], returned: &[f32], local: &mut Dense<f32>, peer: u32) -> Result<()> {
    let width = local.cols();
    if returned.len() != rows.len() * width {
        return Err(Error::shape(format!("gradient rows returned by rank {peer}"), rows.len() * width, returned.len()));
    }
    for (&row, values) in rows.iter().zip(returned.chunks(width.max(1))) {
        for (sum, value) in local.row_mut(row as usize).iter_mut().zip(values) {
            *sum += value;
        }
    }
    Ok(())
}

impl RankPartition {
    /// `rank`'s block of `matrix` (the aggregation matrix of the partitioned graph, row = target node).
    pub fn block(&self, matrix: &Csr<f32>, rank: u32) -> Result<RankBlock> {
        let nodes = self.owners().len();
        if (matrix.nrows(), matrix.ncols()) != (nodes, nodes) {
            return Err(Error::shape(
                "aggregation matrix (the partition's nodes)",
                format!("{nodes} x {nodes}"),
                format!("{} x {}", matrix.nrows(), matrix.ncols()),
            ));
        }
        if rank >= self.ranks() {
            return Err(Error::IndexOutOfRange {
                what: "rank (the partition's ranks)".into(),
                index: rank.into(),
                limit: self.ranks().into(),
            });
        }
        let owners = self.owners();
        let ranks = self.ranks() as usize;
        let ascending = self.nodes_of(rank);
        let local = ascending.len();
        // Its interior nodes first, then the others, each ascending.
        let interior = |node: &u32| matrix.row(*node as usize).0.iter().all(|&col| owners[col as usize] == rank);
        let (mut own_nodes, boundary): (Vec<u32>, Vec<u32>) = ascending.iter().partition(|node| interior(node));
        own_nodes.extend(boundary);
        // Each own node's position in that order, and in ascending order.
        let (mut position, mut ascending_position) = (vec![0u32; nodes], vec![0u32; nodes]);
        for (at, &node) in own_nodes.iter().enumerate() {
            position[node as usize] = at as u32;
        }
        for (at, &node) in ascending.iter().enumerate() {
            ascending_position[node as usize] = at as u32;
        }

        // The halo: remote columns of its rows, by owner then id.
        let mut in_halo = vec![false; nodes];
        for &node in &own_nodes {
            for &col in matrix.row(node as usize).0 {
                if owners[col as usize] != rank {
                    in_halo[col as usize] = true;
                }
            }
        }
        let mut halo: Vec<u32> = (0..nodes as u32).filter(|&node| in_halo[node as usize]).collect();
        halo.sort_by_key(|&node| owners[node as usize]);
        let mut halo_column = vec![0u32; nodes];
        let mut receive = vec![0usize; ranks];
        for (at, &node) in halo.iter().enumerate() {
            halo_column[node as usize] = (local + at) as u32;
            receive[owners[node as usize] as usize] += 1;
        }
        let column_of = |col: u32| {
            if owners[col as usize] == rank {
                position[col as usize]
            } else {
                halo_column[col as usize]
            }
        };

        let mut row_ptr = Vec::with_capacity(local + 1);
        row_ptr.push(0u32);
        let (mut col_idx, mut values) = (Vec::new(), Vec::new());
        for &node in &own_nodes {
            let (cols, vals) = matrix.row(node as usize);
            col_idx.extend(cols.iter().map(|&col| column_of(col)));
            values.extend_from_slice(vals);
            row_ptr.push(col_idx.len() as u32);
        }
        let block = Csr::new(local, local + halo.len(), row_ptr, col_idx, values)?;

        // What each other rank needs of its rows: the columns of theirs that it owns, by id (their halo's order
        // for this owner), as positions in its rows.
        let mut needed = vec![vec![false; local]; ranks];
        for (row, &owner) in owners.iter().enumerate() {
            if owner == rank {
                continue;
            }
            for &col in matrix.row(row).0 {
                if owners[col as usize] == rank {
                    needed[owner as usize][ascending_position[col as usize] as usize] = true;
                }
            }
        }
        let in_block_order = |flags: Vec<bool>| {
            ascending
                .iter()
                .zip(flags)
                .filter(|(_, needed)| *needed)
                .map(|(&node, _)| position[node as usize])
                .collect()
        };
        let send = needed.into_iter().map(in_block_order).collect();
        Ok(RankBlock { rank, matrix: block, nodes: own_nodes, halo, receive, send })
    }
}
