//! `pimgnn._native`: the pimgnn library as a Python extension module. The package's Python code (`pimgnn/`)
//! builds on it: graphs from PyTorch Geometric's inputs, the autograd op and the layers.
//!
//! Everything here wraps the Rust library's public API; nothing is computed a second way.

mod engine;
mod errors;
mod graph;
mod interrupt;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<graph::Graph>()?;
    module.add_class::<engine::Engine>()?;
    module.add_class::<engine::Phase>()?;
    module.add_class::<engine::LoadBalance>()?;
    module.add_function(wrap_pyfunction!(engine::hardware_present, module)?)?;
    Ok(())
}
