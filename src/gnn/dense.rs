//! The dense side of a GNN layer on the CPU: PyTorch's `Linear` (`y = x W^T + b`) through a blocked SIMD
//! GEMM (`matrixmultiply`) on all cores, and the element-wise steps between.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::sparse::Dense;

/// Rows of `x` per parallel GEMM task: large enough for the GEMM's packing to pay off, small enough to spread
/// a few thousand rows over every core.
const GEMM_ROWS_PER_TASK: usize = 256;

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

    /// The bias, if any.
    pub fn bias(&self) -> Option<&[f32]> {
        self.bias.as_deref()
    }

    /// `x W^T`, without the bias.
    pub fn transform(&self, x: &Dense<f32>) -> Result<Dense<f32>> {
        if x.cols() != self.in_features() {
            return Err(Error::shape("Linear input width", self.in_features(), x.cols()));
        }
        let (inputs, outputs) = (self.in_features(), self.out_features());
        let mut y = Dense::zeros(x.rows(), outputs);
        if outputs == 0 || x.rows() == 0 {
            return Ok(y);
        }
        let weight = self.weight.as_slice();
        y.as_mut_slice()
            .par_chunks_mut(GEMM_ROWS_PER_TASK * outputs)
            .zip(x.as_slice().par_chunks(GEMM_ROWS_PER_TASK * inputs))
            .for_each(|(y_block, x_block)| {
                let rows = x_block.len() / inputs.max(1);
                // SAFETY: x_block is rows x inputs row-major (row stride `inputs`), W^T is read from the
                // outputs x inputs row-major weight with row stride 1 and column stride `inputs`, and y_block is
                // rows x outputs row-major; all three slices are exactly that long and y_block aliases nothing.
                unsafe {
                    matrixmultiply::sgemm(
                        rows,
                        inputs,
                        outputs,
                        1.0,
                        x_block.as_ptr(),
                        inputs as isize,
                        1,
                        weight.as_ptr(),
                        1,
                        inputs as isize,
                        0.0,
                        y_block.as_mut_ptr(),
                        outputs as isize,
                        1,
                    );
                }
            });
        Ok(y)
    }

    /// `x W^T + b`.
    pub fn forward(&self, x: &Dense<f32>) -> Result<Dense<f32>> {
        let mut y = self.transform(x)?;
        if let Some(bias) = &self.bias {
            add_row(&mut y, bias);
        }
        Ok(y)
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
