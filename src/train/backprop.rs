//! Each layer's forward pass with what its backward pass needs kept, and the backward pass: the gradients of
//! its parameters and of its input, as PyTorch's autograd computes them.
//!
//! Aggregation is linear, `Y = M X`, so its input's gradient is `M^T dY`, run by the [`Propagator`] on the
//! same backend as the forward aggregation (GCN's normalisation and SAGE's mean are inside `M`, so they
//! enter the backward pass through `M^T` exactly as autograd applies them). A layer that transforms before
//! aggregating (`M (X W^T)`) still needs `M^T dY` for its weight's gradient; one that aggregates first needs
//! it only for its input's, which the first layer does not need.

use super::ops::{column_sums, relu_backward};
use super::propagate::Propagator;
use crate::error::Result;
use crate::gnn::dense::{add_row, add_scaled, relu};
use crate::gnn::{Layer, Linear, Order};
use crate::matmul::{matmul, matmul_into, Op};
use crate::sparse::Dense;

/// The gradient of one [`Linear`]'s weight and bias.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LinearGradient {
    pub weight: Dense<f32>,
    pub bias: Option<Vec<f32>>,
}

/// What the forward pass of a layer's aggregated linear map keeps.
#[derive(Debug)]
enum AggregatedCache {
    /// `M (X W^T)`: the layer's input suffices.
    TransformFirst,
    /// `(M X) W^T`: the aggregated features the weight multiplied.
    AggregateFirst { aggregated: Dense<f32> },
}

/// What a layer's forward pass keeps for its backward pass (besides its input, which the caller keeps).
#[derive(Debug)]
pub(crate) struct LayerCache {
    first: AggregatedCache,
    /// GIN: the ReLU outputs that fed `nn`'s second and later linear maps.
    hidden: Vec<Dense<f32>>,
}

/// `lin(M x + self_weight x)`, in the order the layer runs in.
fn aggregated_forward(
    lin: &Linear,
    self_weight: Option<f32>,
    x: &Dense<f32>,
    propagator: &mut Propagator,
) -> Result<(Dense<f32>, AggregatedCache)> {
    match Order::for_widths(lin.in_features(), lin.out_features()) {
        Order::TransformFirst => {
            let h = propagator.dense(|| lin.transform(x))?;
            let mut y = propagator.aggregate(&h)?;
            propagator.dense(|| {
                if let Some(weight) = self_weight {
                    add_scaled(&mut y, weight, &h)?;
                }
                if let Some(bias) = lin.bias() {
                    add_row(&mut y, bias);
                }
                Ok(())
            })?;
            Ok((y, AggregatedCache::TransformFirst))
        }
        Order::AggregateFirst => {
            let mut aggregated = propagator.aggregate(x)?;
            let y = propagator.dense(|| {
                if let Some(weight) = self_weight {
                    add_scaled(&mut aggregated, weight, x)?;
                }
                lin.forward(&aggregated)
            })?;
            Ok((y, AggregatedCache::AggregateFirst { aggregated }))
        }
    }
}

/// The gradients of [`aggregated_forward`]: its map's, and its input's when `input_gradient`.
fn aggregated_backward(
    lin: &Linear,
    self_weight: Option<f32>,
    cache: AggregatedCache,
    x: &Dense<f32>,
    dy: &Dense<f32>,
    input_gradient: bool,
    propagator: &mut Propagator,
) -> Result<(LinearGradient, Option<Dense<f32>>)> {
    let bias = propagator.dense(|| Ok(lin.bias().map(|_| column_sums(dy))))?;
    match cache {
        AggregatedCache::TransformFirst => {
            let mut dh = propagator.aggregate_transposed(dy)?;
            propagator.dense(|| {
                if let Some(weight) = self_weight {
                    add_scaled(&mut dh, weight, dy)?;
                }
                let weight = matmul(&dh, Op::Transposed, x, Op::Plain)?;
                let dx = input_gradient.then(|| matmul(&dh, Op::Plain, lin.weight(), Op::Plain)).transpose()?;
                Ok((LinearGradient { weight, bias }, dx))
            })
        }
        AggregatedCache::AggregateFirst { aggregated } => {
            let weight = propagator.dense(|| matmul(dy, Op::Transposed, &aggregated, Op::Plain))?;
            drop(aggregated);
            if !input_gradient {
                return Ok((LinearGradient { weight, bias }, None));
            }
            let dm = propagator.dense(|| matmul(dy, Op::Plain, lin.weight(), Op::Plain))?;
            let mut dx = propagator.aggregate_transposed(&dm)?;
            if let Some(weight) = self_weight {
                propagator.dense(|| add_scaled(&mut dx, weight, &dm))?;
            }
            Ok((LinearGradient { weight, bias }, Some(dx)))
        }
    }
}

/// The layer's output for `x`, and what its backward pass needs.
pub(crate) fn forward(layer: &Layer, x: &Dense<f32>, propagator: &mut Propagator) -> Result<(Dense<f32>, LayerCache)> {
    let (mut y, first) = aggregated_forward(layer.first_linear(), layer.self_weight(), x, propagator)?;
    let mut hidden = Vec::new();
    match layer {
        Layer::Gcn(_) => {}
        Layer::Sage(conv) => propagator.dense(|| {
            conv.lin_r().transform_add(x, &mut y)?;
            if let Some(bias) = conv.lin_r().bias() {
                add_row(&mut y, bias);
            }
            Ok(())
        })?,
        Layer::Gin(conv) => {
            for lin in &conv.mlp()[1..] {
                y = propagator.dense(|| {
                    relu(&mut y);
                    let next = lin.forward(&y)?;
                    hidden.push(std::mem::replace(&mut y, Dense::zeros(0, 0)));
                    Ok(next)
                })?;
            }
        }
    }
    Ok((y, LayerCache { first, hidden }))
}

/// The gradients of the layer's linear maps (in [`Layer::linears`] order) from its output's gradient `dy`, and
/// its input's gradient when `input_gradient`. `x` is the input [`forward`] was given, `cache` what it kept.
pub(crate) fn backward(
    layer: &Layer,
    cache: LayerCache,
    x: &Dense<f32>,
    dy: Dense<f32>,
    input_gradient: bool,
    propagator: &mut Propagator,
) -> Result<(Vec<LinearGradient>, Option<Dense<f32>>)> {
    let (lin, self_weight) = (layer.first_linear(), layer.self_weight());
    match layer {
        Layer::Gcn(_) => {
            let (gradient, dx) =
                aggregated_backward(lin, self_weight, cache.first, x, &dy, input_gradient, propagator)?;
            Ok((vec![gradient], dx))
        }
        Layer::Sage(conv) => {
            let root = conv.lin_r();
            let root_gradient = propagator.dense(|| {
                let weight = matmul(&dy, Op::Transposed, x, Op::Plain)?;
                Ok(LinearGradient { weight, bias: root.bias().map(|_| column_sums(&dy)) })
            })?;
            let (gradient, mut dx) =
                aggregated_backward(lin, self_weight, cache.first, x, &dy, input_gradient, propagator)?;
            if let Some(dx) = &mut dx {
                propagator.dense(|| matmul_into(dx, &dy, Op::Plain, root.weight(), Op::Plain, true))?;
            }
            Ok((vec![gradient, root_gradient], dx))
        }
        Layer::Gin(conv) => {
            let mut gradients = Vec::with_capacity(conv.mlp().len());
            let mut dy = dy;
            for (lin, activation) in conv.mlp()[1..].iter().zip(&cache.hidden).rev() {
                dy = propagator.dense(|| {
                    let weight = matmul(&dy, Op::Transposed, activation, Op::Plain)?;
                    gradients.push(LinearGradient { weight, bias: lin.bias().map(|_| column_sums(&dy)) });
                    let mut da = matmul(&dy, Op::Plain, lin.weight(), Op::Plain)?;
                    relu_backward(&mut da, activation)?;
                    Ok(da)
                })?;
            }
            let (gradient, dx) =
                aggregated_backward(lin, self_weight, cache.first, x, &dy, input_gradient, propagator)?;
            gradients.push(gradient);
            gradients.reverse();
            Ok((gradients, dx))
        }
    }
}
