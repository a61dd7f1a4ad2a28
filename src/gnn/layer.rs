//! PyTorch Geometric's message-passing layers, with hybrid execution: the dense transforms on the CPU
//! ([`Linear`]), the sparse aggregation through an [`Aggregator`] (PIM or CPU).
//!
//! Aggregation is linear, so `M (X W^T) = (M X) W^T`: each layer transforms first when its (first) linear map
//! narrows the features, so that the aggregation moves fewer columns, and aggregates first otherwise (GNNear's
//! choice).

use std::borrow::Cow;
use std::ops::Range;
use std::time::Instant;

use super::aggregate::Aggregator;
use super::dense::{add_row_to, add_scaled_to, relu_in_place, Activation, Linear};
use super::gat::GatConv;
use super::model::Architecture;
use crate::error::{Error, Result};
use crate::sparse::Dense;
use crate::spmm::Phase;

/// The order a layer runs its aggregation and its (first) linear transform in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::Display)]
pub enum Order {
    /// `M (X W^T)`: the transform narrows the features.
    #[strum(to_string = "transform, then aggregate")]
    TransformFirst,
    /// `(M X) W^T`: the transform keeps or widens them.
    #[strum(to_string = "aggregate, then transform")]
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
    /// Each linear map's index in PyG's `nn` (a `Sequential`, so `nn.0`, `nn.2`, ... with ReLUs between).
    positions: Vec<usize>,
    /// Whether training updates `eps` (PyG's `train_eps=True`, which makes it a parameter).
    train_eps: bool,
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
        let positions = (0..mlp.len()).map(|k| 2 * k).collect();
        Ok(GinConv { eps, mlp, positions, train_eps: false })
    }

    /// The same layer with its linear maps at `positions` of `nn` (their `state_dict` names are
    /// `nn.<position>.weight` and `.bias`): one per map, increasing. [`GinConv::new`] puts them at 0, 2, 4, ...,
    /// as `Sequential(Linear, ReLU, Linear, ...)` does.
    pub fn with_positions(self, positions: Vec<usize>) -> Result<Self> {
        if positions.len() != self.mlp.len() {
            return Err(Error::shape("GINConv nn positions (one per Linear)", self.mlp.len(), positions.len()));
        }
        if positions.windows(2).any(|pair| pair[0] >= pair[1]) {
            return Err(Error::invalid("GINConv nn positions", format!("{positions:?} do not increase")));
        }
        Ok(GinConv { positions, ..self })
    }

    /// The same layer with `eps` trained or kept fixed (the default, as PyG's `train_eps=False`).
    pub fn with_train_eps(self, train_eps: bool) -> Self {
        GinConv { train_eps, ..self }
    }

    /// `eps`, the weight of the node itself beyond 1.
    pub fn eps(&self) -> f32 {
        self.eps
    }

    /// Whether training updates `eps`.
    pub fn train_eps(&self) -> bool {
        self.train_eps
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
    /// `GATConv`.
    Gat(GatConv),
}

/// When a layer runs its dense steps after aggregation (the transform, bias, self and root terms, GIN's MLP and
/// the ReLU before the next layer; all row by row).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overlap {
    /// On each range of rows as soon as the aggregation has it final: on PIM, while the DPUs' blocks of the
    /// other rows are still merged ([`Aggregator::aggregate_streamed`]).
    #[default]
    Overlapped,
    /// Once the whole aggregation is done, over all rows.
    Sequential,
}

/// How a model runs one of its layers.
pub(crate) struct LayerStep<'a> {
    /// The layer's input.
    pub(crate) input: &'a Dense<f32>,
    /// The input already transformed by the layer's first map (by the previous layer's stage), when it
    /// transforms first.
    pub(crate) transformed: Option<Dense<f32>>,
    /// When the dense steps after aggregation run.
    pub(crate) overlap: Overlap,
    /// The activation that follows (as between a model's layers), if any.
    pub(crate) activation: Option<Activation>,
    /// The next layer's first map, when it transforms first: overlapped, the stage also applies it to the
    /// output rows, so that the next layer starts with its aggregation.
    pub(crate) next_transform: Option<&'a Linear>,
}

/// Runs `step`, recording its wall time as a phase named `name`.
fn timed<T>(
    phases: &mut Vec<Phase>,
    name: impl Into<Cow<'static, str>>,
    step: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let started = Instant::now();
    let result = step()?;
    phases.push(Phase { name: name.into(), wall: started.elapsed(), predicted: None });
    Ok(result)
}

/// `rows` of `matrix`, row-major.
fn rows_of(matrix: &Dense<f32>, rows: Range<usize>) -> &[f32] {
    &matrix.as_slice()[rows.start * matrix.cols()..rows.end * matrix.cols()]
}

/// Copies `source` into `target`, which must be as long.
fn copy_values(source: &[f32], target: &mut [f32]) -> Result<()> {
    if source.len() != target.len() {
        return Err(Error::shape("layer output values", target.len(), source.len()));
    }
    target.copy_from_slice(source);
    Ok(())
}

/// `lin(M x)` (`M x W^T + b`) for some rows, plus `self_weight * x W^T` when given (GIN's `(1 + eps) x_i`),
/// written into `out`. `aggregated` holds those rows of the aggregation: of `x W^T` when the layer
/// transformed first (`transformed` holds those rows of `x W^T`), else of `x` (whose rows are `x`).
fn linear_rows(
    lin: &Linear,
    self_weight: Option<f32>,
    aggregated: &mut [f32],
    x: &[f32],
    transformed: Option<&[f32]>,
    out: &mut [f32],
) -> Result<()> {
    match transformed {
        Some(h) => {
            if let Some(weight) = self_weight {
                add_scaled_to(aggregated, weight, h)?;
            }
            if let Some(bias) = lin.bias() {
                add_row_to(aggregated, bias);
            }
            copy_values(aggregated, out)
        }
        None => {
            if let Some(weight) = self_weight {
                add_scaled_to(aggregated, weight, x)?;
            }
            lin.forward_rows(aggregated, out)
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
            Layer::Gat(conv) => conv.in_features(),
        }
    }

    /// Output width.
    pub fn out_features(&self) -> usize {
        match self {
            Layer::Gcn(conv) => conv.lin.out_features(),
            Layer::Sage(conv) => conv.lin_l.out_features(),
            Layer::Gin(conv) => conv.mlp[conv.mlp.len() - 1].out_features(),
            Layer::Gat(conv) => conv.out_features(),
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
                .zip(&conv.positions)
                .map(|(lin, k)| named(format!("nn.{k}.weight"), format!("nn.{k}.bias"), lin))
                .collect(),
            // The layer's bias is its own, added after the heads: `lin` has none.
            Layer::Gat(conv) => vec![named("lin.weight".into(), "lin.bias".into(), conv.lin())],
        }
    }

    /// The tensors training updates, with their `state_dict` names relative to the layer, in the order the
    /// backward pass gives their gradients: each linear map's weight, then its bias when it has one (in
    /// [`Layer::linears`] order), then GIN's `eps` when it is trained, or GAT's `att_src`, `att_dst` and bias.
    pub fn parameters(&self) -> Vec<(String, &[f32])> {
        let mut parameters: Vec<(String, &[f32])> = self
            .linears()
            .into_iter()
            .flat_map(|NamedLinear { weight, bias, linear }| {
                std::iter::once((weight, linear.weight().as_slice())).chain(linear.bias().map(|values| (bias, values)))
            })
            .collect();
        match self {
            Layer::Gin(conv) if conv.train_eps => parameters.push(("eps".to_owned(), std::slice::from_ref(&conv.eps))),
            Layer::Gat(conv) => {
                let (att_src, att_dst) = conv.attention();
                parameters.extend([("att_src".to_owned(), att_src), ("att_dst".to_owned(), att_dst)]);
                parameters.extend(conv.bias().map(|bias| ("bias".to_owned(), bias)));
            }
            Layer::Gcn(_) | Layer::Sage(_) | Layer::Gin(_) => {}
        }
        parameters
    }

    /// The tensors of [`Layer::parameters`], writable, in the same order.
    pub(crate) fn parameters_mut(&mut self) -> Vec<&mut [f32]> {
        fn of_linears(linears: Vec<&mut Linear>) -> Vec<&mut [f32]> {
            linears
                .into_iter()
                .flat_map(|lin| {
                    let (weight, bias) = lin.parameters_mut();
                    std::iter::once(weight).chain(bias)
                })
                .collect()
        }
        match self {
            Layer::Gcn(conv) => of_linears(vec![&mut conv.lin]),
            Layer::Sage(conv) => of_linears(vec![&mut conv.lin_l, &mut conv.lin_r]),
            Layer::Gin(conv) => {
                let mut parameters = of_linears(conv.mlp.iter_mut().collect());
                parameters.extend(conv.train_eps.then_some(std::slice::from_mut(&mut conv.eps)));
                parameters
            }
            Layer::Gat(conv) => conv.parameters_mut(),
        }
    }

    /// The architecture of models made of this layer.
    pub fn architecture(&self) -> Architecture {
        match self {
            Layer::Gcn(_) => Architecture::Gcn,
            Layer::Sage(_) => Architecture::Sage,
            Layer::Gin(_) => Architecture::Gin,
            Layer::Gat(_) => Architecture::Gat,
        }
    }

    /// PyG's class name.
    pub fn kind(&self) -> &'static str {
        match self {
            Layer::Gcn(_) => "GCNConv",
            Layer::Sage(_) => "SAGEConv",
            Layer::Gin(_) => "GINConv",
            Layer::Gat(_) => "GATConv",
        }
    }

    /// The order this layer aggregates and transforms in.
    pub fn order(&self) -> Order {
        if let Layer::Gat(_) = self {
            // Attention scores the transformed features: a GAT always transforms first.
            return Order::TransformFirst;
        }
        let first = self.first_linear();
        Order::for_widths(first.in_features(), first.out_features())
    }

    /// Feature columns this layer aggregates in one call: its first transform's output width when it transforms
    /// first (a GAT's every head), else its input width.
    pub fn aggregation_width(&self) -> usize {
        let first = self.first_linear();
        match self.order() {
            Order::TransformFirst => first.out_features(),
            Order::AggregateFirst => first.in_features(),
        }
    }

    /// The layer's output for features `x` (one row per node), aggregating through `aggregator`; the time of
    /// each step is appended to `phases`. Its dense steps after aggregation run [`Overlap::Overlapped`].
    pub fn forward(&self, x: &Dense<f32>, aggregator: &mut Aggregator, phases: &mut Vec<Phase>) -> Result<Dense<f32>> {
        self.forward_with(x, aggregator, phases, Overlap::Overlapped, None)
    }

    /// As [`Layer::forward`], running the dense steps after aggregation as `overlap` says, and then
    /// `activation` when given (as between a model's layers). Either way gives the same values, bit for bit.
    pub fn forward_with(
        &self,
        x: &Dense<f32>,
        aggregator: &mut Aggregator,
        phases: &mut Vec<Phase>,
        overlap: Overlap,
        activation: Option<Activation>,
    ) -> Result<Dense<f32>> {
        let step = LayerStep { input: x, transformed: None, overlap, activation, next_transform: None };
        Ok(self.run(step, aggregator, phases)?.0)
    }

    /// Runs the layer as `step` says. Returns its output and, when the dense steps overlapped the merge and
    /// `step.next_transform` was given, the output transformed by it (the next layer's first transform).
    pub(crate) fn run(
        &self,
        step: LayerStep<'_>,
        aggregator: &mut Aggregator,
        phases: &mut Vec<Phase>,
    ) -> Result<(Dense<f32>, Option<Dense<f32>>)> {
        let LayerStep { input: x, transformed, overlap, activation, next_transform } = step;
        if x.cols() != self.in_features() {
            return Err(Error::shape(format!("{} input width", self.kind()), self.in_features(), x.cols()));
        }
        if let Layer::Gat(conv) = self {
            // Its aggregation's values come from its own scores, so it runs its steps in its own order.
            return Ok((conv.forward(x, aggregator, phases, activation)?, None));
        }
        let first = self.first_linear();
        let transformed = match (self.order(), transformed) {
            (Order::TransformFirst, Some(h)) if (h.rows(), h.cols()) == (x.rows(), first.out_features()) => Some(h),
            (Order::TransformFirst, Some(h)) => {
                return Err(Error::shape(
                    format!("{} input, transformed", self.kind()),
                    format!("{} x {}", x.rows(), first.out_features()),
                    format!("{} x {}", h.rows(), h.cols()),
                ))
            }
            (Order::TransformFirst, None) => Some(timed(phases, "transform (GEMM)", || first.transform(x))?),
            (Order::AggregateFirst, _) => None,
        };
        let next_transform = next_transform.filter(|_| overlap == Overlap::Overlapped);
        let input = transformed.as_ref().unwrap_or(x);
        let mut outs = vec![Dense::zeros(x.rows(), self.out_features())];
        outs.extend(next_transform.map(|lin| Dense::zeros(x.rows(), lin.out_features())));
        let step = |rows: Range<usize>, aggregated: &mut [f32], outs: &mut [&mut [f32]]| {
            let transformed = transformed.as_ref().map(|h| rows_of(h, rows.clone()));
            let [out, rest @ ..] = outs else { return Err(Error::invalid("layer step", "has no output")) };
            self.finish_rows(rows.len(), aggregated, rows_of(x, rows.clone()), transformed, out, activation)?;
            match (next_transform, rest) {
                (Some(lin), [next, ..]) => lin.transform_rows(out, next),
                _ => Ok(()),
            }
        };
        let mut steps = self.dense_steps(activation);
        if next_transform.is_some() {
            steps.push_str(", next layer's transform (GEMM)");
        }
        match overlap {
            Overlap::Overlapped => {
                let stage = aggregator.aggregate_streamed(input, &mut outs, &step)?;
                phases.extend_from_slice(aggregator.last_phases());
                phases.push(stage.phase(&steps));
            }
            Overlap::Sequential => {
                let mut y = aggregator.aggregate(input)?;
                phases.extend_from_slice(aggregator.last_phases());
                let mut rows: Vec<&mut [f32]> = outs.iter_mut().map(Dense::as_mut_slice).collect();
                timed(phases, steps, || step(0..y.rows(), y.as_mut_slice(), &mut rows))?;
            }
        }
        let transformed_next = if next_transform.is_some() { outs.pop() } else { None };
        let out = outs.swap_remove(0); // `outs` starts with the layer's output, always there.
        Ok((out, transformed_next))
    }

    /// The linear map applied first: `lin` (`GCNConv`), `lin_l` (`SAGEConv`), `nn.0` (`GINConv`).
    pub(crate) fn first_linear(&self) -> &Linear {
        match self {
            Layer::Gcn(GcnConv { lin, .. }) | Layer::Sage(SageConv { lin_l: lin, .. }) => lin,
            Layer::Gin(conv) => &conv.mlp[0],
            Layer::Gat(conv) => conv.lin(),
        }
    }

    /// The weight of a node's own features added to its aggregation before the first linear map: GIN's
    /// `1 + eps`; none for the other layers.
    pub(crate) fn self_weight(&self) -> Option<f32> {
        match self {
            Layer::Gin(conv) => Some(1.0 + conv.eps),
            Layer::Gcn(_) | Layer::Sage(_) | Layer::Gat(_) => None,
        }
    }

    /// What the dense steps after aggregation are, as named in timing tables.
    fn dense_steps(&self, activation: Option<Activation>) -> String {
        let first = match self.order() {
            Order::TransformFirst => "bias",
            Order::AggregateFirst => "transform (GEMM)",
        };
        let mut steps = match self {
            Layer::Gcn(_) | Layer::Gat(_) => vec![first],
            Layer::Sage(_) => vec![first, "root (GEMM)"],
            Layer::Gin(conv) => {
                let mut steps = vec!["self term", first];
                if conv.mlp.len() > 1 {
                    steps.push("MLP (GEMM)");
                }
                steps
            }
        };
        let activation = activation.map(|activation| match activation {
            Activation::Relu => "ReLU",
            Activation::Elu => "ELU",
        });
        steps.extend(activation);
        steps.join(", ")
    }

    /// The dense steps after aggregation on `rows` rows: `aggregated` holds their aggregation (of `x`, or of
    /// `transformed` when the layer transforms first), `x` and `transformed` the same rows of the layer's
    /// input and of its first transform; the layer's output rows go to `out`.
    fn finish_rows(
        &self,
        rows: usize,
        aggregated: &mut [f32],
        x: &[f32],
        transformed: Option<&[f32]>,
        out: &mut [f32],
        activation: Option<Activation>,
    ) -> Result<()> {
        match self {
            Layer::Gat(_) => return Err(Error::invalid("GATConv", "runs its own steps (GatConv::forward)")),
            Layer::Gcn(conv) => linear_rows(&conv.lin, None, aggregated, x, transformed, out)?,
            Layer::Sage(conv) => {
                linear_rows(&conv.lin_l, None, aggregated, x, transformed, out)?;
                conv.lin_r.transform_add_rows(x, out)?;
                if let Some(bias) = conv.lin_r.bias() {
                    add_row_to(out, bias);
                }
            }
            Layer::Gin(conv) => {
                let self_weight = self.self_weight();
                let (first, rest) = (&conv.mlp[0], &conv.mlp[1..]);
                if rest.is_empty() {
                    linear_rows(first, self_weight, aggregated, x, transformed, out)?;
                } else {
                    let mut hidden = vec![0.0; rows * first.out_features()];
                    linear_rows(first, self_weight, aggregated, x, transformed, &mut hidden)?;
                    for (at, lin) in rest.iter().enumerate() {
                        relu_in_place(&mut hidden);
                        if at + 1 == rest.len() {
                            lin.forward_rows(&hidden, out)?;
                        } else {
                            let mut next = vec![0.0; rows * lin.out_features()];
                            lin.forward_rows(&hidden, &mut next)?;
                            hidden = next;
                        }
                    }
                }
            }
        }
        if let Some(activation) = activation {
            activation.apply(out);
        }
        Ok(())
    }
}
