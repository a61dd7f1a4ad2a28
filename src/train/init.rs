//! Models to train from scratch, initialised as PyTorch Geometric initialises its layers, from a seed.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use crate::error::{Error, Result};
use crate::gnn::{
    check_weights_fit, Activation, Architecture, GatConv, GinConv, Layer, Linear, Model, SageConv,
    DEFAULT_NEGATIVE_SLOPE,
};
use crate::host_memory;
use crate::sparse::Dense;

/// A model of `architecture` with the given widths (input, hidden..., output), its weights drawn from `seed`
/// the way PyG draws them: `GCNConv` Glorot-uniform weights and zero biases; `SAGEConv` torch `Linear`'s
/// Kaiming-uniform weights (`U(-1/sqrt(in), 1/sqrt(in))`), `lin_l`'s bias likewise and no `lin_r` bias;
/// `GINConv` with `eps = 0` (fixed) and the MLP of PyG's GIN examples, `Linear, ReLU, Linear` with torch
/// `Linear`'s initialisation, whose inner width is the layer's output width, and in the last of several layers
/// its input width, so that every inner width is a hidden one (on Cora: 1433 -> 64 -> 64, then 64 -> 64 -> 7);
/// `GATConv` with Glorot-uniform `lin` and attention vectors and zero biases, its hidden layers of
/// [`GAT_HIDDEN_HEADS`] heads concatenated (one when the width does not divide by it), its last layer of one head
/// averaged, and ELU between layers: PyG's Cora GAT, `GATConv(1433, 8, heads=8)`, `GATConv(64, 7, heads=1,
/// concat=False)`.
pub fn initial_model(architecture: Architecture, widths: &[usize], seed: u64) -> Result<Model> {
    match architecture {
        Architecture::Gcn => Model::seeded_gcn(widths, seed),
        Architecture::Sage => {
            if widths.len() < 2 {
                return Err(Error::invalid("SAGE widths", "need at least an input and an output width"));
            }
            // `lin_l` and `lin_r`.
            check_weights_fit(architecture, widths, 2)?;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let layers = widths
                .windows(2)
                .enumerate()
                .map(|(at, pair)| {
                    let lin_l = torch_linear(&mut rng, pair[0], pair[1], true)?;
                    let lin_r = torch_linear(&mut rng, pair[0], pair[1], false)?;
                    Ok((format!("conv{}", at + 1), Layer::Sage(SageConv::new(lin_l, lin_r)?)))
                })
                .collect::<Result<_>>()?;
            Model::new(Architecture::Sage, layers)
        }
        Architecture::Gin => {
            if widths.len() < 2 {
                return Err(Error::invalid("GIN widths", "need at least an input and an output width"));
            }
            let last = widths.len() - 2;
            let shapes: Vec<(usize, usize, usize)> = widths
                .windows(2)
                .enumerate()
                .map(|(at, pair)| (pair[0], if at == last && last > 0 { pair[0] } else { pair[1] }, pair[1]))
                .collect();
            let values = shapes.iter().fold(0u64, |sum, &(inputs, inner, outputs)| {
                let (inputs, inner, outputs) = (inputs as u64, inner as u64, outputs as u64);
                let weights = inputs.saturating_mul(inner).saturating_add(inner.saturating_mul(outputs));
                sum.saturating_add(weights).saturating_add(inner + outputs)
            });
            host_memory::check(
                || format!("host memory (bytes) for the weights of a gin model of widths {widths:?}"),
                values.saturating_mul(std::mem::size_of::<f32>() as u64),
            )?;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let layers = shapes
                .into_iter()
                .enumerate()
                .map(|(at, (inputs, inner, outputs))| {
                    let mlp = vec![
                        torch_linear(&mut rng, inputs, inner, true)?,
                        torch_linear(&mut rng, inner, outputs, true)?,
                    ];
                    Ok((format!("conv{}", at + 1), Layer::Gin(GinConv::new(0.0, mlp)?)))
                })
                .collect::<Result<_>>()?;
            Model::new(Architecture::Gin, layers)
        }
        Architecture::Gat => {
            if widths.len() < 2 {
                return Err(Error::invalid("GAT widths", "need at least an input and an output width"));
            }
            check_weights_fit(architecture, widths, 1)?;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let last = widths.len() - 2;
            let layers = widths
                .windows(2)
                .enumerate()
                .map(|(at, pair)| {
                    let (inputs, outputs) = (pair[0], pair[1]);
                    let (heads, concat) = match at == last {
                        true => (1, false),
                        false if outputs.is_multiple_of(GAT_HIDDEN_HEADS) => (GAT_HIDDEN_HEADS, true),
                        false => (1, true),
                    };
                    let per_head = if concat { outputs / heads } else { outputs };
                    let transformed = heads * per_head;
                    let lin = Linear::new(glorot(&mut rng, transformed, inputs)?, None)?;
                    // PyG's glorot of `att_*` ([1, heads, out]) over its last two dimensions.
                    let bound = (6.0 / (heads + per_head) as f32).sqrt();
                    let mut att = || (0..transformed).map(|_| rng.random_range(-bound..=bound)).collect::<Vec<f32>>();
                    let (att_src, att_dst) = (att(), att());
                    let bias = Some(vec![0.0; outputs]);
                    let conv = GatConv::new(lin, att_src, att_dst, bias, heads, concat, DEFAULT_NEGATIVE_SLOPE)?;
                    Ok((format!("conv{}", at + 1), Layer::Gat(conv)))
                })
                .collect::<Result<_>>()?;
            Ok(Model::new(Architecture::Gat, layers)?.with_activation(Activation::Elu))
        }
    }
}

/// Heads of a new GAT's hidden layers when their width divides by it (PyG's Cora GAT: 8 heads of 8).
pub const GAT_HIDDEN_HEADS: usize = 8;

/// A `rows x cols` weight Glorot-uniform in `±sqrt(6 / (rows + cols))`, as PyG's `glorot` draws it.
fn glorot(rng: &mut ChaCha8Rng, rows: usize, cols: usize) -> Result<Dense<f32>> {
    let bound = (6.0 / (rows + cols).max(1) as f32).sqrt();
    Dense::from_vec(rows, cols, (0..rows * cols).map(|_| rng.random_range(-bound..=bound)).collect())
}

/// torch's `Linear` initialisation: weight and bias uniform in `±1/sqrt(in)`.
fn torch_linear(rng: &mut ChaCha8Rng, inputs: usize, outputs: usize, bias: bool) -> Result<Linear> {
    let bound = 1.0 / (inputs.max(1) as f32).sqrt();
    let mut draw = |count: usize| (0..count).map(|_| rng.random_range(-bound..=bound)).collect::<Vec<f32>>();
    let weight = Dense::from_vec(outputs, inputs, draw(inputs * outputs))?;
    Linear::new(weight, bias.then(|| draw(outputs)))
}
