//! Cutting `A` into the tiles of a plan: row blocks balanced by nonzeros plus rows, column blocks of equal
//! width, and per tile its DPU-local CSR with the columns renumbered as the plan's X delivery says.
//!
//! Row blocks are cut by work (a row costs one unit, a nonzero one more), inside a row when the row is long:
//! a hub row of 10,000 nonzeros is spread over several DPUs, whose partial sums the host adds up. Tasklets
//! split a DPU's block the same way ([`cut_at`]).

use std::ops::Range;

use rayon::prelude::*;

use crate::pim::abi::CooIndex;
use crate::pim::element::{integer_magnitude, NarrowY};
use crate::pim::plan::{Format, Plan, XDelivery};
use crate::pim::PimElement;
use crate::sparse::Csr;

/// A point in a CSR matrix's nonzero order: `nonzero` lies in `row`, or is `row_ptr[row]` when the cut falls
/// just before the row starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cut {
    pub(crate) row: usize,
    pub(crate) nonzero: usize,
}

impl Cut {
    /// Whether the cut falls strictly inside a row, which is then shared by the pieces on either side.
    pub(crate) fn inside(self, row_ptr: &[u32]) -> bool {
        self.nonzero > row_ptr[self.row] as usize
    }
}

/// The cut after `weight` units of work, where a row costs one unit (writing it) and each nonzero one more.
pub(crate) fn cut_at(row_ptr: &[u32], weight: usize) -> Cut {
    let rows = row_ptr.len() - 1;
    // The last row starting within `weight` units: row r starts after row_ptr[r] + r units.
    let row = first_index(rows + 1, |r| row_ptr[r] as usize + r > weight).saturating_sub(1);
    if row == rows {
        return Cut { row, nonzero: row_ptr[rows] as usize };
    }
    let start = row_ptr[row] as usize;
    let end = row_ptr[row + 1] as usize;
    let nonzero = (start + (weight - (start + row))).min(end);
    // A cut at the end of a row is the start of the next one.
    if nonzero == end && nonzero > start {
        Cut { row: row + 1, nonzero }
    } else {
        Cut { row, nonzero }
    }
}

/// The rows and nonzeros between two cuts, and whether its first and last rows are shared with the pieces
/// before and after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) rows: Range<usize>,
    pub(crate) nonzeros: Range<usize>,
    pub(crate) head_shared: bool,
    pub(crate) tail_shared: bool,
}

/// The piece of work between cuts `begin` and `end`.
pub(crate) fn piece(row_ptr: &[u32], begin: Cut, end: Cut) -> Piece {
    let tail_shared = end.inside(row_ptr);
    Piece {
        rows: begin.row..if tail_shared { end.row + 1 } else { end.row },
        nonzeros: begin.nonzero..end.nonzero,
        head_shared: begin.inside(row_ptr),
        tail_shared,
    }
}

/// Row blocks and column boundaries of a plan's tiles. Tile `rb * col_blocks + cb` is row block `rb`, column
/// block `cb`.
#[derive(Clone, Debug)]
pub(crate) struct Partition {
    pub(crate) row_blocks: Vec<Piece>,
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
    /// Rows whose sums may not fit 16 bits ([`PimElement::NARROW_Y`]): every row of a type without a bound.
    pub(crate) wide_rows: usize,
    /// Nonzeros of its longest row: how many tasklets may share a row, whose partial sums one of them merges.
    pub(crate) longest_row: usize,
}

/// A tile ready for a DPU: its block of `A` with DPU-local columns, and which rows of `X` it needs.
#[derive(Clone, Debug)]
pub(crate) struct Tile {
    pub(crate) rows: Range<usize>,
    pub(crate) row_ptr: Vec<u32>,
    pub(crate) columns: Vec<u32>,
    /// Values as the kernels read them ([`PimElement::value_bits`]).
    pub(crate) values: Vec<u32>,
    /// Global rows of `X` in DPU-local order.
    pub(crate) x_rows: XRows,
    /// Which of `A`'s nonzeros these are, in the tile's order.
    pub(crate) nonzero_ids: NonzeroIds,
    /// Local rows whose sums may not fit 16 bits, ascending (types with [`PimElement::NARROW_Y`]; else empty).
    pub(crate) wide_rows: Vec<u32>,
}

/// Which of `A`'s nonzeros (indices in its row-by-row order) a tile holds, in the tile's order: what new values
/// for the same structure are picked from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NonzeroIds {
    /// A contiguous run (a tile spanning every column holds its row block's nonzeros in order).
    Range(Range<usize>),
    /// Ascending indices.
    List(Vec<u32>),
}

impl NonzeroIds {
    /// `out[global] = local[position]` for every nonzero of the tile, `local` in the tile's order.
    pub(crate) fn scatter_into<V: Copy>(&self, local: &[V], out: &mut [V]) {
        match self {
            NonzeroIds::Range(range) => out[range.clone()].copy_from_slice(&local[..range.len()]),
            NonzeroIds::List(ids) => ids.iter().zip(local).for_each(|(&k, &v)| out[k as usize] = v),
        }
    }

    /// `out[local] = pick(global)` for every nonzero of the tile.
    pub(crate) fn pick_into<V>(&self, out: &mut [V], pick: impl Fn(usize) -> V) {
        match self {
            NonzeroIds::Range(range) => out.iter_mut().zip(range.clone()).for_each(|(out, k)| *out = pick(k)),
            NonzeroIds::List(ids) => out.iter_mut().zip(ids).for_each(|(out, &k)| *out = pick(k as usize)),
        }
    }
}

/// A tile's MRAM image in 32-bit words: its values from word 0, then the structure.
pub(crate) struct Image {
    pub(crate) words: Vec<u32>,
    /// Word offset of the row pointers (when written).
    pub(crate) row_ptr_at: usize,
    /// Word offset of the indices (CSR columns, COO [`CooIndex`]es).
    pub(crate) indices_at: usize,
    /// Word offset of the wide-row list.
    pub(crate) wide_rows_at: usize,
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

    /// The global row of local row `local`.
    pub(crate) fn global(&self, local: usize) -> usize {
        match self {
            XRows::Range(range) => range.start + local,
            XRows::List(rows) => rows[local] as usize,
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
    /// `plan`'s row blocks of about equal nonzeros plus rows (cut inside rows if it says so), each cut into its
    /// column blocks of equal width.
    pub(crate) fn new<T: PimElement>(a: &Csr<T>, plan: &Plan) -> Self {
        let (row_blocks, col_blocks) = (plan.row_blocks as usize, plan.col_blocks as usize);
        let row_ptr = a.row_ptr();
        let total = a.nnz() + a.nrows();
        let cut = |weight: usize| {
            if plan.split_rows {
                cut_at(row_ptr, weight)
            } else {
                let row = first_index(a.nrows() + 1, |r| row_ptr[r] as usize + r >= weight);
                Cut { row, nonzero: row_ptr[row] as usize }
            }
        };
        let cuts: Vec<Cut> = (0..=row_blocks).map(|b| cut(total * b / row_blocks)).collect();
        let row_blocks = cuts.windows(2).map(|pair| piece(row_ptr, pair[0], pair[1])).collect();
        let col_bounds = (0..=col_blocks).map(|b| a.ncols() * b / col_blocks).collect();
        Partition { row_blocks, col_bounds }
    }

    pub(crate) fn row_blocks(&self) -> usize {
        self.row_blocks.len()
    }

    pub(crate) fn col_blocks(&self) -> usize {
        self.col_bounds.len() - 1
    }

    pub(crate) fn nr_tiles(&self) -> usize {
        self.row_blocks() * self.col_blocks()
    }

    pub(crate) fn block(&self, row_block: usize) -> &Piece {
        &self.row_blocks[row_block]
    }

    pub(crate) fn cols(&self, col_block: usize) -> Range<usize> {
        self.col_bounds[col_block]..self.col_bounds[col_block + 1]
    }

    /// The column block holding column `col`. Block `b` starts at `floor(ncols * b / blocks)`, so `col` is in the
    /// last block `b` with `ncols * b < (col + 1) * blocks`: one division, where a search of the bounds took a
    /// sixth of a plan search's time on a 2,048-block partition.
    fn col_block_of(&self, col: usize) -> usize {
        let (ncols, blocks) = (self.col_bounds[self.col_blocks()] as u64, self.col_blocks() as u64);
        (((col as u64 + 1) * blocks - 1) / ncols) as usize
    }

    /// Sizes of every tile, in tile order, without building them.
    pub(crate) fn stats<T: PimElement>(&self, a: &Csr<T>) -> Vec<TileStats> {
        Self::stats_sharing_rows(a, &[self]).swap_remove(0)
    }

    /// This partition's row blocks cut into `col_blocks` column blocks of equal width.
    pub(crate) fn with_col_blocks(&self, col_blocks: usize) -> Partition {
        let ncols = self.col_bounds[self.col_blocks()];
        let col_bounds = (0..=col_blocks).map(|b| ncols * b / col_blocks).collect();
        Partition { row_blocks: self.row_blocks.clone(), col_bounds }
    }

    /// [`Partition::stats`] of several partitions of the same row blocks (their column blocks differ), in one pass
    /// over the nonzeros: a plan search costs partitions of one row-block count with up to five column-block
    /// counts, and a column first referenced in a row block is so in all of them.
    pub(crate) fn stats_sharing_rows<T: PimElement>(a: &Csr<T>, partitions: &[&Partition]) -> Vec<Vec<TileStats>> {
        let Some(first) = partitions.first() else { return Vec::new() };
        debug_assert!(partitions.iter().all(|p| p.row_blocks == first.row_blocks), "partitions of one row cut");
        let per_row_block: Vec<Vec<Vec<TileStats>>> = (0..first.row_blocks())
            .into_par_iter()
            .map_init(
                || vec![u32::MAX; a.ncols()],
                |seen, rb| {
                    let mut tiles: Vec<Vec<TileStats>> = partitions
                        .iter()
                        .map(|partition| {
                            (0..partition.col_blocks())
                                .map(|cb| TileStats {
                                    rows: partition.block(rb).rows.len(),
                                    width: partition.cols(cb).len(),
                                    ..TileStats::default()
                                })
                                .collect()
                        })
                        .collect();
                    // Per partition and column block, the nonzeros of the row at hand.
                    let mut row_counts: Vec<Vec<usize>> = tiles.iter().map(|tiles| vec![0; tiles.len()]).collect();
                    let block = first.block(rb);
                    for r in block.rows.clone() {
                        let start = (a.row_ptr()[r] as usize).max(block.nonzeros.start);
                        let end = (a.row_ptr()[r + 1] as usize).min(block.nonzeros.end);
                        for &c in &a.col_idx()[start..end] {
                            let referenced = seen[c as usize] != rb as u32;
                            seen[c as usize] = rb as u32;
                            for ((partition, tiles), counts) in partitions.iter().zip(&mut tiles).zip(&mut row_counts) {
                                let cb = if tiles.len() == 1 { 0 } else { partition.col_block_of(c as usize) };
                                let tile = &mut tiles[cb];
                                tile.nonzeros += 1;
                                tile.referenced += usize::from(referenced);
                                counts[cb] += 1;
                            }
                        }
                        for (tiles, counts) in tiles.iter_mut().zip(&mut row_counts) {
                            for (tile, count) in tiles.iter_mut().zip(counts.iter_mut()) {
                                tile.longest_row = tile.longest_row.max(*count);
                                *count = 0;
                            }
                        }
                    }
                    for (partition, tiles) in partitions.iter().zip(&mut tiles) {
                        match T::NARROW_Y {
                            Some(narrow) => partition.count_wide_rows(a, rb, &narrow, tiles),
                            None => tiles.iter_mut().for_each(|tile| tile.wide_rows = tile.rows),
                        }
                    }
                    tiles
                },
            )
            .collect();
        (0..partitions.len())
            .map(|p| per_row_block.iter().flat_map(|tiles| tiles[p].iter().copied()).collect())
            .collect()
    }

    /// Adds to each of row block `rb`'s tiles its rows whose sums in that tile may not fit 16 bits.
    fn count_wide_rows<T: PimElement>(&self, a: &Csr<T>, rb: usize, narrow: &NarrowY<T::Acc>, tiles: &mut [TileStats]) {
        let block = self.block(rb);
        let mut l1 = vec![0u64; tiles.len()];
        for r in block.rows.clone() {
            let start = (a.row_ptr()[r] as usize).max(block.nonzeros.start);
            let end = (a.row_ptr()[r + 1] as usize).min(block.nonzeros.end);
            for k in start..end {
                let cb = if tiles.len() == 1 { 0 } else { self.col_block_of(a.col_idx()[k] as usize) };
                l1[cb] += integer_magnitude(a.values()[k].value_bits());
            }
            for (tile, l1) in tiles.iter_mut().zip(&mut l1) {
                tile.wide_rows += usize::from(!narrow.fits(*l1));
                *l1 = 0;
            }
        }
    }

    /// Every tile with its DPU-local columns.
    pub(crate) fn tiles<T: PimElement>(&self, a: &Csr<T>, x: XDelivery) -> Vec<Tile> {
        (0..self.nr_tiles()).into_par_iter().map(|tile| self.tile(a, tile, x)).collect()
    }

    fn tile<T: PimElement>(&self, a: &Csr<T>, tile: usize, x: XDelivery) -> Tile {
        let block = self.block(tile / self.col_blocks());
        let rows = block.rows.clone();
        let cols = self.cols(tile % self.col_blocks());
        let mut row_ptr = Vec::with_capacity(rows.len() + 1);
        let mut columns = Vec::new();
        let mut values = Vec::new();
        let whole_rows = self.col_blocks() == 1;
        let mut ids = Vec::new();
        row_ptr.push(0);
        for r in rows.clone() {
            // The row's nonzeros within the block (all of them unless the row is shared).
            let start = (a.row_ptr()[r] as usize).max(block.nonzeros.start);
            let end = (a.row_ptr()[r + 1] as usize).min(block.nonzeros.end);
            for k in start..end {
                let c = a.col_idx()[k];
                if cols.contains(&(c as usize)) {
                    columns.push(c);
                    values.push(a.values()[k].value_bits());
                    if !whole_rows {
                        ids.push(k as u32);
                    }
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
        let nonzero_ids = if whole_rows { NonzeroIds::Range(block.nonzeros.clone()) } else { NonzeroIds::List(ids) };
        let wide_rows = match T::NARROW_Y {
            Some(narrow) => (0..rows.len() as u32)
                .filter(|&r| {
                    let nonzeros = &values[row_ptr[r as usize] as usize..row_ptr[r as usize + 1] as usize];
                    !narrow.fits(nonzeros.iter().map(|&bits| integer_magnitude(bits)).sum())
                })
                .collect(),
            None => Vec::new(),
        };
        Tile { rows, row_ptr, columns, values, x_rows, nonzero_ids, wide_rows }
    }
}

impl Tile {
    pub(crate) fn nnz(&self) -> usize {
        self.columns.len()
    }

    /// The tile's MRAM image: its values in the first `values_words` words (the same region on every DPU, at
    /// least the tile's nonzeros, even), then the row pointers (CSR, and COO `with_row_ptrs`), the indices and
    /// the wide-row list, each starting 8-aligned.
    pub(crate) fn encode(&self, format: Format, values_words: usize, with_row_ptrs: bool) -> Image {
        debug_assert!(values_words >= self.nnz() && values_words.is_multiple_of(2));
        let row_ptrs = format == Format::Csr || with_row_ptrs;
        let structure = match format {
            Format::Csr => self.nnz(),
            Format::Coo => 2 * self.nnz(),
        } + if row_ptrs { self.row_ptr.len().next_multiple_of(2) } else { 0 };
        let mut words = Vec::with_capacity(values_words + structure + self.wide_rows.len() + 2);
        words.extend_from_slice(&self.values);
        words.resize(values_words, 0);
        let row_ptr_at = words.len();
        if row_ptrs {
            words.extend_from_slice(&self.row_ptr);
            if words.len() % 2 == 1 {
                words.push(0);
            }
        }
        let indices_at = words.len();
        match format {
            Format::Csr => words.extend_from_slice(&self.columns),
            Format::Coo => {
                for (r, span) in self.row_ptr.windows(2).enumerate() {
                    for &column in &self.columns[span[0] as usize..span[1] as usize] {
                        let index = CooIndex { row: r as u32, column };
                        words.extend_from_slice(&[index.row, index.column]);
                    }
                }
            }
        }
        if words.len() % 2 == 1 {
            words.push(0);
        }
        let wide_rows_at = words.len();
        words.extend_from_slice(&self.wide_rows);
        if words.len() % 2 == 1 {
            words.push(0);
        }
        Image { words, row_ptr_at, indices_at, wide_rows_at }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass statistics of several column-block counts are each partition's own, wide rows included.
    #[test]
    fn stats_sharing_rows_are_each_partitions_stats() {
        let (n, mut row_ptr, mut col_idx, mut values) = (300usize, vec![0u32], Vec::new(), Vec::new());
        for r in 0..n {
            let degree = if r % 50 == 7 { 400 } else { r % 9 };
            for k in 0..degree {
                col_idx.push(((r * 7_919 + k * 104_729) % n) as u32);
                values.push(((r + k) % 5) as i8 - 2);
            }
            row_ptr.push(col_idx.len() as u32);
        }
        let a = Csr::new(n, n, row_ptr, col_idx, values).unwrap();
        for (row_blocks, split_rows) in [(1, true), (7, true), (7, false), (64, true)] {
            let plan = |col_blocks| Plan {
                format: Format::Csr,
                row_blocks,
                split_rows,
                col_blocks,
                feature_groups: 1,
                x: XDelivery::Referenced,
                tasklets: 16,
            };
            let rows = Partition::new(&a, &plan(1));
            let partitions: Vec<Partition> = [1, 2, 4, 16].iter().map(|&cb| rows.with_col_blocks(cb)).collect();
            let shared = Partition::stats_sharing_rows(&a, &partitions.iter().collect::<Vec<_>>());
            for (partition, shared) in partitions.iter().zip(shared) {
                // The tiles themselves, built as the engine builds them, say what the statistics must.
                let built: Vec<TileStats> = partition
                    .tiles(&a, XDelivery::Referenced)
                    .iter()
                    .enumerate()
                    .map(|(t, tile)| TileStats {
                        rows: tile.rows.len(),
                        nonzeros: tile.nnz(),
                        referenced: tile.x_rows.len(),
                        width: partition.cols(t % partition.col_blocks()).len(),
                        wide_rows: tile.wide_rows.len(),
                        longest_row: tile.row_ptr.windows(2).map(|row| (row[1] - row[0]) as usize).max().unwrap_or(0),
                    })
                    .collect();
                let cb = partition.col_blocks();
                assert_eq!(shared, built, "{row_blocks} row blocks, split {split_rows}, {cb} column blocks");
            }
        }
        // The hub rows' sums need 32 bits.
        assert!(Partition::new(&a, &Plan::pygim(1, 1, 16)).stats(&a)[0].wide_rows > 0);
    }

    #[test]
    fn a_column_is_in_the_block_whose_bounds_hold_it() {
        for ncols in 1..=40 {
            for blocks in 1..=45 {
                let col_bounds: Vec<usize> = (0..=blocks).map(|b| ncols * b / blocks).collect();
                let partition = Partition { row_blocks: Vec::new(), col_bounds };
                for col in 0..ncols {
                    let block = partition.col_block_of(col);
                    assert!(partition.cols(block).contains(&col), "{ncols} columns, {blocks} blocks, column {col}");
                }
            }
        }
    }
}
