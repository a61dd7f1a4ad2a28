//! Models to train from scratch, initialised as PyTorch Geometric initialises its layers, from a seed.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use crate::error::{Error, Result};
use crate::gnn::{check_weights_fit, Architecture, Layer, Linear, Model, SageConv};
use crate::sparse::Dense;

/// A model of `architecture` with the given widths (input, hidden..., output), its weights drawn from `seed`
/// the way PyG draws them: `GCNConv` Glorot-uniform weights and zero biases; `SAGEConv` torch `Linear`'s
/// Kaiming-uniform weights (`U(-1/sqrt(in), 1/sqrt(in))`), `lin_l`'s bias likewise and no `lin_r` bias. GIN's
/// multi-layer perceptron is the caller's design, so it is loaded rather than generated.
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
        Architecture::Gin => Err(Error::invalid(
            "architecture",
            "gin models are not generated (their MLP is the caller's design): load one with --model",
        )),
    }
}

/// torch's `Linear` initialisation: weight and bias uniform in `±1/sqrt(in)`.
fn torch_linear(rng: &mut ChaCha8Rng, inputs: usize, outputs: usize, bias: bool) -> Result<Linear> {
    let bound = 1.0 / (inputs.max(1) as f32).sqrt();
    let mut draw = |count: usize| (0..count).map(|_| rng.random_range(-bound..=bound)).collect::<Vec<f32>>();
    let weight = Dense::from_vec(outputs, inputs, draw(inputs * outputs))?;
    Linear::new(weight, bias.then(|| draw(outputs)))
}
