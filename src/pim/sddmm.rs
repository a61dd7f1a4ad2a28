//! SDDMM on the resident structure: for each nonzero `(i, j)` of `A`, `<P_i, Q_j>`, computed by the SpMM kernels
//! in their SDDMM mode (`dpu/spmm_kernel.h`) on the blocks already on the DPUs. `Q` goes where SpMM's X goes and
//! as X goes; each DPU gets its block's rows of `P`; each returns one accumulator per nonzero of its block, and
//! the host adds a tile's feature groups in group order and puts every result at its nonzero.

use std::time::Instant;

use rayon::prelude::*;
use upmem::MRAM_HEAP;

use super::abi::{self, CallArgs};
use super::partition::{TileStats, XRows};
use super::{cost, fill_x, tile_of_dpu, PimElement, PimSpmm};
use crate::error::{Error, Result};
use crate::sparse::Dense;
use crate::spmm::Phase;

/// Accumulators per tasklet of the edge slots (two slots of 8 bytes).
const EDGE_ACCS_PER_TASKLET: usize = 4;

impl<T: PimElement> PimSpmm<T> {
    /// SDDMM over `A`'s structure: for each nonzero `(i, j)` of `A`, in its row-by-row order, `<p_i, q_j>` in
    /// the accumulator type. Each DPU sums its feature slice in feature order (integers wrap, as in SpMM); with
    /// several feature groups the slices are added in group order. `p` has a row per row of `A`, `q` a row per
    /// column, both of the same width. The phases are in [`PimSpmm::last_phases`](crate::SpmmEngine::last_phases),
    /// and the call in [`PimSpmm::report`].
    pub fn sddmm(&mut self, p: &Dense<T>, q: &Dense<T>) -> Result<Vec<T::Acc>> {
        if p.rows() != self.nrows {
            return Err(Error::shape("PIM SDDMM: rows of P (rows of A)", self.nrows, p.rows()));
        }
        if q.rows() != self.ncols {
            return Err(Error::shape("PIM SDDMM: rows of Q (columns of A)", self.ncols, q.rows()));
        }
        if p.cols() != q.cols() {
            return Err(Error::shape("PIM SDDMM: columns of P (columns of Q)", q.cols(), p.cols()));
        }
        self.phases.clear();
        let features = q.cols();
        let mut out = vec![T::Acc::default(); self.nnz];
        if features == 0 || self.nnz == 0 {
            return Ok(out);
        }
        let padded = cost::padded_features::<T>(features, self.plan.feature_groups as usize);
        let args = self.sddmm_args(padded)?;
        // Its operands take the place of the values per head: the next SpMM call sends them again.
        if let Some(head_values) = &mut self.head_values {
            head_values.sent_for = None;
        }
        let stats: Vec<TileStats> = self.tiles.iter().map(|tile| tile.stats).collect();
        let predicted = self.model.predict_sddmm::<T>(&self.plan, &stats, self.nnz, features, self.set.nr_dpus());
        let mut phases = Vec::with_capacity(4);
        let mut timed = |name: &'static str, predicted, started: Instant| {
            phases.push(Phase { name: name.into(), wall: started.elapsed(), predicted: Some(predicted) })
        };

        let started = Instant::now();
        self.send_x(q, padded, &args)?;
        self.send_p(p, padded, args.p_offset)?;
        self.set.broadcast("call", 0, &[args])?;
        timed("send P and Q", predicted.send_x, started);

        let started = Instant::now();
        self.set.launch()?;
        let kernel = self.simulated_kernel_time().unwrap_or(predicted.kernel);
        timed("SDDMM kernel", kernel, started);

        let started = Instant::now();
        let nr_dpus = self.set.nr_dpus();
        let mut results = vec![vec![T::Acc::default(); self.values_words]; nr_dpus];
        let mut edges = vec![vec![T::Acc::default(); abi::MAX_TASKLETS * EDGE_ACCS_PER_TASKLET]; nr_dpus];
        self.set.gather_into(MRAM_HEAP, args.out_offset, &mut results)?;
        self.set.gather_into(MRAM_HEAP, args.edges_offset, &mut edges)?;
        timed("gather", predicted.gather, started);

        let started = Instant::now();
        let per_tile = self.sum_groups(results, &edges);
        for (tile, local) in self.tiles.iter().zip(&per_tile) {
            tile.nonzero_ids.scatter_into(local, &mut out);
        }
        timed("assemble", predicted.merge, started);
        self.phases = phases;
        let (cycles, simulated) = self.simulator_figures()?;
        self.report.record_call(features, &self.phases, predicted, cycles, simulated, cost::CallLayout::default());
        Ok(out)
    }

    /// An SDDMM call's MRAM layout after the matrix: Q (X's place), P, the results, the edge slots; checked
    /// against the heap.
    fn sddmm_args(&self, features: usize) -> Result<CallArgs> {
        let size = std::mem::size_of::<T>();
        let max_x_rows = self.tiles.iter().map(|tile| tile.x_rows.len()).max().unwrap_or(0);
        let max_rows = self.tiles.iter().map(|tile| tile.rows.len()).max().unwrap_or(0);
        let x_offset = self.matrix_bytes;
        let p_offset = x_offset + max_x_rows * features * size;
        let out_offset = p_offset + max_rows * features * size;
        let edges_offset = out_offset + self.values_words * 4;
        let end = edges_offset + abi::MAX_TASKLETS * EDGE_ACCS_PER_TASKLET * 4;
        if end > self.heap_bytes {
            return Err(Error::Capacity {
                what: format!(
                    "MRAM per DPU for an SDDMM of {features} padded features under plan {} (matrix {} B, Q {} B, P {} B)",
                    self.plan,
                    self.matrix_bytes,
                    p_offset - x_offset,
                    out_offset - p_offset
                ),
                needed: end as u64,
                limit: self.heap_bytes as u64,
            });
        }
        Ok(CallArgs {
            nr_features: features as u32,
            x_offset: x_offset as u32,
            mode: abi::MODE_SDDMM,
            p_offset: p_offset as u32,
            out_offset: out_offset as u32,
            edges_offset: edges_offset as u32,
            ..CallArgs::default()
        })
    }

    /// Sends each DPU its block's rows of `p`, `padded` features of its group, at `offset`.
    fn send_p(&mut self, p: &Dense<T>, padded: usize, offset: u32) -> Result<()> {
        let groups = self.plan.feature_groups as usize;
        let max_rows = self.tiles.iter().map(|tile| tile.rows.len()).max().unwrap_or(0);
        if max_rows == 0 {
            return Ok(());
        }
        let buffers: Vec<Vec<Vec<T>>> = self
            .tiles
            .par_iter()
            .map(|tile| fill_x(p, &XRows::Range(tile.rows.clone()), groups, padded, max_rows))
            .collect();
        self.push_tile_buffers(&buffers, offset)
    }

    /// Each tile's results in its nonzero order: every DPU's results with its edge slots put back at their
    /// nonzeros, the tile's feature groups added in group order.
    fn sum_groups(&self, mut results: Vec<Vec<T::Acc>>, edges: &[Vec<T::Acc>]) -> Vec<Vec<T::Acc>> {
        let used = self.plan.dpus_used() as usize;
        let nr_tiles = self.tiles.len();
        results.par_iter_mut().enumerate().take(used).for_each(|(dpu, local)| {
            let Some(tile) = tile_of_dpu(dpu, used, nr_tiles) else { return };
            for (tasklet, range) in self.tiles[tile].tasklet_nonzeros.iter().enumerate() {
                let slots = &edges[dpu][tasklet * EDGE_ACCS_PER_TASKLET..];
                if range.is_empty() {
                    continue;
                }
                if range.start % 2 == 1 {
                    local[range.start] = slots[2 * abi::EDGE_FIRST];
                }
                if range.end % 2 == 1 {
                    local[range.end - 1] = slots[2 * abi::EDGE_LAST];
                }
            }
        });
        (0..nr_tiles)
            .into_par_iter()
            .map(|tile| {
                let count = self.tiles[tile].stats.nonzeros;
                let mut sum = results[tile][..count].to_vec();
                for group in 1..self.plan.feature_groups as usize {
                    let part = &results[group * nr_tiles + tile][..count];
                    sum.iter_mut().zip(part).for_each(|(s, &v)| *s = T::acc_add(*s, v));
                }
                sum
            })
            .collect()
    }
}
