//! The dense side of a GNN layer on the CPU: PyTorch's `Linear` (`y = x W^T + b`) through the `gemm` crate's
//! SIMD GEMM (AVX-512/AVX2/NEON chosen at run time) on all cores, and the element-wise steps between.
//!
//! `gemm` was measured against `matrixmultiply` on the default workload's 100,000 x 256 x 256 product: 0.13 s
//! against 0.18 s of CPU time on one core.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::matmul::{matmul_into, matmul_rows_into, Op};
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

    /// `x W^T + b` for some rows of `x` (row-major), written into the same rows of the output, `y`: the same
    /// values as [`Linear::forward`] gives those rows when there are more than 64 of them or they are all.
    pub fn forward_rows(&self, x: &[f32], y: &mut [f32]) -> Result<()> {
        y.fill(0.0);
        if let Some(bias) = &self.bias {
            add_row_to(y, bias);
        }
        self.check_rows(x, y)?;
        matmul_rows_into(y, x, &self.weight, Op::Transposed, self.bias.is_some())
    }

    /// `x W^T` (without the bias) for some rows of `x`, written into `y`, as [`Linear::forward_rows`] does.
    pub fn transform_rows(&self, x: &[f32], y: &mut [f32]) -> Result<()> {
        self.check_rows(x, y)?;
        matmul_rows_into(y, x, &self.weight, Op::Transposed, false)
    }

    /// `y += x W^T` for some rows of `x` and `y`, as [`Linear::forward_rows`] does.
    pub fn transform_add_rows(&self, x: &[f32], y: &mut [f32]) -> Result<()> {
        self.check_rows(x, y)?;
        matmul_rows_into(y, x, &self.weight, Op::Transposed, true)
    }

    /// Checks that `x` and `y` hold the same number of whole rows of the input and output widths.
    fn check_rows(&self, x: &[f32], y: &[f32]) -> Result<()> {
        let (inputs, outputs) = (self.in_features(), self.out_features());
        let rows = x.len().checked_div(inputs).or_else(|| y.len().checked_div(outputs)).unwrap_or(0);
        if x.len() != rows * inputs || y.len() != rows * outputs {
            return Err(Error::shape(
                "Linear rows (input values, output values)",
                format!("{} x {inputs}, {} x {outputs}", rows, rows),
                format!("{}, {}", x.len(), y.len()),
            ));
        }
        Ok(())
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
    if y.cols() == 0 {
        return;
    }
    add_row_to(y.as_mut_slice(), row);
}

/// Adds `row` to every row of `values`, rows as wide as `row` (row-major).
pub fn add_row_to(values: &mut [f32], row: &[f32]) {
    if row.is_empty() {
        return;
    }
    values.par_chunks_mut(row.len()).for_each(|out| out.iter_mut().zip(row).for_each(|(o, &b)| *o += b));
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
    add_scaled_to(y.as_mut_slice(), scale, x.as_slice())
}

/// `y += scale * x`, element-wise over slices of one length.
pub fn add_scaled_to(y: &mut [f32], scale: f32, x: &[f32]) -> Result<()> {
    if y.len() != x.len() {
        return Err(Error::shape("element-wise sum (values)", y.len(), x.len()));
    }
    y.par_iter_mut().zip(x.par_iter()).for_each(|(o, &v)| *o += scale * v);
    Ok(())
}

/// `max(0, y)`, element-wise, in place; a NaN stays NaN, as in PyTorch's `relu`.
pub fn relu(y: &mut Dense<f32>) {
    relu_in_place(y.as_mut_slice());
}

/// `max(0, v)` for every value, in place; a NaN stays NaN, as in PyTorch's `relu` (`f32::max` would make it 0,
/// hiding a broken input from every later check).
pub fn relu_in_place(values: &mut [f32]) {
    values.par_iter_mut().filter(|v| **v < 0.0).for_each(|v| *v = 0.0);
}

/// The function a model applies between its layers (PyG's `activation` of the model), and its name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, strum::Display, strum::EnumString, strum::VariantNames)]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
#[strum(parse_err_ty = Error, parse_err_fn = Error::not_one_of::<Self>)]
pub enum Activation {
    /// `max(0, v)`.
    #[default]
    Relu,
    /// `v` for `v > 0`, else `exp(v) - 1` (`alpha = 1`, PyTorch's `F.elu` default).
    Elu,
}

impl Activation {
    /// The function on every value, in place; a NaN stays NaN, as in PyTorch.
    pub fn apply(self, values: &mut [f32]) {
        match self {
            Activation::Relu => relu_in_place(values),
            Activation::Elu => values.par_iter_mut().filter(|v| **v < 0.0).for_each(|v| *v = v.exp_m1()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `rows x cols` matrix of values that round differently in every summation order.
    fn values(rows: usize, cols: usize, seed: u32) -> Dense<f32> {
        let value =
            |at: usize| ((at as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) % 2001) as f32 / 997.0 - 1.0;
        Dense::from_vec(rows, cols, (0..rows * cols).map(value).collect()).unwrap()
    }

    /// Products over ranges of more than 64 rows sum every element as the product over all rows does, inner
    /// dimensions under and over the `gemm` crate's 512-wide block (Cora's 1,433 features) included.
    #[test]
    fn rows_give_the_whole_products_bits() {
        for (inputs, outputs) in [(256, 256), (1433, 16), (40, 9), (600, 70)] {
            let lin = Linear::new(values(outputs, inputs, 1), Some(values(1, outputs, 2).into_vec())).unwrap();
            let x = values(1000, inputs, 3);
            let mut whole = lin.forward(&x).unwrap();
            lin.transform_add(&x, &mut whole).unwrap();
            let mut by_rows = Dense::zeros(1000, outputs);
            for rows in [0..65, 65..400, 400..1000] {
                let (x_rows, out) = (
                    &x.as_slice()[rows.start * inputs..rows.end * inputs],
                    &mut by_rows.as_mut_slice()[rows.start * outputs..rows.end * outputs],
                );
                lin.forward_rows(x_rows, out).unwrap();
                lin.transform_add_rows(x_rows, out).unwrap();
            }
            let bits = |m: &Dense<f32>| m.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert!(bits(&whole) == bits(&by_rows), "{inputs} -> {outputs}: the products by rows differ");
        }
    }

    #[test]
    fn relu_zeroes_negatives_and_keeps_nan() {
        let mut values = [-2.0, -0.0, 0.0, 3.0, f32::NAN, f32::NEG_INFINITY, f32::INFINITY];
        relu_in_place(&mut values);
        assert_eq!(values[..4], [0.0, 0.0, 0.0, 3.0]);
        assert!(values[4].is_nan(), "{values:?}");
        assert_eq!(values[5..], [0.0, f32::INFINITY]);
    }

    #[test]
    fn rows_of_the_wrong_length_are_refused() {
        let lin = Linear::new(values(3, 4, 1), None).unwrap();
        let error = lin.forward_rows(&[0.0; 8], &mut [0.0; 5]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "shape mismatch in Linear rows (input values, output values): expected 2 x 4, 2 x 3, found 8, 5"
        );
        let error = lin.transform_add_rows(&[0.0; 7], &mut [0.0; 6]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "shape mismatch in Linear rows (input values, output values): expected 1 x 4, 1 x 3, found 7, 6"
        );
    }
}
