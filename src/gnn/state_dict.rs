//! Models back to PyTorch Geometric `state_dict`s: the tensor names and layouts [`Model::from_tensors`] reads.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::gat::GatConv;
use super::layer::Layer;
use super::model::{Model, TRAIN_EPS_METADATA};
use crate::error::Result;
use crate::io::safetensors::{parse_safetensors, safetensors_bytes, write_safetensors, Tensor};

impl Model {
    /// The model's tensors by their PyG `state_dict` names (`conv1.lin.weight`, `conv1.bias`, ...; GIN's `eps`
    /// as the one-value tensor PyG keeps).
    pub fn state_dict(&self) -> BTreeMap<String, Tensor> {
        let mut tensors = BTreeMap::new();
        for (prefix, layer) in self.layers() {
            let name = |suffix: &str| if prefix.is_empty() { suffix.to_owned() } else { format!("{prefix}.{suffix}") };
            for named in layer.linears() {
                let weight = named.linear.weight();
                let data = weight.as_slice().to_vec();
                tensors.insert(name(&named.weight), Tensor { shape: vec![weight.rows(), weight.cols()], data });
                if let Some(bias) = named.linear.bias() {
                    tensors.insert(name(&named.bias), Tensor { shape: vec![bias.len()], data: bias.to_vec() });
                }
            }
            match layer {
                Layer::Gin(conv) => {
                    tensors.insert(name("eps"), Tensor { shape: vec![1], data: vec![conv.eps()] });
                }
                Layer::Gat(conv) => {
                    let (att_src, att_dst) = conv.attention();
                    let shape = vec![1, conv.heads(), conv.head_features()];
                    tensors.insert(name("att_src"), Tensor { shape: shape.clone(), data: att_src.to_vec() });
                    tensors.insert(name("att_dst"), Tensor { shape, data: att_dst.to_vec() });
                    if let Some(bias) = conv.bias() {
                        tensors.insert(name("bias"), Tensor { shape: vec![bias.len()], data: bias.to_vec() });
                    }
                }
                Layer::Gcn(_) | Layer::Sage(_) => {}
            }
        }
        tensors
    }

    /// Saves [`Model::state_dict`] as safetensors with [`Model::metadata`] in its header, plus `extra` entries.
    pub fn save(&self, path: &Path, extra: &[(&str, String)]) -> Result<()> {
        let mut metadata: HashMap<String, String> = extra.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        metadata.extend(self.metadata());
        write_safetensors(path, &self.state_dict(), &metadata)
    }

    /// The model as the bytes of a safetensors file ([`Model::save`]'s, without extra entries), to send to
    /// another process.
    pub fn to_safetensors_bytes(&self) -> Result<Vec<u8>> {
        safetensors_bytes(&self.state_dict(), &self.metadata(), Path::new("model sent to another process"))
    }

    /// A model from the bytes of a safetensors file, as [`Model::load`] reads one; `origin` names where they
    /// came from, in errors.
    pub fn from_safetensors_bytes(bytes: &[u8], origin: &str) -> Result<Self> {
        Self::from_tensors(&parse_safetensors(bytes, Path::new(origin))?)
    }

    /// The header metadata [`Model::from_tensors`] reads besides the tensors: the architecture, the layer count,
    /// the input width and the classes (which it checks), which GIN layers train `eps` ([`TRAIN_EPS_METADATA`]),
    /// the activation between layers, and GAT's heads, concatenation and LeakyReLU slope per layer.
    pub fn metadata(&self) -> HashMap<String, String> {
        let mut metadata = HashMap::new();
        metadata.insert("architecture".into(), self.architecture().to_string());
        metadata.insert("layers".into(), self.layers().len().to_string());
        metadata.insert("in_features".into(), self.in_features().to_string());
        metadata.insert("classes".into(), self.out_features().to_string());
        let train_eps: Vec<String> = self
            .layers()
            .iter()
            .filter_map(|(_, layer)| match layer {
                Layer::Gin(conv) => Some(conv.train_eps().to_string()),
                Layer::Gcn(_) | Layer::Sage(_) | Layer::Gat(_) => None,
            })
            .collect();
        if !train_eps.is_empty() {
            metadata.insert(TRAIN_EPS_METADATA.into(), train_eps.join(","));
        }
        metadata.insert("activation".into(), self.activation().to_string());
        let gat: Vec<&GatConv> = self
            .layers()
            .iter()
            .filter_map(|(_, layer)| if let Layer::Gat(conv) = layer { Some(conv) } else { None })
            .collect();
        if !gat.is_empty() {
            let join = |field: &dyn Fn(&GatConv) -> String| gat.iter().map(|c| field(c)).collect::<Vec<_>>().join(",");
            metadata.insert("heads".into(), join(&|conv| conv.heads().to_string()));
            metadata.insert("concat".into(), join(&|conv| conv.concat().to_string()));
            metadata.insert("negative_slope".into(), join(&|conv| conv.negative_slope().to_string()));
            metadata.insert("add_self_loops".into(), "true".into());
        }
        metadata
    }
}
