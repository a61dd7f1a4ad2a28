//! The backward pass's small dense operations: a bias's gradient (column sums) and the gradient through an
//! activation.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::gnn::Activation;
use crate::sparse::Dense;

/// The sum of `matrix`'s rows (a bias's gradient from its output's).
pub(crate) fn column_sums(matrix: &Dense<f32>) -> Vec<f32> {
    let cols = matrix.cols();
    if cols == 0 {
        return Vec::new();
    }
    // Blocks of rows summed in parallel, then the blocks' sums in order: deterministic for a given thread count.
    const ROWS_PER_BLOCK: usize = 1024;
    let partials: Vec<Vec<f32>> = matrix
        .as_slice()
        .par_chunks(cols * ROWS_PER_BLOCK)
        .map(|block| {
            let mut sums = vec![0.0f32; cols];
            for row in block.chunks_exact(cols) {
                sums.iter_mut().zip(row).for_each(|(s, &v)| *s += v);
            }
            sums
        })
        .collect();
    partials.into_iter().fold(vec![0.0; cols], |mut total, block| {
        total.iter_mut().zip(block).for_each(|(t, v)| *t += v);
        total
    })
}

/// `gradient *= (activation > 0)`, element-wise: the gradient through a ReLU whose output was `activation`.
pub(crate) fn relu_backward(gradient: &mut Dense<f32>, activation: &Dense<f32>) -> Result<()> {
    activation_backward(Activation::Relu, gradient, activation)
}

/// The gradient through `function` whose output was `output`, in place, as PyTorch computes it from the output:
/// ReLU's is 0 where `output <= 0`; ELU's (`alpha = 1`) is `output + 1` there, the derivative `exp(v)`.
pub(crate) fn activation_backward(function: Activation, gradient: &mut Dense<f32>, output: &Dense<f32>) -> Result<()> {
    if (gradient.rows(), gradient.cols()) != (output.rows(), output.cols()) {
        return Err(Error::shape(
            format!("{function} gradient"),
            format!("{} x {}", output.rows(), output.cols()),
            format!("{} x {}", gradient.rows(), gradient.cols()),
        ));
    }
    let pairs = gradient.as_mut_slice().par_iter_mut().zip(output.as_slice().par_iter());
    match function {
        Activation::Relu => pairs.for_each(|(g, &out)| {
            if out <= 0.0 {
                *g = 0.0;
            }
        }),
        Activation::Elu => pairs.for_each(|(g, &out)| {
            if out <= 0.0 {
                *g *= out + 1.0;
            }
        }),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(rows: usize, cols: usize, values: &[f32]) -> Dense<f32> {
        Dense::from_vec(rows, cols, values.to_vec()).unwrap()
    }

    #[test]
    fn column_sums_and_relu_backward() {
        let rows = 2500;
        let matrix = dense(rows, 2, &(0..rows * 2).map(|i| (i % 2) as f32 + 1.0).collect::<Vec<_>>());
        assert_eq!(column_sums(&matrix), vec![rows as f32, 2.0 * rows as f32]);
        let mut gradient = dense(1, 3, &[1.0, 2.0, 3.0]);
        relu_backward(&mut gradient, &dense(1, 3, &[0.5, 0.0, 2.0])).unwrap();
        assert_eq!(gradient.as_slice(), &[1.0, 0.0, 3.0]);
        // ELU's output -0.75 came from exp(v) = 0.25.
        let mut gradient = dense(1, 3, &[1.0, 2.0, 3.0]);
        activation_backward(Activation::Elu, &mut gradient, &dense(1, 3, &[0.5, -0.75, 0.0])).unwrap();
        assert_eq!(gradient.as_slice(), &[1.0, 0.5, 3.0]);
    }
}
