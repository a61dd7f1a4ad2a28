//! `GATConv`, as PyTorch Geometric computes it: per head `k`, `h = x W^T` split into heads of `C` features,
//! the scores `e_ij = LeakyReLU(a_dst,k . h_i,k + a_src,k . h_j,k)` over each target `i`'s incoming edges (its
//! self-loop included), their softmax over the row, and `y_i,k = sum_j alpha_ij,k h_j,k`; the heads
//! concatenated or averaged, then the bias.
//!
//! The attention changes the aggregation matrix's values at every call while its structure stays, so the
//! aggregation runs through [`Aggregator::aggregate_heads`] on the resident structure: one call for all heads,
//! each head's features multiplied with its own values (on the DPUs, each feature group gets only its heads'
//! values). The per-node scores run on the host; the softmax runs on the host in `f32` as PyG's, or where the
//! aggregation runs from fixed-point scores ([`crate::attention`]), as [`Aggregator::attention_site`] says.

use std::time::Instant;

use rayon::prelude::*;

use super::aggregate::Aggregator;
use super::dense::{add_row_to, Activation, Linear};
use crate::attention::{self, AttentionScores, AttentionSite};
use crate::error::{Error, Result};
use crate::sparse::{Csr, Dense};
use crate::spmm::Phase;

/// LeakyReLU's slope below 0 in PyG's `GATConv` by default.
pub const DEFAULT_NEGATIVE_SLOPE: f32 = 0.2;

/// `GATConv` (PyG's defaults: self-loops added, LeakyReLU slope 0.2, one shared weight for sources and targets).
#[derive(Clone, Debug, PartialEq)]
pub struct GatConv {
    lin: Linear,
    att_src: Vec<f32>,
    att_dst: Vec<f32>,
    bias: Option<Vec<f32>>,
    heads: usize,
    concat: bool,
    negative_slope: f32,
}

impl GatConv {
    /// From PyG's tensors: `lin` (`lin.weight`, `[heads * out, in]`, no bias), `att_src` and `att_dst`
    /// (`[1, heads, out]`, here flat), the layer's `bias` (`[heads * out]` when `concat`, else `[out]`).
    pub fn new(
        lin: Linear,
        att_src: Vec<f32>,
        att_dst: Vec<f32>,
        bias: Option<Vec<f32>>,
        heads: usize,
        concat: bool,
        negative_slope: f32,
    ) -> Result<Self> {
        if heads == 0 || !lin.out_features().is_multiple_of(heads) {
            return Err(Error::shape(
                "GATConv lin.weight rows (heads x out)",
                format!("a multiple of the {heads} head(s)"),
                lin.out_features(),
            ));
        }
        if lin.bias().is_some() {
            return Err(Error::invalid("GATConv lin", "has a bias: PyG's adds the layer's bias after aggregation"));
        }
        for (name, att) in [("att_src", &att_src), ("att_dst", &att_dst)] {
            if att.len() != lin.out_features() {
                return Err(Error::shape(format!("GATConv {name} (heads x out)"), lin.out_features(), att.len()));
            }
        }
        let conv = GatConv { lin, att_src, att_dst, bias, heads, concat, negative_slope };
        if let Some(bias) = &conv.bias {
            if bias.len() != conv.out_features() {
                return Err(Error::shape("GATConv bias", conv.out_features(), bias.len()));
            }
        }
        if !negative_slope.is_finite() {
            return Err(Error::invalid("GATConv negative_slope", format!("{negative_slope} is not finite")));
        }
        Ok(conv)
    }

    /// The shared weight (`lin.weight`).
    pub fn lin(&self) -> &Linear {
        &self.lin
    }

    /// `lin`'s weight, `att_src`, `att_dst` and the bias, writable, in the order of
    /// [`Layer::parameters`](super::Layer::parameters).
    pub(crate) fn parameters_mut(&mut self) -> Vec<&mut [f32]> {
        let (weight, _) = self.lin.parameters_mut();
        let mut parameters = vec![weight, self.att_src.as_mut_slice(), self.att_dst.as_mut_slice()];
        parameters.extend(self.bias.as_deref_mut());
        parameters
    }

    /// `att_src` and `att_dst`, flat (`heads * out`).
    pub fn attention(&self) -> (&[f32], &[f32]) {
        (&self.att_src, &self.att_dst)
    }

    /// The bias added after the heads are combined.
    pub fn bias(&self) -> Option<&[f32]> {
        self.bias.as_deref()
    }

    /// Attention heads.
    pub fn heads(&self) -> usize {
        self.heads
    }

    /// Whether the heads are concatenated (else averaged).
    pub fn concat(&self) -> bool {
        self.concat
    }

    /// LeakyReLU's slope below 0.
    pub fn negative_slope(&self) -> f32 {
        self.negative_slope
    }

    /// Features per head.
    pub fn head_features(&self) -> usize {
        self.lin.out_features() / self.heads
    }

    /// Input width.
    pub fn in_features(&self) -> usize {
        self.lin.in_features()
    }

    /// Output width: `heads * out` concatenated, `out` averaged.
    pub fn out_features(&self) -> usize {
        if self.concat {
            self.lin.out_features()
        } else {
            self.head_features()
        }
    }

    /// The layer's output for `x`, aggregating through `aggregator` (which holds the graph's structure with one
    /// self-loop per node, [`Aggregation::Attention`](super::Aggregation::Attention)), then `activation` when
    /// given; each step's time is appended to `phases`.
    pub fn forward(
        &self,
        x: &Dense<f32>,
        aggregator: &mut Aggregator,
        phases: &mut Vec<Phase>,
        activation: Option<Activation>,
    ) -> Result<Dense<f32>> {
        let timed = |phases: &mut Vec<Phase>, name: &'static str, started: Instant| {
            phases.push(Phase { name: name.into(), wall: started.elapsed(), predicted: None });
        };
        // Refused before any work when the aggregator cannot take values per call.
        aggregator.structure()?;
        let started = Instant::now();
        let h = self.lin.transform(x)?;
        timed(phases, "transform (GEMM)", started);
        // On a rank, the scores of its rows' remote sources need their rows.
        let h = aggregator.extend_with_halo(&h, phases)?;

        let started = Instant::now();
        let (scores_src, scores_dst) = self.scores(&h, x.rows());
        timed(phases, "attention scores", started);

        let y = match aggregator.attention_site(self.heads, self.head_features()) {
            AttentionSite::Engine => {
                let started = Instant::now();
                let scored = AttentionScores::new(
                    aggregator.structure()?,
                    &scores_src,
                    &scores_dst,
                    self.heads,
                    self.negative_slope,
                );
                timed(phases, "row maxima, fixed-point scores", started);
                match scored {
                    Ok(scores) => Some(aggregator.aggregate_attention(&scores, &h)?),
                    // Scores beyond the fixed point's range: the host computes the weights, unless asked not to.
                    Err(Error::Capacity { .. }) if aggregator.attention_option() == AttentionSite::Auto => None,
                    Err(error) => return Err(error),
                }
            }
            _ => None,
        };
        let y = match y {
            Some(y) => y,
            None => {
                let started = Instant::now();
                let alpha = self.attention_values(aggregator.structure()?, &scores_src, &scores_dst)?;
                timed(phases, "softmax", started);
                aggregator.aggregate_heads(&alpha, self.heads, &h)?
            }
        };
        phases.extend_from_slice(aggregator.last_phases());
        let started = Instant::now();
        let mut out = self.combine_heads(y)?;
        if self.heads > 1 {
            timed(phases, "combine heads", started);
        }
        let started = Instant::now();
        if let Some(bias) = &self.bias {
            add_row_to(out.as_mut_slice(), bias);
        }
        if let Some(activation) = activation {
            activation.apply(out.as_mut_slice());
        }
        timed(phases, "bias, activation", started);
        Ok(out)
    }

    /// Per node and head, the scores of `h = x W^T` as a source and as a target (`a_src . h_j,k` and
    /// `a_dst . h_i,k`, `nodes x heads` and `targets x heads`, row-major): the aggregation's rows are the first
    /// `targets` of its columns (all of them on one server; on a rank, its own nodes before the halo's).
    pub(crate) fn scores(&self, h: &Dense<f32>, targets: usize) -> (Vec<f32>, Vec<f32>) {
        let width = h.cols();
        let target_rows = &h.as_slice()[..targets.min(h.rows()) * width];
        (self.node_scores(h.as_slice(), &self.att_src), self.node_scores(target_rows, &self.att_dst))
    }

    /// Head `head`'s columns of `h` (`nodes x heads * out`).
    pub(crate) fn head_columns(&self, h: &Dense<f32>, head: usize) -> Result<Dense<f32>> {
        let per_head = self.head_features();
        columns_of(h, head * per_head..(head + 1) * per_head)
    }

    /// The layer's output from every head's aggregation `y` (`nodes x heads * out`): `y` itself when the heads
    /// are concatenated, else their mean (`y_k / heads` summed in head order).
    pub(crate) fn combine_heads(&self, y: Dense<f32>) -> Result<Dense<f32>> {
        if self.concat || self.heads == 1 {
            return Ok(y);
        }
        let (per_head, scale) = (self.head_features(), self.head_scale());
        let mean = y
            .as_slice()
            .par_chunks(self.heads * per_head)
            .flat_map_iter(|row| {
                (0..per_head).map(move |c| (0..self.heads).fold(0.0f32, |sum, k| sum + scale * row[k * per_head + c]))
            })
            .collect();
        Dense::from_vec(y.rows(), per_head, mean)
    }

    /// What each head's aggregation is scaled by in the output: 1 concatenated, `1 / heads` averaged.
    pub(crate) fn head_scale(&self) -> f32 {
        if self.concat {
            1.0
        } else {
            1.0 / self.heads as f32
        }
    }

    /// Per node and head, `att . h_node,head` (`nodes x heads`, row-major) for `h`'s rows (`heads * out` wide).
    fn node_scores(&self, h: &[f32], att: &[f32]) -> Vec<f32> {
        let (heads, per_head) = (self.heads, self.head_features());
        let mut scores = vec![0.0f32; h.len() / (heads * per_head).max(1) * heads];
        scores.par_chunks_mut(heads).zip(h.par_chunks(heads * per_head)).for_each(|(scores, row)| {
            for (head, score) in scores.iter_mut().enumerate() {
                let range = head * per_head..(head + 1) * per_head;
                *score = row[range.clone()].iter().zip(&att[range]).map(|(a, b)| a * b).sum();
            }
        });
        scores
    }

    /// Per nonzero of `structure` (row = target `i`, column = source `j`) and head, in nonzero order:
    /// `softmax_j(LeakyReLU(dst_i + src_j))` over the row, as PyG computes it ([`attention::softmax`]).
    pub(crate) fn attention_values(&self, structure: &Csr<f32>, src: &[f32], dst: &[f32]) -> Result<Vec<f32>> {
        attention::softmax(structure, src, dst, self.heads, self.negative_slope)
    }
}

/// Columns `columns` of `matrix`, as a matrix of their own.
fn columns_of(matrix: &Dense<f32>, columns: std::ops::Range<usize>) -> Result<Dense<f32>> {
    let width = matrix.cols();
    let values =
        matrix.as_slice().par_chunks(width).flat_map_iter(|row| row[columns.clone()].iter().copied()).collect();
    Dense::from_vec(matrix.rows(), columns.len(), values)
}
