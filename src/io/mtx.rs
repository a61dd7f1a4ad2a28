//! Matrix Market (`coordinate`, `real`/`integer`/`pattern`, `general`/`symmetric`), 1-based, as NIST and
//! SuiteSparse write it.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::{io_error, parse_error};
use crate::error::Result;
use crate::sparse::Coo;

/// Reads a Matrix Market coordinate file. `pattern` entries are 1.0; a `symmetric` file's off-diagonal entries
/// are mirrored.
pub fn read_matrix_market(path: &Path) -> Result<Coo<f32>> {
    let file = File::open(path).map_err(io_error(path))?;
    let mut lines = BufReader::new(file).lines().enumerate().map(|(at, line)| (at + 1, line));

    let (_, banner) = lines.next().ok_or_else(|| parse_error(path, Some(1), "empty file"))?;
    let banner = banner.map_err(io_error(path))?;
    let words: Vec<String> = banner.split_whitespace().map(str::to_ascii_lowercase).collect();
    if words.len() != 5 || words[0] != "%%matrixmarket" || words[1] != "matrix" {
        return Err(parse_error(path, Some(1), "not a Matrix Market file (expected `%%MatrixMarket matrix ...`)"));
    }
    if words[2] != "coordinate" {
        return Err(parse_error(path, Some(1), format!("format `{}` is not supported (only `coordinate`)", words[2])));
    }
    let pattern = match words[3].as_str() {
        "pattern" => true,
        "real" | "integer" => false,
        other => return Err(parse_error(path, Some(1), format!("field `{other}` is not supported"))),
    };
    let symmetric = match words[4].as_str() {
        "general" => false,
        "symmetric" => true,
        other => return Err(parse_error(path, Some(1), format!("symmetry `{other}` is not supported"))),
    };

    let mut size = None;
    let (mut rows, mut cols, mut values) = (Vec::new(), Vec::new(), Vec::new());
    let mut declared = 0;
    let mut read = 0;
    for (number, line) in lines {
        let line = line.map_err(io_error(path))?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some((nrows, ncols)) = size else {
            let [r, c, n] = fields[..] else {
                return Err(parse_error(path, Some(number), "expected the size line `rows columns entries`"));
            };
            let parse = |text: &str| {
                text.parse::<usize>().map_err(|_| parse_error(path, Some(number), format!("bad size `{text}`")))
            };
            let (r, c, n) = (parse(r)?, parse(c)?, parse(n)?);
            if r > u32::MAX as usize || c > u32::MAX as usize {
                return Err(parse_error(path, Some(number), format!("{r} x {c} exceeds 32-bit indices")));
            }
            size = Some((r, c));
            declared = n;
            rows.reserve(if symmetric { 2 * n } else { n });
            cols.reserve(if symmetric { 2 * n } else { n });
            values.reserve(if symmetric { 2 * n } else { n });
            continue;
        };
        let expected = if pattern { 2 } else { 3 };
        if fields.len() != expected {
            return Err(parse_error(path, Some(number), format!("expected {expected} fields, found {}", fields.len())));
        }
        let index = |text: &str, limit: usize, what: &str| -> Result<u32> {
            match text.parse::<usize>() {
                Ok(i) if (1..=limit).contains(&i) => Ok((i - 1) as u32),
                _ => Err(parse_error(path, Some(number), format!("{what} index `{text}` is not in 1..={limit}"))),
            }
        };
        let r = index(fields[0], nrows, "row")?;
        let c = index(fields[1], ncols, "column")?;
        let v = if pattern {
            1.0
        } else {
            fields[2]
                .parse::<f32>()
                .map_err(|_| parse_error(path, Some(number), format!("bad value `{}`", fields[2])))?
        };
        rows.push(r);
        cols.push(c);
        values.push(v);
        if symmetric && r != c {
            rows.push(c);
            cols.push(r);
            values.push(v);
        }
        read += 1;
        if read > declared {
            return Err(parse_error(path, Some(number), format!("more entries than the {declared} declared")));
        }
    }
    let Some((nrows, ncols)) = size else {
        return Err(parse_error(path, None, "no size line"));
    };
    if read != declared {
        return Err(parse_error(path, None, format!("{declared} entries declared, {read} found")));
    }
    Coo::new(nrows, ncols, rows, cols, values)
}
