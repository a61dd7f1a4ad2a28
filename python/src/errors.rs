//! Turning [`pimgnn::Error`] into the `pimgnn.Error` hierarchy, whose classes `pimgnn/errors.py` defines (with
//! multiple inheritance from the built-in exceptions, which Python code declares more plainly than PyO3).

use pyo3::prelude::*;
use pyo3::types::PyType;

/// The Python exception for `error`, with its message.
pub(crate) fn to_py(error: pimgnn::Error) -> PyErr {
    let class = match &error {
        pimgnn::Error::Shape { .. } => "ShapeError",
        pimgnn::Error::IndexOutOfRange { .. } => "IndexOutOfRangeError",
        pimgnn::Error::Io { .. } | pimgnn::Error::Parse { .. } => "FileError",
        pimgnn::Error::Capacity { .. } => "CapacityError",
        pimgnn::Error::NotFinite { .. } => "NotFiniteError",
        pimgnn::Error::Upmem(error) => upmem_class(error),
        _ => "InvalidError",
    };
    raise(class, error.to_string())
}

/// The class of a runtime error: no hardware where it was asked for, too few DPUs, or anything else.
fn upmem_class(error: &upmem::Error) -> &'static str {
    match error {
        upmem::Error::LibraryNotFound { .. }
        | upmem::Error::UnsupportedSdk { .. }
        | upmem::Error::BackendNotCompiled { .. }
        | upmem::Error::HardwareAllocation { .. } => "NoHardwareError",
        upmem::Error::Allocation { .. } => "CapacityError",
        _ => "UpmemError",
    }
}

/// An exception of `pimgnn.errors`' class `class` with `message`.
pub(crate) fn raise(class: &str, message: String) -> PyErr {
    Python::attach(|py| {
        let class = py.import("pimgnn.errors").and_then(|errors| errors.getattr(class));
        match class.and_then(|class| class.cast_into::<PyType>().map_err(PyErr::from)) {
            Ok(class) => PyErr::from_type(class, message),
            Err(import_error) => import_error,
        }
    })
}
