//! Ranks as threads of one process, exchanging halo rows and summing through shared memory: the transport the
//! distributed tests use in place of MPI.

use std::sync::{Arc, Barrier, Mutex};

use pimgnn::distributed::{AllReduce, HaloExchange, RankBlock};
use pimgnn::{Csr, Dense};

/// What the ranks post for each other: `rows[from][to]` for the exchange in progress, `values[from]` for a sum.
pub struct Mailboxes {
    barrier: Barrier,
    rows: Mutex<Vec<Vec<Vec<f32>>>>,
    values: Mutex<Vec<Vec<f64>>>,
}

impl Mailboxes {
    /// Mailboxes for `ranks` ranks.
    pub fn new(ranks: usize) -> Arc<Self> {
        Arc::new(Mailboxes {
            barrier: Barrier::new(ranks),
            rows: Mutex::new(vec![vec![Vec::new(); ranks]; ranks]),
            values: Mutex::new(vec![Vec::new(); ranks]),
        })
    }

    /// Posts `outgoing(peer)` for every peer, then takes what every peer posted for `rank`, in rank order.
    fn all_to_all(&self, rank: usize, outgoing: impl Fn(usize) -> Vec<f32>) -> Vec<Vec<f32>> {
        let ranks = self.rows.lock().unwrap().len();
        {
            let mut rows = self.rows.lock().unwrap();
            for peer in 0..ranks {
                rows[rank][peer] = outgoing(peer);
            }
        }
        self.barrier.wait();
        let incoming = (0..ranks).map(|peer| self.rows.lock().unwrap()[peer][rank].clone()).collect();
        // Nobody posts the next exchange's rows before everyone has read this one's.
        self.barrier.wait();
        incoming
    }
}

/// One rank's end of the shared-memory exchange.
pub struct ThreadExchange {
    pub block: RankBlock,
    pub shared: Arc<Mailboxes>,
}

impl HaloExchange for ThreadExchange {
    fn local_rows(&self) -> usize {
        self.block.nodes.len()
    }

    fn extend(&mut self, local: &Dense<f32>) -> pimgnn::Result<Dense<f32>> {
        let incoming = self.shared.all_to_all(self.block.rank as usize, |peer| self.block.rows_for(peer as u32, local));
        let mut values = local.as_slice().to_vec();
        for (peer, (rows, &count)) in incoming.iter().zip(&self.block.receive).enumerate() {
            assert_eq!(rows.len(), count * local.cols(), "rank {} from {peer}", self.block.rank);
            values.extend_from_slice(rows);
        }
        Dense::from_vec(self.block.matrix.ncols(), local.cols(), values)
    }

    fn reduce(&mut self, extended: Dense<f32>) -> pimgnn::Result<Dense<f32>> {
        let incoming =
            self.shared.all_to_all(self.block.rank as usize, |peer| self.block.halo_rows_of(peer as u32, &extended));
        let (local_rows, width) = (self.block.nodes.len(), extended.cols());
        let mut local = Dense::from_vec(local_rows, width, extended.as_slice()[..local_rows * width].to_vec())?;
        for (peer, rows) in incoming.iter().enumerate() {
            self.block.add_returned(peer as u32, rows, &mut local)?;
        }
        Ok(local)
    }
}

/// One rank's end of the shared-memory sum: every rank adds all ranks' values in rank order.
pub struct ThreadSum {
    pub rank: usize,
    pub shared: Arc<Mailboxes>,
}

impl AllReduce for ThreadSum {
    fn sum(&mut self, values: &mut [f64]) -> pimgnn::Result<()> {
        self.shared.values.lock().unwrap()[self.rank] = values.to_vec();
        self.shared.barrier.wait();
        values.fill(0.0);
        for posted in self.shared.values.lock().unwrap().iter() {
            for (sum, value) in values.iter_mut().zip(posted) {
                *sum += value;
            }
        }
        self.shared.barrier.wait();
        Ok(())
    }
}

/// An R-MAT graph of `edges` edges over the first `nodes - isolated` nodes, and `isolated` nodes without any
/// edge after them.
pub fn graph_with_isolated_nodes(nodes: usize, isolated: usize, edges: usize) -> Csr<f32> {
    let connected = pimgnn::graph::rmat(nodes - isolated, edges, 7);
    let mut row_ptr = connected.row_ptr().to_vec();
    row_ptr.extend(std::iter::repeat_n(*row_ptr.last().unwrap(), isolated));
    Csr::new(nodes, nodes, row_ptr, connected.col_idx().to_vec(), connected.values().to_vec()).unwrap()
}
