//! CSV graphs and sparse features, as the MUSAE datasets publish them: an optional header line, then
//! comma-separated 0-based node ids (`id_1,id_2`) or triples (`node_id,feature_id,value`).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::{io_error, parse_error};
use crate::error::Result;
use crate::sparse::Coo;

/// The data lines of a CSV file, split on commas, with their 1-based line numbers. A first line whose first
/// field is not a number is a header and skipped; blank lines are skipped.
fn records(path: &Path, width: usize, mut each: impl FnMut(usize, &[&str]) -> Result<()>) -> Result<()> {
    let file = File::open(path).map_err(io_error(path))?;
    for (at, line) in BufReader::new(file).lines().enumerate() {
        let number = at + 1;
        let line = line.map_err(io_error(path))?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if number == 1 && fields[0].parse::<f64>().is_err() {
            continue;
        }
        if fields.len() != width {
            return Err(parse_error(path, Some(number), format!("expected {width} fields, found {}", fields.len())));
        }
        each(number, &fields)?;
    }
    Ok(())
}

fn node_id(path: &Path, number: usize, text: &str) -> Result<u32> {
    text.parse::<u32>()
        .ok()
        .filter(|&id| id < u32::MAX)
        .ok_or_else(|| parse_error(path, Some(number), format!("`{text}` is not a 0-based 32-bit index")))
}

/// Reads an undirected edge list (`id_1,id_2`, each edge once) as the adjacency matrix with both directions
/// of every edge (value 1.0; a self-loop once). The matrix is square, of the largest id + 1 nodes.
pub fn read_edge_list_csv(path: &Path) -> Result<Coo<f32>> {
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    records(path, 2, |number, fields| {
        let (a, b) = (node_id(path, number, fields[0])?, node_id(path, number, fields[1])?);
        rows.push(a);
        cols.push(b);
        if a != b {
            rows.push(b);
            cols.push(a);
        }
        Ok(())
    })?;
    let nodes = rows.iter().max().map_or(0, |&m| m as usize + 1);
    let values = vec![1.0; rows.len()];
    Coo::new(nodes, nodes, rows, cols, values)
}

/// Reads `row,column,value` triples as a sparse matrix of the largest row + 1 by the largest column + 1.
pub fn read_triples_csv(path: &Path) -> Result<Coo<f32>> {
    let (mut rows, mut cols, mut values) = (Vec::new(), Vec::new(), Vec::new());
    records(path, 3, |number, fields| {
        rows.push(node_id(path, number, fields[0])?);
        cols.push(node_id(path, number, fields[1])?);
        let value = fields[2]
            .parse::<f32>()
            .map_err(|_| parse_error(path, Some(number), format!("bad value `{}`", fields[2])))?;
        values.push(value);
        Ok(())
    })?;
    let nrows = rows.iter().max().map_or(0, |&m| m as usize + 1);
    let ncols = cols.iter().max().map_or(0, |&m| m as usize + 1);
    Coo::new(nrows, ncols, rows, cols, values)
}
