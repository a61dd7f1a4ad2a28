//! Aggregation `Y = M X` for a model's layers through one resident [`SpmmEngine`]: exact in `f32`, or
//! quantized to `i32`, `i16` or `i8` with explicit scales (PyGim's approach) and dequantized on the way out.
//!
//! Quantization is symmetric and per tensor: `M_q = round(M s_m)` once, `X_q = round(X s_x)` per call with
//! `s_x` from the largest `|X|`, `Y = (M_q X_q) / (s_m s_x)` (the scales are a [`Quantization`]). The scales are
//! chosen so that no sum of products can leave `i32`, whatever the features: `max_row |M_q|_1 * max |X_q| <=
//! i32::MAX`.
//!
//! Products accumulate in `i32` for every integer type, so the matrix and the features share `i32`'s range
//! (see [`Dtype::I32`]); values that cannot be quantized are refused (see [`Aggregator::new`]).

use std::borrow::Cow;
use std::time::Instant;

use rayon::prelude::*;

use super::norm::Aggregation;
use super::quantize::{
    dequantize, largest_magnitude, quantize, quantize_head_values, quantize_into, quantize_matrix, Quantization,
    Quantized, QuantizedMatrix,
};
use crate::attention::{host_rates, AttentionScores, AttentionSite, SOFTMAX_EPSILON};
use crate::distributed::HaloExchange;
use crate::error::{Error, Result};
use crate::pim::auto::Decision;
use crate::pim::placement::{spmm_engine, Backend, EngineOptions};
use crate::pim::LoadBalance;
use crate::sparse::{Csr, Dense, Element};
use crate::spmm::{CallShape, Phase, RowStep, SpmmEngine, StreamedStage};

mod rank;

pub use rank::INTERIOR_PHASE;

/// The value type aggregation runs in: `f32`, `i32`, `i16` or `i8` (parsed in any case).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, strum::Display, strum::EnumString, strum::VariantNames)]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
#[strum(parse_err_ty = Error, parse_err_fn = Error::not_one_of::<Self>)]
pub enum Dtype {
    /// Exact single precision.
    #[default]
    F32,
    /// Quantized to 32-bit integers.
    ///
    /// Products accumulate in `i32` for every integer type (as in the DPU kernels), so the matrix, the features
    /// and the longest row share `i32`'s 31 bits: the matrix gets `sqrt(i32::MAX / L)` levels, `L` the largest
    /// row's L1 norm in units of the largest entry, and the features what is left. From `L` of about 2 on (GCN's
    /// and GIN's matrices of real graphs; not SAGE's mean once a node has one neighbour, as its row's `L` is 1)
    /// that is within `i16`'s range, so `I32` gets the same scales as [`Dtype::I16`] and the same results, at
    /// twice the bytes; only a wider accumulator would make it more precise.
    I32,
    /// Quantized to 16-bit integers.
    I16,
    /// Quantized to 8-bit integers.
    I8,
}

/// A quantized engine with the scales that keep its sums inside `i32`.
struct QuantizedEngine<T: Element> {
    engine: Box<dyn SpmmEngine<T>>,
    scales: Quantization,
    /// The last call's quantized features, whose memory the next call of the same shape reuses (a new buffer
    /// costs its page faults, as much as quantizing into it).
    levels: Option<Dense<T>>,
    /// Quantizing the values set since the last call, the first phase of the next.
    values_quantized: Option<Phase>,
}

impl<T: Quantized> QuantizedEngine<T> {
    fn new(matrix: &Csr<f32>, options: &EngineOptions) -> Result<(Self, Described)> {
        let QuantizedMatrix { matrix: quantized, scales } = quantize_matrix::<T>(matrix)?;
        let engine = spmm_engine(quantized, options)?;
        let plan = format!(
            "{}; features quantized to +-{}, matrix scale {:.4e}",
            engine.plan, scales.feature_range, scales.matrix_scale
        );
        let described = Described {
            backend: engine.backend,
            plan,
            balance: engine.balance,
            allocated_dpus: engine.allocated_dpus,
            decision: engine.decision,
        };
        Ok((QuantizedEngine { engine: engine.spmm, scales, levels: None, values_quantized: None }, described))
    }

    /// New values for the matrix's structure (rows cut at `row_ptr`), `heads` per nonzero, quantized with scales
    /// of their own.
    fn set_values(&mut self, row_ptr: &[u32], values: &[f32], heads: usize) -> Result<()> {
        let started = Instant::now();
        let (quantized, scales) = quantize_head_values::<T>(row_ptr, values, heads)?;
        if heads == 1 {
            self.engine.set_values(&quantized)?;
        } else {
            self.engine.set_head_values(&quantized, heads)?;
        }
        self.scales = scales;
        self.values_quantized =
            Some(Phase { name: "quantize values".into(), wall: started.elapsed(), predicted: None });
        Ok(())
    }

    /// SDDMM in `T`: `p` and `q` quantized each to `sqrt(i32::MAX / F)` levels (at most the type's), so that no
    /// dot product of `F` products leaves `i32`, and the results scaled back.
    fn sddmm(&mut self, p: &Dense<f32>, q: &Dense<f32>, phases: &mut Vec<Phase>) -> Result<Vec<f32>> {
        let started = Instant::now();
        let levels = T::MAX.min((f64::from(i32::MAX) / q.cols().max(1) as f64).sqrt().floor()).max(1.0) as f32;
        let scale = |name: &str, values: &Dense<f32>| -> Result<f32> {
            let largest = largest_magnitude(values.as_slice()).map_err(|index| Error::NotFinite {
                what: format!("SDDMM {name} to quantize to {} (row-major)", T::NAME),
                index,
                value: values.as_slice()[index],
            })?;
            Ok(if largest > 0.0 { levels / largest } else { 1.0 })
        };
        let (p_scale, q_scale) = (scale("P", p)?, scale("Q", q)?);
        let p_levels = Dense::from_vec(p.rows(), p.cols(), quantize::<T>(p.as_slice(), p_scale))?;
        let q_levels = Dense::from_vec(q.rows(), q.cols(), quantize::<T>(q.as_slice(), q_scale))?;
        phases.push(Phase { name: "quantize".into(), wall: started.elapsed(), predicted: None });
        let scores = self.engine.sddmm(&p_levels, &q_levels)?;
        phases.extend_from_slice(self.engine.last_phases());
        let started = Instant::now();
        let unscale = 1.0 / (p_scale * q_scale);
        let scores = scores.into_par_iter().map(|v| v as f32 * unscale).collect();
        phases.push(Phase { name: "dequantize".into(), wall: started.elapsed(), predicted: None });
        Ok(scores)
    }

    /// `X` quantized, and the factor that takes `M_q X_q` back to `M X`.
    fn quantize(&mut self, x: &Dense<f32>, phases: &mut Vec<Phase>) -> Result<(Dense<T>, f32)> {
        phases.extend(self.values_quantized.take());
        let started = Instant::now();
        let feature_scale = self.scales.feature_scale_of::<T>(x.as_slice())?;
        let quantized = match self.levels.take() {
            Some(mut levels) if (levels.rows(), levels.cols()) == (x.rows(), x.cols()) => {
                quantize_into(x.as_slice(), feature_scale, levels.as_mut_slice());
                levels
            }
            _ => Dense::from_vec(x.rows(), x.cols(), quantize::<T>(x.as_slice(), feature_scale))?,
        };
        phases.push(Phase { name: "quantize".into(), wall: started.elapsed(), predicted: None });
        Ok((quantized, 1.0 / (self.scales.matrix_scale * feature_scale)))
    }

    fn aggregate(&mut self, x: &Dense<f32>, phases: &mut Vec<Phase>) -> Result<Dense<f32>> {
        let (quantized, unscale) = self.quantize(x, phases)?;
        let y = self.engine.spmm(&quantized)?;
        self.levels = Some(quantized);
        phases.extend_from_slice(self.engine.last_phases());

        let started = Instant::now();
        let (rows, cols) = (y.rows(), y.cols());
        let y = Dense::from_vec(rows, cols, dequantize(y.into_vec(), unscale))?;
        phases.push(Phase { name: "dequantize".into(), wall: started.elapsed(), predicted: None });
        Ok(y)
    }

    /// As [`QuantizedEngine::aggregate`], dequantizing each range of rows just before `step` runs on it.
    fn aggregate_streamed(
        &mut self,
        x: &Dense<f32>,
        outs: &mut [Dense<f32>],
        step: &RowStep<'_, f32>,
        phases: &mut Vec<Phase>,
    ) -> Result<StreamedStage> {
        let (quantized, unscale) = self.quantize(x, phases)?;
        let dequantized_step = |rows, y: &mut [i32], outs: &mut [&mut [f32]]| {
            let mut values: Vec<f32> = y.iter().map(|&v| v as f32 * unscale).collect();
            step(rows, &mut values, outs)
        };
        let stage = self.engine.spmm_streamed(&quantized, outs, &dequantized_step)?;
        self.levels = Some(quantized);
        phases.extend_from_slice(self.engine.last_phases());
        Ok(stage)
    }
}

/// `x`'s columns in `heads` groups, each followed by a column of ones.
fn with_ones_columns(x: &Dense<f32>, heads: usize) -> Result<Dense<f32>> {
    let width = x.cols() / heads;
    let wide = heads * (width + 1);
    let mut out = Dense::zeros(x.rows(), wide);
    if width > 0 {
        out.as_mut_slice().par_chunks_mut(wide).zip(x.as_slice().par_chunks(x.cols())).for_each(|(out, row)| {
            for (out, head) in out.chunks_mut(width + 1).zip(row.chunks(width)) {
                out[..width].copy_from_slice(head);
                out[width] = 1.0;
            }
        });
    } else {
        out.as_mut_slice().fill(1.0);
    }
    Ok(out)
}

/// Why an aggregator not built by [`Aggregator::weighted`] takes no values per call.
fn no_structure() -> Error {
    Error::invalid(
        "attention-weighted aggregation",
        "the aggregator keeps no structure on the host for the scores: build it with Aggregator::weighted",
    )
}

/// What an engine tells about itself.
struct Described {
    backend: Backend,
    plan: String,
    balance: Option<LoadBalance>,
    allocated_dpus: Option<usize>,
    decision: Option<Decision>,
}

enum Engines {
    Exact(Box<dyn SpmmEngine<f32>>),
    I32(QuantizedEngine<i32>),
    I16(QuantizedEngine<i16>),
    I8(QuantizedEngine<i8>),
}

/// Aggregates with one matrix, resident in its engine for every layer of a model.
pub struct Aggregator {
    engines: Engines,
    /// The matrix as loaded, kept on the host by [`Aggregator::weighted`]: the structure attention scores.
    structure: Option<Csr<f32>>,
    dtype: Dtype,
    described: Described,
    phases: Vec<Phase>,
    shape: (usize, usize),
    /// Where attention weights are computed, as asked.
    attention: AttentionSite,
    /// The remote feature rows each call's own rows are extended with, for one rank's block of a partitioned
    /// matrix ([`Aggregator::with_halo`]).
    halo: Option<Box<dyn HaloExchange>>,
    /// On a rank whose exchange overlaps aggregation ([`Aggregator::for_rank`]): the aggregator of the block's
    /// interior rows, which aggregates them while the halo comes; [`Aggregator::engines`] then hold the
    /// block's other rows.
    interior: Option<Box<Aggregator>>,
}

impl Aggregator {
    /// An aggregator for `matrix` in `dtype` on the engine `options` asks for.
    ///
    /// A quantized `dtype` cannot hold a NaN or an infinity (rounding makes a NaN 0, and an infinity would take
    /// the scale to 0), so a matrix holding one is refused with [`Error::NotFinite`], as are such features in
    /// [`Aggregator::aggregate`]; in `f32` they propagate as in any floating-point product.
    pub fn new(matrix: Csr<f32>, dtype: Dtype, options: &EngineOptions) -> Result<Self> {
        let shape = (matrix.nrows(), matrix.ncols());
        let (engines, described) = match dtype {
            Dtype::F32 => {
                let engine = spmm_engine(matrix, options)?;
                let described = Described {
                    backend: engine.backend,
                    plan: engine.plan,
                    balance: engine.balance,
                    allocated_dpus: engine.allocated_dpus,
                    decision: engine.decision,
                };
                (Engines::Exact(engine.spmm), described)
            }
            Dtype::I32 => {
                let (engine, described) = QuantizedEngine::new(&matrix, options)?;
                (Engines::I32(engine), described)
            }
            Dtype::I16 => {
                let (engine, described) = QuantizedEngine::new(&matrix, options)?;
                (Engines::I16(engine), described)
            }
            Dtype::I8 => {
                let (engine, described) = QuantizedEngine::new(&matrix, options)?;
                (Engines::I8(engine), described)
            }
        };
        let attention = options.attention;
        Ok(Aggregator {
            engines,
            structure: None,
            dtype,
            described,
            phases: Vec::new(),
            shape,
            attention,
            halo: None,
            interior: None,
        })
    }

    /// The aggregator `aggregation`'s `matrix` needs: [`Aggregator::weighted`] for attention, whose values
    /// change at every call, else [`Aggregator::new`].
    pub fn for_aggregation(
        aggregation: Aggregation,
        matrix: Csr<f32>,
        dtype: Dtype,
        options: &EngineOptions,
    ) -> Result<Self> {
        match aggregation {
            Aggregation::Attention => Self::weighted(matrix, dtype, options),
            _ => Self::new(matrix, dtype, options),
        }
    }

    /// An aggregator for `matrix` whose values change at every call (attention's,
    /// [`Aggregator::aggregate_weighted`]) while its structure stays: as [`Aggregator::new`], keeping `matrix` on
    /// the host as well for the scores ([`Aggregator::structure`]).
    pub fn weighted(matrix: Csr<f32>, dtype: Dtype, options: &EngineOptions) -> Result<Self> {
        let structure = matrix.clone();
        let mut aggregator = Self::new(matrix, dtype, options)?;
        aggregator.structure = Some(structure);
        Ok(aggregator)
    }

    /// Makes this aggregator one rank's of a partitioned matrix: its matrix is the rank's
    /// [`RankBlock`](crate::distributed::RankBlock)'s, each call gives the rank's own feature rows, and
    /// `exchange` brings the halo's before the engine aggregates (a phase `halo exchange`). Attention's calls
    /// ([`Aggregator::aggregate_heads`], [`Aggregator::aggregate_attention`]) and [`Aggregator::sddmm`] take
    /// features over the block's columns instead, as the scores need the halo's rows before the aggregation
    /// does: [`Aggregator::extend_with_halo`] brings them.
    pub fn with_halo(mut self, exchange: Box<dyn HaloExchange>) -> Result<Self> {
        if exchange.local_rows() != self.shape.0 {
            return Err(Error::shape("halo exchange: the rank's rows", self.shape.0, exchange.local_rows()));
        }
        self.halo = Some(exchange);
        Ok(self)
    }

    /// `x`, the rank's own feature rows, followed by the halo's (a phase `halo exchange` appended to `phases`),
    /// on a rank's aggregator ([`Aggregator::with_halo`]); `x` itself on any other. Every rank calls it at the
    /// same time.
    pub fn extend_with_halo<'a>(&mut self, x: &'a Dense<f32>, phases: &mut Vec<Phase>) -> Result<Cow<'a, Dense<f32>>> {
        let Some(exchange) = &mut self.halo else { return Ok(Cow::Borrowed(x)) };
        if x.rows() != exchange.local_rows() {
            return Err(Error::shape(
                "aggregation: rows of the features (the rank's nodes)",
                exchange.local_rows(),
                x.rows(),
            ));
        }
        let started = Instant::now();
        let extended = exchange.extend(x)?;
        if (extended.rows(), extended.cols()) != (self.shape.1, x.cols()) {
            return Err(Error::shape(
                "halo exchange: the rank's rows and its halo's",
                format!("{} x {}", self.shape.1, x.cols()),
                format!("{} x {}", extended.rows(), extended.cols()),
            ));
        }
        phases.push(Phase { name: "halo exchange".into(), wall: started.elapsed(), predicted: None });
        Ok(Cow::Owned(extended))
    }

    /// `x` ready for the engine: extended with the halo's rows on a rank ([`Aggregator::extend_with_halo`]),
    /// checked against the matrix's columns.
    fn extended<'a>(&mut self, x: &'a Dense<f32>) -> Result<Cow<'a, Dense<f32>>> {
        let mut exchanged = Vec::new();
        let extended = self.extend_with_halo(x, &mut exchanged)?;
        self.phases.extend(exchanged);
        self.check_columns(&extended)?;
        Ok(extended)
    }

    /// Refuses features without a row per column of the matrix.
    fn check_columns(&self, x: &Dense<f32>) -> Result<()> {
        if x.rows() != self.shape.1 {
            return Err(Error::shape("aggregation: rows of the features (nodes)", self.shape.1, x.rows()));
        }
        Ok(())
    }

    /// `M X` in `f32`, through the engine (quantized and dequantized around it for integer dtypes).
    pub fn aggregate(&mut self, x: &Dense<f32>) -> Result<Dense<f32>> {
        self.phases.clear();
        if self.interior.is_some() {
            return self.aggregate_split(x);
        }
        let x = self.extended(x)?;
        self.aggregate_columns(x.as_ref())
    }

    /// `M X` for `x` over the matrix's columns (on a rank, already extended with the halo's rows).
    fn aggregate_columns(&mut self, x: &Dense<f32>) -> Result<Dense<f32>> {
        self.check_columns(x)?;
        match &mut self.engines {
            Engines::Exact(engine) => {
                let y = engine.spmm(x)?;
                self.phases.extend_from_slice(engine.last_phases());
                Ok(y)
            }
            Engines::I32(engine) => engine.aggregate(x, &mut self.phases),
            Engines::I16(engine) => engine.aggregate(x, &mut self.phases),
            Engines::I8(engine) => engine.aggregate(x, &mut self.phases),
        }
    }

    /// `M' X` in `f32` for `M'` the resident matrix's structure with `values` (one per nonzero, in its order):
    /// attention's aggregation, whose values change at every call. Only the values move to the engine (on the
    /// DPUs, one write of their values region), quantized with scales of their own in an integer dtype. An
    /// aggregator not built by [`Aggregator::weighted`] refuses with [`Error::Invalid`].
    pub fn aggregate_weighted(&mut self, values: &[f32], x: &Dense<f32>) -> Result<Dense<f32>> {
        self.aggregate_heads(values, 1, x)
    }

    /// `M'_h X_h` for every head `h` in one call: `x`'s columns are `heads` groups of equal width, group `h`
    /// aggregated with the resident structure and head `h`'s values, `values[k * heads + h]` for nonzero `k`
    /// ([`SpmmEngine::set_head_values`]). On the DPUs each feature group gets only its heads' values. As
    /// [`Aggregator::aggregate_weighted`] otherwise (which is one head), except on a rank: there `x` is over the
    /// block's columns, its own rows and the halo's ([`Aggregator::extend_with_halo`]).
    pub fn aggregate_heads(&mut self, values: &[f32], heads: usize, x: &Dense<f32>) -> Result<Dense<f32>> {
        let Some(structure) = &self.structure else { return Err(no_structure()) };
        crate::spmm::check_head_values(structure.nnz(), values.len(), heads)?;
        let row_ptr = structure.row_ptr();
        match &mut self.engines {
            Engines::Exact(engine) if heads == 1 => engine.set_values(values)?,
            Engines::Exact(engine) => engine.set_head_values(values, heads)?,
            Engines::I32(engine) => engine.set_values(row_ptr, values, heads)?,
            Engines::I16(engine) => engine.set_values(row_ptr, values, heads)?,
            Engines::I8(engine) => engine.set_values(row_ptr, values, heads)?,
        }
        self.phases.clear();
        self.aggregate_columns(x)
    }

    /// Where a GAT layer's attention weights for `heads` heads of `head_features` each are computed: as asked
    /// ([`EngineOptions::attention`]), with [`AttentionSite::Auto`] resolved by the cost model (the engine's
    /// only in `f32` on an engine that predicts hardware time; see [`AttentionSite::Auto`]).
    pub fn attention_site(&self, heads: usize, head_features: usize) -> AttentionSite {
        let Some(structure) = &self.structure else { return AttentionSite::Host };
        let (AttentionSite::Auto, Engines::Exact(engine)) = (self.attention, &self.engines) else {
            return if self.attention == AttentionSite::Auto { AttentionSite::Host } else { self.attention };
        };
        let weights = (structure.nnz() * heads) as f64;
        let rates = host_rates();
        let on_engine = CallShape { features: heads * (head_features + 1), heads, attention: true };
        let with_values = CallShape { features: heads * head_features, heads, attention: false };
        match (engine.predict_call(on_engine), engine.predict_call(with_values)) {
            (Some(engine), Some(values))
                if engine.as_secs_f64() + rates.scores * weights < values.as_secs_f64() + rates.softmax * weights =>
            {
                AttentionSite::Engine
            }
            _ => AttentionSite::Host,
        }
    }

    /// Where attention weights are computed, as asked (before [`Aggregator::attention_site`] resolves `Auto`).
    pub fn attention_option(&self) -> AttentionSite {
        self.attention
    }

    /// Every head's softmax-weighted aggregation, with the weights computed by the engine from `scores`
    /// ([`SpmmEngine::set_attention`]): `x` (`nodes x heads * C`) gets a column of ones after each head's
    /// features, so that the call also sums each row's weights, and each head's result is divided by its sum
    /// (plus PyG's [`SOFTMAX_EPSILON`]). `f32` aggregation only; an aggregator not built by
    /// [`Aggregator::weighted`] refuses, as [`Aggregator::aggregate_weighted`] does.
    pub fn aggregate_attention(&mut self, scores: &AttentionScores, x: &Dense<f32>) -> Result<Dense<f32>> {
        if self.structure.is_none() {
            return Err(no_structure());
        }
        let Engines::Exact(engine) = &mut self.engines else {
            return Err(Error::invalid(
                "attention weights on the engine",
                format!("need f32 aggregation, not {}: compute them on the host", self.dtype),
            ));
        };
        let heads = scores.heads();
        if x.rows() != self.shape.1 || !x.cols().is_multiple_of(heads) {
            let expected = format!("{} rows, heads of equal width ({heads} heads)", self.shape.1);
            return Err(Error::shape(
                "attention aggregation: features",
                expected,
                format!("{} x {}", x.rows(), x.cols()),
            ));
        }
        self.phases.clear();
        let width = x.cols() / heads;
        let started = Instant::now();
        let with_ones = with_ones_columns(x, heads)?;
        self.phases.push(Phase { name: "features with ones".into(), wall: started.elapsed(), predicted: None });
        engine.set_attention(scores)?;
        let y = engine.spmm(&with_ones)?;
        self.phases.extend_from_slice(engine.last_phases());
        let started = Instant::now();
        let normalised = y
            .as_slice()
            .par_chunks(heads * (width + 1))
            .flat_map_iter(|row| {
                row.chunks(width + 1).flat_map(|head| {
                    let sum = head[width] + SOFTMAX_EPSILON;
                    head[..width].iter().map(move |&v| v / sum)
                })
            })
            .collect();
        self.phases.push(Phase {
            name: "divide by the weights' sums".into(),
            wall: started.elapsed(),
            predicted: None,
        });
        Dense::from_vec(self.shape.0, x.cols(), normalised)
    }

    /// SDDMM over the resident matrix's structure: for each nonzero `(i, j)`, in its order, `<p_i, q_j>` (in an
    /// integer dtype, `p` and `q` quantized each with a scale of its own and the results scaled back), on the
    /// engine's backend. Its phases are in [`Aggregator::last_phases`].
    pub fn sddmm(&mut self, p: &Dense<f32>, q: &Dense<f32>) -> Result<Vec<f32>> {
        if self.interior.is_some() {
            return Err(Error::invalid(
                "SDDMM",
                "a rank's aggregator split into interior and other rows has no one structure",
            ));
        }
        self.phases.clear();
        match &mut self.engines {
            Engines::Exact(engine) => {
                let scores = engine.sddmm(p, q)?;
                self.phases.extend_from_slice(engine.last_phases());
                Ok(scores)
            }
            Engines::I32(engine) => engine.sddmm(p, q, &mut self.phases),
            Engines::I16(engine) => engine.sddmm(p, q, &mut self.phases),
            Engines::I8(engine) => engine.sddmm(p, q, &mut self.phases),
        }
    }

    /// The resident matrix's structure as loaded, which attention scores run over, when built by
    /// [`Aggregator::weighted`]; else [`Error::Invalid`].
    pub fn structure(&self) -> Result<&Csr<f32>> {
        self.structure.as_ref().ok_or_else(no_structure)
    }

    /// `M X` in `f32` handed to `step` by ranges of finished rows, with the same rows of each of `outs`, as
    /// [`SpmmEngine::spmm_streamed`] does: on PIM, `step` runs on the first rows while the others are still
    /// merged. Returns the timing of that stage; the phases before it are in [`Aggregator::last_phases`].
    pub fn aggregate_streamed(
        &mut self,
        x: &Dense<f32>,
        outs: &mut [Dense<f32>],
        step: &RowStep<'_, f32>,
    ) -> Result<StreamedStage> {
        self.phases.clear();
        if self.interior.is_some() {
            return self.aggregate_split_streamed(x, outs, step);
        }
        let x = self.extended(x)?;
        self.aggregate_columns_streamed(x.as_ref(), outs, step)
    }

    /// As [`Aggregator::aggregate_streamed`] for `x` over the matrix's columns (on a rank, already extended).
    fn aggregate_columns_streamed(
        &mut self,
        x: &Dense<f32>,
        outs: &mut [Dense<f32>],
        step: &RowStep<'_, f32>,
    ) -> Result<StreamedStage> {
        self.check_columns(x)?;
        match &mut self.engines {
            Engines::Exact(engine) => {
                let stage = engine.spmm_streamed(x, outs, step)?;
                self.phases.extend_from_slice(engine.last_phases());
                Ok(stage)
            }
            Engines::I32(engine) => engine.aggregate_streamed(x, outs, step, &mut self.phases),
            Engines::I16(engine) => engine.aggregate_streamed(x, outs, step, &mut self.phases),
            Engines::I8(engine) => engine.aggregate_streamed(x, outs, step, &mut self.phases),
        }
    }

    /// The phases of the last [`Aggregator::aggregate`] or [`Aggregator::aggregate_streamed`] call (before the
    /// streamed stage).
    pub fn last_phases(&self) -> &[Phase] {
        &self.phases
    }

    /// The value type aggregation runs in.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// The scales of quantized aggregation; `None` in `f32`. A rank's aggregator split by [`Aggregator::for_rank`]
    /// gives its other rows' (its interior rows have scales of their own).
    pub fn quantization(&self) -> Option<Quantization> {
        match &self.engines {
            Engines::Exact(_) => None,
            Engines::I32(engine) => Some(engine.scales),
            Engines::I16(engine) => Some(engine.scales),
            Engines::I8(engine) => Some(engine.scales),
        }
    }

    /// The resident matrix's rows and columns (on a rank, its own nodes, and those with the halo's).
    pub fn shape(&self) -> (usize, usize) {
        self.shape
    }

    /// The backend the engine runs on.
    pub fn backend(&self) -> Backend {
        self.described.backend
    }

    /// Nonzeros per DPU, when aggregating on PIM.
    pub fn balance(&self) -> Option<LoadBalance> {
        self.described.balance
    }

    /// DPUs the engine allocated, when aggregating on PIM.
    pub fn allocated_dpus(&self) -> Option<usize> {
        self.described.allocated_dpus
    }

    /// How the engine executes, in one line.
    pub fn plan(&self) -> &str {
        &self.described.plan
    }

    /// The model's pick and its predictions, when the backend asked for was [`Backend::Auto`] or
    /// [`Backend::Split`] (without hardware, `auto` runs PIM on the simulator whatever it picks).
    pub fn decision(&self) -> Option<&Decision> {
        self.described.decision.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu() -> EngineOptions {
        EngineOptions { backend: Backend::Cpu, ..EngineOptions::default() }
    }

    /// A 3 x 3 matrix of every entry `value`.
    fn full(value: f32) -> Csr<f32> {
        Csr::new(3, 3, vec![0, 3, 6, 9], vec![0, 1, 2, 0, 1, 2, 0, 1, 2], vec![value; 9]).unwrap()
    }

    /// The 3 x 3 identity matrix with `diagonal[i]` at `(i, i)`.
    fn diagonal(diagonal: [f32; 3]) -> Csr<f32> {
        Csr::new(3, 3, vec![0, 1, 2, 3], vec![0, 1, 2], diagonal.to_vec()).unwrap()
    }

    const IDENTITY: [f32; 3] = [1.0; 3];

    /// SDDMM in every dtype: exact in f32, and within what the levels resolve in the integer types (each factor
    /// rounded to within half a level of its largest magnitude's `levels`).
    #[test]
    fn sddmm_runs_in_every_dtype() {
        let (rows, width) = (3, 40);
        let value = |at: usize| ((at * 37 % 23) as f32 - 11.0) / 7.0;
        let p = Dense::from_vec(rows, width, (0..rows * width).map(value).collect()).unwrap();
        let q = Dense::from_vec(rows, width, (0..rows * width).map(|at| value(at + 5)).collect()).unwrap();
        let exact = crate::cpu::sddmm(&full(1.0), &p, &q).unwrap();
        for (dtype, levels) in
            [(Dtype::F32, None), (Dtype::I32, Some(7327.0)), (Dtype::I16, Some(7327.0)), (Dtype::I8, Some(127.0))]
        {
            let mut aggregator = Aggregator::new(full(1.0), dtype, &cpu()).unwrap();
            let scores = aggregator.sddmm(&p, &q).unwrap();
            let Some(levels) = levels else {
                assert_eq!(scores, exact);
                continue;
            };
            let largest = |m: &Dense<f32>| m.as_slice().iter().fold(0.0f32, |a, v| a.max(v.abs()));
            let (p_step, q_step) = (largest(&p) / levels, largest(&q) / levels);
            let bound = width as f32 * (largest(&p) * q_step + largest(&q) * p_step);
            for (score, exact) in scores.iter().zip(&exact) {
                assert!((score - exact).abs() <= bound, "{dtype}: {score} against {exact} (bound {bound})");
            }
            assert!(aggregator.last_phases().iter().any(|phase| phase.name == "quantize"), "{dtype}");
        }
    }

    /// `Auto` keeps the weights on the host where the engine predicts nothing (the CPU) and in integers; an
    /// explicit site is kept; an aggregator without the structure has no attention at all.
    #[test]
    fn the_attention_site_is_the_host_without_a_prediction_or_in_integers() {
        let site = |attention, dtype| {
            let options = EngineOptions { attention, ..cpu() };
            Aggregator::weighted(full(1.0), dtype, &options).unwrap().attention_site(2, 8)
        };
        assert_eq!(site(AttentionSite::Auto, Dtype::F32), AttentionSite::Host);
        assert_eq!(site(AttentionSite::Auto, Dtype::I8), AttentionSite::Host);
        assert_eq!(site(AttentionSite::Engine, Dtype::F32), AttentionSite::Engine);
        assert_eq!(site(AttentionSite::Host, Dtype::F32), AttentionSite::Host);
        let plain = Aggregator::new(full(1.0), Dtype::F32, &cpu()).unwrap();
        assert_eq!(plain.attention_site(2, 8), AttentionSite::Host);
    }

    /// The engine's weights (here the CPU's, the DPUs' bits) with a column of ones per head give the softmax's
    /// weighted mean of each head.
    #[test]
    fn attention_on_the_engine_is_the_softmax_weighted_mean_per_head() {
        let structure = full(1.0);
        let (source, target) = ([0.5f32, -1.0, 2.0, 0.25, 1.5, -0.5], [0.1f32, -0.2, 0.3, 0.7, -1.1, 0.4]);
        let x = Dense::from_vec(3, 4, (0..12).map(|v| v as f32 - 5.5).collect()).unwrap();
        let alpha = crate::attention::softmax(&structure, &source, &target, 2, 0.2).unwrap();
        let expected = crate::cpu::spmm_heads(&structure, &alpha, 2, &x).unwrap();
        let mut aggregator = Aggregator::weighted(structure.clone(), Dtype::F32, &cpu()).unwrap();
        let scores = AttentionScores::new(&structure, &source, &target, 2, 0.2).unwrap();
        let y = aggregator.aggregate_attention(&scores, &x).unwrap();
        for (got, want) in y.as_slice().iter().zip(expected.as_slice()) {
            assert!((got - want).abs() <= 1e-5 * want.abs().max(1.0), "{got} against {want}");
        }
        let names: Vec<&str> = aggregator.last_phases().iter().map(|phase| phase.name.as_ref()).collect();
        assert_eq!(names, ["features with ones", "cpu spmm", "divide by the weights' sums"]);
        let mut quantized = Aggregator::weighted(structure, Dtype::I8, &cpu()).unwrap();
        assert!(matches!(quantized.aggregate_attention(&scores, &x), Err(Error::Invalid { .. })));
    }

    #[test]
    fn a_nan_or_an_infinity_is_refused_by_quantized_aggregation() {
        for dtype in [Dtype::I32, Dtype::I16, Dtype::I8] {
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                let mut aggregator = Aggregator::new(diagonal(IDENTITY), dtype, &cpu()).unwrap();
                let features = Dense::from_vec(3, 2, vec![1.0, 2.0, 3.0, bad, 5.0, 6.0]).unwrap();
                match aggregator.aggregate(&features) {
                    Err(Error::NotFinite { what, index: 3, value }) => {
                        assert_eq!(what, format!("feature to quantize to {dtype} (row-major)"));
                        assert_eq!(value.to_bits(), bad.to_bits());
                    }
                    other => panic!("{dtype} features with {bad}: {other:?}"),
                }
                match Aggregator::new(diagonal([1.0, bad, 1.0]), dtype, &cpu()).map(|_| ()) {
                    Err(Error::NotFinite { what, index: 1, .. }) => {
                        assert_eq!(what, format!("aggregation matrix value (nonzero) to quantize to {dtype}"));
                    }
                    other => panic!("{dtype} matrix with {bad}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn a_nan_propagates_through_f32_aggregation() {
        let mut aggregator = Aggregator::new(diagonal(IDENTITY), Dtype::F32, &cpu()).unwrap();
        let y = aggregator.aggregate(&Dense::from_vec(3, 1, vec![1.0, f32::NAN, 3.0]).unwrap()).unwrap();
        assert_eq!((y.as_slice()[0], y.as_slice()[1].is_nan(), y.as_slice()[2]), (1.0, true, 3.0));
    }

    /// i32's range is shared by the matrix and the features: a matrix of one entry per row leaves the matrix
    /// sqrt(i32::MAX) levels, more than i16 holds, while rows of entries summing to 2.5 times their largest leave
    /// it sqrt(i32::MAX / 2.5) = 29,308, within i16, and i32 then quantizes exactly as i16. A matrix whose
    /// nonzeros share one magnitude is exact at one level, and leaves the features the type's whole range.
    #[test]
    fn i32_is_finer_than_i16_only_where_rows_hold_under_two_largest_entries() {
        let scales = |matrix, dtype| Aggregator::new(matrix, dtype, &cpu()).unwrap().quantization().unwrap();
        let varied = diagonal([1.0, 0.5, 1.0]);
        let (i32_scales, i16_scales) = (scales(varied.clone(), Dtype::I32), scales(varied, Dtype::I16));
        assert_eq!((i32_scales.matrix_scale, i16_scales.matrix_scale), (46_340.0, 32_767.0));
        assert_eq!((i32_scales.feature_range, i16_scales.feature_range), (46_341.0, 32_767.0));
        let (third, sixth) = (1.0 / 3.0, 1.0 / 6.0);
        let thirds =
            Csr::new(3, 3, vec![0, 3, 6, 9], vec![0, 1, 2, 0, 1, 2, 0, 1, 2], [third, third, sixth].repeat(3)).unwrap();
        let (i32_scales, i16_scales) = (scales(thirds.clone(), Dtype::I32), scales(thirds, Dtype::I16));
        assert_eq!(i32_scales, i16_scales);
        assert_eq!(i16_scales.matrix_scale * third, 29_308.0);
        let one_level = |dtype| scales(full(third), dtype);
        assert_eq!(one_level(Dtype::I32).matrix_scale, 3.0);
        assert_eq!(one_level(Dtype::I32).feature_range, (f64::from(i32::MAX) / 3.0).floor() as f32);
        assert_eq!(one_level(Dtype::I16).feature_range, 32_767.0);
        assert_eq!(one_level(Dtype::I8).feature_range, 127.0);
        assert_eq!(Aggregator::new(full(1.0), Dtype::F32, &cpu()).unwrap().quantization(), None);
    }
}
