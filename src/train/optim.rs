//! Optimisers with `torch.optim`'s exact update rules (the single-tensor, non-fused code path), weight decay
//! being an L2 term added to the gradient before anything else, as torch's `Adam` and `SGD` do (not AdamW's
//! decoupled decay).

use crate::error::{Error, Result};

/// `torch.optim.Adam` (amsgrad off, maximize off).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adam {
    /// Learning rate.
    pub lr: f32,
    /// Decay rates of the first and second moment estimates.
    pub betas: (f32, f32),
    /// Added to the denominator.
    pub eps: f32,
    /// L2 penalty: `weight_decay * p` is added to the gradient.
    pub weight_decay: f32,
}

impl Default for Adam {
    /// torch's defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, no weight decay.
    fn default() -> Self {
        Adam { lr: 1e-3, betas: (0.9, 0.999), eps: 1e-8, weight_decay: 0.0 }
    }
}

/// `torch.optim.SGD` (maximize off).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sgd {
    /// Learning rate.
    pub lr: f32,
    /// Momentum factor (0: plain gradient descent).
    pub momentum: f32,
    /// Dampening of the gradient in the momentum buffer.
    pub dampening: f32,
    /// Nesterov momentum (needs momentum > 0 and no dampening, as torch requires).
    pub nesterov: bool,
    /// L2 penalty: `weight_decay * p` is added to the gradient.
    pub weight_decay: f32,
}

/// An optimiser's rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptimizerKind {
    /// Adam.
    Adam(Adam),
    /// SGD, with momentum when asked.
    Sgd(Sgd),
}

/// Per-parameter-tensor state.
#[derive(Clone, Debug)]
enum State {
    /// Adam's first and second moments.
    Adam { m: Vec<f32>, v: Vec<f32> },
    /// SGD's momentum buffer, created by the first step.
    Sgd { momentum: Option<Vec<f32>> },
}

/// An optimiser over a fixed list of parameter tensors, with its state: one [`Optimizer::step`] per epoch.
#[derive(Clone, Debug)]
pub struct Optimizer {
    kind: OptimizerKind,
    steps: u32,
    states: Vec<State>,
}

impl Optimizer {
    /// An optimiser for tensors of the given sizes. Hyper-parameters torch refuses are refused here too:
    /// a negative or non-finite learning rate, weight decay, momentum or eps, betas outside `[0, 1)`, Nesterov
    /// without momentum or with dampening.
    pub fn new(kind: OptimizerKind, sizes: &[usize]) -> Result<Self> {
        let check = |name: &str, value: f32| {
            if value.is_finite() && value >= 0.0 {
                Ok(())
            } else {
                Err(Error::invalid(format!("optimiser {name}"), format!("{value} is not a finite value >= 0")))
            }
        };
        let states = match kind {
            OptimizerKind::Adam(adam) => {
                check("learning rate", adam.lr)?;
                check("eps", adam.eps)?;
                check("weight decay", adam.weight_decay)?;
                for (name, beta) in [("beta 1", adam.betas.0), ("beta 2", adam.betas.1)] {
                    if !(0.0..1.0).contains(&beta) {
                        return Err(Error::invalid(format!("Adam {name}"), format!("{beta} is not in [0, 1)")));
                    }
                }
                sizes.iter().map(|&n| State::Adam { m: vec![0.0; n], v: vec![0.0; n] }).collect()
            }
            OptimizerKind::Sgd(sgd) => {
                check("learning rate", sgd.lr)?;
                check("momentum", sgd.momentum)?;
                check("dampening", sgd.dampening)?;
                check("weight decay", sgd.weight_decay)?;
                if sgd.nesterov && (sgd.momentum <= 0.0 || sgd.dampening != 0.0) {
                    return Err(Error::invalid("SGD nesterov", "needs a momentum > 0 and zero dampening"));
                }
                sizes.iter().map(|_| State::Sgd { momentum: None }).collect()
            }
        };
        Ok(Optimizer { kind, steps: 0, states })
    }

    /// The rule and its hyper-parameters.
    pub fn kind(&self) -> OptimizerKind {
        self.kind
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// One step: each of `parameters` moves by its gradient in `gradients` (same order and sizes as at
    /// construction).
    pub fn step(&mut self, parameters: Vec<&mut [f32]>, gradients: &[Vec<f32>]) -> Result<()> {
        if parameters.len() != self.states.len() || gradients.len() != self.states.len() {
            return Err(Error::shape(
                "optimiser step: parameter and gradient tensors",
                self.states.len(),
                format!("{} parameters and {} gradients", parameters.len(), gradients.len()),
            ));
        }
        for (at, (parameter, gradient)) in parameters.iter().zip(gradients).enumerate() {
            if parameter.len() != gradient.len() {
                return Err(Error::shape(
                    format!("gradient of parameter tensor {at}"),
                    parameter.len(),
                    gradient.len(),
                ));
            }
        }
        self.steps += 1;
        let step = self.steps;
        for ((parameter, gradient), state) in parameters.into_iter().zip(gradients).zip(&mut self.states) {
            match (self.kind, state) {
                (OptimizerKind::Adam(adam), State::Adam { m, v }) => adam_step(&adam, step, parameter, gradient, m, v),
                (OptimizerKind::Sgd(sgd), State::Sgd { momentum }) => sgd_step(&sgd, parameter, gradient, momentum),
                _ => unreachable!("the states are made for the optimiser's kind"),
            }
        }
        Ok(())
    }
}

/// torch's `_single_tensor_adam`: the bias corrections in double precision (torch computes them from Python
/// floats), the element-wise updates in single precision.
fn adam_step(adam: &Adam, step: u32, p: &mut [f32], grad: &[f32], m: &mut [f32], v: &mut [f32]) {
    let (beta1, beta2) = adam.betas;
    let correction1 = 1.0 - f64::from(beta1).powi(step as i32);
    let correction2_sqrt = (1.0 - f64::from(beta2).powi(step as i32)).sqrt();
    let step_size = (f64::from(adam.lr) / correction1) as f32;
    let correction2_sqrt = correction2_sqrt as f32;
    for (((p, &g), m), v) in p.iter_mut().zip(grad).zip(m).zip(v) {
        let g = g + adam.weight_decay * *p;
        // `exp_avg.lerp_(grad, 1 - beta1)`: torch's lerp with a weight below 1/2 is `start + w (end - start)`.
        *m += (1.0 - beta1) * (g - *m);
        *v = *v * beta2 + (1.0 - beta2) * g * g;
        let denominator = v.sqrt() / correction2_sqrt + adam.eps;
        *p -= step_size * *m / denominator;
    }
}

/// torch's `_single_tensor_sgd`.
fn sgd_step(sgd: &Sgd, p: &mut [f32], grad: &[f32], momentum: &mut Option<Vec<f32>>) {
    let decayed: Vec<f32> = p.iter().zip(grad).map(|(&p, &g)| g + sgd.weight_decay * p).collect();
    let direction = if sgd.momentum == 0.0 {
        decayed
    } else {
        let buffer = match momentum {
            // The first step's buffer is the gradient itself, undampened.
            None => momentum.insert(decayed.clone()),
            Some(buffer) => {
                for (b, &g) in buffer.iter_mut().zip(&decayed) {
                    *b = *b * sgd.momentum + (1.0 - sgd.dampening) * g;
                }
                buffer
            }
        };
        if sgd.nesterov {
            decayed.iter().zip(buffer.iter()).map(|(&g, &b)| g + sgd.momentum * b).collect()
        } else {
            buffer.clone()
        }
    };
    for (p, d) in p.iter_mut().zip(direction) {
        *p -= sgd.lr * d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adam by the formulas of torch's documentation, in f64.
    fn adam_reference(adam: &Adam, mut p: f64, grads: &[f64]) -> f64 {
        let (b1, b2) = (f64::from(adam.betas.0), f64::from(adam.betas.1));
        let (mut m, mut v) = (0.0, 0.0);
        for (t, &g) in grads.iter().enumerate() {
            let s = (t + 1) as i32;
            let g = g + f64::from(adam.weight_decay) * p;
            m = b1 * m + (1.0 - b1) * g;
            v = b2 * v + (1.0 - b2) * g * g;
            let m_hat = m / (1.0 - b1.powi(s));
            let v_hat = v / (1.0 - b2.powi(s));
            p -= f64::from(adam.lr) * m_hat / (v_hat.sqrt() + f64::from(adam.eps));
        }
        p
    }

    #[test]
    fn adam_follows_torch_with_l2_weight_decay() {
        let adam = Adam { lr: 0.01, weight_decay: 5e-4, ..Adam::default() };
        let grads = [0.3, -0.2, 0.5, 0.0, 1e-3];
        let mut optimizer = Optimizer::new(OptimizerKind::Adam(adam), &[1]).unwrap();
        let mut p = [0.7f32];
        for &g in &grads {
            optimizer.step(vec![&mut p[..]], &[vec![g as f32]]).unwrap();
        }
        let expected = adam_reference(&adam, 0.7, &grads);
        assert!((f64::from(p[0]) - expected).abs() < 1e-6, "{} against {expected}", p[0]);
        assert_eq!(optimizer.steps(), 5);
    }

    #[test]
    fn sgd_momentum_dampening_and_nesterov_follow_torch() {
        // torch: buf_1 = g_1; buf_t = mu buf + (1 - dampening) g_t; nesterov: d = g + mu buf, else d = buf.
        let grads = [1.0f32, 2.0, -1.0];
        for (nesterov, dampening) in [(false, 0.0f32), (false, 0.5), (true, 0.0)] {
            let sgd = Sgd { lr: 0.1, momentum: 0.9, dampening, nesterov, weight_decay: 0.0 };
            let mut optimizer = Optimizer::new(OptimizerKind::Sgd(sgd), &[1]).unwrap();
            let (mut p, mut expected, mut buffer) = ([0.0f32], 0.0f32, None::<f32>);
            for &g in &grads {
                optimizer.step(vec![&mut p[..]], &[vec![g]]).unwrap();
                let b = buffer.map_or(g, |b| 0.9 * b + (1.0 - dampening) * g);
                buffer = Some(b);
                expected -= 0.1 * if nesterov { g + 0.9 * b } else { b };
            }
            assert!(
                (p[0] - expected).abs() < 1e-6,
                "nesterov {nesterov}, dampening {dampening}: {} against {expected}",
                p[0]
            );
        }
    }

    /// The hyper-parameter `kind` is refused for, and why: [`Optimizer::new`] must fail with [`Error::Invalid`].
    fn refusal(kind: OptimizerKind) -> (String, String) {
        match Optimizer::new(kind, &[1]) {
            Err(Error::Invalid { what, reason }) => (what, reason),
            other => panic!("{kind:?}: {other:?}"),
        }
    }

    #[test]
    fn hyper_parameters_torch_refuses_are_refused() {
        let refused = |what: &str, reason: &str| (what.to_owned(), reason.to_owned());
        let nesterov = Sgd { lr: 0.1, nesterov: true, ..Sgd::default() };
        let expected = refused("SGD nesterov", "needs a momentum > 0 and zero dampening");
        assert_eq!(refusal(OptimizerKind::Sgd(nesterov)), expected);
        let beta = Adam { betas: (1.0, 0.999), ..Adam::default() };
        assert_eq!(refusal(OptimizerKind::Adam(beta)), refused("Adam beta 1", "1 is not in [0, 1)"));
        let lr = Adam { lr: -1.0, ..Adam::default() };
        let expected = refused("optimiser learning rate", "-1 is not a finite value >= 0");
        assert_eq!(refusal(OptimizerKind::Adam(lr)), expected);
        let momentum = Sgd { momentum: f32::NAN, ..Sgd::default() };
        let expected = refused("optimiser momentum", "NaN is not a finite value >= 0");
        assert_eq!(refusal(OptimizerKind::Sgd(momentum)), expected);
    }

    #[test]
    fn gradients_of_other_tensors_are_refused() {
        let mut optimizer = Optimizer::new(OptimizerKind::Adam(Adam::default()), &[2]).unwrap();
        let error = optimizer.step(vec![&mut [0.0; 2][..]], &[vec![0.0; 3]]).unwrap_err();
        assert!(matches!(&error, Error::Shape { what, .. } if what == "gradient of parameter tensor 0"), "{error:?}");
        assert_eq!(error.to_string(), "shape mismatch in gradient of parameter tensor 0: expected 2, found 3");
        let error = optimizer.step(vec![], &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "shape mismatch in optimiser step: parameter and gradient tensors: expected 1, found 0 parameters and 0 \
             gradients"
        );
    }
}
