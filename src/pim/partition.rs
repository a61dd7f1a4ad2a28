//! Cutting `A` into the tiles of a plan: row blocks balanced by nonzeros plus rows, column blocks of equal
//! width, and per tile its DPU-local CSR with the columns renumbered as the plan's X delivery says.

use std::ops::Range;

use rayon::prelude::*;

use crate::pim::abi::{CooNonzero, CsrNonzero};
use crate::pim::PimElement;
use crate::plan::{Format, XDelivery};
use crate::sparse::Csr;

/// Row and column boundaries of a plan's tiles. Tile `rb * col_blocks + cb` is row block `rb`, column block `cb`.
#[derive(Clone, Debug)]
pub(crate) struct Partition {
    pub(crate) row_bounds: Vec<usize>,
    pub(crate) col_bounds: Vec<usize>,
}

/// What the cost model needs of a tile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TileStats {
    pub(crate) rows: usize,
    pub(crate) nonzeros: usize,
    /// Distinct columns its nonzeros reference.
    pub(crate) referenced: usize,
    /// Columns of its column block.
    pub(crate) width: usize,
}

/// A tile ready for a DPU: its block of `A` with DPU-local columns, and which rows of `X` it needs.
#[derive(Clone, Debug)]
pub(crate) struct Tile {
    pub(crate) rows: Range<usize>,
    pub(crate) row_ptr: Vec<u32>,
    pub(crate) columns: Vec<u32>,
    /// Values as stored in nonzero records ([`PimElement::value_bits`]).
    pub(crate) values: Vec<u32>,
    /// Global rows of `X` in DPU-local order.
    pub(crate) x_rows: XRows,
}

/// The rows of `X` a DPU holds, in its local numbering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum XRows {
    /// A contiguous range: local row `i` is global row `start + i`.
    Range(Range<usize>),
    /// Sorted distinct global rows.
    List(Vec<u32>),
}

impl XRows {
    pub(crate) fn len(&self) -> usize {
        match self {
            XRows::Range(range) => range.len(),
            XRows::List(rows) => rows.len(),
        }
    }
}

/// The first `i` in `0..len` for which `reached(i)` holds (`len` if none), for `reached` false then true.
pub(crate) fn first_index(len: usize, reached: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, len);
    while low < high {
        let mid = low + (high - low) / 2;
        if reached(mid) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    low
}

impl Partition {
    /// `row_blocks` row blocks of about equal nonzeros plus rows, each cut into `col_blocks` equal column ranges.
    pub(crate) fn new<T: PimElement>(a: &Csr<T>, row_blocks: usize, col_blocks: usize) -> Self {
        let row_ptr = a.row_ptr();
        let rows = a.nrows();
        let total = a.nnz() + rows;
        let row_bounds = (0..=row_blocks)
            .map(|b| {
                let target = total * b / row_blocks;
                first_index(rows + 1, |r| row_ptr[r] as usize + r >= target)
            })
            .collect();
        let col_bounds = (0..=col_blocks).map(|b| a.ncols() * b / col_blocks).collect();
        Partition { row_bounds, col_bounds }
    }

    pub(crate) fn row_blocks(&self) -> usize {
        self.row_bounds.len() - 1
    }

    pub(crate) fn col_blocks(&self) -> usize {
        self.col_bounds.len() - 1
    }

    pub(crate) fn nr_tiles(&self) -> usize {
        self.row_blocks() * self.col_blocks()
    }

    pub(crate) fn rows(&self, row_block: usize) -> Range<usize> {
        self.row_bounds[row_block]..self.row_bounds[row_block + 1]
    }

    pub(crate) fn cols(&self, col_block: usize) -> Range<usize> {
        self.col_bounds[col_block]..self.col_bounds[col_block + 1]
    }

    fn col_block_of(&self, col: usize) -> usize {
        self.col_bounds.partition_point(|&bound| bound <= col) - 1
    }

    /// Sizes of every tile, in tile order, without building them.
    pub(crate) fn stats<T: PimElement>(&self, a: &Csr<T>) -> Vec<TileStats> {
        let col_blocks = self.col_blocks();
        (0..self.row_blocks())
            .into_par_iter()
            .map_init(
                || vec![u32::MAX; a.ncols()],
                |seen, rb| {
                    let mut tiles: Vec<TileStats> = (0..col_blocks)
                        .map(|cb| TileStats {
                            rows: self.rows(rb).len(),
                            width: self.cols(cb).len(),
                            ..TileStats::default()
                        })
                        .collect();
                    for r in self.rows(rb) {
                        for &c in a.row(r).0 {
                            let tile = &mut tiles[if col_blocks == 1 { 0 } else { self.col_block_of(c as usize) }];
                            tile.nonzeros += 1;
                            if seen[c as usize] != rb as u32 {
                                seen[c as usize] = rb as u32;
                                tile.referenced += 1;
                            }
                        }
                    }
                    tiles
                },
            )
            .flatten()
            .collect()
    }

    /// Every tile with its DPU-local columns.
    pub(crate) fn tiles<T: PimElement>(&self, a: &Csr<T>, x: XDelivery) -> Vec<Tile> {
        (0..self.nr_tiles()).into_par_iter().map(|tile| self.tile(a, tile, x)).collect()
    }

    fn tile<T: PimElement>(&self, a: &Csr<T>, tile: usize, x: XDelivery) -> Tile {
        let rows = self.rows(tile / self.col_blocks());
        let cols = self.cols(tile % self.col_blocks());
        let mut row_ptr = Vec::with_capacity(rows.len() + 1);
        let mut columns = Vec::new();
        let mut values = Vec::new();
        row_ptr.push(0);
        for r in rows.clone() {
            let (row_cols, row_values) = a.row(r);
            for (&c, &v) in row_cols.iter().zip(row_values) {
                if cols.contains(&(c as usize)) {
                    columns.push(c);
                    values.push(v.value_bits());
                }
            }
            row_ptr.push(columns.len() as u32);
        }
        let x_rows = match x {
            XDelivery::Whole => {
                columns.iter_mut().for_each(|c| *c -= cols.start as u32);
                XRows::Range(cols)
            }
            XDelivery::Referenced => {
                let mut referenced = columns.clone();
                referenced.par_sort_unstable();
                referenced.dedup();
                columns.iter_mut().for_each(|c| *c = referenced.binary_search(c).expect("referenced column") as u32);
                XRows::List(referenced)
            }
        };
        Tile { rows, row_ptr, columns, values, x_rows }
    }
}

impl Tile {
    pub(crate) fn nnz(&self) -> usize {
        self.columns.len()
    }

    /// The tile's MRAM image in 32-bit words (even length) and the word offsets of its row pointers and
    /// nonzero records.
    pub(crate) fn encode(&self, format: Format) -> (Vec<u32>, usize, usize) {
        let mut words = Vec::new();
        let row_ptr_at = 0;
        if format == Format::Csr {
            words.extend_from_slice(&self.row_ptr);
            if words.len() % 2 == 1 {
                words.push(0);
            }
        }
        let nonzeros_at = words.len();
        match format {
            Format::Csr => {
                words.reserve(2 * self.nnz());
                for (&column, &value) in self.columns.iter().zip(&self.values) {
                    let record = CsrNonzero { column, value };
                    words.extend_from_slice(&[record.column, record.value]);
                }
            }
            Format::Coo => {
                words.reserve(3 * self.nnz());
                for (r, span) in self.row_ptr.windows(2).enumerate() {
                    for k in span[0] as usize..span[1] as usize {
                        let record = CooNonzero { row: r as u32, column: self.columns[k], value: self.values[k] };
                        words.extend_from_slice(&[record.row, record.column, record.value]);
                    }
                }
            }
        }
        if words.len() % 2 == 1 {
            words.push(0);
        }
        (words, row_ptr_at, nonzeros_at)
    }
}
