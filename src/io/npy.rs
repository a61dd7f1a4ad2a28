//! NumPy `.npy` arrays: dense `float32` features and logits, `int64` labels, `bool` masks.

use std::fs::File;
use std::io::{BufRead as _, BufReader, BufWriter};
use std::path::Path;

use npyz::{NpyFile, WriterBuilder};

use super::{io_error, parse_error};
use crate::error::Result;
use crate::sparse::Dense;

/// Bytes read ahead of npyz to see the header: the magic string, version and length, and a version 1 header's
/// at most 65,535 bytes (longer version 2 headers are only seen in part).
const HEADER_PREFIX_BYTES: usize = 10 + 65_535;

/// Refuses a header whose `shape` holds more values than memory can address: npyz multiplies the dimensions
/// unchecked (an overflow panics in debug builds and wraps to a small count in release ones). A header this
/// does not understand is left to npyz to report.
fn check_declared_shape(path: &Path, prefix: &[u8]) -> Result<()> {
    let text = String::from_utf8_lossy(prefix);
    let dims = text.split_once("shape").and_then(|(_, rest)| rest.split_once('(')?.1.split_once(')'));
    let Some((dims, _)) = dims else { return Ok(()) };
    let dims: Option<Vec<u64>> =
        dims.split(',').map(str::trim).filter(|dim| !dim.is_empty()).map(|dim| dim.parse().ok()).collect();
    let Some(dims) = dims else { return Ok(()) };
    let count = dims.iter().try_fold(1u64, |count, &dim| count.checked_mul(dim));
    if count.and_then(|count| usize::try_from(count).ok()).is_none() {
        return Err(parse_error(path, None, format!("shape {dims:?} holds more values than memory can address")));
    }
    Ok(())
}

/// Opens an `.npy` file and checks its element type (`descr`, e.g. `"<f4"`) and number of dimensions.
fn open(path: &Path, descr: &str, what: &str, ndim: usize) -> Result<NpyFile<BufReader<File>>> {
    let file = File::open(path).map_err(io_error(path))?;
    let mut reader = BufReader::with_capacity(HEADER_PREFIX_BYTES, file);
    check_declared_shape(path, reader.fill_buf().map_err(io_error(path))?)?;
    let npy = NpyFile::new(reader).map_err(|e| parse_error(path, None, format!("not a valid .npy file: {e}")))?;
    let found = match npy.dtype() {
        npyz::DType::Plain(type_str) => type_str.to_string(),
        other => other.descr(),
    };
    if found != descr {
        return Err(parse_error(path, None, format!("{what} must have dtype {descr}, found {found}")));
    }
    if npy.shape().len() != ndim {
        return Err(parse_error(
            path,
            None,
            format!("{what} must have {ndim} dimension(s), found shape {:?}", npy.shape()),
        ));
    }
    if npy.order() != npyz::Order::C {
        return Err(parse_error(path, None, format!("{what} must be in C (row-major) order, found Fortran order")));
    }
    Ok(npy)
}

/// Reads a 2-D `float32` array (e.g. node features) as a dense row-major matrix. Every value must be finite:
/// a NaN or an infinity would spread through every product it enters.
pub fn read_dense_f32(path: &Path) -> Result<Dense<f32>> {
    let npy = open(path, "<f4", "a dense float32 matrix", 2)?;
    let (rows, cols) = (npy.shape()[0] as usize, npy.shape()[1] as usize);
    let data =
        npy.into_vec::<f32>().map_err(|e| parse_error(path, None, format!("truncated or unreadable data: {e}")))?;
    if let Some(at) = data.iter().position(|v| !v.is_finite()) {
        let (row, col) = (at / cols, at % cols);
        return Err(parse_error(path, None, format!("value {} at row {row}, column {col} is not finite", data[at])));
    }
    Dense::from_vec(rows, cols, data)
}

/// Reads a 1-D `int64` array (class labels, one per node).
pub fn read_labels(path: &Path) -> Result<Vec<i64>> {
    let npy = open(path, "<i8", "labels", 1)?;
    npy.into_vec::<i64>().map_err(|e| parse_error(path, None, format!("truncated or unreadable data: {e}")))
}

/// Reads a 1-D `bool` array (a node mask).
pub fn read_mask(path: &Path) -> Result<Vec<bool>> {
    let npy = open(path, "|b1", "a mask", 1)?;
    npy.into_vec::<bool>().map_err(|e| parse_error(path, None, format!("truncated or unreadable data: {e}")))
}

/// Writes a dense matrix as a 2-D `float32` array.
pub fn write_dense_f32(path: &Path, matrix: &Dense<f32>) -> Result<()> {
    let file = File::create(path).map_err(io_error(path))?;
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&[matrix.rows() as u64, matrix.cols() as u64])
        .writer(BufWriter::new(file))
        .begin_nd()
        .map_err(io_error(path))?;
    writer.extend(matrix.as_slice().iter().copied()).map_err(io_error(path))?;
    writer.finish().map_err(io_error(path))
}
