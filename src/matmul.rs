//! Dense matrix products on the CPU (all cores, the `gemm` crate's SIMD kernels), with either operand read
//! transposed in place rather than copied: `Linear`'s forward `x W^T` and the backward pass's products.

use crate::error::{Error, Result};
use crate::sparse::Dense;

/// How a matrix operand is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// As stored.
    Plain,
    /// Transposed.
    Transposed,
}

impl Op {
    /// `(rows, columns)` of `matrix` read this way.
    fn shape(self, matrix: &Dense<f32>) -> (usize, usize) {
        match self {
            Op::Plain => (matrix.rows(), matrix.cols()),
            Op::Transposed => (matrix.cols(), matrix.rows()),
        }
    }

    /// `(column stride, row stride)` of `matrix` read this way, in elements.
    fn strides(self, matrix: &Dense<f32>) -> (isize, isize) {
        match self {
            Op::Plain => (1, matrix.cols() as isize),
            Op::Transposed => (matrix.cols() as isize, 1),
        }
    }
}

/// `op_a(a) op_b(b)`, a new matrix.
pub(crate) fn matmul(a: &Dense<f32>, op_a: Op, b: &Dense<f32>, op_b: Op) -> Result<Dense<f32>> {
    let mut product = Dense::zeros(op_a.shape(a).0, op_b.shape(b).1);
    matmul_into(&mut product, a, op_a, b, op_b, false)?;
    Ok(product)
}

/// `dst = op_a(a) op_b(b)`, or `dst += op_a(a) op_b(b)` when `accumulate`.
pub(crate) fn matmul_into(
    dst: &mut Dense<f32>,
    a: &Dense<f32>,
    op_a: Op,
    b: &Dense<f32>,
    op_b: Op,
    accumulate: bool,
) -> Result<()> {
    let ((m, k), (k_b, n)) = (op_a.shape(a), op_b.shape(b));
    if k != k_b {
        return Err(Error::shape("matrix product: inner dimensions", k, k_b));
    }
    if (dst.rows(), dst.cols()) != (m, n) {
        return Err(Error::shape(
            "matrix product: output",
            format!("{m} x {n}"),
            format!("{} x {}", dst.rows(), dst.cols()),
        ));
    }
    let ((a_cs, a_rs), (b_cs, b_rs)) = (op_a.strides(a), op_b.strides(b));
    product(dst.as_mut_slice(), (m, n, k), (a.as_slice(), a_cs, a_rs), (b.as_slice(), b_cs, b_rs), accumulate);
    Ok(())
}

/// `dst = a op_b(b)`, or `dst += a op_b(b)` when `accumulate`, for `a` and `dst` given as rows (row-major, as
/// many rows each, `a`'s as wide as `op_b(b)` is tall): a product over some rows of larger matrices. Each
/// element is summed in the same order as by [`matmul_into`] over all the rows, as long as both products have
/// more than 64 rows or are the same product (the `gemm` crate blocks the inner dimension by it alone, except
/// for one row, and for up to 64 rows and columns).
pub(crate) fn matmul_rows_into(dst: &mut [f32], a: &[f32], b: &Dense<f32>, op_b: Op, accumulate: bool) -> Result<()> {
    let (k, n) = op_b.shape(b);
    if k == 0 || n == 0 {
        if !accumulate {
            dst.fill(0.0);
        }
        return Ok(());
    }
    if !a.len().is_multiple_of(k) || dst.len() != a.len() / k * n {
        return Err(Error::shape(
            "matrix product over rows: output values",
            format!("{} rows of {n}", a.len() / k),
            dst.len(),
        ));
    }
    let (b_cs, b_rs) = op_b.strides(b);
    product(dst, (a.len() / k, n, k), (a, 1, k as isize), (b.as_slice(), b_cs, b_rs), accumulate);
    Ok(())
}

/// A matrix operand: its values, column stride and row stride.
type Operand<'a> = (&'a [f32], isize, isize);

/// `dst = a b` (or `dst += a b`) for `dst` `m x n` row-major, `a` `m x k` and `b` `k x n` read through their
/// strides, which the callers checked.
fn product(dst: &mut [f32], (m, n, k): (usize, usize, usize), a: Operand<'_>, b: Operand<'_>, accumulate: bool) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            dst.fill(0.0);
        }
        return;
    }
    let ((a, a_cs, a_rs), (b, b_cs, b_rs)) = (a, b);
    // SAFETY: the callers checked the shapes: `a` read through (a_cs, a_rs) is m x k inside its buffer, `b`
    // through (b_cs, b_rs) is k x n inside its, `dst` is m x n row-major (column stride 1, row stride n), so
    // every access stays in bounds. `dst` is borrowed mutably, so it aliases neither input. `gemm` computes
    // `dst = alpha dst + beta a b`, reading `dst` only when `accumulate`.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            a.as_ptr(),
            a_cs,
            a_rs,
            b.as_ptr(),
            b_cs,
            b_rs,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::Rayon(0),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(rows: usize, cols: usize, values: &[f32]) -> Dense<f32> {
        Dense::from_vec(rows, cols, values.to_vec()).unwrap()
    }

    #[test]
    fn products_read_operands_transposed_in_place() {
        let a = dense(2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let b = dense(2, 2, &[1.0, 0.0, 1.0, 2.0]);
        // a^T b: [[1,4],[2,5],[3,6]] [[1,0],[1,2]]
        let product = matmul(&a, Op::Transposed, &b, Op::Plain).unwrap();
        assert_eq!(product.as_slice(), &[5.0, 8.0, 7.0, 10.0, 9.0, 12.0]);
        // b a: [[1,0],[1,2]] [[1,2,3],[4,5,6]], then added once more.
        let mut sum = matmul(&b, Op::Plain, &a, Op::Plain).unwrap();
        assert_eq!(sum.as_slice(), &[1.0, 2.0, 3.0, 9.0, 12.0, 15.0]);
        matmul_into(&mut sum, &b, Op::Plain, &a, Op::Plain, true).unwrap();
        assert_eq!(sum.as_slice(), &[2.0, 4.0, 6.0, 18.0, 24.0, 30.0]);
        // a a^T
        let gram = matmul(&a, Op::Plain, &a, Op::Transposed).unwrap();
        assert_eq!(gram.as_slice(), &[14.0, 32.0, 32.0, 77.0]);
        let error = matmul(&a, Op::Plain, &b, Op::Plain).unwrap_err();
        assert_eq!(error.to_string(), "shape mismatch in matrix product: inner dimensions: expected 3, found 2");
    }
}
