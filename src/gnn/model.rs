//! Models: a stack of message-passing layers with ReLU between, read from a PyTorch Geometric `state_dict`
//! saved as safetensors, or generated with seeded weights.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::aggregate::Aggregator;
use super::dense::{Activation, Linear};
use super::gat::{GatConv, DEFAULT_NEGATIVE_SLOPE};
use super::layer::{GcnConv, GinConv, Layer, LayerStep, Order, Overlap, SageConv};
use super::norm::Aggregation;
use crate::error::{Error, Result};
use crate::host_memory;
use crate::io::safetensors::{read_safetensors, Tensor, TensorFile};
use crate::sparse::Dense;
use crate::spmm::Phase;

/// The layer type of a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::Display, strum::EnumString, strum::VariantNames)]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
#[strum(parse_err_ty = Error, parse_err_fn = Error::not_one_of::<Self>)]
pub enum Architecture {
    /// `GCNConv` layers.
    Gcn,
    /// `SAGEConv` layers (mean aggregation); also parsed from `graphsage`.
    #[strum(to_string = "sage", serialize = "graphsage")]
    Sage,
    /// `GINConv` layers.
    Gin,
    /// `GATConv` layers.
    Gat,
}

impl Architecture {
    /// The matrix this architecture aggregates with.
    pub fn aggregation(self) -> Aggregation {
        match self {
            Architecture::Gcn => Aggregation::GcnNormalized,
            Architecture::Sage => Aggregation::Mean,
            Architecture::Gin => Aggregation::Sum,
            Architecture::Gat => Aggregation::Attention,
        }
    }

    /// The tensor a layer of this architecture always has, by which the architecture is recognised.
    fn marker(self) -> &'static str {
        match self {
            Architecture::Gcn => "lin.weight",
            Architecture::Sage => "lin_l.weight",
            Architecture::Gin => "nn.0.weight",
            Architecture::Gat => "att_src",
        }
    }
}

/// A layer's timing in one forward pass.
#[derive(Clone, Debug)]
pub struct LayerReport {
    /// The layer's name in the `state_dict` (e.g. `conv1`).
    pub name: String,
    /// PyG's class name.
    pub kind: &'static str,
    /// Input and output widths.
    pub widths: (usize, usize),
    /// The order it ran in.
    pub order: Order,
    /// Its steps, in order.
    pub phases: Vec<Phase>,
}

impl LayerReport {
    /// Wall time of all its steps.
    pub fn wall(&self) -> Duration {
        self.phases.iter().map(|p| p.wall).sum()
    }

    /// Predicted time on UPMEM hardware: the modelled time of the steps on the DPUs and the wall time of the
    /// host's; `None` when no step ran on a PIM engine that models its time.
    pub fn predicted(&self) -> Option<Duration> {
        let modelled = self.phases.iter().any(|p| p.predicted.is_some());
        modelled.then(|| self.phases.iter().map(|p| p.predicted.unwrap_or(p.wall)).sum())
    }
}

impl Inference {
    /// Wall time of the forward pass.
    pub fn wall(&self) -> Duration {
        self.layers.iter().map(LayerReport::wall).sum()
    }

    /// Predicted time of the forward pass on UPMEM hardware, as [`LayerReport::predicted`]; `None` when no
    /// layer's time is modelled.
    pub fn predicted(&self) -> Option<Duration> {
        let modelled = self.layers.iter().any(|layer| layer.predicted().is_some());
        modelled.then(|| self.layers.iter().map(|layer| layer.predicted().unwrap_or_else(|| layer.wall())).sum())
    }
}

/// The result of a forward pass.
#[derive(Clone, Debug)]
pub struct Inference {
    /// The last layer's output, one row per node (logits, before softmax).
    pub logits: Dense<f32>,
    /// Each layer's timing.
    pub layers: Vec<LayerReport>,
}

/// A GNN: layers of one architecture, an activation between them (ReLU unless the model says otherwise).
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    architecture: Architecture,
    layers: Vec<(String, Layer)>,
    activation: Activation,
}

impl Model {
    /// Reads a model from a `.safetensors` `state_dict`.
    pub fn load(path: &Path) -> Result<Self> {
        Self::from_tensors(&read_safetensors(path)?)
    }

    /// A model from a `state_dict`: the architecture from the `architecture` metadata when present, else
    /// recognised from the tensor names; layers are the tensor-name prefixes (`conv1`, `convs.0`, ...) in
    /// natural order. Every tensor must belong to a layer, every layer must be complete, and each layer must
    /// take the previous one's width (and the `layers`/`in_features` metadata, when present, must agree).
    pub fn from_tensors(file: &TensorFile) -> Result<Self> {
        let bad = |reason: String| Error::Parse { path: file.path.clone(), line: None, reason };
        let architecture = match file.metadata.get("architecture") {
            Some(name) => name.parse().map_err(|e: Error| bad(format!("metadata: {e}")))?,
            None => recognise(file).ok_or_else(|| {
                bad("no `architecture` metadata, and no tensor named *.lin.weight (gcn), *.lin_l.weight (sage), \
                     *.nn.0.weight (gin) or *.att_src (gat)"
                    .into())
            })?,
        };
        let gat_options =
            GatOptions::from_metadata(&file.metadata).map_err(|reason| bad(format!("metadata {reason}")))?;
        let mut groups: BTreeMap<NaturalKey, (String, BTreeMap<&str, &Tensor>)> = BTreeMap::new();
        for (name, tensor) in &file.tensors {
            let (prefix, suffix) = split_layer_name(architecture, name)
                .ok_or_else(|| bad(format!("unknown tensor `{name}` for a {architecture} model")))?;
            groups
                .entry(NaturalKey::new(prefix))
                .or_insert_with(|| (prefix.to_owned(), BTreeMap::new()))
                .1
                .insert(suffix, tensor);
        }
        let mut layers: Vec<(String, Layer)> = Vec::new();
        for (at, (prefix, tensors)) in groups.into_values().enumerate() {
            let layer = parse_layer(architecture, &prefix, &tensors, &gat_options.layer(at))
                .map_err(|e| bad(format!("layer `{prefix}`: {e}")))?;
            if let Some((previous, last)) = layers.last() {
                if last.out_features() != layer.in_features() {
                    return Err(bad(format!(
                        "layer `{prefix}` takes {} features but `{previous}` gives {}",
                        layer.in_features(),
                        last.out_features()
                    )));
                }
            }
            layers.push((prefix, layer));
        }
        if layers.is_empty() {
            return Err(bad("no layers".into()));
        }
        let mut model = Model::new(architecture, layers).map_err(|e| bad(e.to_string()))?;
        if let Some(activation) = file.metadata.get("activation") {
            model.activation = activation.parse().map_err(|e: Error| bad(format!("metadata activation: {e}")))?;
        }
        let flags: Vec<bool> = metadata_list(&file.metadata, TRAIN_EPS_METADATA, "true or false")
            .map_err(|reason| bad(format!("metadata {reason}")))?;
        if !flags.is_empty() {
            model = model.with_train_eps(&flags).map_err(|e| bad(format!("metadata {TRAIN_EPS_METADATA}: {e}")))?;
        }
        for (key, actual) in
            [("layers", model.layers.len()), ("in_features", model.in_features()), ("classes", model.out_features())]
        {
            if let Some(declared) = file.metadata.get(key) {
                if declared.parse::<usize>().ok() != Some(actual) {
                    return Err(bad(format!("metadata says {key}={declared}, the tensors give {actual}")));
                }
            }
        }
        Ok(model)
    }

    /// A model of `layers` (each with its `state_dict` name), which must all be of `architecture`, take and
    /// give at least one feature, and each take the previous one's width.
    pub fn new(architecture: Architecture, layers: Vec<(String, Layer)>) -> Result<Self> {
        if layers.is_empty() {
            return Err(Error::invalid("model", "has no layers"));
        }
        for (name, layer) in &layers {
            if layer.in_features() == 0 || layer.out_features() == 0 {
                return Err(Error::invalid(
                    format!("layer `{name}`"),
                    format!(
                        "maps {} to {} features: every width must be at least 1",
                        layer.in_features(),
                        layer.out_features()
                    ),
                ));
            }
            if layer.architecture() != architecture {
                return Err(Error::invalid(
                    format!("layer `{name}`"),
                    format!("is a {}, not a {architecture} layer", layer.kind()),
                ));
            }
        }
        if let Some(at) = layers.windows(2).position(|pair| pair[0].1.out_features() != pair[1].1.in_features()) {
            return Err(Error::shape(
                format!("input width of layer `{}`", layers[at + 1].0),
                layers[at].1.out_features(),
                layers[at + 1].1.in_features(),
            ));
        }
        Ok(Model { architecture, layers, activation: Activation::Relu })
    }

    /// The same model with `activation` between its layers.
    pub fn with_activation(self, activation: Activation) -> Self {
        Model { activation, ..self }
    }

    /// The function between the layers (PyG models: ReLU, or what the `activation` metadata says).
    pub fn activation(&self) -> Activation {
        self.activation
    }

    /// A GCN with the given widths (input, hidden..., output), weights drawn as PyG initialises them
    /// (Glorot uniform, zero bias) from `seed`.
    pub fn seeded_gcn(widths: &[usize], seed: u64) -> Result<Self> {
        if widths.len() < 2 {
            return Err(Error::invalid("GCN widths", "need at least an input and an output width"));
        }
        check_weights_fit(Architecture::Gcn, widths, 1)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let layers = widths
            .windows(2)
            .enumerate()
            .map(|(at, pair)| {
                let (inputs, outputs) = (pair[0], pair[1]);
                let bound = (6.0 / (inputs + outputs) as f32).sqrt();
                let weight = (0..inputs * outputs).map(|_| rng.random_range(-bound..=bound)).collect();
                let lin = Linear::new(Dense::from_vec(outputs, inputs, weight)?, Some(vec![0.0; outputs]))?;
                Ok((format!("conv{}", at + 1), Layer::Gcn(GcnConv::new(lin))))
            })
            .collect::<Result<_>>()?;
        Self::new(Architecture::Gcn, layers)
    }

    /// The same GIN model with each layer's `eps` trained or fixed as `flags` says: one flag for every layer,
    /// or one per layer. Refused for other architectures, which have no `eps`.
    pub fn with_train_eps(mut self, flags: &[bool]) -> Result<Self> {
        if self.architecture != Architecture::Gin {
            return Err(Error::invalid("train_eps", format!("a {} model has no eps to train", self.architecture)));
        }
        if flags.len() != 1 && flags.len() != self.layers.len() {
            return Err(Error::shape("train_eps flags (one, or one per layer)", self.layers.len(), flags.len()));
        }
        for (at, (_, layer)) in self.layers.iter_mut().enumerate() {
            if let (Layer::Gin(conv), Some(train)) = (&mut *layer, for_layer(flags, at)) {
                *conv = conv.clone().with_train_eps(train);
            }
        }
        Ok(self)
    }

    /// The layer type.
    pub fn architecture(&self) -> Architecture {
        self.architecture
    }

    /// The layers with their `state_dict` names, in order.
    pub fn layers(&self) -> &[(String, Layer)] {
        &self.layers
    }

    /// The layers, writable in place (their widths stay fixed): what training updates.
    pub(crate) fn layers_mut(&mut self) -> impl Iterator<Item = &mut Layer> {
        self.layers.iter_mut().map(|(_, layer)| layer)
    }

    /// Width of the node features the model takes.
    pub fn in_features(&self) -> usize {
        self.layers[0].1.in_features()
    }

    /// Width of its output (the classes, for a classifier).
    pub fn out_features(&self) -> usize {
        self.layers[self.layers.len() - 1].1.out_features()
    }

    /// Feature columns of each aggregation a forward pass makes, layer by layer: what an aggregation engine
    /// plans for ([`EngineOptions::widths`](super::EngineOptions::widths)).
    pub fn aggregation_widths(&self) -> Vec<usize> {
        self.layers.iter().map(|(_, layer)| layer.aggregation_width()).collect()
    }

    /// Runs every layer on `x` (one row per node), ReLU between layers, aggregating through `aggregator`, which
    /// must hold this architecture's [`Aggregation`] matrix of the graph. Each layer's dense steps after
    /// aggregation, the ReLU and, when the next layer transforms first, that transform run on the aggregated
    /// rows as they become final ([`Overlap::Overlapped`]).
    pub fn forward(&self, x: &Dense<f32>, aggregator: &mut Aggregator) -> Result<Inference> {
        self.forward_with(x, aggregator, Overlap::Overlapped)
    }

    /// As [`Model::forward`], each layer's dense steps after aggregation run as `overlap` says; the logits are
    /// the same, bit for bit, either way.
    pub fn forward_with(&self, x: &Dense<f32>, aggregator: &mut Aggregator, overlap: Overlap) -> Result<Inference> {
        self.forward_reporting(x, aggregator, overlap, |_| {})
    }

    /// As [`Model::forward_with`], calling `layer_done` with each layer's report as the layer finishes (to show
    /// progress through a model whose layers take minutes).
    pub fn forward_reporting(
        &self,
        x: &Dense<f32>,
        aggregator: &mut Aggregator,
        overlap: Overlap,
        mut layer_done: impl FnMut(&LayerReport),
    ) -> Result<Inference> {
        if x.cols() != self.in_features() {
            return Err(Error::shape(
                "node features (columns) for the model's first layer",
                self.in_features(),
                x.cols(),
            ));
        }
        let mut reports = Vec::with_capacity(self.layers.len());
        let mut h: Option<Dense<f32>> = None;
        let mut transformed = None;
        for (at, (name, layer)) in self.layers.iter().enumerate() {
            let mut phases = Vec::new();
            let next = self.layers.get(at + 1).map(|(_, next)| next);
            let step = LayerStep {
                input: h.as_ref().unwrap_or(x),
                transformed: transformed.take(),
                overlap,
                activation: next.is_some().then_some(self.activation),
                next_transform: next.filter(|next| next.order() == Order::TransformFirst).map(Layer::first_linear),
            };
            let (y, next_transformed) = layer.run(step, aggregator, &mut phases)?;
            transformed = next_transformed;
            reports.push(LayerReport {
                name: name.clone(),
                kind: layer.kind(),
                widths: (layer.in_features(), layer.out_features()),
                order: layer.order(),
                phases,
            });
            layer_done(&reports[at]);
            h = Some(y);
        }
        let logits = h.unwrap_or_else(|| x.clone());
        Ok(Inference { logits, layers: reports })
    }
}

/// The header metadata that says which GIN layers train `eps`: `true` or `false` for all, or a comma-separated
/// flag per layer (absent: none, as PyG's default `train_eps=False`).
pub const TRAIN_EPS_METADATA: &str = "train_eps";

/// The architecture whose marker tensor some layer has.
fn recognise(file: &TensorFile) -> Option<Architecture> {
    [Architecture::Sage, Architecture::Gin, Architecture::Gat, Architecture::Gcn].into_iter().find(|arch| {
        file.tensors.keys().any(|name| name == arch.marker() || name.ends_with(&format!(".{}", arch.marker())))
    })
}

/// `(layer prefix, tensor suffix)` of a tensor name, when the suffix is one this architecture's layers have.
fn split_layer_name(architecture: Architecture, name: &str) -> Option<(&str, &str)> {
    let fixed: &[&str] = match architecture {
        Architecture::Gcn => &["lin.weight", "bias"],
        Architecture::Sage => &["lin_l.weight", "lin_l.bias", "lin_r.weight", "lin_r.bias"],
        Architecture::Gin => &["eps"],
        Architecture::Gat => &["lin.weight", "att_src", "att_dst", "bias"],
    };
    if let Some(split) = fixed.iter().find_map(|suffix| strip_suffix(name, suffix)) {
        return Some(split);
    }
    if architecture == Architecture::Gin {
        let at = name.find("nn.")?;
        let suffix = &name[at..];
        let prefix = if at == 0 { "" } else { name[..at].strip_suffix('.')? };
        let mut parts = suffix.split('.');
        let (_, index, kind) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_none() && index.parse::<usize>().is_ok() && matches!(kind, "weight" | "bias") {
            return Some((prefix, suffix));
        }
    }
    None
}

/// `name` split before `.suffix` (or the whole name as the suffix, with an empty prefix).
fn strip_suffix<'a>(name: &'a str, suffix: &str) -> Option<(&'a str, &'a str)> {
    if name == suffix {
        return Some(("", name));
    }
    let prefix = name.strip_suffix(suffix)?.strip_suffix('.')?;
    Some((prefix, &name[prefix.len() + 1..]))
}

/// A layer from its tensors (by suffix).
fn parse_layer(
    architecture: Architecture,
    prefix: &str,
    tensors: &BTreeMap<&str, &Tensor>,
    gat: &GatLayerOptions,
) -> Result<Layer> {
    let get = |suffix: &str| -> Result<&Tensor> {
        tensors
            .get(suffix)
            .copied()
            .ok_or_else(|| Error::invalid(format!("tensor `{}`", join(prefix, suffix)), "missing"))
    };
    let linear = |weight: &str, bias: Option<&str>| -> Result<Linear> {
        let w = get(weight)?;
        let [outputs, inputs] = w.shape[..] else {
            return Err(Error::shape(
                format!("tensor `{}` ([out, in])", join(prefix, weight)),
                "2 dimensions",
                format!("{:?}", w.shape),
            ));
        };
        let bias = match bias.and_then(|b| tensors.get(b).map(|t| (b, t))) {
            Some((name, b)) if b.shape != [outputs] => {
                return Err(Error::shape(
                    format!("tensor `{}`", join(prefix, name)),
                    format!("[{outputs}]"),
                    format!("{:?}", b.shape),
                ))
            }
            Some((_, b)) => Some(b.data.clone()),
            None => None,
        };
        Linear::new(Dense::from_vec(outputs, inputs, w.data.clone())?, bias)
    };
    match architecture {
        Architecture::Gcn => Ok(Layer::Gcn(GcnConv::new(linear("lin.weight", Some("bias"))?))),
        Architecture::Gat => {
            let lin = linear("lin.weight", None)?;
            let attention = |name: &str| -> Result<(usize, Vec<f32>)> {
                let tensor = get(name)?;
                match tensor.shape[..] {
                    [1, heads, out] if heads * out == lin.out_features() => Ok((heads, tensor.data.clone())),
                    _ => Err(Error::shape(
                        format!("tensor `{}` ([1, heads, out])", join(prefix, name)),
                        format!("heads x out = {}", lin.out_features()),
                        format!("{:?}", tensor.shape),
                    )),
                }
            };
            let ((heads, att_src), (heads_dst, att_dst)) = (attention("att_src")?, attention("att_dst")?);
            if heads != heads_dst {
                return Err(Error::shape(format!("tensor `{}` heads", join(prefix, "att_dst")), heads, heads_dst));
            }
            let bias = tensors.get("bias").map(|bias| bias.data.clone());
            // Without the metadata, a bias as wide as the heads together says they are concatenated.
            let concat = gat.concat.unwrap_or_else(|| bias.as_ref().is_none_or(|b| b.len() == lin.out_features()));
            Ok(Layer::Gat(GatConv::new(lin, att_src, att_dst, bias, heads, concat, gat.negative_slope)?))
        }
        Architecture::Sage => Ok(Layer::Sage(SageConv::new(
            linear("lin_l.weight", Some("lin_l.bias"))?,
            linear("lin_r.weight", Some("lin_r.bias"))?,
        )?)),
        Architecture::Gin => {
            let eps = get("eps")?;
            if eps.data.len() != 1 {
                return Err(Error::shape(
                    format!("tensor `{}`", join(prefix, "eps")),
                    "one value",
                    format!("{:?}", eps.shape),
                ));
            }
            let mut indices: Vec<usize> =
                tensors.keys().filter_map(|s| s.strip_prefix("nn.")?.strip_suffix(".weight")?.parse().ok()).collect();
            indices.sort_unstable();
            if let Some(orphan) = tensors
                .keys()
                .filter_map(|s| s.strip_prefix("nn.")?.strip_suffix(".bias"))
                .find(|i| !indices.iter().any(|k| k.to_string() == *i))
            {
                return Err(Error::invalid(
                    format!("tensor `{}`", join(prefix, &format!("nn.{orphan}.bias"))),
                    "has no matching weight",
                ));
            }
            let mlp = indices
                .iter()
                .map(|k| linear(&format!("nn.{k}.weight"), Some(&format!("nn.{k}.bias"))))
                .collect::<Result<Vec<_>>>()?;
            Ok(Layer::Gin(GinConv::new(eps.data[0], mlp)?.with_positions(indices)?))
        }
    }
}

/// `GATConv`'s settings PyG keeps out of the `state_dict`, from a model's header metadata: `concat` and
/// `negative_slope` (each one value for all layers or a comma-separated value per layer) and `add_self_loops`,
/// which must be `true` (PyG's default; the structure always has one self-loop per node).
struct GatOptions {
    concat: Vec<bool>,
    negative_slope: Vec<f32>,
}

/// One layer's [`GatOptions`].
struct GatLayerOptions {
    /// `None`: not said, so the bias's width tells.
    concat: Option<bool>,
    negative_slope: f32,
}

impl GatOptions {
    /// The options, or why the metadata is wrong.
    fn from_metadata(metadata: &HashMap<String, String>) -> std::result::Result<Self, String> {
        if let Some(value) = metadata.get("add_self_loops").filter(|value| *value != "true") {
            return Err(format!(
                "add_self_loops={value}: only true is supported, the attention structure has one self-loop per node"
            ));
        }
        Ok(GatOptions {
            concat: metadata_list(metadata, "concat", "true or false")?,
            negative_slope: metadata_list(metadata, "negative_slope", "a number")?,
        })
    }

    /// Layer `at`'s options.
    fn layer(&self, at: usize) -> GatLayerOptions {
        GatLayerOptions {
            concat: for_layer(&self.concat, at),
            negative_slope: for_layer(&self.negative_slope, at).unwrap_or(DEFAULT_NEGATIVE_SLOPE),
        }
    }
}

/// The comma-separated values of metadata `key` (none when it is absent), each parsed as a `T`; the error
/// names the value that is not `expected`.
fn metadata_list<T: FromStr>(
    metadata: &HashMap<String, String>,
    key: &str,
    expected: &str,
) -> std::result::Result<Vec<T>, String> {
    let Some(text) = metadata.get(key) else { return Ok(Vec::new()) };
    text.split(',')
        .map(|value| value.trim().parse().map_err(|_| format!("{key}={text}: `{}` is not {expected}", value.trim())))
        .collect()
}

/// Layer `at`'s value of a per-layer metadata list: its own, or the one value given for every layer.
fn for_layer<T: Copy>(values: &[T], at: usize) -> Option<T> {
    values.get(at).or(values.first()).copied()
}

fn join(prefix: &str, suffix: &str) -> String {
    if prefix.is_empty() {
        suffix.to_owned()
    } else {
        format!("{prefix}.{suffix}")
    }
}

/// Orders layer names as people number them: `conv2` before `conv10`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct NaturalKey(Vec<(String, u64)>, String);

impl NaturalKey {
    fn new(name: &str) -> Self {
        let mut parts = Vec::new();
        let mut rest = name;
        while !rest.is_empty() {
            let text_end = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
            let (text, tail) = rest.split_at(text_end);
            let digits_end = tail.find(|c: char| !c.is_ascii_digit()).unwrap_or(tail.len());
            let (digits, tail) = tail.split_at(digits_end);
            parts.push((text.to_owned(), digits.parse().unwrap_or(u64::MAX)));
            rest = tail;
        }
        NaturalKey(parts, name.to_owned())
    }
}

/// Refuses `widths` (input, hidden..., output) whose weights, `matrices` weight matrices and a bias per layer,
/// would not fit the host's memory: a mistyped width must be an error, not an allocation failure that aborts.
pub(crate) fn check_weights_fit(architecture: Architecture, widths: &[usize], matrices: u64) -> Result<()> {
    let values = widths.windows(2).fold(0u64, |sum, pair| {
        let (inputs, outputs) = (pair[0] as u64, pair[1] as u64);
        sum.saturating_add(inputs.saturating_mul(outputs).saturating_mul(matrices)).saturating_add(outputs)
    });
    host_memory::check(
        || format!("host memory (bytes) for the weights of a {architecture} model of widths {widths:?}"),
        values.saturating_mul(std::mem::size_of::<f32>() as u64),
    )
}
