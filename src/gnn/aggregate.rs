//! Aggregation `Y = M X` for a model's layers through one resident [`SpmmEngine`]: exact in `f32`, or
//! quantized to `i32`, `i16` or `i8` with explicit scales (PyGim's approach) and dequantized on the way out.
//!
//! Quantization is symmetric and per tensor: `M_q = round(M s_m)` once, `X_q = round(X s_x)` per call with
//! `s_x` from the largest `|X|`, `Y = (M_q X_q) / (s_m s_x)`. The scales are chosen so that no sum of
//! products can leave `i32`, whatever the features: `max_row |M_q|_1 * max |X_q| <= i32::MAX`.

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use rayon::prelude::*;

use super::backend::{spmm_engine, Backend, EngineOptions};
use crate::error::{Error, Result};
use crate::pim::{LoadBalance, PimElement};
use crate::sparse::{Csr, Dense, Element};
use crate::spmm::{Phase, RowStep, SpmmEngine, StreamedStage};

/// The value type aggregation runs in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dtype {
    /// Exact single precision.
    #[default]
    F32,
    /// Quantized to 32-bit integers.
    I32,
    /// Quantized to 16-bit integers.
    I16,
    /// Quantized to 8-bit integers.
    I8,
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dtype::F32 => "f32",
            Dtype::I32 => "i32",
            Dtype::I16 => "i16",
            Dtype::I8 => "i8",
        })
    }
}

impl FromStr for Dtype {
    type Err = Error;

    /// `f32`, `i32`, `i16` or `i8`.
    fn from_str(text: &str) -> Result<Self> {
        match text {
            "f32" => Ok(Dtype::F32),
            "i32" => Ok(Dtype::I32),
            "i16" => Ok(Dtype::I16),
            "i8" => Ok(Dtype::I8),
            other => Err(Error::invalid("dtype", format!("`{other}` is not one of f32, i32, i16, i8"))),
        }
    }
}

/// An integer element type aggregation can be quantized to.
trait Quantized: PimElement + Element<Acc = i32> {
    /// The largest magnitude used (symmetric range `-MAX..=MAX`).
    const MAX: f64;
    /// `value` rounded and saturated to the type.
    fn round_from(value: f32) -> Self;
    /// The value as an `i32`.
    fn widen(self) -> i32;
}

macro_rules! quantized {
    ($ty:ty) => {
        impl Quantized for $ty {
            const MAX: f64 = <$ty>::MAX as f64;
            #[inline]
            fn round_from(value: f32) -> Self {
                value.round() as $ty
            }
            #[inline]
            fn widen(self) -> i32 {
                self as i32
            }
        }
    };
}
quantized!(i32);
quantized!(i16);
quantized!(i8);

/// A quantized engine with its matrix scale and the feature range that keeps its sums inside `i32`.
struct QuantizedEngine<T: Element> {
    engine: Box<dyn SpmmEngine<T>>,
    matrix_scale: f32,
    feature_range: f32,
}

impl<T: Quantized> QuantizedEngine<T> {
    fn new(matrix: &Csr<f32>, options: &EngineOptions) -> Result<(Self, Described)> {
        let largest = matrix.values().iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let row_l1 = |values: &dyn Fn(usize) -> f64| {
            (0..matrix.nrows())
                .map(|r| (matrix.row_ptr()[r] as usize..matrix.row_ptr()[r + 1] as usize).map(values).sum::<f64>())
                .fold(0.0, f64::max)
        };
        // Split i32's range between M and X: M gets sqrt(i32::MAX / (row L1 in units of the largest entry)).
        let relative_l1 =
            if largest > 0.0 { row_l1(&|at| f64::from(matrix.values()[at].abs() / largest)) } else { 1.0 };
        let matrix_range = T::MAX.min((f64::from(i32::MAX) / relative_l1.max(1.0)).sqrt().floor()).max(1.0);
        let matrix_scale = if largest > 0.0 { (matrix_range / f64::from(largest)) as f32 } else { 1.0 };
        let values: Vec<T> = matrix.values().iter().map(|&v| T::round_from(v * matrix_scale)).collect();
        let quantized_l1 = row_l1(&|at| f64::from(values[at].widen().unsigned_abs()));
        let feature_range = T::MAX.min((f64::from(i32::MAX) / quantized_l1.max(1.0)).floor()).max(1.0) as f32;
        let quantized =
            Csr::new(matrix.nrows(), matrix.ncols(), matrix.row_ptr().to_vec(), matrix.col_idx().to_vec(), values)?;
        let engine = spmm_engine(quantized, options)?;
        let plan = format!("{}; features quantized to +-{feature_range}, matrix scale {matrix_scale:.4e}", engine.plan);
        let described = Described { backend: engine.backend, plan, balance: engine.balance };
        Ok((QuantizedEngine { engine: engine.spmm, matrix_scale, feature_range }, described))
    }

    /// `X` quantized, and the factor that takes `M_q X_q` back to `M X`.
    fn quantize(&self, x: &Dense<f32>, phases: &mut Vec<Phase>) -> Result<(Dense<T>, f32)> {
        let started = Instant::now();
        let largest = x.as_slice().par_iter().fold(|| 0.0f32, |m, v| m.max(v.abs())).reduce(|| 0.0, f32::max);
        let feature_scale = if largest > 0.0 { self.feature_range / largest } else { 1.0 };
        let quantized: Vec<T> = x.as_slice().par_iter().map(|&v| T::round_from(v * feature_scale)).collect();
        let quantized = Dense::from_vec(x.rows(), x.cols(), quantized)?;
        phases.push(Phase { name: "quantize".into(), wall: started.elapsed(), predicted: None });
        Ok((quantized, 1.0 / (self.matrix_scale * feature_scale)))
    }

    fn aggregate(&mut self, x: &Dense<f32>, phases: &mut Vec<Phase>) -> Result<Dense<f32>> {
        let (quantized, unscale) = self.quantize(x, phases)?;
        let y = self.engine.spmm(&quantized)?;
        phases.extend_from_slice(self.engine.last_phases());

        let started = Instant::now();
        let values = y.as_slice().par_iter().map(|&v| v as f32 * unscale).collect();
        let y = Dense::from_vec(y.rows(), y.cols(), values)?;
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
        phases.extend_from_slice(self.engine.last_phases());
        Ok(stage)
    }
}

/// What an engine tells about itself.
struct Described {
    backend: Backend,
    plan: String,
    balance: Option<LoadBalance>,
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
    dtype: Dtype,
    described: Described,
    phases: Vec<Phase>,
    shape: (usize, usize),
}

impl Aggregator {
    /// An aggregator for `matrix` in `dtype` on the engine `options` asks for.
    pub fn new(matrix: Csr<f32>, dtype: Dtype, options: &EngineOptions) -> Result<Self> {
        let shape = (matrix.nrows(), matrix.ncols());
        let (engines, described) = match dtype {
            Dtype::F32 => {
                let engine = spmm_engine(matrix, options)?;
                let described = Described { backend: engine.backend, plan: engine.plan, balance: engine.balance };
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
        Ok(Aggregator { engines, dtype, described, phases: Vec::new(), shape })
    }

    /// `M X` in `f32`, through the engine (quantized and dequantized around it for integer dtypes).
    pub fn aggregate(&mut self, x: &Dense<f32>) -> Result<Dense<f32>> {
        if x.rows() != self.shape.1 {
            return Err(Error::shape("aggregation: rows of the features (nodes)", self.shape.1, x.rows()));
        }
        self.phases.clear();
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

    /// `M X` in `f32` handed to `step` by ranges of finished rows, with the same rows of each of `outs`, as
    /// [`SpmmEngine::spmm_streamed`] does: on PIM, `step` runs on the first rows while the others are still
    /// merged. Returns the timing of that stage; the phases before it are in [`Aggregator::last_phases`].
    pub fn aggregate_streamed(
        &mut self,
        x: &Dense<f32>,
        outs: &mut [Dense<f32>],
        step: &RowStep<'_, f32>,
    ) -> Result<StreamedStage> {
        if x.rows() != self.shape.1 {
            return Err(Error::shape("aggregation: rows of the features (nodes)", self.shape.1, x.rows()));
        }
        self.phases.clear();
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

    /// The backend the engine runs on.
    pub fn backend(&self) -> Backend {
        self.described.backend
    }

    /// Nonzeros per DPU, when aggregating on PIM.
    pub fn balance(&self) -> Option<LoadBalance> {
        self.described.balance
    }

    /// How the engine executes, in one line.
    pub fn plan(&self) -> &str {
        &self.described.plan
    }
}
