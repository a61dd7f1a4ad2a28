//! Comparing a kernel's output with the CPU's, element by element and bit for bit.

use std::fmt;

use pimgnn::Dense;

/// A value compared bit for bit: integers by value, `f32` by its bits, so that `-0.0` is not `0.0` and no
/// rounding difference passes as "close enough".
pub trait Exact: Copy {
    /// Whether `self` and `other` have the same bits.
    fn same(self, other: Self) -> bool;
    /// The value as a report prints it.
    fn show(self) -> String;
}

impl Exact for f32 {
    fn same(self, other: f32) -> bool {
        self.to_bits() == other.to_bits()
    }

    fn show(self) -> String {
        format!("{self:?} (bits {:#010x})", self.to_bits())
    }
}

macro_rules! exact_integer {
    ($($ty:ty),*) => { $(
        impl Exact for $ty {
            fn same(self, other: $ty) -> bool {
                self == other
            }

            fn show(self) -> String {
                self.to_string()
            }
        }
    )* };
}
exact_integer!(i32, u64);

/// How a kernel's output differs from the CPU's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// The output does not even have the expected shape.
    Shape {
        /// The shape the kernel gave.
        got: String,
        /// The CPU's.
        expected: String,
    },
    /// Values differ: the first one (in row-major order) and how many.
    Values {
        /// The first differing element, as the output names it (`Y[12][130]`, `sum of DPU 3`).
        element: String,
        /// The kernel's value there.
        got: String,
        /// The CPU's.
        expected: String,
        /// Elements that differ.
        differing: usize,
        /// Elements compared.
        total: usize,
    },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Shape { got, expected } => write!(f, "output is {got}, expected {expected}"),
            Difference::Values { element, got, expected, differing, total } => {
                write!(f, "{element} = {got}, expected {expected} ({differing} of {total} elements differ)")
            }
        }
    }
}

/// Compares `got` with `expected` element by element, bit for bit; `name(i)` names element `i` in the report.
pub fn compare<T: Exact>(got: &[T], expected: &[T], name: impl Fn(usize) -> String) -> Result<(), Difference> {
    if got.len() != expected.len() {
        return Err(Difference::Shape {
            got: format!("length {}", got.len()),
            expected: format!("length {}", expected.len()),
        });
    }
    let mut differing = got.iter().zip(expected).enumerate().filter(|(_, (g, e))| !g.same(**e));
    let Some((first, (g, e))) = differing.next() else { return Ok(()) };
    Err(Difference::Values {
        element: name(first),
        got: g.show(),
        expected: e.show(),
        differing: 1 + differing.count(),
        total: got.len(),
    })
}

/// Compares the matrix `got` with `expected`: same shape, then every element bit for bit, naming the first
/// differing one `Y[row][column]`.
pub fn compare_dense<T: Exact + Default>(got: &Dense<T>, expected: &Dense<T>) -> Result<(), Difference> {
    let shape = |m: &Dense<T>| format!("{} x {}", m.rows(), m.cols());
    if (got.rows(), got.cols()) != (expected.rows(), expected.cols()) {
        return Err(Difference::Shape { got: shape(got), expected: shape(expected) });
    }
    let cols = expected.cols();
    compare(got.as_slice(), expected.as_slice(), |i| format!("Y[{}][{}]", i / cols, i % cols))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense<T: Copy + Default>(rows: usize, cols: usize, values: Vec<T>) -> Dense<T> {
        Dense::from_vec(rows, cols, values).unwrap()
    }

    #[test]
    fn equal_outputs_pass() {
        let y = dense(2, 3, vec![1.5f32, -0.25, 0.0, 7.0, 8.0, 9.0]);
        assert_eq!(compare_dense(&y, &y.clone()), Ok(()));
        assert_eq!(compare(&[1u64, 2, 3], &[1, 2, 3], |i| i.to_string()), Ok(()));
    }

    #[test]
    fn a_wrong_value_is_named_by_its_row_and_column_with_both_values() {
        let expected = dense(3, 4, (0..12).collect::<Vec<i32>>());
        let mut wrong = expected.clone();
        wrong.row_mut(2)[1] = 99;
        wrong.row_mut(2)[3] = -1;
        let difference = compare_dense(&wrong, &expected).unwrap_err();
        assert_eq!(
            difference,
            Difference::Values {
                element: "Y[2][1]".into(),
                got: "99".into(),
                expected: "9".into(),
                differing: 2,
                total: 12
            }
        );
        assert_eq!(difference.to_string(), "Y[2][1] = 99, expected 9 (2 of 12 elements differ)");
    }

    /// One rounding step apart, and zeros of opposite sign, are differences: f32 is compared by its bits.
    #[test]
    fn f32_is_compared_bit_for_bit() {
        let expected = dense(1, 3, vec![1.0f32, 0.0, 3.0]);
        let one_ulp = dense(1, 3, vec![1.0f32 + f32::EPSILON, 0.0, 3.0]);
        let message = compare_dense(&one_ulp, &expected).unwrap_err().to_string();
        assert!(
            message.starts_with("Y[0][0] = 1.0000001 (bits 0x3f800001), expected 1.0 (bits 0x3f800000)"),
            "{message}"
        );
        let negative_zero = dense(1, 3, vec![1.0f32, -0.0, 3.0]);
        let difference = compare_dense(&negative_zero, &expected);
        assert!(matches!(difference, Err(Difference::Values { element, .. }) if element == "Y[0][1]"));
    }

    #[test]
    fn a_wrong_shape_is_reported_before_any_value() {
        let expected = dense(2, 3, vec![0i32; 6]);
        let difference = compare_dense(&dense(3, 2, vec![0i32; 6]), &expected).unwrap_err();
        assert_eq!(difference.to_string(), "output is 3 x 2, expected 2 x 3");
        let difference = compare(&[1u64], &[1, 2], |i| i.to_string()).unwrap_err();
        assert_eq!(difference.to_string(), "output is length 1, expected length 2");
    }
}
