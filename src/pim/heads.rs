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

use super::{cost, tile_of_dpu, PimElement, PimSpmm};
use crate::error::Result;
use crate::sparse::Dense;
use crate::spmm::Phase;

/// Values per head, as set, and for which slice width the DPUs hold them.
#[derive(Debug)]
pub(super) struct HeadValues<T> {
    /// `values[k * heads + h]`: nonzero `k`'s value in head `h`.
    pub(super) values: Vec<T>,
    pub(super) heads: usize,
    /// The padded features per DPU the sets on the DPUs were laid out for, when they are there.
    pub(super) sent_for: Option<usize>,
}

/// Where a call's values lie on every DPU (the kernel's `head_features`, `values_offset`, `values_stride`), and
/// the bytes the sets take before X.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ValueSets {
    pub(super) offset: usize,
    pub(super) stride: usize,
    pub(super) set_features: usize,
    pub(super) bytes: usize,
}

impl ValueSets {
    /// The block's own values (MRAM heap offset 0) for all `padded` features.
    pub(super) fn resident(padded: usize) -> Self {
        ValueSets { offset: 0, stride: 0, set_features: padded, bytes: 0 }
    }
}

impl<T: PimElement> PimSpmm<T> {
    /// The value sets of a call over `features` columns, `padded` per DPU ([`cost::padded_head_features`]).
    pub(super) fn value_sets(&self, features: usize, padded: usize) -> ValueSets {
        let Some(head_values) = &self.head_values else { return ValueSets::resident(padded) };
        let set_features = cost::set_features(features, padded, head_values.heads);
        let stride = self.values_words * 4;
        let sets = padded / set_features;
        ValueSets { offset: self.matrix_bytes, stride, set_features, bytes: sets * stride }
    }

    /// Sends every DPU the value sets of its slice for a call of `features` columns padded to `padded` under
    /// `layout`, unless they are there already; the transfer is the call's first phase, "send values".
    pub(super) fn send_head_values(&mut self, features: usize, padded: usize, layout: &ValueSets) -> Result<()> {
        let Some(head_values) = &self.head_values else { return Ok(()) };
        if head_values.sent_for == Some(padded) {
            return Ok(());
        }
        let started = Instant::now();
        let (heads, words) = (head_values.heads, self.values_words);
        let head = features / heads;
        let sets = padded / layout.set_features;
        let nr_tiles = self.tiles.len();
        // One region per (feature group, tile), in the DPUs' order.
        let regions: Vec<Vec<u32>> = (0..self.plan.feature_groups as usize * nr_tiles)
            .into_par_iter()
            .map(|id| {
                let (group, tile) = (id / nr_tiles, &self.tiles[id % nr_tiles]);
                let first_head = group * padded / head;
                let mut region = vec![0u32; sets * words];
                for (set, part) in region.chunks_mut(words.max(1)).enumerate() {
                    let h = first_head + set;
                    if h < heads {
                        let values = &head_values.values;
                        tile.nonzero_ids
                            .pick_into(&mut part[..tile.stats.nonzeros], |k| values[k * heads + h].value_bits());
                    }
                }
                region
            })
            .collect();
        if layout.bytes > 0 {
            let empty = vec![0u32; sets * words];
            let used = self.plan.dpus_used() as usize;
            let per_dpu: Vec<&[u32]> = (0..self.set.nr_dpus())
                .map(|dpu| tile_of_dpu(dpu, used, regions.len()).map_or(empty.as_slice(), |id| regions[id].as_slice()))
                .collect();
            self.set.push(MRAM_HEAP, layout.offset as u32, &per_dpu)?;
        }
        let predicted = self.model.load_time(self.set.nr_dpus(), layout.bytes);
        self.values_sent =
            Some(Phase { name: "send values".into(), wall: started.elapsed(), predicted: Some(predicted) });
        if let Some(head_values) = &mut self.head_values {
            head_values.sent_for = Some(padded);
        }
        Ok(())
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
