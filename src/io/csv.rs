//! CSV: edge lists (`id_1,id_2`) and `(row, column, value)` triples (`node_id,feature_id,value`), 0-based ids,
//! one header line.

use std::fmt::Write as _;
use std::path::Path;

use super::{io_error, parse_bounded, parse_number, TextFile, MAX_DIMENSION};
use crate::error::Result;
use crate::sparse::Coo;

/// Reads an edge list: a header of two column names (e.g. `id_1,id_2`), then one `source,target` line per
/// edge with 0-based ids. Returns one entry of value 1.0 per line, `id_1` as the row and `id_2` as the column,
/// in file order, in an `n x n` matrix with `n` = the largest id + 1.
///
/// Nothing is dropped or added: self-loops and repeated pairs (as in the facebook and wikipedia graphs) stay,
/// and undirected graphs listed once stay one-directional; see [`Coo::symmetrized`] and
/// [`crate::Csr::deduplicated`]. Blank lines are skipped; a header that looks like data, a line without
/// exactly two fields and a field that is not a non-negative integer below `u32::MAX` are [`Error::Parse`](crate::Error::Parse)
/// errors.
pub fn read_edge_list_csv(path: &Path) -> Result<Coo<f32>> {
    let file = TextFile::read(path)?;
    let mut lines = file.lines();
    let header = parse_header(&file, lines.next(), &["id_1", "id_2"])?;
    let (mut rows, mut cols) = (Vec::with_capacity(file.max_lines()), Vec::with_capacity(file.max_lines()));
    for (number, line) in lines.filter(|(_, line)| !line.trim().is_empty()) {
        let [source, target] = split_fields::<2>(&file, number, line)?;
        rows.push(parse_id(&file, number, &header[0], source)?);
        cols.push(parse_id(&file, number, &header[1], target)?);
    }
    let n = rows.iter().chain(&cols).max().map_or(0, |&id| id as usize + 1);
    let values = vec![1.0; rows.len()];
    Coo::new(n, n, rows, cols, values)
}

/// Reads `(row, column, value)` triples, e.g. sparse node features `node_id,feature_id,value`: a header of
/// three column names, then one line per entry with 0-based ids and a number. The matrix has the largest row
/// id + 1 rows and the largest column id + 1 columns; repeated positions stay separate entries (they add up).
/// Errors as in [`read_edge_list_csv`].
pub fn read_triples_csv(path: &Path) -> Result<Coo<f32>> {
    let file = TextFile::read(path)?;
    let mut lines = file.lines();
    let header = parse_header(&file, lines.next(), &["node_id", "feature_id", "value"])?;
    let capacity = file.max_lines();
    let (mut rows, mut cols, mut values) =
        (Vec::with_capacity(capacity), Vec::with_capacity(capacity), Vec::with_capacity(capacity));
    for (number, line) in lines.filter(|(_, line)| !line.trim().is_empty()) {
        let [row, col, value] = split_fields::<3>(&file, number, line)?;
        rows.push(parse_id(&file, number, &header[0], row)?);
        cols.push(parse_id(&file, number, &header[1], col)?);
        values.push(parse_number(&file, number, &header[2], value)?);
    }
    let extent = |ids: &[u32]| ids.iter().max().map_or(0, |&id| id as usize + 1);
    Coo::new(extent(&rows), extent(&cols), rows, cols, values)
}

/// Writes `a`'s entries as an edge list with the header `id_1,id_2`, in `a`'s order; values are not written
/// (an edge list has none).
pub fn write_edge_list_csv(path: &Path, a: &Coo<f32>) -> Result<()> {
    let mut text = String::from("id_1,id_2\n");
    for (&r, &c) in a.rows().iter().zip(a.cols()) {
        let _ = writeln!(text, "{r},{c}");
    }
    std::fs::write(path, text).map_err(io_error(path))
}

/// The header's column names, checked: as many as `example` has, and not numbers (a file whose first line
/// is data has lost its header, and taking it for one would drop an edge silently).
fn parse_header(file: &TextFile, line: Option<(usize, &str)>, example: &[&str]) -> Result<Vec<String>> {
    let expected = example.join(",");
    let Some((number, line)) = line else {
        return Err(file.error(1, format!("empty file: expected a header line such as `{expected}`")));
    };
    let names: Vec<String> = line.split(',').map(|name| name.trim().to_string()).collect();
    if names.len() != example.len() || names.iter().any(String::is_empty) {
        return Err(file.error(
            number,
            format!("header must name {} columns (such as `{expected}`), found `{line}`", example.len()),
        ));
    }
    if names.iter().any(|name| name.parse::<f64>().is_ok()) {
        return Err(file.error(number, format!("missing header: the first line `{line}` is data, not `{expected}`")));
    }
    Ok(names)
}

/// A 0-based id: the matrix's dimension, the largest id + 1, must stay within [`MAX_DIMENSION`].
fn parse_id(file: &TextFile, line: usize, what: &str, token: &str) -> Result<u32> {
    Ok(parse_bounded(file, line, what, token, MAX_DIMENSION - 1)? as u32)
}

/// A data line's `N` comma-separated fields.
fn split_fields<'a, const N: usize>(file: &TextFile, number: usize, line: &'a str) -> Result<[&'a str; N]> {
    let mut fields = [""; N];
    let mut found = 0;
    for field in line.split(',') {
        if found < N {
            fields[found] = field;
        }
        found += 1;
    }
    if found != N {
        return Err(file.error(number, format!("expected {N} comma-separated fields, found {found}: `{line}`")));
    }
    Ok(fields)
}
