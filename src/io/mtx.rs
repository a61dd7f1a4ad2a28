//! Matrix Market: `%%MatrixMarket matrix coordinate <pattern|real|integer> <general|symmetric>`, 1-based.

use std::fmt::Write as _;
use std::path::Path;

use super::{io_error, parse_bounded, parse_count, parse_number, TextFile, MAX_DIMENSION};
use crate::error::Result;
use crate::sparse::Coo;

/// The value field of a coordinate file.
#[derive(Clone, Copy, PartialEq)]
enum Field {
    /// No values: every entry is 1.0.
    Pattern,
    Real,
    Integer,
}

/// Reads a Matrix Market coordinate file (`pattern`, `real` or `integer`; `general` or `symmetric`).
///
/// Pattern entries are 1.0. A symmetric file lists one triangle; each off-diagonal entry `(i, j)` is returned
/// together with its mirror `(j, i)` (the standard lists the lower triangle; an entry above the diagonal is
/// mirrored the same way). Entries keep the file's order, mirrors right after their entry. Comment lines
/// (`%`) and blank lines are skipped; the banner's words are case-insensitive. Malformed input (banner, size
/// line, dimensions above `u32::MAX`, entry count, non-numeric or non-finite fields, indices out of
/// `1..=rows` / `1..=columns`, including 0) is an [`Error::Parse`](crate::Error::Parse) with the line.
pub fn read_matrix_market(path: &Path) -> Result<Coo<f32>> {
    let file = TextFile::read(path)?;
    let mut lines = file.lines();
    let (field, symmetric) = match lines.next() {
        Some((number, banner)) => parse_banner(&file, number, banner)?,
        None => return Err(file.error(1, "empty file: expected the `%%MatrixMarket` banner")),
    };
    let mut lines = lines.filter(|(_, line)| !line.starts_with('%') && !line.trim().is_empty());
    let Some((size_line, size)) = lines.next() else {
        return Err(file.error(file.last_line(), "truncated: no size line (`rows columns entries`) after the banner"));
    };
    let tokens: Vec<&str> = size.split_whitespace().collect();
    let [rows, cols, declared] = tokens[..] else {
        return Err(
            file.error(size_line, format!("size line must be `rows columns entries`, found {} fields", tokens.len()))
        );
    };
    let rows = parse_bounded(&file, size_line, "rows", rows, MAX_DIMENSION)? as u32;
    let cols = parse_bounded(&file, size_line, "columns", cols, MAX_DIMENSION)? as u32;
    let declared: usize = parse_count(&file, size_line, "entries", declared)?;
    if symmetric && rows != cols {
        return Err(file.error(size_line, format!("a symmetric matrix must be square, found {rows} x {cols}")));
    }

    let fields = if field == Field::Pattern { 2 } else { 3 };
    let capacity = declared.min(file.max_lines()) * if symmetric { 2 } else { 1 };
    let (mut row_idx, mut col_idx, mut values) =
        (Vec::with_capacity(capacity), Vec::with_capacity(capacity), Vec::with_capacity(capacity));
    let mut entries = 0;
    for (number, line) in lines {
        if entries == declared {
            return Err(file.error(number, format!("more entries than the {declared} the size line declares")));
        }
        let mut tokens = line.split_whitespace();
        let mut next = |what: &str| {
            tokens.next().ok_or_else(|| {
                file.error(number, format!("entry has too few fields: expected {fields}, the {what} is missing"))
            })
        };
        let row = parse_index(&file, number, "row", next("row index")?, rows)?;
        let col = parse_index(&file, number, "column", next("column index")?, cols)?;
        let value = match field {
            Field::Pattern => 1.0,
            Field::Real => parse_number(&file, number, "value", next("value")?)?,
            Field::Integer => parse_integer_value(&file, number, next("value")?)?,
        };
        if tokens.next().is_some() {
            return Err(file.error(number, format!("entry has more than {fields} fields")));
        }
        row_idx.push(row);
        col_idx.push(col);
        values.push(value);
        if symmetric && row != col {
            row_idx.push(col);
            col_idx.push(row);
            values.push(value);
        }
        entries += 1;
    }
    if entries < declared {
        return Err(file.error(
            file.last_line(),
            format!("truncated: the size line declares {declared} entries, the file has {entries}"),
        ));
    }
    Coo::new(rows as usize, cols as usize, row_idx, col_idx, values)
}

/// `(field, symmetric?)` from the banner line.
fn parse_banner(file: &TextFile, number: usize, banner: &str) -> Result<(Field, bool)> {
    let words: Vec<String> = banner.split_whitespace().map(str::to_ascii_lowercase).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let [head, object, format, field, symmetry] = words[..] else {
        return Err(
            file.error(number, "bad banner: expected `%%MatrixMarket matrix coordinate <field> <symmetry>` (5 words)")
        );
    };
    if head != "%%matrixmarket" {
        return Err(file.error(number, format!("bad banner: starts with `{head}`, not `%%MatrixMarket`")));
    }
    if object != "matrix" {
        return Err(file.error(number, format!("unsupported object `{object}`: only `matrix`")));
    }
    if format != "coordinate" {
        return Err(file.error(number, format!("unsupported format `{format}`: only `coordinate` (sparse)")));
    }
    let field = match field {
        "pattern" => Field::Pattern,
        "real" => Field::Real,
        "integer" => Field::Integer,
        _ => return Err(file.error(number, format!("unsupported field `{field}`: pattern, real or integer"))),
    };
    let symmetric = match symmetry {
        "general" => false,
        "symmetric" => true,
        _ => return Err(file.error(number, format!("unsupported symmetry `{symmetry}`: general or symmetric"))),
    };
    Ok((field, symmetric))
}

/// A 1-based index in `1..=limit`, returned 0-based.
fn parse_index(file: &TextFile, number: usize, what: &str, token: &str, limit: u32) -> Result<u32> {
    let index: u64 = parse_count(file, number, &format!("{what} index"), token)?;
    if index == 0 {
        return Err(file.error(number, format!("{what} index 0: Matrix Market indices start at 1")));
    }
    if index > u64::from(limit) {
        return Err(file.error(number, format!("{what} index {index} out of range 1..={limit}")));
    }
    Ok(index as u32 - 1)
}

/// An `integer` field's value: an integer, as `f32` (exact up to 2^24 in magnitude).
fn parse_integer_value(file: &TextFile, number: usize, token: &str) -> Result<f32> {
    let value: i64 = token.parse().map_err(|_| file.error(number, format!("value: `{token}` is not an integer")))?;
    Ok(value as f32)
}

/// Writes `a` as a `coordinate real general` Matrix Market file, entries in `a`'s order. Values are written
/// in the shortest form that reads back to the same `f32`.
pub fn write_matrix_market(path: &Path, a: &Coo<f32>) -> Result<()> {
    let mut text = format!("%%MatrixMarket matrix coordinate real general\n{} {} {}\n", a.nrows(), a.ncols(), a.nnz());
    for ((&r, &c), &v) in a.rows().iter().zip(a.cols()).zip(a.values()) {
        let _ = writeln!(text, "{} {} {v}", r + 1, c + 1);
    }
    std::fs::write(path, text).map_err(io_error(path))
}
