//! Graphs and features for the benchmark.
//!
//! Stand-ins until the project's generators and loaders land: [`rmat`] has the signature of
//! `pimgnn::graph::rmat`, and [`read_edges`] reads the two formats of the datasets folder (Matrix Market
//! coordinate files and `a,b` CSV edge lists). Both are to be replaced by those modules.

use std::path::Path;

use crate::error::{Error, Result};
use crate::sparse::{Coo, Csr, Dense};

/// splitmix64: a small seeded generator for reproducible inputs.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// An R-MAT graph (a = 0.57, b = 0.19, c = 0.19) of `nodes` nodes and `edges` edges (duplicates kept), values 1.
pub(crate) fn rmat(nodes: usize, edges: usize, seed: u64) -> Csr<f32> {
    let scale = nodes.next_power_of_two().trailing_zeros();
    let mut rng = SplitMix(seed);
    let (mut rows, mut cols) = (Vec::with_capacity(edges), Vec::with_capacity(edges));
    while rows.len() < edges {
        let (mut r, mut c) = (0usize, 0usize);
        for _ in 0..scale {
            let p = rng.unit();
            let (down, right) = match p {
                p if p < 0.57 => (0, 0),
                p if p < 0.76 => (0, 1),
                p if p < 0.95 => (1, 0),
                _ => (1, 1),
            };
            r = 2 * r + down;
            c = 2 * c + right;
        }
        if r < nodes && c < nodes {
            rows.push(r as u32);
            cols.push(c as u32);
        }
    }
    let values = vec![1.0; edges];
    Coo::new(nodes, nodes, rows, cols, values).expect("indices below nodes").to_csr()
}

/// A dense `rows x features` matrix of values in [-1, 1).
pub(crate) fn features(rows: usize, features: usize, seed: u64) -> Dense<f32> {
    let mut rng = SplitMix(seed);
    let data = (0..rows * features).map(|_| (rng.unit() * 2.0 - 1.0) as f32).collect();
    Dense::from_vec(rows, features, data).expect("rows x features values")
}

/// A graph from a Matrix Market coordinate file (`.mtx`, 1-based, `symmetric` mirrored, values kept when
/// present, else 1) or a CSV edge list (`a,b` per line, 0-based, an optional header line).
pub(crate) fn read_edges(path: &Path) -> Result<Csr<f32>> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_owned(), source })?;
    let parse_error = |line: usize, reason: String| Error::Parse { path: path.to_owned(), line: Some(line), reason };
    let matrix_market = text.starts_with("%%MatrixMarket");
    let symmetric = matrix_market && text.lines().next().is_some_and(|header| header.contains("symmetric"));
    let mut size: Option<(usize, usize)> = None;
    let (mut rows, mut cols, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('%') || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split([',', ' ', '\t']).filter(|f| !f.is_empty()).collect();
        let parse =
            |field: &str| field.parse::<u64>().map_err(|_| parse_error(number, format!("'{field}' is not an index")));
        if matrix_market && size.is_none() {
            if fields.len() != 3 {
                return Err(parse_error(number, "expected the size line 'rows cols nonzeros'".into()));
            }
            size = Some((parse(fields[0])? as usize, parse(fields[1])? as usize));
            continue;
        }
        if !matrix_market && index == 0 && fields.first().is_some_and(|f| f.parse::<u64>().is_err()) {
            continue; // the CSV header
        }
        if fields.len() < 2 {
            return Err(parse_error(number, format!("expected two node indices, found '{line}'")));
        }
        let (mut r, mut c) = (parse(fields[0])?, parse(fields[1])?);
        if matrix_market {
            if r == 0 || c == 0 {
                return Err(parse_error(number, "Matrix Market indices start at 1".into()));
            }
            (r, c) = (r - 1, c - 1);
        }
        let value = match fields.get(2) {
            Some(field) => {
                field.parse::<f32>().map_err(|_| parse_error(number, format!("'{field}' is not a value")))?
            }
            None => 1.0,
        };
        let (r, c) = (u32::try_from(r), u32::try_from(c));
        let (Ok(r), Ok(c)) = (r, c) else { return Err(parse_error(number, "index beyond 32 bits".into())) };
        rows.push(r);
        cols.push(c);
        values.push(value);
        if symmetric && r != c {
            rows.push(c);
            cols.push(r);
            values.push(value);
        }
    }
    let nodes = rows.iter().chain(&cols).max().map_or(0, |&m| m as usize + 1);
    let (nrows, ncols) = size.unwrap_or((nodes, nodes));
    let n = nrows.max(ncols);
    Ok(Coo::new(n, n, rows, cols, values)?.to_csr())
}
