//! SpMM engines: `Y = A X` for a sparse `A` fixed at construction and dense `X` given per call, on the CPU or
//! on PIM. GNN layers aggregate through this trait, so they run unchanged on every backend.

use std::borrow::Cow;
use std::ops::Range;
use std::time::{Duration, Instant};

use crate::attention::AttentionScores;
use crate::cpu;
use crate::error::{Error, Result};
use crate::sparse::{Csr, Dense, Element};

/// One phase of an SpMM call (e.g. "send X", "kernel", "gather", "merge"), with the wall time it took here
/// and, when a model can tell, the time it would take on real UPMEM hardware.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// Short name, as printed in timing tables.
    pub name: Cow<'static, str>,
    /// Wall time on this machine.
    pub wall: Duration,
    /// Predicted time on UPMEM hardware, when the engine models it.
    pub predicted: Option<Duration>,
}

/// What a call multiplies: `features` columns of X in `heads` groups, each with values of its own (one group: the
/// matrix's values), which the kernels compute from attention scores when `attention`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallShape {
    /// Columns of X.
    pub features: usize,
    /// Groups of columns with values of their own (attention heads).
    pub heads: usize,
    /// Whether the engine computes the values from attention scores ([`SpmmEngine::set_attention`]).
    pub attention: bool,
}

impl CallShape {
    /// `features` columns with the matrix's own values.
    pub fn plain(features: usize) -> Self {
        CallShape { features, heads: 1, attention: false }
    }
}

/// Computes `Y = A X` for the sparse matrix it was built with.
pub trait SpmmEngine<T: Element>: Send {
    /// `(rows, columns)` of `A`.
    fn shape(&self) -> (usize, usize);

    /// `Y = A X`; `X` must have as many rows as `A` has columns.
    fn spmm(&mut self, x: &Dense<T>) -> Result<Dense<T::Acc>>;

    /// The phases of the last [`SpmmEngine::spmm`] or [`SpmmEngine::spmm_streamed`] call, in order (empty
    /// before the first call); a streamed call's stage of finished rows is not among them but returned.
    fn last_phases(&self) -> &[Phase];

    /// `Y = A X`, handing `Y` to `step` by ranges of finished rows as they become final, with the same rows of
    /// each of `outs`: `step(rows, y_rows, outs_rows)` is called once per range, the ranges cover every row
    /// once, and several may run at once on the rayon pool. An engine that assembles `Y` by rows (PIM: merging
    /// the DPUs' blocks) runs `step` on the first rows while it still merges the others; this default computes
    /// `Y` whole and makes one call. Each of `outs` needs `A`'s rows; their widths are the step's.
    fn spmm_streamed(
        &mut self,
        x: &Dense<T>,
        outs: &mut [Dense<f32>],
        step: &RowStep<'_, T::Acc>,
    ) -> Result<StreamedStage> {
        check_streamed_outputs(self.shape().0, outs)?;
        let mut y = self.spmm(x)?;
        step_whole(&mut y, outs, step)
    }

    /// `A`'s values from now on: `values` in its nonzero order (row by row), the structure unchanged and left
    /// where it is, so that only values move. Attention-weighted aggregation gives new values at every call.
    /// An engine that cannot take them says so, and keeps its values.
    fn set_values(&mut self, _values: &[T]) -> Result<()> {
        Err(Error::invalid("SpMM engine", "takes no new values for its resident matrix"))
    }

    /// Values per attention head from now on: `values[k * heads + h]` is nonzero `k`'s value in head `h` (`A`'s
    /// nonzero order), the structure unchanged. Each later call's `X` has `heads` groups of columns of equal
    /// width, and group `h` is multiplied with head `h`'s values ([`cpu::spmm_heads`]): all heads in one call.
    /// [`SpmmEngine::set_values`] goes back to one set of values. An engine that cannot take them says so.
    fn set_head_values(&mut self, _values: &[T], _heads: usize) -> Result<()> {
        Err(Error::invalid("SpMM engine", "takes no values per head for its resident matrix"))
    }

    /// Attention weights from now on, computed where `A` is from `scores` (made for `A`'s structure): as
    /// [`SpmmEngine::set_head_values`] with [`AttentionScores::weights`], one head per score head. On the DPUs
    /// the kernels compute the weights next to the resident structure (only the scores move); elsewhere the
    /// engine computes the same bits. An engine that cannot says so.
    fn set_attention(&mut self, _scores: &AttentionScores) -> Result<()> {
        Err(Error::invalid("SpMM engine", "computes no attention weights for its resident matrix"))
    }

    /// Predicted hardware time of one call of shape `call`, with sending what it needs first (its values or
    /// attention scores), when the engine models hardware (PIM); `None` otherwise.
    fn predict_call(&self, _call: CallShape) -> Option<Duration> {
        None
    }

    /// SDDMM over `A`'s structure: for each nonzero `(i, j)` of `A`, in its nonzero order, `<p_i, q_j>` in the
    /// accumulator type, summed in feature order ([`cpu::sddmm`]); `p` has a row per row of `A` and `q` one per
    /// column. Attention's backward pass needs it; an engine that cannot run it says so.
    fn sddmm(&mut self, _p: &Dense<T>, _q: &Dense<T>) -> Result<Vec<T::Acc>> {
        Err(Error::invalid("SpMM engine", "runs no SDDMM over its resident matrix"))
    }
}

/// Checks values per head for a matrix of `nnz` nonzeros: `heads` (at least one) per nonzero.
pub(crate) fn check_head_values(nnz: usize, values: usize, heads: usize) -> Result<()> {
    if heads == 0 || values != nnz * heads {
        let what = format!("SpMM: values per head ({heads} per nonzero of A)");
        return Err(Error::shape(what, nnz * heads.max(1), values));
    }
    Ok(())
}

/// Runs `step` once over all of `y`, already assembled, and the outputs: the stage of a call with nothing to
/// overlap.
pub(crate) fn step_whole<A: Copy + Default>(
    y: &mut Dense<A>,
    outs: &mut [Dense<f32>],
    step: &RowStep<'_, A>,
) -> Result<StreamedStage> {
    let started = Instant::now();
    step(0..y.rows(), y.as_mut_slice(), &mut outs.iter_mut().map(Dense::as_mut_slice).collect::<Vec<_>>())?;
    let wall = started.elapsed();
    let chunks = vec![Chunk { rows: y.rows(), merge: Duration::ZERO, step: wall }];
    Ok(StreamedStage { wall, merge_predicted: None, chunks })
}

/// What a streamed SpMM runs on finished rows: `(rows, those rows of Y, those rows of each output)`.
pub type RowStep<'a, A> = dyn Fn(Range<usize>, &mut [A], &mut [&mut [f32]]) -> Result<()> + Sync + 'a;

/// Checks that a streamed call's outputs have one row per row of `A`.
pub(crate) fn check_streamed_outputs(rows: usize, outs: &[Dense<f32>]) -> Result<()> {
    match outs.iter().find(|out| out.rows() != rows) {
        Some(out) => Err(Error::shape("streamed SpMM: rows of an output (rows of A)", rows, out.rows())),
        None => Ok(()),
    }
}

/// The rows of every output in `outs` cut at `ranges` (consecutive, from row 0): per range, its rows of each.
pub(crate) fn rows_of_outputs<'a>(outs: &'a mut [Dense<f32>], ranges: &[Range<usize>]) -> Vec<Vec<&'a mut [f32]>> {
    let widths: Vec<usize> = outs.iter().map(Dense::cols).collect();
    let mut rests: Vec<&'a mut [f32]> = outs.iter_mut().map(Dense::as_mut_slice).collect();
    ranges
        .iter()
        .map(|rows| {
            rests
                .iter_mut()
                .zip(&widths)
                .map(|(rest, width)| {
                    let (part, tail) = std::mem::take(rest).split_at_mut(rows.len() * width);
                    *rest = tail;
                    part
                })
                .collect()
        })
        .collect()
}

/// One range of rows of a streamed call: how long merging it and running the step on it took, each on the
/// thread that did it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chunk {
    /// Rows in the range.
    pub rows: usize,
    /// Assembling its rows of `Y` (zero when `Y` came whole).
    pub merge: Duration,
    /// The step on its rows.
    pub step: Duration,
}

/// The stage of a streamed call that assembles `Y` and runs the step on it, range by range.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamedStage {
    /// Wall time of the whole stage here.
    pub wall: Duration,
    /// Predicted hardware time of assembling `Y` when the engine overlapped it with the step (PIM's merge);
    /// `None` when `Y` came whole before the step ran.
    pub merge_predicted: Option<Duration>,
    /// The ranges, in row order.
    pub chunks: Vec<Chunk>,
}

impl StreamedStage {
    /// Whether assembling `Y` overlapped the step.
    pub fn overlapped(&self) -> bool {
        self.merge_predicted.is_some()
    }

    /// The stage as one phase named after `step`: `overlapped: merge + <step>` when it overlapped.
    ///
    /// Its predicted hardware time treats the merge and the step as the two stages of a pipeline over the
    /// ranges, each stage with host cores of its own (the merge streams memory, the dense step computes): range
    /// `k`'s step starts once its rows are merged and the previous range's step is done. A range's merge takes
    /// its share (by rows) of the cost model's merge time; its step takes its share of this stage's wall time
    /// here (the step's part of the time the two stages took together on these cores), as host steps
    /// elsewhere are counted at wall time. Without overlap the phase is the step's, at wall time.
    pub fn phase(&self, step: &str) -> Phase {
        let Some(merge) = self.merge_predicted else {
            return Phase { name: step.to_owned().into(), wall: self.wall, predicted: None };
        };
        let rows: usize = self.chunks.iter().map(|chunk| chunk.rows).sum();
        let busy: Duration = self.chunks.iter().map(|chunk| chunk.merge + chunk.step).sum();
        let step_share = if busy.is_zero() { 0.0 } else { self.wall.as_secs_f64() / busy.as_secs_f64() };
        let (mut merged, mut stepped) = (0.0f64, 0.0f64);
        for chunk in &self.chunks {
            let share = if rows == 0 { 0.0 } else { chunk.rows as f64 / rows as f64 };
            merged += merge.as_secs_f64() * share;
            stepped = stepped.max(merged) + chunk.step.as_secs_f64() * step_share;
        }
        Phase {
            name: format!("overlapped: merge + {step}").into(),
            wall: self.wall,
            predicted: Some(Duration::from_secs_f64(stepped.max(merged))),
        }
    }
}

/// The CPU engine: [`cpu::spmm`] on all host cores.
#[derive(Debug)]
pub struct CpuSpmm<T> {
    a: Csr<T>,
    /// Values per head and their head count, when set ([`SpmmEngine::set_head_values`]).
    head_values: Option<(Vec<T>, usize)>,
    phases: Vec<Phase>,
}

impl<T: Element> CpuSpmm<T> {
    /// An engine over `a`.
    pub fn new(a: Csr<T>) -> Self {
        CpuSpmm { a, head_values: None, phases: Vec::new() }
    }

    /// The sparse matrix.
    pub fn matrix(&self) -> &Csr<T> {
        &self.a
    }
}

impl<T: Element> SpmmEngine<T> for CpuSpmm<T> {
    fn shape(&self) -> (usize, usize) {
        (self.a.nrows(), self.a.ncols())
    }

    fn spmm(&mut self, x: &Dense<T>) -> Result<Dense<T::Acc>> {
        let started = Instant::now();
        let y = match &self.head_values {
            Some((values, heads)) => cpu::spmm_heads(&self.a, values, *heads, x)?,
            None => cpu::spmm(&self.a, x)?,
        };
        self.phases = vec![Phase { name: "cpu spmm".into(), wall: started.elapsed(), predicted: None }];
        Ok(y)
    }

    fn last_phases(&self) -> &[Phase] {
        &self.phases
    }

    fn set_values(&mut self, values: &[T]) -> Result<()> {
        if values.len() != self.a.nnz() {
            return Err(Error::shape("SpMM: new values (one per nonzero of A)", self.a.nnz(), values.len()));
        }
        self.a.values_mut().copy_from_slice(values);
        self.head_values = None;
        Ok(())
    }

    fn set_head_values(&mut self, values: &[T], heads: usize) -> Result<()> {
        check_head_values(self.a.nnz(), values.len(), heads)?;
        self.head_values = Some((values.to_vec(), heads));
        Ok(())
    }

    /// The weights on the host ([`AttentionScores::weights`]), in `f32` (other types take none).
    fn set_attention(&mut self, scores: &AttentionScores) -> Result<()> {
        let Some(weights) = T::from_weights(scores.weights(&self.a)?) else {
            return Err(Error::invalid("CPU SpMM", format!("takes attention weights in f32, not {}", T::NAME)));
        };
        self.head_values = Some((weights, scores.heads()));
        Ok(())
    }

    fn sddmm(&mut self, p: &Dense<T>, q: &Dense<T>) -> Result<Vec<T::Acc>> {
        let started = Instant::now();
        let out = cpu::sddmm(&self.a, p, q)?;
        self.phases = vec![Phase { name: "cpu sddmm".into(), wall: started.elapsed(), predicted: None }];
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(value: u64) -> Duration {
        Duration::from_millis(value)
    }

    #[test]
    fn an_overlapped_stage_is_predicted_as_a_pipeline_of_merge_and_step() {
        // Two ranges; the step took all of the stage's 10 ms of wall time it spent in tasks (6 of 10 busy ms
        // are the step's, so 6 ms). Merges of 2 ms each (the model's 4 ms by rows), steps of 3 ms: the second
        // merge runs under the first step, so 2 + 3 + 3 = 8 ms, not 4 + 6.
        let chunk = Chunk { rows: 50, merge: ms(2), step: ms(3) };
        let stage = StreamedStage { wall: ms(10), merge_predicted: Some(ms(4)), chunks: vec![chunk, chunk] };
        let phase = stage.phase("transform (GEMM)");
        assert_eq!(phase.name, "overlapped: merge + transform (GEMM)");
        assert_eq!((phase.wall, phase.predicted), (ms(10), Some(ms(8))));
        // A merge slower than the steps bounds the stage: 10 + the last step's 3.
        let slow = StreamedStage { merge_predicted: Some(ms(20)), ..stage.clone() };
        assert_eq!(slow.phase("s").predicted, Some(ms(23)));
        // Without overlap the stage is the step's, at wall time.
        let whole = StreamedStage { merge_predicted: None, ..stage };
        let phase = whole.phase("transform (GEMM)");
        assert_eq!((phase.name.as_ref(), phase.predicted), ("transform (GEMM)", None));
    }
}
