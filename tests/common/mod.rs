//! Helpers shared by the GNN tests (each test file uses some of them).
#![allow(dead_code)]

#[cfg(feature = "cli")]
pub mod cli;
pub mod ranks;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use npyz::WriterBuilder;
use pimgnn::gnn::{Architecture, GatConv, GcnConv, GinConv, Layer, Linear, Model, SageConv};
use pimgnn::Dense;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// The real datasets: `PIMGNN_DATASETS`, else `../shared/datasets` beside the workspace root.
pub fn datasets() -> PathBuf {
    match std::env::var_os("PIMGNN_DATASETS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets"),
    }
}

/// A named tensor: name, shape, values.
pub type NamedTensor = (String, Vec<usize>, Vec<f32>);

/// Writes `tensors` as a safetensors file with `metadata`.
pub fn write_safetensors(path: &Path, tensors: &[NamedTensor], metadata: &[(&str, &str)]) {
    let bytes: Vec<Vec<u8>> =
        tensors.iter().map(|(_, _, data)| data.iter().flat_map(|v| v.to_le_bytes()).collect()).collect();
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
        .iter()
        .zip(&bytes)
        .map(|((name, shape, _), bytes)| {
            (name.clone(), safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), bytes).unwrap())
        })
        .collect();
    let metadata: HashMap<String, String> = metadata.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    safetensors::serialize_to_file(views, (!metadata.is_empty()).then_some(metadata), path).unwrap();
}

/// Writes `data` as an `.npy` array of `shape`.
pub fn write_npy<T: npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], data: &[T]) {
    let file = std::fs::File::create(path).unwrap();
    let mut writer = npyz::WriteOptions::new().default_dtype().shape(shape).writer(file).begin_nd().unwrap();
    writer.extend(data.iter().copied()).unwrap();
    writer.finish().unwrap();
}

/// `count` values uniform in [-1, 1) from `rng`.
pub fn uniform(rng: &mut ChaCha8Rng, count: usize) -> Vec<f32> {
    (0..count).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// A seeded generator.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A linear map with weights (and a bias when `bias`) uniform in [-1, 1) from `rng`.
pub fn random_linear(rng: &mut ChaCha8Rng, inputs: usize, outputs: usize, bias: bool) -> Linear {
    let weight = Dense::from_vec(outputs, inputs, uniform(rng, inputs * outputs)).unwrap();
    Linear::new(weight, bias.then(|| uniform(rng, outputs))).unwrap()
}

/// How [`random_model`] shapes layer `at` (from 0) of `outputs` features: whether a SAGE layer's root map has a
/// bias, the hidden width of a GIN layer's two-map MLP, and a GAT layer's heads and whether they are
/// concatenated (each head then has `outputs / heads` features) or averaged (`outputs` each).
pub struct RandomLayers {
    pub sage_root_bias: fn(at: usize) -> bool,
    pub gin_hidden: fn(at: usize, outputs: usize) -> usize,
    pub gat_heads: fn(at: usize) -> (usize, bool),
}

/// A model of `architecture` over `widths` (input, hidden..., output), every map from [`random_linear`].
pub fn random_model(architecture: Architecture, widths: &[usize], rng: &mut ChaCha8Rng, shape: RandomLayers) -> Model {
    let layers = widths
        .windows(2)
        .enumerate()
        .map(|(at, pair)| {
            let (inputs, outputs) = (pair[0], pair[1]);
            let layer = match architecture {
                Architecture::Gcn => Layer::Gcn(GcnConv::new(random_linear(rng, inputs, outputs, true))),
                Architecture::Sage => {
                    let lin_l = random_linear(rng, inputs, outputs, true);
                    let lin_r = random_linear(rng, inputs, outputs, (shape.sage_root_bias)(at));
                    Layer::Sage(SageConv::new(lin_l, lin_r).unwrap())
                }
                Architecture::Gin => {
                    let hidden = (shape.gin_hidden)(at, outputs);
                    let mlp = vec![random_linear(rng, inputs, hidden, true), random_linear(rng, hidden, outputs, true)];
                    Layer::Gin(GinConv::new(0.25, mlp).unwrap())
                }
                Architecture::Gat => {
                    let (heads, concat) = (shape.gat_heads)(at);
                    let transformed = if concat { outputs } else { heads * outputs };
                    let lin = random_linear(rng, inputs, transformed, false);
                    let (att_src, att_dst, bias) =
                        (uniform(rng, transformed), uniform(rng, transformed), uniform(rng, outputs));
                    Layer::Gat(GatConv::new(lin, att_src, att_dst, Some(bias), heads, concat, 0.2).unwrap())
                }
            };
            (format!("conv{}", at + 1), layer)
        })
        .collect();
    Model::new(architecture, layers).unwrap()
}

/// The largest difference between `a` and `b` through [`pimgnn::compare`], so that a length mismatch, a NaN or an
/// infinity fails the test instead of passing a fold with `f32::max`.
pub fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
    pimgnn::compare::max_abs_difference("compared values", a, b).unwrap_or_else(|error| panic!("{error}"))
}

/// The simulator's libdpu-compatible library, which cargo builds beside the test binaries (`upmem-sim-sdk` is a
/// dev-dependency): the hardware backend runs over it without hardware.
pub fn simulator_libdpu() -> PathBuf {
    let deps = std::env::current_exe().expect("the test's path").parent().expect("its directory").to_path_buf();
    let candidates = [deps.join("libdpu.so"), deps.parent().expect("the profile directory").join("libdpu.so")];
    let found = candidates.iter().find(|path| path.is_file());
    found.unwrap_or_else(|| panic!("no libdpu.so of upmem-sim-sdk in {candidates:?}")).clone()
}
