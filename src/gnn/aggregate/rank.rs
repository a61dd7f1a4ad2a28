//! A rank's aggregator whose halo exchange overlaps aggregation: the block's interior rows (those that reference
//! none of the halo, first in a [`RankBlock`]) aggregate on an engine of their own, over the rank's own feature
//! rows, while the halo's rows are on their way; the other rows then aggregate over both on a second engine
//! (on the CPU: see [`Aggregator::for_rank`]).

use std::time::{Duration, Instant};

use super::Aggregator;
use crate::distributed::{HaloExchange, RankBlock};
use crate::error::{Error, Result};
use crate::gnn::norm::Aggregation;
use crate::gnn::Dtype;
use crate::pim::placement::{Backend, EngineOptions};
use crate::sparse::{Csr, Dense};
use crate::spmm::{Phase, RowStep, StreamedStage};

/// What the names of the interior engine's phases start with.
pub const INTERIOR_PHASE: &str = "interior rows: ";

impl Aggregator {
    /// A rank's aggregator for its `block` of `aggregation`'s matrix, in `dtype`, the halo's rows brought by
    /// `exchange`. Each call gives the rank's own feature rows, as to [`Aggregator::with_halo`]'s.
    ///
    /// On the CPU, when the block has interior rows and others and its values are fixed (attention's scores
    /// need the halo's rows first), the interior rows get an engine of their own over the rank's own columns,
    /// which aggregates them during the exchange ([`HaloExchange::extend_during`]), and the others an engine
    /// over all the block's columns: both use every core, so the split costs nothing and hides the exchange
    /// behind the interior rows. The interior engine's phases are named `interior rows: <phase>`, and the
    /// phase `halo exchange` is then the time the exchange added after the interior rows were done.
    ///
    /// Elsewhere it is [`Aggregator::with_halo`]'s aggregator: on PIM the two parts would need DPU sets of
    /// their own, and the set holding the other rows would wait for the exchange while the interior's idles
    /// after it (on the default graph over 4 ranks of 256 simulated DPUs: 2,094 ms predicted split, against
    /// 1,146 ms with one engine per rank, for an exchange of 6 ms).
    pub fn for_rank(
        block: &RankBlock,
        aggregation: Aggregation,
        dtype: Dtype,
        options: &EngineOptions,
        exchange: Box<dyn HaloExchange>,
    ) -> Result<Self> {
        let (rows, local) = (block.matrix.nrows(), block.nodes.len());
        let interior_rows = block.interior_rows();
        let split = options.backend == Backend::Cpu
            && aggregation != Aggregation::Attention
            && (1..rows).contains(&interior_rows);
        if !split {
            return Self::for_aggregation(aggregation, block.matrix.clone(), dtype, options)?.with_halo(exchange);
        }
        // The first rows, whose columns are all the rank's own.
        let nonzeros = block.matrix.row_ptr()[interior_rows] as usize;
        let interior_matrix = Csr::new(
            interior_rows,
            local,
            block.matrix.row_ptr()[..=interior_rows].to_vec(),
            block.matrix.col_idx()[..nonzeros].to_vec(),
            block.matrix.values()[..nonzeros].to_vec(),
        )?;
        let interior = Self::new(interior_matrix, dtype, options)?;
        let mut aggregator = Self::new(block.matrix.row_range(interior_rows..rows), dtype, options)?;
        // It answers for the whole block: every row, and every column the exchange extends a call's rows to.
        aggregator.shape = (rows, block.matrix.ncols());
        let mut aggregator = aggregator.with_halo(exchange)?;
        aggregator.described.plan = format!(
            "interior rows ({interior_rows} of {rows}, during the halo exchange): {}; other rows: {}",
            interior.plan(),
            aggregator.plan()
        );
        aggregator.interior = Some(Box::new(interior));
        Ok(aggregator)
    }

    /// Runs `call` on the interior rows' aggregator with `x` (the rank's own rows) while the exchange brings the
    /// halo's; returns its result and `x` extended. The interior's phases come first in
    /// [`Aggregator::last_phases`], renamed, then `halo exchange` with the wall time the exchange added.
    fn interior_during_exchange<T>(
        &mut self,
        x: &Dense<f32>,
        mut call: impl FnMut(&mut Aggregator, &Dense<f32>) -> Result<T>,
    ) -> Result<(T, Dense<f32>)> {
        let (Some(interior), Some(exchange)) = (&mut self.interior, &mut self.halo) else {
            return Err(Error::invalid("split aggregation", "the aggregator is not a rank's split one"));
        };
        if x.rows() != exchange.local_rows() {
            let what = "aggregation: rows of the features (the rank's nodes)";
            return Err(Error::shape(what, exchange.local_rows(), x.rows()));
        }
        let started = Instant::now();
        let (mut result, mut working) = (None, Duration::ZERO);
        let extended = exchange.extend_during(x, &mut || {
            let started = Instant::now();
            let outcome = call(interior, x).map(|value| result = Some(value));
            working = started.elapsed();
            outcome
        })?;
        let result = result.ok_or_else(|| Error::invalid("split aggregation", "the exchange ran no interior rows"))?;
        self.phases.extend(
            interior
                .last_phases()
                .iter()
                .map(|phase| Phase { name: format!("{INTERIOR_PHASE}{}", phase.name).into(), ..phase.clone() }),
        );
        let added = started.elapsed().saturating_sub(working);
        self.phases.push(Phase { name: "halo exchange".into(), wall: added, predicted: None });
        if (extended.rows(), extended.cols()) != (self.shape.1, x.cols()) {
            return Err(Error::shape(
                "halo exchange: the rank's rows and its halo's",
                format!("{} x {}", self.shape.1, x.cols()),
                format!("{} x {}", extended.rows(), extended.cols()),
            ));
        }
        Ok((result, extended))
    }

    /// [`Aggregator::aggregate`] of a split rank's aggregator: the interior rows during the exchange, the others
    /// after it, stacked (a phase `stack rows`).
    pub(super) fn aggregate_split(&mut self, x: &Dense<f32>) -> Result<Dense<f32>> {
        let (interior, extended) = self.interior_during_exchange(x, |interior, x| interior.aggregate(x))?;
        let others = self.aggregate_columns(&extended)?;
        let started = Instant::now();
        let (rows, width) = (interior.rows() + others.rows(), others.cols());
        let mut values = interior.into_vec();
        values.extend_from_slice(others.as_slice());
        self.phases.push(Phase { name: "stack rows".into(), wall: started.elapsed(), predicted: None });
        Dense::from_vec(rows, width, values)
    }

    /// [`Aggregator::aggregate_streamed`] of a split rank's aggregator: each part streams its rows through
    /// `step` (told their rows in the whole block), the interior's into the first rows of `outs` (their memory,
    /// cut to those rows), the others' into outputs of their own, appended after (a phase `stack rows`).
    pub(super) fn aggregate_split_streamed(
        &mut self,
        x: &Dense<f32>,
        outs: &mut [Dense<f32>],
        step: &RowStep<'_, f32>,
    ) -> Result<StreamedStage> {
        crate::spmm::check_streamed_outputs(self.shape.0, outs)?;
        let interior_rows = self.interior.as_ref().map_or(0, |interior| interior.shape.0);
        let mut interior_outs = outs
            .iter_mut()
            .map(|out| {
                let cols = out.cols();
                let mut values = std::mem::replace(out, Dense::zeros(0, cols)).into_vec();
                values.truncate(interior_rows * cols);
                Dense::from_vec(interior_rows, cols, values)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut other_outs: Vec<Dense<f32>> =
            outs.iter().map(|out| Dense::zeros(self.shape.0 - interior_rows, out.cols())).collect();
        let (interior, extended) =
            self.interior_during_exchange(x, |interior, x| interior.aggregate_streamed(x, &mut interior_outs, step))?;
        let shifted = |rows: std::ops::Range<usize>, y: &mut [f32], outs: &mut [&mut [f32]]| {
            step(rows.start + interior_rows..rows.end + interior_rows, y, outs)
        };
        let others = self.aggregate_columns_streamed(&extended, &mut other_outs, &shifted)?;
        let started = Instant::now();
        for ((out, interior), others) in outs.iter_mut().zip(interior_outs).zip(other_outs) {
            let cols = others.cols();
            let mut values = interior.into_vec();
            values.extend_from_slice(others.as_slice());
            *out = Dense::from_vec(self.shape.0, cols, values)?;
        }
        self.phases.push(Phase { name: "stack rows".into(), wall: started.elapsed(), predicted: None });
        let merge_predicted = match (interior.merge_predicted, others.merge_predicted) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or_default() + b.unwrap_or_default()),
        };
        Ok(StreamedStage {
            wall: interior.wall + others.wall,
            merge_predicted,
            chunks: interior.chunks.into_iter().chain(others.chunks).collect(),
        })
    }
}
