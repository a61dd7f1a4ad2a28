//! Model weights in the `safetensors` format, as `safetensors.torch.save_file(model.state_dict(), ...)`
//! writes them: named `float32` tensors and a string-to-string metadata header.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use ::safetensors::{Dtype, SafeTensors};

use super::{io_error, parse_error};
use crate::error::Result;

/// A `float32` tensor: its shape and its values in row-major order.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Dimensions, outermost first (PyTorch's `Linear.weight` is `[out, in]`).
    pub shape: Vec<usize>,
    /// Values, row-major.
    pub data: Vec<f32>,
}

/// The contents of a `.safetensors` file.
#[derive(Clone, Debug)]
pub struct TensorFile {
    /// Where it was read from, for error messages.
    pub path: PathBuf,
    /// The header's `__metadata__` (empty when absent).
    pub metadata: HashMap<String, String>,
    /// The tensors by name, in name order.
    pub tensors: BTreeMap<String, Tensor>,
}

/// Reads every tensor of a `.safetensors` file; each must be `F32` (the only type GNN weights take here) and
/// hold finite values only.
pub fn read_safetensors(path: &Path) -> Result<TensorFile> {
    let bytes = std::fs::read(path).map_err(io_error(path))?;
    parse_safetensors(&bytes, path)
}

/// [`read_safetensors`] of a file's `bytes` already in memory (`path` names where they came from, in errors).
pub fn parse_safetensors(bytes: &[u8], path: &Path) -> Result<TensorFile> {
    let invalid =
        |e: ::safetensors::SafeTensorError| parse_error(path, None, format!("not a valid safetensors file: {e}"));
    let (_, header) = SafeTensors::read_metadata(bytes).map_err(invalid)?;
    let file = SafeTensors::deserialize(bytes).map_err(invalid)?;
    let mut tensors = BTreeMap::new();
    for (name, view) in file.iter() {
        if view.dtype() != Dtype::F32 {
            return Err(parse_error(
                path,
                None,
                format!("tensor `{name}` has dtype {:?}; only F32 is supported", view.dtype()),
            ));
        }
        let data: Vec<f32> =
            view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        if let Some(at) = data.iter().position(|v| !v.is_finite()) {
            return Err(parse_error(
                path,
                None,
                format!("tensor `{name}` holds {} at flat index {at}: weights must be finite", data[at]),
            ));
        }
        tensors.insert(name.to_owned(), Tensor { shape: view.shape().to_vec(), data });
    }
    Ok(TensorFile { path: path.to_path_buf(), metadata: header.metadata().clone().unwrap_or_default(), tensors })
}

/// Writes `tensors` as `float32` with `metadata` in the header, as `safetensors.torch.save_file` would.
pub fn write_safetensors(
    path: &Path,
    tensors: &BTreeMap<String, Tensor>,
    metadata: &HashMap<String, String>,
) -> Result<()> {
    let bytes = safetensors_bytes(tensors, metadata, path)?;
    std::fs::write(path, bytes).map_err(io_error(path))
}

/// The bytes [`write_safetensors`] writes (`path` names their destination, in errors).
pub fn safetensors_bytes(
    tensors: &BTreeMap<String, Tensor>,
    metadata: &HashMap<String, String>,
    path: &Path,
) -> Result<Vec<u8>> {
    let bytes: Vec<Vec<u8>> =
        tensors.values().map(|tensor| tensor.data.iter().flat_map(|v| v.to_le_bytes()).collect()).collect();
    let mut views = Vec::with_capacity(tensors.len());
    for ((name, tensor), bytes) in tensors.iter().zip(&bytes) {
        let view = ::safetensors::tensor::TensorView::new(Dtype::F32, tensor.shape.clone(), bytes)
            .map_err(|e| parse_error(path, None, format!("tensor `{name}` of shape {:?}: {e}", tensor.shape)))?;
        views.push((name.as_str(), view));
    }
    let metadata = (!metadata.is_empty()).then(|| metadata.clone());
    ::safetensors::serialize(views, metadata)
        .map_err(|error| parse_error(path, None, format!("cannot be written: {error}")))
}
