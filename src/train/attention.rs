//! `GATConv`'s forward pass with what its backward pass needs kept, and the backward pass, as PyTorch's autograd
//! computes them.
//!
//! Per head `k` (`C` features), with `h = x W^T`, the scores `s_src,j = a_src . h_j` and `s_dst,i = a_dst . h_i`,
//! `z_ij = s_dst,i + s_src,j`, `alpha = softmax_row(LeakyReLU(z))` and `out_i = sum_j alpha_ij h_j`, the
//! gradients from `d out` are:
//! - `dh += M_alpha^T d out` (the transposed aggregation with the head's attention values, on the engine);
//! - `d alpha_ij = <d out_i, h_j>` (SDDMM over the structure, on the same engine);
//! - through the softmax `de_ij = alpha_ij (d alpha_ij - sum_j' alpha_ij' d alpha_ij')` and the LeakyReLU
//!   `dz = de` where `z > 0`, else `slope de`;
//! - `d s_dst,i = sum_j dz_ij`, `d s_src,j = sum_i dz_ij`; `d a_src = sum_j d s_src,j h_j` (and `a_dst` alike),
//!   `dh_j += d s_src,j a_src + d s_dst,j a_dst`;
//! - `dW = dh^T x`, `dx = dh W`. The maximum PyG's softmax takes off is detached, and its `1e-16` changes
//!   nothing at `f32` precision.
//!
//! On a rank of a distributed run, `h` is extended with the halo's rows before the scores (the sources of its
//! rows' edges), and `dh`'s halo rows go back to their owners before `dW` and `dx`; the parameters' gradients
//! are summed over the ranks by the trainer.

use rayon::prelude::*;

use super::backprop::LayerGradients;
use super::ops::column_sums;
use super::propagate::{Propagator, Stage};
use crate::error::Result;
use crate::gnn::dense::add_row;
use crate::gnn::GatConv;
use crate::matmul::{matmul, Op};
use crate::sparse::{Csr, Dense};

/// What [`forward`] keeps for [`backward`].
#[derive(Debug)]
pub(crate) struct AttentionCache {
    /// `x W^T`, `nodes x heads * C` (on a rank, its own rows and then its halo's).
    h: Dense<f32>,
    /// The scores as a source (of `h`'s rows) and as a target (of the aggregation's rows), each `x heads`.
    scores_src: Vec<f32>,
    scores_dst: Vec<f32>,
    /// Per nonzero and head, the attention values.
    alpha: Vec<f32>,
}

/// The layer's output for `x` (before the activation between layers), as [`GatConv::forward`] computes it.
pub(crate) fn forward(
    conv: &GatConv,
    x: &Dense<f32>,
    propagator: &mut Propagator,
) -> Result<(Dense<f32>, AttentionCache)> {
    let h = propagator.dense(|| conv.lin().transform(x))?;
    // On a rank, the scores of its rows' remote sources need their rows.
    let h = propagator.extend_with_halo(&h)?.unwrap_or(h);
    let (scores_src, scores_dst) = propagator.timed(Stage::Attention, || Ok(conv.scores(&h, x.rows())))?;
    let alpha = propagator.with_structure(|structure| conv.attention_values(structure, &scores_src, &scores_dst))?;
    let aggregated = propagator.aggregate_heads(&alpha, conv.heads(), &h)?;
    let mut y = propagator.dense(|| conv.combine_heads(aggregated))?;
    if let Some(bias) = conv.bias() {
        propagator.dense(|| {
            add_row(&mut y, bias);
            Ok(())
        })?;
    }
    Ok((y, AttentionCache { h, scores_src, scores_dst, alpha }))
}

/// The gradients of `lin.weight`, `att_src`, `att_dst` and the bias (when there is one), in
/// [`Layer::parameters`](crate::gnn::Layer::parameters) order, and the input's gradient when `input_gradient`.
pub(crate) fn backward(
    conv: &GatConv,
    cache: AttentionCache,
    x: &Dense<f32>,
    dy: &Dense<f32>,
    input_gradient: bool,
    propagator: &mut Propagator,
) -> Result<LayerGradients> {
    let AttentionCache { h, scores_src, scores_dst, alpha } = cache;
    let (heads, per_head) = (conv.heads(), conv.head_features());
    let bias = propagator.dense(|| Ok(conv.bias().map(|_| column_sums(dy))))?;

    // Through the aggregation: dh from M_alpha^T d out for all heads in one call, and d alpha by SDDMM, head by
    // head.
    let dout = propagator.dense(|| heads_output_gradient(conv, dy))?;
    let mut dh = propagator.aggregate_transposed_heads(&alpha, heads, &dout)?;
    let mut dalpha = vec![0.0f32; alpha.len()];
    for head in 0..heads {
        let (dout, h_head) =
            propagator.dense(|| Ok((conv.head_columns(&dout, head)?, conv.head_columns(&h, head)?)))?;
        let scores = propagator.sddmm(&dout, &h_head)?;
        propagator.dense(|| {
            dalpha.par_chunks_mut(heads).zip(scores).for_each(|(dalpha, score)| dalpha[head] = score);
            Ok(())
        })?;
    }

    // Through the softmax, the LeakyReLU and the scores.
    let slope = conv.negative_slope();
    let (ds_src, ds_dst) = propagator.with_structure(|structure| {
        let dz = score_gradients(structure, &alpha, &dalpha, &scores_src, &scores_dst, heads, slope);
        Ok(scatter_scores(structure, &dz, heads))
    })?;
    let (att_src, att_dst) = conv.attention();
    let (d_att_src, d_att_dst) = propagator.timed(Stage::Attention, || {
        let d_att_src = attention_gradient(&h, &ds_src, heads, per_head);
        let d_att_dst = attention_gradient(&h, &ds_dst, heads, per_head);
        dh.as_mut_slice().par_chunks_mut(heads * per_head).enumerate().for_each(|(node, row)| {
            for (at, d) in row.iter_mut().enumerate() {
                let head = node * heads + at / per_head;
                // Only the aggregation's rows (on a rank, its own nodes) are targets.
                let as_target = ds_dst.get(head).map_or(0.0, |ds| ds * att_dst[at]);
                *d += ds_src[head] * att_src[at] + as_target;
            }
        });
        Ok((d_att_src, d_att_dst))
    })?;
    // On a rank, the halo's rows of dh go back to their owners.
    let dh = propagator.return_halo(dh)?;

    let (weight, dx) = propagator.dense(|| {
        let weight = matmul(&dh, Op::Transposed, x, Op::Plain)?;
        let dx = input_gradient.then(|| matmul(&dh, Op::Plain, conv.lin().weight(), Op::Plain)).transpose()?;
        Ok((weight, dx))
    })?;
    let mut parameters = vec![weight.into_vec(), d_att_src, d_att_dst];
    parameters.extend(bias);
    Ok(LayerGradients { parameters, input: dx })
}

/// Every head's share of the output's gradient, `nodes x heads * C`: the gradient itself when the heads are
/// concatenated, else the whole gradient over the heads (their mean) once per head.
fn heads_output_gradient(conv: &GatConv, dy: &Dense<f32>) -> Result<Dense<f32>> {
    if conv.concat() || conv.heads() == 1 {
        return Ok(dy.clone());
    }
    let (heads, scale) = (conv.heads(), conv.head_scale());
    let values = dy
        .as_slice()
        .par_chunks(dy.cols().max(1))
        .flat_map_iter(|row| (0..heads).flat_map(move |_| row.iter().map(move |&d| d * scale)))
        .collect();
    Dense::from_vec(dy.rows(), heads * dy.cols(), values)
}

/// `values` (`heads` per nonzero) cut into each row's part, with the row.
fn split_by_rows<'a>(row_ptr: &[u32], heads: usize, values: &'a mut [f32]) -> Vec<(usize, &'a mut [f32])> {
    let mut rows = Vec::with_capacity(row_ptr.len().saturating_sub(1));
    let mut rest = values;
    for (row, span) in row_ptr.windows(2).enumerate() {
        let (part, tail) = std::mem::take(&mut rest).split_at_mut((span[1] - span[0]) as usize * heads);
        rows.push((row, part));
        rest = tail;
    }
    rows
}

/// Per nonzero and head, the gradient of `z_ij = s_dst,i + s_src,j` from that of the attention values, back
/// through the row's softmax and the LeakyReLU.
fn score_gradients(
    structure: &Csr<f32>,
    alpha: &[f32],
    dalpha: &[f32],
    src: &[f32],
    dst: &[f32],
    heads: usize,
    slope: f32,
) -> Vec<f32> {
    let mut dz = dalpha.to_vec();
    let row_ptr = structure.row_ptr();
    split_by_rows(row_ptr, heads, &mut dz).into_par_iter().for_each(|(row, dz)| {
        let start = row_ptr[row] as usize * heads;
        let alpha = &alpha[start..start + dz.len()];
        let columns = structure.row(row).0;
        for head in 0..heads {
            let weighted: f32 = (0..columns.len()).map(|k| alpha[k * heads + head] * dz[k * heads + head]).sum();
            for (k, &column) in columns.iter().enumerate() {
                let at = k * heads + head;
                let de = alpha[at] * (dz[at] - weighted);
                let z = dst[row * heads + head] + src[column as usize * heads + head];
                dz[at] = if z > 0.0 { de } else { slope * de };
            }
        }
    });
    dz
}

/// The scores' gradients from `dz`: `d s_src,j` summed over the nonzeros of column `j`, `d s_dst,i` over those
/// of row `i` (each `nodes x heads`).
fn scatter_scores(structure: &Csr<f32>, dz: &[f32], heads: usize) -> (Vec<f32>, Vec<f32>) {
    let row_ptr = structure.row_ptr();
    let ds_dst: Vec<f32> = (0..structure.nrows())
        .into_par_iter()
        .flat_map_iter(|row| {
            let span = &dz[row_ptr[row] as usize * heads..row_ptr[row + 1] as usize * heads];
            (0..heads).map(move |head| span.iter().skip(head).step_by(heads).sum::<f32>())
        })
        .collect();
    // Columns scatter: each head's sums in nonzero order, the heads in parallel.
    let per_head: Vec<Vec<f32>> = (0..heads)
        .into_par_iter()
        .map(|head| {
            let mut sums = vec![0.0f32; structure.ncols()];
            for (k, &column) in structure.col_idx().iter().enumerate() {
                sums[column as usize] += dz[k * heads + head];
            }
            sums
        })
        .collect();
    let ds_src = (0..structure.ncols() * heads).map(|at| per_head[at % heads][at / heads]).collect();
    (ds_src, ds_dst)
}

/// `d a[k, c] = sum_node ds[node, k] h[node, k * C + c]` over the nodes `ds` has (`h`'s first rows),
/// accumulated in f64 by fixed blocks of nodes summed in order, so the result does not depend on how the blocks
/// were scheduled.
fn attention_gradient(h: &Dense<f32>, ds: &[f32], heads: usize, per_head: usize) -> Vec<f32> {
    const NODES_PER_BLOCK: usize = 1024;
    let width = heads * per_head;
    let nodes = ds.len() / heads;
    let blocks: Vec<Vec<f64>> = h.as_slice()[..nodes * width]
        .par_chunks(width * NODES_PER_BLOCK)
        .enumerate()
        .map(|(block, rows)| {
            let mut sums = vec![0.0f64; width];
            for (offset, row) in rows.chunks_exact(width).enumerate() {
                let node = block * NODES_PER_BLOCK + offset;
                for (at, (&value, sum)) in row.iter().zip(sums.iter_mut()).enumerate() {
                    *sum += f64::from(ds[node * heads + at / per_head]) * f64::from(value);
                }
            }
            sums
        })
        .collect();
    let mut total = vec![0.0f64; width];
    for block in blocks {
        total.iter_mut().zip(block).for_each(|(t, b)| *t += b);
    }
    total.into_iter().map(|sum| sum as f32).collect()
}
