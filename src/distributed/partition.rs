//! Which process owns each node of a graph: contiguous ranges balanced by edges, or METIS's k-way partition,
//! which cuts fewer edges. A partition is a value that can be printed ([`RankPartition::stats`]), saved and
//! loaded, so that a large graph is partitioned once.
//!
//! A rank owns its nodes' rows of the aggregation matrix (row = target node); a nonzero whose column (source
//! node) another rank owns is a cut edge, and its column a halo node, whose feature row must come from its owner
//! at every layer.

use std::fmt;
use std::io::{BufRead as _, BufReader, BufWriter, Write as _};
use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::graph::check_adjacency;
use crate::sparse::Csr;

/// How nodes are split over ranks (parsed from `range` or `metis`, in any case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::Display, strum::EnumString, strum::VariantNames)]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
#[strum(parse_err_ty = Error, parse_err_fn = Error::not_one_of::<Self>)]
pub enum PartitionMethod {
    /// Contiguous ranges of node ids, each with about the same number of edges (nonzeros of its rows, plus one
    /// per node).
    Range,
    /// METIS's multilevel k-way partition of the undirected graph (edges of either direction, self-loops
    /// left out), nodes weighted by their edges plus one so that the parts balance edges as ranges do.
    Metis,
}

/// Each node's owning rank, for a graph of `owners.len()` nodes split over `ranks` ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankPartition {
    owners: Vec<u32>,
    ranks: u32,
    method: PartitionMethod,
}

/// What one rank holds and exchanges under a partition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RankStats {
    /// Nodes it owns (rows of the aggregation matrix).
    pub nodes: usize,
    /// Nonzeros of its rows.
    pub edges: usize,
    /// Distinct nodes of other ranks its rows reference: the feature rows it receives per layer.
    pub halo_nodes: usize,
    /// Nonzeros of its rows whose column another rank owns.
    pub cut_edges: usize,
}

/// First line of a saved partition.
const FILE_HEADER: &str = "# pimgnn rank partition";

impl RankPartition {
    /// `graph`'s nodes over `ranks` ranks by `method` (square adjacency, row = target).
    pub fn new(graph: &Csr<f32>, ranks: u32, method: PartitionMethod) -> Result<Self> {
        check_adjacency(graph)?;
        if ranks == 0 {
            return Err(Error::invalid("ranks", "at least 1 rank is needed"));
        }
        let owners = match method {
            PartitionMethod::Range => range_owners(graph, ranks),
            PartitionMethod::Metis => metis_owners(graph, ranks)?,
        };
        Ok(RankPartition { owners, ranks, method })
    }

    /// A partition from each node's owner, every one below `ranks`.
    pub fn from_owners(owners: Vec<u32>, ranks: u32, method: PartitionMethod) -> Result<Self> {
        if let Some((node, &owner)) = owners.iter().enumerate().find(|(_, &owner)| owner >= ranks) {
            return Err(Error::IndexOutOfRange {
                what: format!("owner of node {node} (the ranks)"),
                index: owner.into(),
                limit: ranks.into(),
            });
        }
        Ok(RankPartition { owners, ranks, method })
    }

    /// Each node's rank.
    pub fn owners(&self) -> &[u32] {
        &self.owners
    }

    /// Ranks (some may own no node).
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// How it was made.
    pub fn method(&self) -> PartitionMethod {
        self.method
    }

    /// The nodes `rank` owns, ascending.
    pub fn nodes_of(&self, rank: u32) -> Vec<u32> {
        (0..self.owners.len() as u32).filter(|&node| self.owners[node as usize] == rank).collect()
    }

    /// What each rank holds and exchanges for `graph`, which must have this partition's nodes.
    pub fn stats(&self, graph: &Csr<f32>) -> Result<Vec<RankStats>> {
        check_adjacency(graph)?;
        if graph.nrows() != self.owners.len() {
            return Err(Error::shape("graph (the partition's nodes)", self.owners.len(), graph.nrows()));
        }
        let ranks = self.ranks as usize;
        let per_rank: Vec<RankStats> = (0..ranks)
            .into_par_iter()
            .map(|rank| {
                let mut halo = vec![false; graph.ncols()];
                let mut stats = RankStats::default();
                for row in (0..graph.nrows()).filter(|&row| self.owners[row] as usize == rank) {
                    let cols = graph.row(row).0;
                    stats.nodes += 1;
                    stats.edges += cols.len();
                    for &col in cols.iter().filter(|&&col| self.owners[col as usize] as usize != rank) {
                        stats.cut_edges += 1;
                        stats.halo_nodes += usize::from(!std::mem::replace(&mut halo[col as usize], true));
                    }
                }
                stats
            })
            .collect();
        Ok(per_rank)
    }

    /// Writes the partition to `path` as text: a header, `ranks`, `method` and `nodes` lines, then one owner per
    /// line in node order.
    pub fn save(&self, path: &Path) -> Result<()> {
        let io_error = |error| Error::Io { path: path.to_path_buf(), error };
        let mut out = BufWriter::new(std::fs::File::create(path).map_err(io_error)?);
        writeln!(out, "{FILE_HEADER}\nranks {}\nmethod {}\nnodes {}", self.ranks, self.method, self.owners.len())
            .map_err(io_error)?;
        for owner in &self.owners {
            writeln!(out, "{owner}").map_err(io_error)?;
        }
        out.flush().map_err(io_error)
    }

    /// Reads a partition [`RankPartition::save`] wrote, checking every line.
    pub fn load(path: &Path) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|error| Error::Io { path: path.to_path_buf(), error })?;
        let mut lines = BufReader::new(file).lines().enumerate();
        let bad = |line: usize, reason: String| Error::Parse { path: path.to_path_buf(), line: Some(line + 1), reason };
        let mut next = |expected: &str| -> Result<(usize, String)> {
            match lines.next() {
                Some((at, Ok(text))) => Ok((at, text)),
                Some((at, Err(error))) => Err(bad(at, error.to_string())),
                None => Err(Error::Parse {
                    path: path.to_path_buf(),
                    line: None,
                    reason: format!("the file ends where {expected} should be"),
                }),
            }
        };
        let (at, header) = next("the header")?;
        if header != FILE_HEADER {
            return Err(bad(at, format!("expected `{FILE_HEADER}`, found `{header}`")));
        }
        let mut field = |name: &str| -> Result<(usize, String)> {
            let (at, text) = next(name)?;
            match text.split_once(' ') {
                Some((key, value)) if key == name => Ok((at, value.to_owned())),
                _ => Err(bad(at, format!("expected `{name} <value>`, found `{text}`"))),
            }
        };
        let (at, ranks) = field("ranks")?;
        let ranks: u32 = ranks.parse().map_err(|_| bad(at, format!("ranks `{ranks}` is not a number")))?;
        let (at, method) = field("method")?;
        let method: PartitionMethod = method.parse().map_err(|error: Error| bad(at, error.to_string()))?;
        let (at, nodes) = field("nodes")?;
        let nodes: usize = nodes.parse().map_err(|_| bad(at, format!("nodes `{nodes}` is not a number")))?;
        let mut owners = Vec::with_capacity(nodes);
        for node in 0..nodes {
            let (at, text) = next(&format!("the owner of node {node}"))?;
            let owner: u32 = text.trim().parse().map_err(|_| bad(at, format!("owner `{text}` is not a number")))?;
            if owner >= ranks {
                return Err(bad(at, format!("owner {owner} of node {node} is not below the {ranks} ranks")));
            }
            owners.push(owner);
        }
        if let Some((at, _)) = lines.next() {
            return Err(bad(at, format!("more lines than the {nodes} nodes")));
        }
        Ok(RankPartition { owners, ranks, method })
    }
}

impl fmt::Display for RankPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} nodes over {} ranks by {}", self.owners.len(), self.ranks, self.method)
    }
}

/// Contiguous ranges with about equal work each, a node's work being its nonzeros plus one: rank `r` takes the
/// nodes whose work before them is in `[r W / P, (r + 1) W / P)`.
fn range_owners(graph: &Csr<f32>, ranks: u32) -> Vec<u32> {
    let total = (graph.nnz() + graph.nrows()) as u128;
    let row_ptr = graph.row_ptr();
    (0..graph.nrows())
        .into_par_iter()
        .map(|node| {
            let before = (row_ptr[node] as usize + node) as u128;
            ((before * u128::from(ranks)) / total.max(1)) as u32
        })
        .collect()
}

/// Without METIS compiled in, its method is refused.
#[cfg(not(feature = "metis"))]
fn metis_owners(_graph: &Csr<f32>, _ranks: u32) -> Result<Vec<u32>> {
    Err(Error::invalid("partition method metis", "pimgnn was built without its `metis` feature"))
}

/// METIS's k-way partition into `ranks` parts (see [`PartitionMethod::Metis`]).
#[cfg(feature = "metis")]
fn metis_owners(graph: &Csr<f32>, ranks: u32) -> Result<Vec<u32>> {
    let nodes = graph.nrows();
    if ranks == 1 || nodes == 0 {
        return Ok(vec![0; nodes]);
    }
    let undirected = undirected_pattern(graph);
    let to_idx = |value: usize, what: &str| {
        metis::Idx::try_from(value).map_err(|_| Error::Capacity {
            what: format!("METIS's 32-bit indices for {what}"),
            needed: value as u64,
            limit: metis::Idx::MAX as u64,
        })
    };
    to_idx(undirected.col_idx().len(), "the undirected graph's edges (each counted twice)")?;
    let xadj: Vec<metis::Idx> = undirected.row_ptr().iter().map(|&at| at as metis::Idx).collect();
    let adjncy: Vec<metis::Idx> = undirected.col_idx().iter().map(|&col| col as metis::Idx).collect();
    let weights: Vec<metis::Idx> =
        (0..nodes).map(|row| to_idx(graph.row(row).0.len() + 1, "a node's weight")).collect::<Result<_>>()?;
    let mut parts = vec![0 as metis::Idx; nodes];
    let parts_wanted = to_idx(ranks as usize, "the ranks")?;
    let metis_error = |reason: String| Error::invalid("METIS partition", reason);
    metis::Graph::new(1, parts_wanted, &xadj, &adjncy)
        .map_err(|error| metis_error(format!("{error:?}")))?
        .set_vwgt(&weights)
        .part_kway(&mut parts)
        .map_err(|error| metis_error(format!("{error:?}")))?;
    Ok(parts.into_iter().map(|part| part as u32).collect())
}

/// The pattern of `A + A^T` without the diagonal, each row's columns ascending and distinct: the undirected
/// graph METIS takes.
#[cfg(feature = "metis")]
fn undirected_pattern(graph: &Csr<f32>) -> Csr<f32> {
    let transposed = graph.transpose();
    let nodes = graph.nrows();
    let rows: Vec<Vec<u32>> = (0..nodes)
        .into_par_iter()
        .map(|row| {
            let mut cols: Vec<u32> = graph
                .row(row)
                .0
                .iter()
                .chain(transposed.row(row).0)
                .copied()
                .filter(|&col| col as usize != row)
                .collect();
            cols.sort_unstable();
            cols.dedup();
            cols
        })
        .collect();
    let mut row_ptr = Vec::with_capacity(nodes + 1);
    row_ptr.push(0u32);
    for cols in &rows {
        row_ptr.push(row_ptr[row_ptr.len() - 1] + cols.len() as u32);
    }
    let col_idx: Vec<u32> = rows.into_iter().flatten().collect();
    let values = vec![1.0; col_idx.len()];
    match Csr::new(nodes, nodes, row_ptr, col_idx, values) {
        Ok(pattern) => pattern,
        Err(error) => unreachable!("the symmetrised pattern of a valid graph is valid: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles {0, 1, 2} and {3, 4, 5} joined by the edge 2 - 3, both directions stored.
    fn two_triangles() -> Csr<f32> {
        let edges = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)];
        let (mut rows, mut cols) = (Vec::new(), Vec::new());
        for (a, b) in edges {
            rows.extend([a, b]);
            cols.extend([b, a]);
        }
        let values = vec![1.0; rows.len()];
        crate::Coo::new(6, 6, rows, cols, values).unwrap().to_csr()
    }

    #[test]
    fn ranges_balance_edges_and_stats_count_the_halo() {
        let graph = two_triangles();
        let partition = RankPartition::new(&graph, 2, PartitionMethod::Range).unwrap();
        assert_eq!(partition.owners(), &[0, 0, 0, 1, 1, 1]);
        assert_eq!(partition.nodes_of(1), vec![3, 4, 5]);
        let stats = partition.stats(&graph).unwrap();
        let expected = RankStats { nodes: 3, edges: 7, halo_nodes: 1, cut_edges: 1 };
        assert_eq!(stats, vec![expected, expected]);
    }

    #[test]
    fn more_ranks_than_nodes_leave_some_ranks_empty() {
        let graph = two_triangles();
        let partition = RankPartition::new(&graph, 9, PartitionMethod::Range).unwrap();
        let stats = partition.stats(&graph).unwrap();
        assert_eq!(stats.len(), 9);
        assert_eq!(stats.iter().map(|s| s.nodes).sum::<usize>(), 6);
        assert!(stats.iter().any(|s| s.nodes == 0));
    }

    #[cfg(feature = "metis")]
    #[test]
    fn metis_cuts_fewer_edges_than_ranges_of_shuffled_ids() {
        // Triangles whose ids interleave (0, 2, 4 and 1, 3, 5): ranges cut them, METIS finds them.
        let graph = two_triangles();
        let shuffle = [0u32, 2, 4, 1, 3, 5];
        let coo = graph.to_coo();
        let rows = coo.rows().iter().map(|&r| shuffle[r as usize]).collect();
        let cols = coo.cols().iter().map(|&c| shuffle[c as usize]).collect();
        let shuffled = crate::Coo::new(6, 6, rows, cols, coo.values().to_vec()).unwrap().to_csr();
        let cut = |method| {
            let partition = RankPartition::new(&shuffled, 2, method).unwrap();
            partition.stats(&shuffled).unwrap().iter().map(|s| s.cut_edges).sum::<usize>()
        };
        assert_eq!(cut(PartitionMethod::Metis), 2, "only the bridge, once from each side");
        assert!(cut(PartitionMethod::Range) > 2);
    }

    #[test]
    fn a_partition_saved_loads_back_and_a_bad_file_names_its_line() {
        let graph = two_triangles();
        let partition = RankPartition::new(&graph, 3, PartitionMethod::Range).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("parts.txt");
        partition.save(&path).unwrap();
        assert_eq!(RankPartition::load(&path).unwrap(), partition);

        let text = std::fs::read_to_string(&path).unwrap().replace("\n2\n", "\n7\n");
        std::fs::write(&path, text).unwrap();
        let error = RankPartition::load(&path).unwrap_err().to_string();
        assert!(error.contains("owner 7 of node") && error.contains(":"), "{error}");
        std::fs::write(&path, "# pimgnn rank partition\nranks 2\nmethod range\nnodes 3\n0\n1\n").unwrap();
        let error = RankPartition::load(&path).unwrap_err().to_string();
        assert!(error.contains("ends where the owner of node 2 should be"), "{error}");
    }

    #[test]
    fn bad_arguments_are_refused() {
        let graph = two_triangles();
        assert!(RankPartition::new(&graph, 0, PartitionMethod::Range).is_err());
        assert!(RankPartition::from_owners(vec![0, 2], 2, PartitionMethod::Range).is_err());
        let other = Csr::new(2, 2, vec![0, 0, 0], vec![], vec![]).unwrap();
        let partition = RankPartition::new(&graph, 2, PartitionMethod::Range).unwrap();
        assert!(matches!(partition.stats(&other), Err(Error::Shape { .. })));
        assert_eq!("METIS".parse::<PartitionMethod>().unwrap(), PartitionMethod::Metis);
    }
}
