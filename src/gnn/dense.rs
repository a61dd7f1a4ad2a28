//! The dense side of a GNN layer on the CPU: PyTorch's `Linear` (`y = x W^T + b`) through the `gemm` crate's
//! SIMD GEMM (AVX-512/AVX2/NEON chosen at run time) on all cores, and the element-wise steps between.
//!
//! `gemm` was measured against `matrixmultiply` on the default workload's 100,000 x 256 x 256 product: 0.13 s
//! against 0.18 s of CPU time on one core.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::matmul::{matmul_into, Op};
use crate::sparse::Dense;

/// PyTorch's `torch.nn.Linear`: `weight` is `[out, in]`, `y = x W^T + b`.
#[derive(Clone, Debug, PartialEq)]
pub struct Linear {
    weight: Dense<f32>,
    bias: Option<Vec<f32>>,
}

impl Linear {
    /// A linear map from `weight` (`[out, in]`) and an optional `bias` of `out` values.
    pub fn new(weight: Dense<f32>, bias: Option<Vec<f32>>) -> Result<Self> {
        if let Some(bias) = &bias {
            if bias.len() != weight.rows() {
                return Err(Error::shape("Linear bias", weight.rows(), bias.len()));
            }
        }
        Ok(Linear { weight, bias })
    }

    /// Input width.
    pub fn in_features(&self) -> usize {
        self.weight.cols()
    }

    /// Output width.
    pub fn out_features(&self) -> usize {
        self.weight.rows()
    }

    /// The weight, `[out, in]`.
    pub fn weight(&self) -> &Dense<f32> {
        &self.weight
    }

    /// The bias, if any.
    pub fn bias(&self) -> Option<&[f32]> {
        self.bias.as_deref()
    }

    /// The weight and the bias, writable in place (their shapes stay fixed): what an optimiser updates.
    pub(crate) fn parameters_mut(&mut self) -> (&mut [f32], Option<&mut [f32]>) {
        (self.weight.as_mut_slice(), self.bias.as_deref_mut())
    }

    /// `x W^T`, without the bias.
    pub fn transform(&self, x: &Dense<f32>) -> Result<Dense<f32>> {
        let mut y = Dense::zeros(x.rows(), self.out_features());
        self.gemm(x, &mut y, false)?;
        Ok(y)
    }

    /// `x W^T + b`.
    pub fn forward(&self, x: &Dense<f32>) -> Result<Dense<f32>> {
        let mut y = Dense::zeros(x.rows(), self.out_features());
        if let Some(bias) = &self.bias {
            add_row(&mut y, bias);
        }
        self.gemm(x, &mut y, self.bias.is_some())?;
        Ok(y)
    }

    /// `y += x W^T` (the bias not included), as one GEMM.
    pub fn transform_add(&self, x: &Dense<f32>, y: &mut Dense<f32>) -> Result<()> {
        self.gemm(x, y, true)
    }

    /// `y = x W^T`, or `y += x W^T` when `accumulate`, on all cores.
    fn gemm(&self, x: &Dense<f32>, y: &mut Dense<f32>, accumulate: bool) -> Result<()> {
        let (inputs, outputs) = (self.in_features(), self.out_features());
        if x.cols() != inputs {
            return Err(Error::shape("Linear input width", inputs, x.cols()));
        }
        if (y.rows(), y.cols()) != (x.rows(), outputs) {
            return Err(Error::shape(
                "Linear output",
                format!("{} x {outputs}", x.rows()),
                format!("{} x {}", y.rows(), y.cols()),
            ));
        }
        matmul_into(y, x, Op::Plain, &self.weight, Op::Transposed, accumulate)
    }
}

/// Adds `row` to every row of `y`.
pub fn add_row(y: &mut Dense<f32>, row: &[f32]) {
    let cols = y.cols();
    if cols == 0 {
        return;
    }
    y.as_mut_slice().par_chunks_mut(cols).for_each(|out| out.iter_mut().zip(row).for_each(|(o, &b)| *o += b));
}

/// `y += scale * x`, element-wise; both have the same shape.
pub fn add_scaled(y: &mut Dense<f32>, scale: f32, x: &Dense<f32>) -> Result<()> {
    if (y.rows(), y.cols()) != (x.rows(), x.cols()) {
        return Err(Error::shape(
            "element-wise sum",
            format!("{} x {}", y.rows(), y.cols()),
            format!("{} x {}", x.rows(), x.cols()),
        ));
    }
    y.as_mut_slice().par_iter_mut().zip(x.as_slice().par_iter()).for_each(|(o, &v)| *o += scale * v);
    Ok(())
}

/// `max(0, y)`, element-wise, in place.
pub fn relu(y: &mut Dense<f32>) {
    y.as_mut_slice().par_iter_mut().for_each(|v| *v = v.max(0.0));
}
