//! The training loop's state: the model, the optimiser, the features and targets, and the aggregation engines
//! with the graph resident for the whole run (GNNear's full-batch training: aggregation forward and backward
//! on PIM, dense layers and the update on the CPU).

use super::backprop::{self, LayerCache};
use super::loss::{cross_entropy, Targets};
use super::ops::activation_backward;
use super::optim::{Optimizer, OptimizerKind};
use super::propagate::{Propagator, Stage, Timings};
use crate::distributed::{AllReduce, RankBlock, RankTransport};
use crate::error::{Error, Result};
use crate::gnn::{Aggregation, EngineOptions, Layer, Model, Order};
use crate::sparse::{Csr, Dense};

/// The forward and backward pass of one epoch, before the optimiser's step.
#[derive(Clone, Debug)]
pub struct Pass {
    /// The training loss.
    pub loss: f32,
    /// The model's output for every node, before softmax.
    pub logits: Dense<f32>,
    /// The gradient of the loss with respect to each parameter tensor, in [`Trainer::parameter_names`] order
    /// (without the weight decay, which the optimiser adds).
    pub gradients: Vec<Vec<f32>>,
}

/// One epoch's result.
#[derive(Clone, Debug)]
pub struct Epoch {
    /// The training loss, with the parameters before this epoch's step.
    pub loss: f32,
    /// The output for every node with the parameters before this epoch's step.
    pub logits: Dense<f32>,
}

/// Full-batch training of a [`Model`] on one graph, or on one rank's part of it ([`Trainer::distributed`]).
pub struct Trainer {
    model: Model,
    optimizer: Optimizer,
    features: Dense<f32>,
    targets: Targets,
    propagator: Propagator,
    /// On a rank of a distributed run: how the ranks sum their losses and gradients.
    sum: Option<Box<dyn AllReduce>>,
}

impl Trainer {
    /// A trainer for `model` on `graph` (adjacency, row = target node) with node `features` and the training
    /// `targets`, updating with `optimizer`, aggregating on the backend `options` asks for (its `widths` are
    /// chosen here from the model). The graph's aggregation matrix is loaded into the engines once, and its
    /// transpose next to it when the backward pass needs one.
    pub fn new(
        model: Model,
        graph: &Csr<f32>,
        features: Dense<f32>,
        targets: Targets,
        optimizer: OptimizerKind,
        options: &EngineOptions,
    ) -> Result<Self> {
        check_inputs(&model, graph.nrows(), "of the graph", &features, &targets)?;
        let matrix = model.architecture().aggregation().matrix(graph)?;
        let propagator = propagator(&model, matrix, options)?;
        Self::with_propagator(model, features, targets, optimizer, propagator, None)
    }

    /// One rank's trainer in distributed full-batch training: `block` is its part of `model`'s aggregation
    /// matrix ([`crate::distributed::RankPartition::block`]), `features` and `targets` ([`Targets::of_rank`])
    /// are its nodes'. The `transport`'s exchange brings the halo's rows in before each aggregation and takes
    /// their gradients back after each backward one; its sum adds up the ranks' losses and gradients, so that
    /// every rank steps the same optimiser to the same weights. Every rank builds its trainer and runs every epoch at the same
    /// time.
    pub fn distributed(
        model: Model,
        block: &RankBlock,
        features: Dense<f32>,
        targets: Targets,
        optimizer: OptimizerKind,
        options: &EngineOptions,
        transport: RankTransport,
    ) -> Result<Self> {
        check_inputs(&model, block.nodes.len(), "of the rank", &features, &targets)?;
        let RankTransport { exchange, sum } = transport;
        let propagator = propagator(&model, block.matrix.clone(), options)?.with_halo(exchange)?;
        Self::with_propagator(model, features, targets, optimizer, propagator, Some(sum))
    }

    fn with_propagator(
        model: Model,
        features: Dense<f32>,
        targets: Targets,
        optimizer: OptimizerKind,
        propagator: Propagator,
        sum: Option<Box<dyn AllReduce>>,
    ) -> Result<Self> {
        let optimizer = Optimizer::new(optimizer, &parameter_sizes(&model))?;
        Ok(Trainer { model, optimizer, features, targets, propagator, sum })
    }

    /// The forward pass, the loss and the backward pass at the current parameters; nothing is updated.
    pub fn pass(&mut self) -> Result<Pass> {
        let layers = self.model.layers();
        let mut outputs: Vec<Dense<f32>> = Vec::with_capacity(layers.len());
        let mut caches: Vec<LayerCache> = Vec::with_capacity(layers.len());
        for (at, (_, layer)) in layers.iter().enumerate() {
            let input = if at == 0 { &self.features } else { &outputs[at - 1] };
            let (mut y, cache) = backprop::forward(layer, input, &mut self.propagator)?;
            if at + 1 < layers.len() {
                self.propagator.dense(|| {
                    self.model.activation().apply(y.as_mut_slice());
                    Ok(())
                })?;
            }
            outputs.push(y);
            caches.push(cache);
        }
        let logits = outputs.pop().expect("a model has at least one layer");
        let (loss, mut dy) = self.propagator.dense(|| cross_entropy(&logits, &self.targets))?;

        let mut gradients: Vec<Vec<Vec<f32>>> = Vec::with_capacity(layers.len());
        for (at, ((_, layer), cache)) in layers.iter().zip(caches).enumerate().rev() {
            let input = if at == 0 { &self.features } else { &outputs[at - 1] };
            let layer_gradients = backprop::backward(layer, cache, input, dy, at > 0, &mut self.propagator)?;
            gradients.push(layer_gradients.parameters);
            // Only the first layer gives no input gradient, and it is the last one visited.
            let Some(mut dx) = layer_gradients.input else { break };
            let activation = self.model.activation();
            self.propagator.dense(|| activation_backward(activation, &mut dx, input))?;
            dy = dx;
        }
        gradients.reverse();
        let mut gradients: Vec<Vec<f32>> = gradients.into_iter().flatten().collect();
        let loss = match &mut self.sum {
            Some(sum) => {
                self.propagator.timed(Stage::Communication, || sum_over_ranks(sum.as_mut(), loss, &mut gradients))?
            }
            None => loss,
        };
        Ok(Pass { loss, logits, gradients })
    }

    /// One epoch: [`Trainer::pass`], then the optimiser's step.
    pub fn epoch(&mut self) -> Result<Epoch> {
        let Pass { loss, logits, gradients } = self.pass()?;
        let (model, optimizer) = (&mut self.model, &mut self.optimizer);
        self.propagator.timed(Stage::Optimizer, || optimizer.step(parameters_mut(model), &gradients))?;
        Ok(Epoch { loss, logits })
    }

    /// The model's output for every node at the current parameters (a forward pass, timed like the others).
    pub fn logits(&mut self) -> Result<Dense<f32>> {
        let layers = self.model.layers();
        let mut h: Option<Dense<f32>> = None;
        for (at, (_, layer)) in layers.iter().enumerate() {
            let (mut y, _) = backprop::forward(layer, h.as_ref().unwrap_or(&self.features), &mut self.propagator)?;
            if at + 1 < layers.len() {
                self.model.activation().apply(y.as_mut_slice());
            }
            h = Some(y);
        }
        Ok(h.expect("a model has at least one layer"))
    }

    /// The `state_dict` names of the parameter tensors the optimiser updates, in order: for each layer, each
    /// linear map's weight, then its bias when it has one, then GIN's `eps` when it is trained (PyG's
    /// `train_eps=True`; by default it stays fixed, as PyG's `GINConv` keeps it).
    pub fn parameter_names(&self) -> Vec<String> {
        self.model
            .layers()
            .iter()
            .flat_map(|(prefix, layer)| {
                layer.parameters().into_iter().map(
                    move |(name, _)| {
                        if prefix.is_empty() {
                            name
                        } else {
                            format!("{prefix}.{name}")
                        }
                    },
                )
            })
            .collect()
    }

    /// The model, with the parameters of the last step.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The model, with the parameters of the last step.
    pub fn into_model(self) -> Model {
        self.model
    }

    /// The optimiser and its state.
    pub fn optimizer(&self) -> &Optimizer {
        &self.optimizer
    }

    /// The training targets.
    pub fn targets(&self) -> &Targets {
        &self.targets
    }

    /// The aggregation engines and the time recorded per stage.
    pub fn propagator(&self) -> &Propagator {
        &self.propagator
    }

    /// The time recorded per stage since the start or the last [`Trainer::reset_timings`].
    pub fn timings(&self) -> &Timings {
        self.propagator.timings()
    }

    /// Forgets the time recorded so far.
    pub fn reset_timings(&mut self) {
        self.propagator.reset_timings();
    }
}

/// Checks `features` and `targets` against `model` and the `nodes` trained on (`whose`: of the graph, or of
/// the rank).
/// The engines `model` trains with on `matrix` (the whole graph's, or a rank's block): with values per call
/// for attention.
fn propagator(model: &Model, matrix: Csr<f32>, options: &EngineOptions) -> Result<Propagator> {
    let (forward_widths, backward_widths) = (model.aggregation_widths(), backward_aggregation_widths(model));
    match model.architecture().aggregation() {
        Aggregation::Attention => Propagator::weighted(matrix, &forward_widths, &backward_widths, options),
        _ => Propagator::new(matrix, &forward_widths, &backward_widths, options),
    }
}

fn check_inputs(model: &Model, nodes: usize, whose: &str, features: &Dense<f32>, targets: &Targets) -> Result<()> {
    if features.rows() != nodes {
        return Err(Error::shape(format!("node features (rows, one per node {whose})"), nodes, features.rows()));
    }
    if features.cols() != model.in_features() {
        return Err(Error::shape(
            "node features (columns) for the model's first layer",
            model.in_features(),
            features.cols(),
        ));
    }
    if targets.labels().len() != nodes {
        return Err(Error::shape(format!("labels (one per node {whose})"), nodes, targets.labels().len()));
    }
    if targets.classes() != model.out_features() {
        return Err(Error::shape(
            "classes of the labels (the model's output width)",
            model.out_features(),
            targets.classes(),
        ));
    }
    Ok(())
}

/// The loss and `gradients` summed over the ranks through `sum` (in f64, in one call), the gradients in place.
fn sum_over_ranks(sum: &mut dyn AllReduce, loss: f32, gradients: &mut [Vec<f32>]) -> Result<f32> {
    let mut values: Vec<f64> =
        std::iter::once(f64::from(loss)).chain(gradients.iter().flatten().map(|&value| f64::from(value))).collect();
    sum.sum(&mut values)?;
    let mut summed = values[1..].iter();
    for value in gradients.iter_mut().flatten() {
        *value = summed.next().map_or(*value, |&sum| sum as f32);
    }
    Ok(values[0] as f32)
}

/// The feature widths of the backward aggregations (`M^T dY`) of one training step, last layer first as the
/// backward pass runs: a layer that transforms first needs one for its weight's gradient, one that aggregates
/// first only for its input's gradient, which the first layer does not need.
pub fn backward_aggregation_widths(model: &Model) -> Vec<usize> {
    let needs_one = |at: usize, layer: &Layer| layer.order() == Order::TransformFirst || at > 0;
    let layers = model.layers().iter().enumerate().rev();
    layers.filter(|(at, (_, layer))| needs_one(*at, layer)).map(|(_, (_, layer))| layer.aggregation_width()).collect()
}

fn parameter_sizes(model: &Model) -> Vec<usize> {
    model.layers().iter().flat_map(|(_, layer)| layer.parameters()).map(|(_, values)| values.len()).collect()
}

fn parameters_mut(model: &mut Model) -> Vec<&mut [f32]> {
    model.layers_mut().flat_map(|layer| layer.parameters_mut()).collect()
}
