//! Attention heads in one call ([`SpmmEngine::set_head_values`](crate::SpmmEngine::set_head_values) on the DPUs):
//! each head's values are a value set, and a DPU's slice of X's features (its feature group) covers whole heads or
//! lies inside one, so it needs only its heads' sets.
//!
//! The sets go to the DPUs at the first call that knows X's width (which decides the slices), after the matrix,
//! `values_words` words each; X and the rest of the call's layout follow them. They stay there for later calls of
//! the same width until new values are set; an SDDMM call, which lays out its operands in the same place, makes
//! the next SpMM call send them again.

use std::time::Instant;

use rayon::prelude::*;
use upmem::MRAM_HEAP;

use super::partition::XRows;
use super::{abi, cost, tile_of_dpu, PimElement, PimSpmm};
use crate::attention::{exp2_table, AttentionScores};
use crate::error::{Error, Result};
use crate::sparse::Dense;
use crate::spmm::Phase;

/// Where each head's values come from.
#[derive(Debug)]
pub(super) enum HeadSource<T> {
    /// `values[k * heads + h]`: nonzero `k`'s value in head `h`.
    Values(Vec<T>),
    /// The scores the kernels compute attention weights from.
    Attention(AttentionScores),
}

/// Values per head, as set, and for which slice width the DPUs hold them.
#[derive(Debug)]
pub(super) struct HeadValues<T> {
    pub(super) source: HeadSource<T>,
    pub(super) heads: usize,
    /// The padded features per DPU the sets on the DPUs were laid out for, when they are there.
    pub(super) sent_for: Option<usize>,
}

impl<T> HeadValues<T> {
    /// Whether the kernels compute the values from attention scores.
    pub(super) fn attention(&self) -> bool {
        matches!(self.source, HeadSource::Attention(_))
    }
}

/// Where a call's values lie on every DPU (the kernel's `head_features`, `values_offset`, `values_stride`), the
/// bytes the sets take before X, and whether the kernels compute them from attention scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ValueSets {
    pub(super) offset: usize,
    pub(super) stride: usize,
    pub(super) set_features: usize,
    pub(super) bytes: usize,
    pub(super) attention: bool,
}

impl ValueSets {
    /// The block's own values (MRAM heap offset 0) for all `padded` features.
    pub(super) fn resident(padded: usize) -> Self {
        ValueSets { offset: 0, stride: 0, set_features: padded, bytes: 0, attention: false }
    }

    /// Value sets in the call's `padded` features.
    pub(super) fn sets(&self, padded: usize) -> usize {
        padded / self.set_features
    }
}

impl<T: PimElement> PimSpmm<T> {
    /// The value sets of a call over `features` columns, `padded` per DPU ([`cost::padded_head_features`]).
    pub(super) fn value_sets(&self, features: usize, padded: usize) -> ValueSets {
        let Some(head_values) = &self.head_values else { return ValueSets::resident(padded) };
        let set_features = cost::set_features(features, padded, head_values.heads);
        if head_values.attention() {
            return ValueSets { set_features, attention: true, ..ValueSets::resident(padded) };
        }
        let stride = self.values_words * 4;
        let sets = padded / set_features;
        ValueSets { offset: self.matrix_bytes, stride, set_features, bytes: sets * stride, attention: false }
    }

    /// Attention weights computed by the kernels from `scores` from now on (one head per score head: the calls'
    /// X has a group of columns per head), until other values are set.
    pub(super) fn set_attention_scores(&mut self, scores: &AttentionScores) -> Result<()> {
        if T::NAME != "f32" {
            return Err(Error::invalid(
                "PIM SpMM attention weights",
                format!("the DPUs compute them in the f32 kernels, not {}: quantize the weights on the host", T::NAME),
            ));
        }
        if (scores.nr_rows(), scores.nr_columns()) != (self.nrows, self.ncols) {
            return Err(Error::shape(
                "PIM SpMM attention scores (rows x columns of A)",
                format!("{} x {}", self.nrows, self.ncols),
                format!("{} x {}", scores.nr_rows(), scores.nr_columns()),
            ));
        }
        if !self.exp2_table_sent {
            self.set.broadcast(abi::ATTENTION_EXP2_SYMBOL, 0, &exp2_table())?;
            self.exp2_table_sent = true;
        }
        let source = HeadSource::Attention(scores.clone());
        self.head_values = Some(HeadValues { source, heads: scores.heads(), sent_for: None });
        self.values_sent = None;
        Ok(())
    }

    /// Sends every DPU what its slice needs of the values per head for a call of `features` columns padded to
    /// `padded`, laid out as `layout` and `args` say, unless it is there already: the sets of values ("send
    /// values") or the attention scores ("send scores"), the call's first phase.
    pub(super) fn send_head_values(
        &mut self,
        features: usize,
        padded: usize,
        layout: &ValueSets,
        args: &abi::CallArgs,
    ) -> Result<()> {
        let Some(head_values) = &self.head_values else { return Ok(()) };
        if head_values.sent_for == Some(padded) {
            return Ok(());
        }
        let started = Instant::now();
        let head = features / head_values.heads;
        let regions = match &head_values.source {
            HeadSource::Values(values) => self.value_regions(values, head_values.heads, head, padded, layout),
            HeadSource::Attention(scores) => self.score_regions(scores, head, padded, layout, args),
        };
        let words = regions.first().map_or(0, Vec::len);
        if words > 0 {
            let empty = vec![0u32; words];
            let used = self.plan.dpus_used() as usize;
            let per_dpu: Vec<&[u32]> = (0..self.set.nr_dpus())
                .map(|dpu| tile_of_dpu(dpu, used, regions.len()).map_or(empty.as_slice(), |id| regions[id].as_slice()))
                .collect();
            let offset = if layout.attention { args.column_scores_offset } else { layout.offset as u32 };
            self.set.push(MRAM_HEAP, offset, &per_dpu)?;
        }
        let name = if layout.attention { "send scores" } else { "send values" };
        let predicted = self.model.load_time(self.set.nr_dpus(), words * 4);
        self.values_sent = Some(Phase { name: name.into(), wall: started.elapsed(), predicted: Some(predicted) });
        if let Some(head_values) = &mut self.head_values {
            head_values.sent_for = Some(padded);
        }
        Ok(())
    }

    /// Per (feature group, tile), in the DPUs' order, the value sets of its heads (zeros past the last head).
    fn value_regions(
        &self,
        values: &[T],
        heads: usize,
        head: usize,
        padded: usize,
        layout: &ValueSets,
    ) -> Vec<Vec<u32>> {
        let (words, sets, nr_tiles) = (self.values_words, layout.sets(padded), self.tiles.len());
        (0..self.plan.feature_groups as usize * nr_tiles)
            .into_par_iter()
            .map(|id| {
                let (group, tile) = (id / nr_tiles, &self.tiles[id % nr_tiles]);
                let first_head = group * padded / head;
                let mut region = vec![0u32; sets * words];
                for (set, part) in region.chunks_mut(words.max(1)).enumerate() {
                    let h = first_head + set;
                    if h < heads {
                        tile.nonzero_ids
                            .pick_into(&mut part[..tile.stats.nonzeros], |k| values[k * heads + h].value_bits());
                    }
                }
                region
            })
            .collect()
    }

    /// Per (feature group, tile), in the DPUs' order, its heads' scores of its X rows, then of its rows, as `args`
    /// lays them out ([`abi::AttentionColumn`], [`abi::AttentionRow`]).
    fn score_regions(
        &self,
        scores: &AttentionScores,
        head: usize,
        padded: usize,
        layout: &ValueSets,
        args: &abi::CallArgs,
    ) -> Vec<Vec<u32>> {
        let sets = layout.sets(padded);
        let (column_words, row_words) = (args.column_scores_stride as usize / 4, args.row_scores_stride as usize / 4);
        let nr_tiles = self.tiles.len();
        (0..self.plan.feature_groups as usize * nr_tiles)
            .into_par_iter()
            .map(|id| {
                let (group, tile) = (id / nr_tiles, &self.tiles[id % nr_tiles]);
                let first_head = group * padded / head;
                let mut region = vec![0u32; sets * (column_words + row_words)];
                let (columns, rows) = region.split_at_mut(sets * column_words);
                for set in 0..sets.min(scores.heads().saturating_sub(first_head)) {
                    let h = first_head + set;
                    let out = &mut columns[set * column_words..(set + 1) * column_words];
                    let mut put = |local: usize, column: usize| {
                        let record = scores.column(column, h);
                        out[2 * local..2 * local + 2].copy_from_slice(&[record.source as u32, record.sloped as u32]);
                    };
                    match &tile.x_rows {
                        XRows::Range(range) => range.clone().enumerate().for_each(|(local, column)| put(local, column)),
                        XRows::List(list) => list.iter().enumerate().for_each(|(local, &c)| put(local, c as usize)),
                    }
                    let out = &mut rows[set * row_words..(set + 1) * row_words];
                    for (local, row) in tile.rows.clone().enumerate() {
                        let record = scores.row(row, h);
                        let words = [record.threshold as u32, record.above as u32, record.below as u32];
                        out[4 * local..4 * local + 3].copy_from_slice(&words);
                    }
                }
                region
            })
            .collect()
    }

    /// The width of a head of a call over `features` columns when it is not a whole number of 8-byte units of
    /// `T` (which the kernels' slices and chunks are made of), with the width it is padded to; `None` otherwise.
    pub(super) fn unaligned_heads(&self, features: usize) -> Option<(usize, usize)> {
        let heads = self.head_values.as_ref()?.heads;
        let unit = 8 / std::mem::size_of::<T>();
        let head = features / heads;
        (heads > 1 && features.is_multiple_of(heads) && !head.is_multiple_of(unit))
            .then(|| (head, head.next_multiple_of(unit)))
    }
}

/// `x`'s columns in groups of `head`, each widened to `padded` with zeros.
pub(super) fn pad_heads<V: Copy + Default + Send + Sync>(x: &Dense<V>, head: usize, padded: usize) -> Result<Dense<V>> {
    let heads = x.cols() / head;
    let mut out = Dense::zeros(x.rows(), heads * padded);
    out.as_mut_slice().par_chunks_mut(heads * padded).zip(x.as_slice().par_chunks(x.cols().max(1))).for_each(
        |(out, row)| {
            for (out, row) in out.chunks_mut(padded).zip(row.chunks(head)) {
                out[..head].copy_from_slice(row);
            }
        },
    );
    Ok(out)
}

/// The first `head` columns of each group of `padded` of `y`: [`pad_heads`] undone.
pub(super) fn unpad_heads<V: Copy + Default + Send + Sync>(
    y: &Dense<V>,
    head: usize,
    padded: usize,
) -> Result<Dense<V>> {
    let heads = y.cols() / padded;
    let values = y
        .as_slice()
        .par_chunks(y.cols().max(1))
        .flat_map_iter(|row| row.chunks(padded).flat_map(|group| group[..head].iter().copied()))
        .collect();
    Dense::from_vec(y.rows(), heads * head, values)
}
