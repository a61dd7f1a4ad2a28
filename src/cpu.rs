//! SpMM on the host CPU: the oracle of every PIM test and a backend of its own.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::sparse::{Csr, Dense, Element};

/// `Y = A X` on all host cores: `A` is `n x m` CSR, `X` is `m x F` dense, `Y` is `n x F` in the accumulator
/// type (integers wrap on overflow, as on the DPUs).
pub fn spmm<T: Element>(a: &Csr<T>, x: &Dense<T>) -> Result<Dense<T::Acc>> {
    if x.rows() != a.ncols() {
        return Err(Error::shape("SpMM: rows of X (columns of A)", a.ncols(), x.rows()));
    }
    let features = x.cols();
    let mut y = Dense::<T::Acc>::zeros(a.nrows(), features);
    if features == 0 {
        return Ok(y);
    }
    y.as_mut_slice().par_chunks_mut(features).enumerate().for_each(|(r, out)| {
        let (cols, values) = a.row(r);
        for (&c, &v) in cols.iter().zip(values) {
            for (o, &xv) in out.iter_mut().zip(x.row(c as usize)) {
                *o = T::mul_add(*o, v, xv);
            }
        }
    });
    Ok(y)
}
