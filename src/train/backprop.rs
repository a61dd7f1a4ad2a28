//! Each layer's forward pass with what its backward pass needs kept, and the backward pass: the gradients of
//! its parameters and of its input, as PyTorch's autograd computes them.
//!
//! Aggregation is linear, `Y = M X`, so its input's gradient is `M^T dY`, run by the [`Propagator`] on the
//! same backend as the forward aggregation (GCN's normalisation and SAGE's mean are inside `M`, so they
//! enter the backward pass through `M^T` exactly as autograd applies them). A layer that transforms before
//! aggregating (`M (X W^T)`) still needs `M^T dY` for its weight's gradient; one that aggregates first needs
//! it only for its input's, which the first layer does not need.

use super::attention::{self, AttentionCache};
use super::ops::{column_sums, relu_backward};
use super::propagate::Propagator;
use crate::error::{Error, Result};
use crate::gnn::dense::{add_row, add_scaled, relu};
use crate::gnn::{Layer, Linear, Order};
use crate::matmul::{matmul, matmul_into, Op};
use crate::sparse::Dense;

/// The gradient of one [`Linear`]'s weight and bias.
#[derive(Clone, Debug, PartialEq)]
struct LinearGradient {
    weight: Dense<f32>,
    bias: Option<Vec<f32>>,
}

/// What the forward pass of a layer's aggregated linear map keeps.
#[derive(Debug)]
pub(crate) enum AggregatedCache {
    /// `M (X W^T)`: the layer's input suffices, and `X W^T` when a trained self weight needs it.
    TransformFirst { transformed: Option<Dense<f32>> },
    /// `(M X) W^T`: the aggregated features the weight multiplied.
    AggregateFirst { aggregated: Dense<f32> },
}

/// What a layer's forward pass keeps for its backward pass (besides its input, which the caller keeps).
#[derive(Debug)]
pub(crate) enum LayerCache {
    /// GCN, SAGE and GIN: an aggregated linear map, and for GIN the ReLU outputs that fed `nn`'s second and later
    /// linear maps.
    Aggregated { first: AggregatedCache, hidden: Vec<Dense<f32>> },
    /// GAT.
    Attention(AttentionCache),
}

/// A layer's weight of each node's own features (GIN's `1 + eps`) and whether it is trained.
#[derive(Clone, Copy, Debug)]
struct SelfWeight {
    weight: f32,
    trained: bool,
}

impl SelfWeight {
    fn of(layer: &Layer) -> Option<Self> {
        let trained = matches!(layer, Layer::Gin(conv) if conv.train_eps());
        layer.self_weight().map(|weight| SelfWeight { weight, trained })
    }
}

/// `sum_ij a_ij b_ij`, accumulated in f64: the gradient of a weight that scaled `b` in a sum whose gradient is `a`.
fn dot(a: &Dense<f32>, b: &Dense<f32>) -> f32 {
    a.as_slice().iter().zip(b.as_slice()).map(|(&a, &b)| f64::from(a) * f64::from(b)).sum::<f64>() as f32
}

/// `lin(M x + self_weight x)`, in the order the layer runs in.
fn aggregated_forward(
    lin: &Linear,
    self_weight: Option<SelfWeight>,
    x: &Dense<f32>,
    propagator: &mut Propagator,
) -> Result<(Dense<f32>, AggregatedCache)> {
    match Order::for_widths(lin.in_features(), lin.out_features()) {
        Order::TransformFirst => {
            let h = propagator.dense(|| lin.transform(x))?;
            let mut y = propagator.aggregate(&h)?;
            propagator.dense(|| {
                if let Some(SelfWeight { weight, .. }) = self_weight {
                    add_scaled(&mut y, weight, &h)?;
                }
                if let Some(bias) = lin.bias() {
                    add_row(&mut y, bias);
                }
                Ok(())
            })?;
            let transformed = self_weight.is_some_and(|w| w.trained).then_some(h);
            Ok((y, AggregatedCache::TransformFirst { transformed }))
        }
        Order::AggregateFirst => {
            let mut aggregated = propagator.aggregate(x)?;
            let y = propagator.dense(|| {
                if let Some(SelfWeight { weight, .. }) = self_weight {
                    add_scaled(&mut aggregated, weight, x)?;
                }
                lin.forward(&aggregated)
            })?;
            Ok((y, AggregatedCache::AggregateFirst { aggregated }))
        }
    }
}

/// The gradients of [`aggregated_forward`]: of its map, of the self weight when it is trained, and of its
/// input when `input_gradient`.
struct AggregatedGradients {
    linear: LinearGradient,
    self_weight: Option<f32>,
    input: Option<Dense<f32>>,
}

/// The gradients of [`aggregated_forward`] from its output's gradient `dy`.
fn aggregated_backward(
    lin: &Linear,
    self_weight: Option<SelfWeight>,
    cache: AggregatedCache,
    x: &Dense<f32>,
    dy: &Dense<f32>,
    input_gradient: bool,
    propagator: &mut Propagator,
) -> Result<AggregatedGradients> {
    let bias = propagator.dense(|| Ok(lin.bias().map(|_| column_sums(dy))))?;
    match cache {
        AggregatedCache::TransformFirst { transformed } => {
            // y = M h + w h + b with h = x W^T: dw = <dy, h>.
            let self_weight_gradient = propagator.dense(|| Ok(transformed.as_ref().map(|h| dot(dy, h))))?;
            let mut dh = propagator.aggregate_transposed(dy)?;
            propagator.dense(|| {
                if let Some(SelfWeight { weight, .. }) = self_weight {
                    add_scaled(&mut dh, weight, dy)?;
                }
                let weight = matmul(&dh, Op::Transposed, x, Op::Plain)?;
                let dx = input_gradient.then(|| matmul(&dh, Op::Plain, lin.weight(), Op::Plain)).transpose()?;
                Ok(AggregatedGradients {
                    linear: LinearGradient { weight, bias },
                    self_weight: self_weight_gradient,
                    input: dx,
                })
            })
        }
        AggregatedCache::AggregateFirst { aggregated } => {
            let weight = propagator.dense(|| matmul(dy, Op::Transposed, &aggregated, Op::Plain))?;
            drop(aggregated);
            let linear = LinearGradient { weight, bias };
            let trained = self_weight.is_some_and(|w| w.trained);
            if !input_gradient && !trained {
                return Ok(AggregatedGradients { linear, self_weight: None, input: None });
            }
            // y = (M x + w x) W^T + b: the map's input has the gradient dm = dy W, and dw = <dm, x>.
            let dm = propagator.dense(|| matmul(dy, Op::Plain, lin.weight(), Op::Plain))?;
            let self_weight_gradient = propagator.dense(|| Ok(trained.then(|| dot(&dm, x))))?;
            if !input_gradient {
                return Ok(AggregatedGradients { linear, self_weight: self_weight_gradient, input: None });
            }
            let mut dx = propagator.aggregate_transposed(&dm)?;
            if let Some(SelfWeight { weight, .. }) = self_weight {
                propagator.dense(|| add_scaled(&mut dx, weight, &dm))?;
            }
            Ok(AggregatedGradients { linear, self_weight: self_weight_gradient, input: Some(dx) })
        }
    }
}

/// The layer's output for `x`, and what its backward pass needs.
pub(crate) fn forward(layer: &Layer, x: &Dense<f32>, propagator: &mut Propagator) -> Result<(Dense<f32>, LayerCache)> {
    if let Layer::Gat(conv) = layer {
        let (y, cache) = attention::forward(conv, x, propagator)?;
        return Ok((y, LayerCache::Attention(cache)));
    }
    let (mut y, first) = aggregated_forward(layer.first_linear(), SelfWeight::of(layer), x, propagator)?;
    let mut hidden = Vec::new();
    match layer {
        Layer::Gcn(_) | Layer::Gat(_) => {}
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
    Ok((y, LayerCache::Aggregated { first, hidden }))
}

/// What a layer's backward pass gives.
pub(crate) struct LayerGradients {
    /// The gradients of its parameters, in [`Layer::parameters`] order.
    pub(crate) parameters: Vec<Vec<f32>>,
    /// Its input's, when asked for.
    pub(crate) input: Option<Dense<f32>>,
}

/// The gradients of the layer's parameters (in [`Layer::parameters`] order) from its output's gradient `dy`,
/// and its input's gradient when `input_gradient`. `x` is the input [`forward`] was given, `cache` what it kept.
pub(crate) fn backward(
    layer: &Layer,
    cache: LayerCache,
    x: &Dense<f32>,
    dy: Dense<f32>,
    input_gradient: bool,
    propagator: &mut Propagator,
) -> Result<LayerGradients> {
    let mismatch = || Error::invalid(format!("the backward pass of a {}", layer.kind()), "given another layer's cache");
    let (first_cache, hidden) = match (layer, cache) {
        (Layer::Gat(conv), LayerCache::Attention(cache)) => {
            return attention::backward(conv, cache, x, &dy, input_gradient, propagator);
        }
        (Layer::Gat(_), _) | (_, LayerCache::Attention(_)) => return Err(mismatch()),
        (_, LayerCache::Aggregated { first, hidden }) => (first, hidden),
    };
    let (lin, self_weight) = (layer.first_linear(), SelfWeight::of(layer));
    let (linears, self_weight_gradient, dx) = match layer {
        Layer::Gat(_) => return Err(mismatch()),
        Layer::Gcn(_) => {
            let first = aggregated_backward(lin, self_weight, first_cache, x, &dy, input_gradient, propagator)?;
            (vec![first.linear], first.self_weight, first.input)
        }
        Layer::Sage(conv) => {
            let root = conv.lin_r();
            let root_gradient = propagator.dense(|| {
                let weight = matmul(&dy, Op::Transposed, x, Op::Plain)?;
                Ok(LinearGradient { weight, bias: root.bias().map(|_| column_sums(&dy)) })
            })?;
            let mut first = aggregated_backward(lin, self_weight, first_cache, x, &dy, input_gradient, propagator)?;
            if let Some(dx) = &mut first.input {
                propagator.dense(|| matmul_into(dx, &dy, Op::Plain, root.weight(), Op::Plain, true))?;
            }
            (vec![first.linear, root_gradient], first.self_weight, first.input)
        }
        Layer::Gin(conv) => {
            let mut gradients = Vec::with_capacity(conv.mlp().len());
            let mut dy = dy;
            for (lin, activation) in conv.mlp()[1..].iter().zip(&hidden).rev() {
                dy = propagator.dense(|| {
                    let weight = matmul(&dy, Op::Transposed, activation, Op::Plain)?;
                    gradients.push(LinearGradient { weight, bias: lin.bias().map(|_| column_sums(&dy)) });
                    let mut da = matmul(&dy, Op::Plain, lin.weight(), Op::Plain)?;
                    relu_backward(&mut da, activation)?;
                    Ok(da)
                })?;
            }
            let first = aggregated_backward(lin, self_weight, first_cache, x, &dy, input_gradient, propagator)?;
            gradients.push(first.linear);
            gradients.reverse();
            (gradients, first.self_weight, first.input)
        }
    };
    let tensors = linears
        .into_iter()
        .flat_map(|LinearGradient { weight, bias }| std::iter::once(weight.into_vec()).chain(bias))
        .chain(self_weight_gradient.map(|gradient| vec![gradient]))
        .collect();
    Ok(LayerGradients { parameters: tensors, input: dx })
}
