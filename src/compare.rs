//! Comparing computed values with reference values (PyTorch Geometric's outputs, a CPU oracle, another
//! backend) by their largest difference.
//!
//! `f32::max` ignores NaN, so a difference folded from 0.0 with it reports 0 for a result that is NaN
//! everywhere. These functions instead fail on any NaN or infinity on either side, and on operands whose shapes
//! differ, so that a comparison can only pass on finite values of the same shape.
//!
//! ```
//! use pimgnn::{compare, Dense};
//!
//! let ours = Dense::from_vec(1, 3, vec![1.0, 2.0, 3.5])?;
//! let reference = Dense::from_vec(1, 3, vec![1.0, 2.5, 3.0])?;
//! assert_eq!(compare::max_abs_difference("logits", &ours, &reference)?, 0.5);
//! let broken = Dense::from_vec(1, 3, vec![1.0, f32::NAN, 3.0])?;
//! let error = compare::max_abs_difference("logits", &broken, &reference).unwrap_err();
//! assert_eq!(error.to_string(), "logits (result): value 1 is NaN, not a finite number");
//! # Ok::<(), pimgnn::Error>(())
//! ```

use crate::{Dense, Error, Result};

/// Values that can be compared: a flat slice, or a [`Dense`] matrix whose shape must match too.
pub trait Compared {
    /// The values, in order.
    fn values(&self) -> &[f32];
    /// The shape, as it is named in errors.
    fn shape(&self) -> String;
}

impl Compared for [f32] {
    fn values(&self) -> &[f32] {
        self
    }
    fn shape(&self) -> String {
        format!("{} values", self.len())
    }
}

impl Compared for Vec<f32> {
    fn values(&self) -> &[f32] {
        self
    }
    fn shape(&self) -> String {
        self.as_slice().shape()
    }
}

impl Compared for Dense<f32> {
    fn values(&self) -> &[f32] {
        self.as_slice()
    }
    fn shape(&self) -> String {
        format!("{} x {}", self.rows(), self.cols())
    }
}

/// The largest `|ours - reference|`, element by element.
///
/// Fails with [`Error::Shape`] when the shapes differ and [`Error::NotFinite`] when either side holds a NaN or
/// an infinity; `what` names the compared values in the error.
pub fn max_abs_difference<C: Compared + ?Sized>(what: &str, ours: &C, reference: &C) -> Result<f32> {
    let (ours, reference) = finite_pair(what, ours, reference)?;
    Ok(largest_magnitude(ours.iter().zip(reference).map(|(a, b)| a - b)))
}

/// The largest `|ours - reference|` over the largest `|reference|` (the error relative to the reference's
/// scale, so that one small reference value does not dominate); 0 when both are all zeros, infinite when only
/// the reference is.
///
/// Fails as [`max_abs_difference`] does.
pub fn max_relative_difference<C: Compared + ?Sized>(what: &str, ours: &C, reference: &C) -> Result<f32> {
    let (ours, reference) = finite_pair(what, ours, reference)?;
    let largest = largest_magnitude(ours.iter().zip(reference).map(|(a, b)| a - b));
    Ok(if largest == 0.0 { 0.0 } else { largest / largest_magnitude(reference.iter().copied()) })
}

/// `‖ours - reference‖ / ‖reference‖` in the Euclidean norm, accumulated in `f64`; 0 when both are all zeros,
/// infinite when only the reference is.
///
/// Fails as [`max_abs_difference`] does.
pub fn norm_relative_difference<C: Compared + ?Sized>(what: &str, ours: &C, reference: &C) -> Result<f64> {
    let (ours, reference) = finite_pair(what, ours, reference)?;
    let norm = |values: &mut dyn Iterator<Item = f64>| values.map(|x| x * x).sum::<f64>().sqrt();
    let difference = norm(&mut ours.iter().zip(reference).map(|(a, b)| f64::from(*a) - f64::from(*b)));
    Ok(if difference == 0.0 { 0.0 } else { difference / norm(&mut reference.iter().map(|&b| f64::from(b))) })
}

/// The largest `|value|`, 0 for none; only ever given finite values, which `f32::max` compares exactly.
fn largest_magnitude(values: impl Iterator<Item = f32>) -> f32 {
    values.fold(0.0, |largest, value| largest.max(value.abs()))
}

/// Both sides' values, once their shapes are known to match and every value to be finite.
fn finite_pair<'a, C: Compared + ?Sized>(what: &str, ours: &'a C, reference: &'a C) -> Result<(&'a [f32], &'a [f32])> {
    let (ours_shape, reference_shape) = (ours.shape(), reference.shape());
    if ours_shape != reference_shape {
        return Err(Error::shape(format!("{what} (against the reference)"), reference_shape, ours_shape));
    }
    for (side, values) in [("result", ours.values()), ("reference", reference.values())] {
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(Error::NotFinite { what: format!("{what} ({side})"), index, value });
        }
    }
    Ok((ours.values(), reference.values()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_difference_of_finite_values_of_one_shape() {
        let (ours, reference) = (vec![1.0, -2.0, 3.0], vec![1.5, -2.0, 1.0]);
        assert_eq!(max_abs_difference("v", &ours, &reference).unwrap(), 2.0);
        assert_eq!(max_relative_difference("v", &ours, &reference).unwrap(), 2.0 / 2.0);
        let norm = norm_relative_difference("v", &ours, &reference).unwrap();
        assert!((norm - (4.25f64 / 7.25).sqrt()).abs() < 1e-12, "{norm}");
        let zeros = vec![0.0; 3];
        assert_eq!(max_relative_difference("v", &zeros, &zeros).unwrap(), 0.0);
        assert_eq!(norm_relative_difference("v", &zeros, &zeros).unwrap(), 0.0);
        assert_eq!(max_relative_difference("v", &ours, &zeros).unwrap(), f32::INFINITY);
        assert_eq!(norm_relative_difference("v", &ours, &zeros).unwrap(), f64::INFINITY);
    }

    #[test]
    fn any_nan_or_infinity_on_either_side_fails_naming_where() {
        let reference = vec![0.0; 4];
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let ours = vec![0.0, 0.0, bad, 0.0];
            match max_abs_difference("logits", &ours, &reference) {
                Err(Error::NotFinite { what, index: 2, value }) => {
                    assert_eq!(what, "logits (result)");
                    assert_eq!(value.to_bits(), bad.to_bits());
                }
                other => panic!("{bad}: {other:?}"),
            }
            let error = max_relative_difference("logits", &reference, &ours).unwrap_err();
            assert!(matches!(&error, Error::NotFinite { what, index: 2, .. } if what == "logits (reference)"));
            let error = norm_relative_difference("logits", &ours, &reference).unwrap_err();
            assert!(matches!(&error, Error::NotFinite { what, index: 2, .. } if what == "logits (result)"));
        }
    }

    #[test]
    fn a_length_or_shape_mismatch_fails_naming_both_shapes() {
        let error = max_abs_difference("gradient 3", &vec![0.0; 3], &vec![0.0; 4]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "shape mismatch in gradient 3 (against the reference): expected 4 values, found 3 values"
        );
        let (wide, tall) = (Dense::<f32>::zeros(2, 3), Dense::<f32>::zeros(3, 2));
        let error = max_abs_difference("logits", &wide, &tall).unwrap_err();
        assert_eq!(error.to_string(), "shape mismatch in logits (against the reference): expected 3 x 2, found 2 x 3");
    }
}
