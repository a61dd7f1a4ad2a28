//! `Engine`: a matrix resident in an aggregation engine (on the DPUs, real or simulated, or the CPU), and what
//! it reports: the plan, the phases of the last call with their predicted hardware time, the load balance.

use std::sync::{Arc, Mutex};

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pimgnn::gnn::{Aggregator, Backend, Dtype, EngineOptions};
use pimgnn::pim::plan::Plan;
use pimgnn::{Csr, Dense};
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::graph::Graph;
use crate::interrupt;

/// One phase of the last call: its name, its wall time here and its predicted time on UPMEM hardware (seconds).
#[pyclass(module = "pimgnn._native", frozen, get_all)]
pub struct Phase {
    name: String,
    wall: f64,
    predicted: Option<f64>,
}

#[pymethods]
impl Phase {
    fn __repr__(&self) -> String {
        let predicted = self.predicted.map_or_else(|| "None".to_owned(), |seconds| format!("{seconds:.6}"));
        format!("Phase(name={:?}, wall={:.6}, predicted={predicted})", self.name, self.wall)
    }
}

/// Nonzeros per DPU: the fewest, the median and the most (which bounds the kernel's time).
#[pyclass(module = "pimgnn._native", frozen, get_all)]
pub struct LoadBalance {
    min: usize,
    median: usize,
    max: usize,
}

#[pymethods]
impl LoadBalance {
    fn __repr__(&self) -> String {
        format!("LoadBalance(min={}, median={}, max={})", self.min, self.median, self.max)
    }
}

/// The library's aggregator, shared with the thread of a call in progress; `None` once closed.
type SharedAggregator = Arc<Mutex<Option<Aggregator>>>;

/// A graph's matrix resident in an engine for every call to come.
#[pyclass(module = "pimgnn._native", frozen)]
pub struct Engine {
    aggregator: SharedAggregator,
    shape: (usize, usize),
    backend: String,
    plan: String,
    dtype: String,
    balance: Option<pimgnn::pim::LoadBalance>,
    decision: Option<String>,
}

/// `matrix` as a numpy array that owns its values (no copy).
fn array(py: Python<'_>, matrix: Dense<f32>) -> PyResult<Bound<'_, PyArray2<f32>>> {
    let (rows, cols) = (matrix.rows(), matrix.cols());
    PyArray1::from_vec(py, matrix.into_vec()).reshape([rows, cols])
}

/// `array` as a library matrix (one copy), refusing a layout that is not C-contiguous.
fn dense(what: &str, array: &PyReadonlyArray2<'_, f32>) -> PyResult<Dense<f32>> {
    let [rows, cols] = [array.shape()[0], array.shape()[1]];
    let values = array.as_slice().map_err(|_| {
        to_py(pimgnn::Error::invalid(what, "the array must be C-contiguous (numpy.ascontiguousarray, .contiguous())"))
    })?;
    Dense::from_vec(rows, cols, values.to_vec()).map_err(to_py)
}

/// Parses `text` as a `T`, raising the library's error.
fn parse<T: std::str::FromStr<Err = pimgnn::Error>>(text: &str) -> PyResult<T> {
    text.parse().map_err(to_py)
}

#[pymethods]
impl Engine {
    /// Loads `graph`'s matrix into the engine `backend` names (`auto`, `sim`, `hw`, `cpu`, `pim`, `split`), on
    /// at most `dpus` DPUs of `tasklets` tasklets, aggregating in `dtype` (`f32`, `i32`, `i16`, `i8`), with
    /// the plan the cost model chooses for calls of `widths` features (or `plan`, as `pimgnn bench spmm`
    /// prints plans). With `weighted`, the structure stays and each call gives the values (`spmm_values`).
    #[new]
    #[pyo3(signature = (graph, backend="auto", dpus=None, tasklets=None, dtype="f32", plan=None, widths=None, weighted=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        graph: &Graph,
        backend: &str,
        dpus: Option<u32>,
        tasklets: Option<u32>,
        dtype: &str,
        plan: Option<&str>,
        widths: Option<Vec<usize>>,
        weighted: bool,
    ) -> PyResult<Self> {
        let options = EngineOptions {
            backend: parse::<Backend>(backend)?,
            dpus,
            tasklets,
            widths: widths.unwrap_or_default(),
            plan: plan.map(parse::<Plan>).transpose()?,
            ..EngineOptions::default()
        };
        let dtype = parse::<Dtype>(dtype)?;
        let adjacency = Arc::clone(&graph.adjacency);
        let shape = (adjacency.nrows(), adjacency.ncols());
        let aggregator = interrupt::run(py, move || {
            let matrix = Csr::clone(&adjacency);
            if weighted {
                Aggregator::weighted(matrix, dtype, &options)
            } else {
                Aggregator::new(matrix, dtype, &options)
            }
        })?
        .map_err(to_py)?;
        Ok(Engine {
            shape,
            backend: aggregator.backend().to_string(),
            plan: aggregator.plan().to_owned(),
            dtype: aggregator.dtype().to_string(),
            balance: aggregator.balance(),
            decision: aggregator.decision().map(ToString::to_string),
            aggregator: Arc::new(Mutex::new(Some(aggregator))),
        })
    }

    /// `Y = A X` for `x` a C-contiguous float32 array of `(num_nodes, features)`; `Y` is a new float32 array
    /// that owns the engine's output (no copy). Ctrl-C returns at once (the call finishes in the background).
    fn spmm<'py>(&self, py: Python<'py>, x: PyReadonlyArray2<'py, f32>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let x = dense("features", &x)?;
        let y = self.call(py, move |aggregator| aggregator.aggregate(&x))?;
        array(py, y)
    }

    /// `Y_h = A'_h X_h` for every head `h` (attention's aggregation): `x`'s columns are `heads` groups of
    /// equal width, and `A'_h` is the resident structure with `values[k * heads + h]` at nonzero `k`. Only an
    /// engine made with `weighted=True` takes values.
    fn spmm_values<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f32>,
        values: PyReadonlyArray1<'py, f32>,
        heads: usize,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let x = dense("features", &x)?;
        let values = values.as_array().to_vec();
        let y = self.call(py, move |aggregator| aggregator.aggregate_heads(&values, heads, &x))?;
        array(py, y)
    }

    /// SDDMM over the resident structure: `<p_i, q_j>` for every nonzero `(i, j)`, in its order (attention's
    /// backward pass: the gradient of the values).
    fn sddmm<'py>(
        &self,
        py: Python<'py>,
        p: PyReadonlyArray2<'py, f32>,
        q: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let (p, q) = (dense("p", &p)?, dense("q", &q)?);
        let scores = self.call(py, move |aggregator| aggregator.sddmm(&p, &q))?;
        Ok(PyArray1::from_vec(py, scores))
    }

    /// The phases of the last call, in order.
    fn phases(&self) -> PyResult<Vec<Phase>> {
        let aggregator = self.aggregator.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let aggregator = aggregator.as_ref().ok_or_else(|| to_py(closed()))?;
        Ok(aggregator
            .last_phases()
            .iter()
            .map(|phase| Phase {
                name: phase.name.to_string(),
                wall: phase.wall.as_secs_f64(),
                predicted: phase.predicted.map(|predicted| predicted.as_secs_f64()),
            })
            .collect())
    }

    /// Releases the engine's DPUs (waiting for a call in progress); later calls raise.
    fn close(&self, py: Python<'_>) {
        let aggregator = Arc::clone(&self.aggregator);
        py.detach(move || aggregator.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take());
    }

    /// `(rows, columns)` of the matrix.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        self.shape
    }

    /// The backend it runs on (`simulator`, `hardware`, `cpu`, `split:...`).
    #[getter]
    fn backend(&self) -> &str {
        &self.backend
    }

    /// How it executes, in one line (the plan on PIM).
    #[getter]
    fn plan(&self) -> &str {
        &self.plan
    }

    /// The type it aggregates in.
    #[getter]
    fn dtype(&self) -> &str {
        &self.dtype
    }

    /// Nonzeros per DPU on PIM, else `None`.
    #[getter]
    fn balance(&self) -> Option<LoadBalance> {
        self.balance.map(|balance| LoadBalance { min: balance.min, median: balance.median, max: balance.max })
    }

    /// The cost model's pick and the predictions behind it, for `backend="auto"` or `"split"`.
    #[getter]
    fn decision(&self) -> Option<&str> {
        self.decision.as_deref()
    }
}

impl Engine {
    /// Runs `work` on the aggregator on a thread of its own ([`interrupt::run`]); a closed engine is an
    /// [`pimgnn::Error::Invalid`]. The work's thread never takes the GIL: errors become exceptions here.
    fn call<R: Send + 'static>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&mut Aggregator) -> pimgnn::Result<R> + Send + 'static,
    ) -> PyResult<R> {
        let aggregator = Arc::clone(&self.aggregator);
        interrupt::run(py, move || {
            let mut aggregator = aggregator.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            aggregator.as_mut().map_or_else(|| Err(closed()), work)
        })?
        .map_err(to_py)
    }
}

fn closed() -> pimgnn::Error {
    pimgnn::Error::invalid("engine", "it is closed")
}

/// Whether this machine has UPMEM hardware (a DPU rank the driver lists).
#[pyfunction]
pub fn hardware_present() -> bool {
    upmem::hardware_present()
}
