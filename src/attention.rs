//! GAT's attention weights computed where the aggregation runs: from per-node scores, in integer arithmetic, so
//! that DPUs (which have no floating-point unit) compute them next to the resident matrix and the host computes
//! the same bits.
//!
//! For head `h`, nonzero `(i, j)` (target `i`, source `j`) has the score `e_ij = LeakyReLU(d_i + s_j)` and the
//! weight `w_ij = exp(e_ij - m_i)`, `m_i` the row's largest score; `y_i = sum_j w_ij x_j / (sum_j w_ij + 1e-16)`
//! is PyG's softmax-weighted sum. The host computes `m_i` (one pass over the structure) and sends, in base-2
//! fixed point with [`ATTENTION_FRACTION_BITS`] fraction bits (the scores times `log2(e)`), per column `s_j` and
//! `slope s_j`, per row `-d_i`, `d_i - m_i` and `slope d_i - m_i` ([`AttentionColumn`], [`AttentionRow`]). Then
//! `x = min(0, s_j > -d_i ? (d_i - m_i) + s_j : (slope d_i - m_i) + slope s_j)` takes only integer adds, and
//! `w = 2^x` ([`exp2_weight`]) a table of [`ATTENTION_EXP2_ENTRIES`] powers of two, two multiplies and a count of
//! leading zeros.
//!
//! Error against `exp` in `f64`: the fixed point rounds each score to `2^-21` (in base 2), which moves `x` by at
//! most `1.5 * 2^-20` and the weight by `1.0e-6` of itself; the table's linear step adds at most `9.2e-7`, and
//! the float's 24 bits `6e-8`: `w` is within `2.0e-6` of itself (`the_weights_are_within_their_stated_error`).
//! In the weighted mean that becomes a relative error of at most `4e-6` of the largest `|x_j|`, well inside
//! `1e-4` on logits.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::pim::abi::{
    AttentionColumn, AttentionRow, ATTENTION_EXP2_BITS, ATTENTION_EXP2_ENTRIES, ATTENTION_FRACTION_BITS,
};
use crate::sparse::{Csr, Element};

/// Where a GAT layer's attention weights are computed (parsed in any case).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, strum::Display, strum::EnumString, strum::VariantNames)]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
#[strum(parse_err_ty = Error, parse_err_fn = Error::not_one_of::<Self>)]
pub enum AttentionSite {
    /// On the host in `f32`, as PyG computes them ([`softmax`]), then sent to the engine as values per head.
    Host,
    /// Where the aggregation runs, from the per-node scores in fixed point ([`AttentionScores`]): on the DPUs by
    /// the kernels, on the CPU engine the same bits on the host. `f32` aggregation only.
    Engine,
    /// Whichever the cost model predicts faster: the engine's only on PIM in `f32`, when the predicted hardware
    /// time of its call plus the host's fixed-point scores is below that of a call with values plus the host's
    /// softmax (host steps at this host's measured rates, [`host_rates`]).
    #[default]
    Auto,
}

/// This host's time per weight (one nonzero in one head) of the steps either site runs here: the `f32`
/// softmax ([`softmax`]) and the fixed-point scores with the rows' maxima ([`AttentionScores::new`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostRates {
    /// Seconds per weight of [`softmax`].
    pub softmax: f64,
    /// Seconds per weight of [`AttentionScores::new`].
    pub scores: f64,
}

/// [`HostRates`] measured once per process, on all cores: both steps over a graph of 16,384 rows of 16
/// nonzeros in 4 heads (a million weights, more than the caches hold), best of 3 after a warm-up.
pub fn host_rates() -> HostRates {
    static RATES: std::sync::OnceLock<HostRates> = std::sync::OnceLock::new();
    *RATES.get_or_init(measure_host_rates)
}

fn measure_host_rates() -> HostRates {
    const ROWS: usize = 1 << 14;
    const DEGREE: usize = 16;
    const HEADS: usize = 4;
    let columns: Vec<u32> =
        (0..ROWS * DEGREE).map(|k| ((k / DEGREE * 7919 + k % DEGREE * 104_729) % ROWS) as u32).collect();
    let row_ptr: Vec<u32> = (0..=ROWS).map(|r| (r * DEGREE) as u32).collect();
    let scores: Vec<f32> = (0..ROWS * HEADS).map(|k| (k % 23) as f32 * 0.25 - 3.0).collect();
    // A sample that cannot be built (it always can) leaves the choice to the predicted calls alone.
    let Ok(structure) = Csr::new(ROWS, ROWS, row_ptr, columns, vec![1.0f32; ROWS * DEGREE]) else {
        return HostRates { softmax: 0.0, scores: 0.0 };
    };
    let per_weight = |step: &dyn Fn()| {
        step();
        let best = (0..3)
            .map(|_| {
                let started = std::time::Instant::now();
                step();
                started.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        best / (ROWS * DEGREE * HEADS) as f64
    };
    HostRates {
        softmax: per_weight(&|| drop(softmax(&structure, &scores, &scores, HEADS, 0.2))),
        scores: per_weight(&|| drop(AttentionScores::new(&structure, &scores, &scores, HEADS, 0.2))),
    }
}

/// What PyG's softmax adds to each row's sum of exponentials, so that a row without entries divides by
/// something (`torch_geometric.utils.softmax`).
pub const SOFTMAX_EPSILON: f32 = 1e-16;

/// Per nonzero of `structure` (row = target `i`, column = source `j`) and head, `alpha[k * heads + h]`:
/// `softmax_j(LeakyReLU(target_i + source_j))` over the row in `f32`, as PyG computes it (the row's largest score
/// taken off before `exp`, the sum plus [`SOFTMAX_EPSILON`]); `source` is `columns x heads`, `target` `rows x
/// heads`, row-major.
pub fn softmax(structure: &Csr<f32>, source: &[f32], target: &[f32], heads: usize, slope: f32) -> Result<Vec<f32>> {
    if heads == 0 || source.len() != structure.ncols() * heads || target.len() != structure.nrows() * heads {
        return Err(Error::shape("attention scores (nodes x heads)", structure.nrows() * heads.max(1), source.len()));
    }
    let leaky = |e: f32| if e > 0.0 { e } else { slope * e };
    let row_ptr = structure.row_ptr();
    let mut alpha = vec![0.0f32; structure.nnz() * heads];
    // Rows own disjoint ranges of `alpha`: cut it at the rows' starts.
    let mut rows: Vec<(usize, &mut [f32])> = Vec::with_capacity(structure.nrows());
    let mut rest = alpha.as_mut_slice();
    for row in 0..structure.nrows() {
        let (part, tail) = rest.split_at_mut((row_ptr[row + 1] - row_ptr[row]) as usize * heads);
        rows.push((row, part));
        rest = tail;
    }
    rows.into_par_iter().for_each(|(row, alpha)| {
        let columns = structure.row(row).0;
        for head in 0..heads {
            let dst = target[row * heads + head];
            let score = |k: usize| leaky(dst + source[columns[k] as usize * heads + head]);
            let largest = (0..columns.len()).map(score).fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0f32;
            for k in 0..columns.len() {
                let e = (score(k) - largest).exp();
                alpha[k * heads + head] = e;
                sum += e;
            }
            let sum = sum + SOFTMAX_EPSILON;
            for k in 0..columns.len() {
                alpha[k * heads + head] /= sum;
            }
        }
    });
    Ok(alpha)
}

/// The largest magnitude of a score times `log2(e)` in the fixed point: two of them add up inside `i32`.
const SCORE_LIMIT: f64 = (1u64 << (30 - ATTENTION_FRACTION_BITS)) as f64;

/// A GAT layer's scores for one call, as the engines take them ([`crate::SpmmEngine::set_attention`]): per
/// column (source) and per row (target), head by head, in the fixed point of the [module documentation](self).
#[derive(Clone, Debug, PartialEq)]
pub struct AttentionScores {
    heads: usize,
    /// `columns[j * heads + h]`.
    columns: Vec<AttentionColumn>,
    /// `rows[i * heads + h]`.
    rows: Vec<AttentionRow>,
}

impl AttentionScores {
    /// The scores of `structure`'s nonzeros (row = target, column = source) from the per-node scores `source`
    /// (`columns x heads`, row-major) and `target` (`rows x heads`), with LeakyReLU's `slope`. A score whose
    /// magnitude times `log2(e)` reaches 1,024 (about 710) is out of the fixed point's range: refused with
    /// [`Error::Capacity`], and the caller computes the weights in floating point instead.
    pub fn new<T: Element>(
        structure: &Csr<T>,
        source: &[f32],
        target: &[f32],
        heads: usize,
        slope: f32,
    ) -> Result<Self> {
        if heads == 0 || source.len() != structure.ncols() * heads {
            return Err(Error::shape(
                "attention: source scores (columns x heads)",
                structure.ncols() * heads,
                source.len(),
            ));
        }
        if target.len() != structure.nrows() * heads {
            return Err(Error::shape(
                "attention: target scores (rows x heads)",
                structure.nrows() * heads,
                target.len(),
            ));
        }
        let slope = f64::from(slope);
        let leaky = |e: f64| if e > 0.0 { e } else { slope * e };
        let columns = source
            .par_iter()
            .map(|&s| Ok(AttentionColumn { source: fixed(f64::from(s))?, sloped: fixed(slope * f64::from(s))? }))
            .collect::<Result<Vec<_>>>()?;
        let rows = (0..structure.nrows() * heads)
            .into_par_iter()
            .map(|at| {
                let (row, head) = (at / heads, at % heads);
                let d = f64::from(target[at]);
                let sources = structure.row(row).0.iter().map(|&j| f64::from(source[j as usize * heads + head]));
                let Some(largest) = sources.reduce(f64::max) else { return Ok(AttentionRow::default()) };
                let m = leaky(d + largest);
                Ok(AttentionRow {
                    threshold: fixed(-d)?,
                    above: fixed(d - m)?,
                    below: fixed(slope * d - m)?,
                    reserved: 0,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(AttentionScores { heads, columns, rows })
    }

    /// Attention heads.
    pub fn heads(&self) -> usize {
        self.heads
    }

    /// Columns (sources) scored.
    pub fn nr_columns(&self) -> usize {
        self.columns.len() / self.heads
    }

    /// Rows (targets) scored.
    pub fn nr_rows(&self) -> usize {
        self.rows.len() / self.heads
    }

    /// Column `column`'s scores for head `head`.
    pub(crate) fn column(&self, column: usize, head: usize) -> AttentionColumn {
        self.columns[column * self.heads + head]
    }

    /// Row `row`'s scores for head `head`.
    pub(crate) fn row(&self, row: usize, head: usize) -> AttentionRow {
        self.rows[row * self.heads + head]
    }

    /// The scores of rows `rows` only (for the engine holding those rows), every column kept.
    pub fn row_range(&self, rows: std::ops::Range<usize>) -> Self {
        let rows = self.rows[rows.start * self.heads..rows.end * self.heads].to_vec();
        AttentionScores { heads: self.heads, columns: self.columns.clone(), rows }
    }

    /// Every nonzero's weight in every head, `weights[k * heads + h]`, the bits the DPUs compute: `structure`
    /// must be the one the scores were made for.
    pub fn weights<T: Element>(&self, structure: &Csr<T>) -> Result<Vec<f32>> {
        if (structure.nrows(), structure.ncols()) != (self.nr_rows(), self.nr_columns()) {
            return Err(Error::shape(
                "attention weights: the structure (rows x columns of the scores)",
                format!("{} x {}", self.nr_rows(), self.nr_columns()),
                format!("{} x {}", structure.nrows(), structure.ncols()),
            ));
        }
        let table = exp2_table();
        let heads = self.heads;
        let weights = (0..structure.nrows())
            .into_par_iter()
            .flat_map_iter(|row| {
                let table = &table;
                structure.row(row).0.iter().flat_map(move |&column| {
                    (0..heads).map(move |head| weight(table, self.row(row, head), self.column(column as usize, head)))
                })
            })
            .collect();
        Ok(weights)
    }
}

/// `value` times `log2(e)` in the fixed point, or [`Error::Capacity`] when out of its range.
fn fixed(value: f64) -> Result<i32> {
    let scaled = value * std::f64::consts::LOG2_E;
    if scaled.is_nan() || scaled.abs() >= SCORE_LIMIT {
        return Err(Error::Capacity {
            what: format!("attention score {value} in the DPUs' fixed point (|score| * log2(e) below)"),
            needed: scaled.abs().ceil().min(u64::MAX as f64) as u64,
            limit: SCORE_LIMIT as u64,
        });
    }
    Ok((scaled * f64::from(1u32 << ATTENTION_FRACTION_BITS)).round() as i32)
}

/// The kernels' table: `2^(-k / ATTENTION_EXP2_ENTRIES)` in Q31 (`attention_exp2`), rounded.
pub fn exp2_table() -> Vec<u32> {
    let q31 = f64::from(1u32 << 31);
    (0..ATTENTION_EXP2_ENTRIES)
        .map(|k| ((-(k as f64) / ATTENTION_EXP2_ENTRIES as f64).exp2() * q31).round() as u32)
        .collect()
}

/// The weight of a nonzero from its row's and column's scores, as the kernels compute it.
fn weight(table: &[u32], row: AttentionRow, column: AttentionColumn) -> f32 {
    let x = if column.source > row.threshold { row.above + column.source } else { row.below + column.sloped };
    exp2_weight(table, x.min(0))
}

/// `2^x` for `x <= 0` in the fixed point, as a float, with `table` = [`exp2_table`]: the kernels' arithmetic
/// (`attention_exp2_of` in `dpu/spmm_kernel.h`), bit for bit.
pub fn exp2_weight(table: &[u32], x: i32) -> f32 {
    let magnitude = x.unsigned_abs();
    let whole = magnitude >> ATTENTION_FRACTION_BITS;
    let fraction = magnitude & ((1 << ATTENTION_FRACTION_BITS) - 1);
    let rest_bits = ATTENTION_FRACTION_BITS - ATTENTION_EXP2_BITS;
    let top = table[(fraction >> rest_bits) as usize];
    let rest_ln2 = ((fraction & ((1 << rest_bits) - 1)) * 2839) >> 12;
    let mantissa = top - (((top >> rest_bits) * rest_ln2) >> (ATTENTION_FRACTION_BITS - rest_bits));
    let leading = mantissa.leading_zeros();
    let exponent = 127 - leading as i32 - whole as i32;
    if exponent <= 0 {
        return 0.0;
    }
    f32::from_bits(((exponent as u32) << 23) | (((mantissa << leading) >> 8) & 0x7f_ffff))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weights_are_within_their_stated_error() {
        let table = exp2_table();
        let mut worst = 0.0f64;
        // Every table entry, each with fractions across its step, and whole parts up to far below 2^-126.
        for k in 0..(1i64 << ATTENTION_FRACTION_BITS) * 40 {
            let x = -(k * 37) % (1 << (ATTENTION_FRACTION_BITS + 7));
            let exact = (x as f64 / f64::from(1u32 << ATTENTION_FRACTION_BITS)).exp2();
            let got = f64::from(exp2_weight(&table, x as i32));
            // Down to the smallest normal float the weight keeps its bits; below it is 0.
            if exact >= 2f64.powi(-125) {
                worst = worst.max((got - exact).abs() / exact);
            } else {
                assert!(got <= 2f64.powi(-125), "2^{x}: {got}");
            }
        }
        println!("largest relative error of a weight: {worst:.3e}");
        assert!(worst < 1.0e-6, "{worst}");
        assert_eq!(exp2_weight(&table, 0), 1.0);
    }

    #[test]
    fn weights_are_the_softmax_numerators_with_the_row_maximum_taken_off() {
        // Two rows over three columns; row 0 sees columns 0 and 2, row 1 all three.
        let structure = Csr::new(2, 3, vec![0, 2, 5], vec![0, 2, 0, 1, 2], vec![1.0f32; 5]).unwrap();
        let (source, target) = ([0.5f32, -1.25, 2.0], [-0.75f32, 0.3]);
        let scores = AttentionScores::new(&structure, &source, &target, 1, 0.2).unwrap();
        let weights = scores.weights(&structure).unwrap();
        let leaky = |e: f64| if e > 0.0 { e } else { 0.2 * e };
        for (k, (row, column)) in [(0, 0), (0, 2), (1, 0), (1, 1), (1, 2)].into_iter().enumerate() {
            let e = |j: usize| leaky(f64::from(target[row]) + f64::from(source[j]));
            let largest = structure.row(row).0.iter().map(|&j| e(j as usize)).fold(f64::MIN, f64::max);
            let exact = (e(column) - largest).exp();
            assert!((f64::from(weights[k]) - exact).abs() < 2e-6 * exact, "nonzero {k}: {} vs {exact}", weights[k]);
        }
        let error = AttentionScores::new(&structure, &[800.0, 0.0, 0.0], &target, 1, 0.2).unwrap_err();
        assert!(matches!(error, Error::Capacity { .. }), "{error}");
        let error = AttentionScores::new(&structure, &source, &target[..1], 1, 0.2).unwrap_err();
        assert!(matches!(error, Error::Shape { .. }), "{error}");
    }
}
