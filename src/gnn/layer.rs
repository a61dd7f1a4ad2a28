//! PyTorch Geometric's message-passing layers, with hybrid execution: the dense transforms on the CPU
//! ([`Linear`]), the sparse aggregation through an [`Aggregator`] (PIM or CPU).
//!
//! Aggregation is linear, so `M (X W^T) = (M X) W^T`: each layer transforms first when its (first) linear map
//! narrows the features, so that the aggregation moves fewer columns, and aggregates first otherwise (GNNear's
//! choice).

use std::fmt;
use std::time::Instant;

use super::aggregate::Aggregator;
use super::dense::{add_row, add_scaled, relu, Linear};
use super::model::Architecture;
use crate::error::{Error, Result};
use crate::sparse::Dense;
use crate::spmm::Phase;

/// The order a layer runs its aggregation and its (first) linear transform in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// `M (X W^T)`: the transform narrows the features.
    TransformFirst,
    /// `(M X) W^T`: the transform keeps or widens them.
    AggregateFirst,
}

impl Order {
    /// The cheaper order for a linear map of these widths.
    pub fn for_widths(in_features: usize, out_features: usize) -> Self {
        if out_features < in_features {
            Order::TransformFirst
        } else {
            Order::AggregateFirst
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Order::TransformFirst => "transform, then aggregate",
            Order::AggregateFirst => "aggregate, then transform",
        })
    }
}

/// `GCNConv`: `out = M (X W^T) + b` with `M` the GCN-normalised adjacency.
#[derive(Clone, Debug, PartialEq)]
pub struct GcnConv {
    lin: Linear,
}

impl GcnConv {
    /// From `lin`: PyG's `lin.weight` with the layer's `bias`, which is added after aggregation.
    pub fn new(lin: Linear) -> Self {
        GcnConv { lin }
    }

    /// The weight and the bias.
    pub fn lin(&self) -> &Linear {
        &self.lin
    }
}

/// `SAGEConv` with mean aggregation: `out = lin_l(mean_j x_j) + lin_r(x_i)` (`lin_l` has the bias).
#[derive(Clone, Debug, PartialEq)]
pub struct SageConv {
    lin_l: Linear,
    lin_r: Linear,
}

impl SageConv {
    /// From `lin_l`, applied to the neighbour mean with its bias, and `lin_r`, applied to the node itself
    /// (PyG's has no bias; one given is added too). Both map the same widths.
    pub fn new(lin_l: Linear, lin_r: Linear) -> Result<Self> {
        let widths = |lin: &Linear| format!("{} -> {}", lin.in_features(), lin.out_features());
        if widths(&lin_l) != widths(&lin_r) {
            return Err(Error::shape("SAGEConv lin_r (same widths as lin_l)", widths(&lin_l), widths(&lin_r)));
        }
        Ok(SageConv { lin_l, lin_r })
    }

    /// The map of the neighbour mean, with the layer's bias.
    pub fn lin_l(&self) -> &Linear {
        &self.lin_l
    }

    /// The map of the node itself.
    pub fn lin_r(&self) -> &Linear {
        &self.lin_r
    }
}

/// `GINConv`: `out = nn((1 + eps) x_i + sum_j x_j)`, `nn` a sequence of `Linear` layers with ReLU between.
#[derive(Clone, Debug, PartialEq)]
pub struct GinConv {
    eps: f32,
    mlp: Vec<Linear>,
}

impl GinConv {
    /// From `eps` and the linear layers of `nn` in order: at least one, each taking the previous one's width.
    pub fn new(eps: f32, mlp: Vec<Linear>) -> Result<Self> {
        if mlp.is_empty() {
            return Err(Error::invalid("GINConv nn", "has no Linear layer"));
        }
        if let Some(at) = mlp.windows(2).position(|pair| pair[0].out_features() != pair[1].in_features()) {
            return Err(Error::shape(
                format!("GINConv nn: input width of Linear {}", at + 1),
                mlp[at].out_features(),
                mlp[at + 1].in_features(),
            ));
        }
        Ok(GinConv { eps, mlp })
    }

    /// `eps`, the weight of the node itself beyond 1.
    pub fn eps(&self) -> f32 {
        self.eps
    }

    /// The linear layers of `nn`, in order.
    pub fn mlp(&self) -> &[Linear] {
        &self.mlp
    }
}

/// One of a layer's linear maps with the `state_dict` names of its tensors, relative to the layer.
#[derive(Clone, Debug)]
pub struct NamedLinear<'a> {
    /// The weight's name (e.g. `lin.weight`).
    pub weight: String,
    /// The bias's name (e.g. `bias` in `GCNConv`, `lin_l.bias` in `SAGEConv`).
    pub bias: String,
    /// The map.
    pub linear: &'a Linear,
}

/// One message-passing layer.
#[derive(Clone, Debug, PartialEq)]
pub enum Layer {
    /// `GCNConv`.
    Gcn(GcnConv),
    /// `SAGEConv` (mean).
    Sage(SageConv),
    /// `GINConv`.
    Gin(GinConv),
}

/// Runs `step`, recording its wall time as a phase named `name`.
fn timed<T>(phases: &mut Vec<Phase>, name: &'static str, step: impl FnOnce() -> Result<T>) -> Result<T> {
    let started = Instant::now();
    let result = step()?;
    phases.push(Phase { name, wall: started.elapsed(), predicted: None });
    Ok(result)
}

/// Aggregates through `aggregator`, recording its phases.
fn aggregate(aggregator: &mut Aggregator, x: &Dense<f32>, phases: &mut Vec<Phase>) -> Result<Dense<f32>> {
    let y = aggregator.aggregate(x)?;
    phases.extend_from_slice(aggregator.last_phases());
    Ok(y)
}

/// `lin(M x)` (`M x W^T + b`) in the cheaper order, plus `self_weight * x W^T` when given (GIN's
/// `(1 + eps) x_i`).
fn aggregate_linear(
    lin: &Linear,
    self_weight: Option<f32>,
    x: &Dense<f32>,
    aggregator: &mut Aggregator,
    phases: &mut Vec<Phase>,
) -> Result<Dense<f32>> {
    match Order::for_widths(lin.in_features(), lin.out_features()) {
        Order::TransformFirst => {
            let h = timed(phases, "transform (GEMM)", || lin.transform(x))?;
            let mut y = aggregate(aggregator, &h, phases)?;
            timed(phases, "self term and bias", || {
                if let Some(weight) = self_weight {
                    add_scaled(&mut y, weight, &h)?;
                }
                if let Some(bias) = lin.bias() {
                    add_row(&mut y, bias);
                }
                Ok(())
            })?;
            Ok(y)
        }
        Order::AggregateFirst => {
            let mut m = aggregate(aggregator, x, phases)?;
            if let Some(weight) = self_weight {
                timed(phases, "self term", || add_scaled(&mut m, weight, x))?;
            }
            timed(phases, "transform (GEMM)", || lin.forward(&m))
        }
    }
}

impl Layer {
    /// Input width.
    pub fn in_features(&self) -> usize {
        match self {
            Layer::Gcn(conv) => conv.lin.in_features(),
            Layer::Sage(conv) => conv.lin_l.in_features(),
            Layer::Gin(conv) => conv.mlp[0].in_features(),
        }
    }

    /// Output width.
    pub fn out_features(&self) -> usize {
        match self {
            Layer::Gcn(conv) => conv.lin.out_features(),
            Layer::Sage(conv) => conv.lin_l.out_features(),
            Layer::Gin(conv) => conv.mlp[conv.mlp.len() - 1].out_features(),
        }
    }

    /// The layer's linear maps, in a fixed order (`GCNConv`: `lin`; `SAGEConv`: `lin_l`, `lin_r`; `GINConv`: the
    /// layers of `nn`), each with its tensors' `state_dict` names.
    pub fn linears(&self) -> Vec<NamedLinear<'_>> {
        let named = |weight: String, bias: String, linear| NamedLinear { weight, bias, linear };
        match self {
            Layer::Gcn(conv) => vec![named("lin.weight".into(), "bias".into(), &conv.lin)],
            Layer::Sage(conv) => vec![
                named("lin_l.weight".into(), "lin_l.bias".into(), &conv.lin_l),
                named("lin_r.weight".into(), "lin_r.bias".into(), &conv.lin_r),
            ],
            Layer::Gin(conv) => conv
                .mlp
                .iter()
                .enumerate()
                .map(|(k, lin)| named(format!("nn.{k}.weight"), format!("nn.{k}.bias"), lin))
                .collect(),
        }
    }

    /// The layer's linear maps, writable, in the order of [`Layer::linears`].
    pub(crate) fn linears_mut(&mut self) -> Vec<&mut Linear> {
        match self {
            Layer::Gcn(conv) => vec![&mut conv.lin],
            Layer::Sage(conv) => vec![&mut conv.lin_l, &mut conv.lin_r],
            Layer::Gin(conv) => conv.mlp.iter_mut().collect(),
        }
    }

    /// The architecture of models made of this layer.
    pub fn architecture(&self) -> Architecture {
        match self {
            Layer::Gcn(_) => Architecture::Gcn,
            Layer::Sage(_) => Architecture::Sage,
            Layer::Gin(_) => Architecture::Gin,
        }
    }

    /// PyG's class name.
    pub fn kind(&self) -> &'static str {
        match self {
            Layer::Gcn(_) => "GCNConv",
            Layer::Sage(_) => "SAGEConv",
            Layer::Gin(_) => "GINConv",
        }
    }

    /// The order this layer aggregates and transforms in.
    pub fn order(&self) -> Order {
        match self {
            Layer::Gcn(GcnConv { lin, .. }) | Layer::Sage(SageConv { lin_l: lin, .. }) => {
                Order::for_widths(lin.in_features(), lin.out_features())
            }
            Layer::Gin(conv) => Order::for_widths(conv.mlp[0].in_features(), conv.mlp[0].out_features()),
        }
    }

    /// Feature columns this layer aggregates: its first transform's output width when it transforms first,
    /// else its input width.
    pub fn aggregation_width(&self) -> usize {
        let first = match self {
            Layer::Gcn(GcnConv { lin, .. }) | Layer::Sage(SageConv { lin_l: lin, .. }) => lin,
            Layer::Gin(conv) => &conv.mlp[0],
        };
        match Order::for_widths(first.in_features(), first.out_features()) {
            Order::TransformFirst => first.out_features(),
            Order::AggregateFirst => first.in_features(),
        }
    }

    /// The layer's output for features `x` (one row per node), aggregating through `aggregator`; the time of
    /// each step is appended to `phases`.
    pub fn forward(&self, x: &Dense<f32>, aggregator: &mut Aggregator, phases: &mut Vec<Phase>) -> Result<Dense<f32>> {
        if x.cols() != self.in_features() {
            return Err(Error::shape(format!("{} input width", self.kind()), self.in_features(), x.cols()));
        }
        match self {
            Layer::Gcn(conv) => aggregate_linear(&conv.lin, None, x, aggregator, phases),
            Layer::Sage(conv) => {
                let mut y = aggregate_linear(&conv.lin_l, None, x, aggregator, phases)?;
                timed(phases, "root (GEMM)", || {
                    conv.lin_r.transform_add(x, &mut y)?;
                    if let Some(bias) = conv.lin_r.bias() {
                        add_row(&mut y, bias);
                    }
                    Ok(())
                })?;
                Ok(y)
            }
            Layer::Gin(conv) => {
                let mut y = aggregate_linear(&conv.mlp[0], Some(1.0 + conv.eps), x, aggregator, phases)?;
                for lin in &conv.mlp[1..] {
                    y = timed(phases, "MLP (GEMM)", || {
                        relu(&mut y);
                        lin.forward(&y)
                    })?;
                }
                Ok(y)
            }
        }
    }
}
