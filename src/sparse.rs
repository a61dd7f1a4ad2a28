//! Sparse and dense matrices: CSR and COO with 32-bit indices, and row-major dense feature matrices.
//!
//! Values are one of the [`Element`] types the DPU kernels support: `f32` (exact, software float on a DPU) and
//! the quantized `i32`, `i16` and `i8`, which accumulate in `i32`.

use std::fmt;

use crate::error::{Error, Result};

/// A value type of sparse and dense matrices, with the type its products accumulate in.
pub trait Element: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The accumulator type of sums of products (`f32` for `f32`, `i32` for the integer types).
    type Acc: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static;
    /// The name used in plans, tables and kernel selection (`"f32"`, `"i32"`, `"i16"`, `"i8"`).
    const NAME: &'static str;
    /// `acc + a * b`, wrapping for integers (the DPU kernels wrap the same way).
    fn mul_add(acc: Self::Acc, a: Self, b: Self) -> Self::Acc;
    /// `a + b` of accumulators, wrapping for integers.
    fn acc_add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a + b` of values, wrapping for integers (how duplicate entries of a sparse matrix add up).
    fn value_add(a: Self, b: Self) -> Self;
    /// Attention weights (in `(0, 1]`) as values of this type, when it holds them unscaled: `f32` does; the
    /// integer types take weights only through a quantization with its own scale.
    fn from_weights(weights: Vec<f32>) -> Option<Vec<Self>> {
        let _ = weights;
        None
    }
}

impl Element for f32 {
    type Acc = f32;
    const NAME: &'static str = "f32";
    #[inline]
    fn mul_add(acc: f32, a: f32, b: f32) -> f32 {
        acc + a * b
    }
    #[inline]
    fn acc_add(a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline]
    fn value_add(a: f32, b: f32) -> f32 {
        a + b
    }
    fn from_weights(weights: Vec<f32>) -> Option<Vec<f32>> {
        Some(weights)
    }
}

macro_rules! integer_element {
    ($ty:ty, $name:literal) => {
        impl Element for $ty {
            type Acc = i32;
            const NAME: &'static str = $name;
            #[inline]
            fn mul_add(acc: i32, a: $ty, b: $ty) -> i32 {
                acc.wrapping_add((a as i32).wrapping_mul(b as i32))
            }
            #[inline]
            fn acc_add(a: i32, b: i32) -> i32 {
                a.wrapping_add(b)
            }
            #[inline]
            fn value_add(a: $ty, b: $ty) -> $ty {
                a.wrapping_add(b)
            }
        }
    };
}
integer_element!(i32, "i32");
integer_element!(i16, "i16");
integer_element!(i8, "i8");

/// A sparse matrix in compressed sparse row form. Row `r`'s nonzeros are
/// `col_idx[row_ptr[r]..row_ptr[r + 1]]` with values `values[..]` at the same positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Csr<T> {
    nrows: usize,
    ncols: usize,
    row_ptr: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
}

impl<T: Element> Csr<T> {
    /// A CSR matrix from its arrays, checked: `row_ptr` has `nrows + 1` nondecreasing entries from 0 to the
    /// number of nonzeros, every column index is below `ncols`, and there is one value per column index.
    pub fn new(nrows: usize, ncols: usize, row_ptr: Vec<u32>, col_idx: Vec<u32>, values: Vec<T>) -> Result<Self> {
        if nrows.checked_add(1) != Some(row_ptr.len()) {
            return Err(Error::shape("CSR row pointers", format!("{nrows} rows + 1"), row_ptr.len()));
        }
        if col_idx.len() != values.len() {
            return Err(Error::shape("CSR values", col_idx.len(), values.len()));
        }
        if row_ptr[0] != 0 || row_ptr[nrows] as usize != col_idx.len() {
            return Err(Error::invalid(
                "CSR row pointers",
                format!("must run from 0 to {} (nonzeros), found {}..{}", col_idx.len(), row_ptr[0], row_ptr[nrows]),
            ));
        }
        if let Some(row) = row_ptr.windows(2).position(|w| w[0] > w[1]) {
            return Err(Error::invalid("CSR row pointers", format!("decrease at row {row}")));
        }
        if let Some((at, &col)) = col_idx.iter().enumerate().find(|(_, &c)| c as usize >= ncols) {
            return Err(Error::IndexOutOfRange {
                what: format!("column index of nonzero {at}"),
                index: col.into(),
                limit: ncols as u64,
            });
        }
        Ok(Csr { nrows, ncols, row_ptr, col_idx, values })
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Number of stored nonzeros.
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }

    /// Row pointers (`nrows + 1` entries).
    pub fn row_ptr(&self) -> &[u32] {
        &self.row_ptr
    }

    /// Column index of each nonzero, row by row.
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }

    /// Value of each nonzero, row by row.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// Value of each nonzero, row by row, writable: new values on the same structure.
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }

    /// Row `r`'s column indices and values.
    pub fn row(&self, r: usize) -> (&[u32], &[T]) {
        let range = self.row_ptr[r] as usize..self.row_ptr[r + 1] as usize;
        (&self.col_idx[range.clone()], &self.values[range])
    }

    /// Rows `rows` with all the columns (cut at the last row), as [`Csr::row_blocks`] of that one range.
    pub fn row_range(&self, rows: std::ops::Range<usize>) -> Csr<T> {
        self.row_blocks(std::slice::from_ref(&rows))
    }

    /// The rows of `ranges`, in their order, stacked into one matrix with all the columns (a range past the last
    /// row is cut at it, an empty or reversed range adds nothing).
    pub fn row_blocks(&self, ranges: &[std::ops::Range<usize>]) -> Csr<T> {
        let mut row_ptr = vec![0u32];
        let (mut col_idx, mut values) = (Vec::new(), Vec::new());
        for rows in ranges {
            let end = rows.end.min(self.nrows);
            let rows = rows.start.min(end)..end;
            let (first, last) = (self.row_ptr[rows.start] as usize, self.row_ptr[rows.end] as usize);
            let base = col_idx.len() as u32;
            row_ptr.extend(self.row_ptr[rows.start + 1..=rows.end].iter().map(|&end| end - first as u32 + base));
            col_idx.extend_from_slice(&self.col_idx[first..last]);
            values.extend_from_slice(&self.values[first..last]);
        }
        Csr { nrows: row_ptr.len() - 1, ncols: self.ncols, row_ptr, col_idx, values }
    }

    /// The same matrix in coordinate form, row-major.
    pub fn to_coo(&self) -> Coo<T> {
        let rows = (0..self.nrows)
            .flat_map(|r| std::iter::repeat_n(r as u32, (self.row_ptr[r + 1] - self.row_ptr[r]) as usize))
            .collect();
        Coo { nrows: self.nrows, ncols: self.ncols, rows, cols: self.col_idx.clone(), values: self.values.clone() }
    }

    /// `A^T` (`ncols x nrows`). Each row of the result lists its entries in the order of `A`'s rows, so its
    /// column indices are ascending.
    pub fn transpose(&self) -> Csr<T> {
        let mut row_ptr = vec![0u32; self.ncols + 1];
        for &c in &self.col_idx {
            row_ptr[c as usize + 1] += 1;
        }
        prefix_sum(&mut row_ptr);
        let mut next = row_ptr[..self.ncols].to_vec();
        let mut col_idx = vec![0u32; self.nnz()];
        let mut values = vec![T::default(); self.nnz()];
        for r in 0..self.nrows {
            let (cols, vals) = self.row(r);
            for (&c, &v) in cols.iter().zip(vals) {
                let at = next[c as usize] as usize;
                next[c as usize] += 1;
                col_idx[at] = r as u32;
                values[at] = v;
            }
        }
        Csr { nrows: self.ncols, ncols: self.nrows, row_ptr, col_idx, values }
    }

    /// The same matrix with each row's column indices ascending and at most one entry per position:
    /// duplicates are summed ([`Duplicates::Sum`], wrapping for integers) or reduced to the first one listed
    /// ([`Duplicates::KeepFirst`], for graphs whose repeated edges mean nothing more).
    pub fn deduplicated(&self, duplicates: Duplicates) -> Csr<T> {
        let mut row_ptr = Vec::with_capacity(self.nrows + 1);
        row_ptr.push(0u32);
        let mut col_idx = Vec::with_capacity(self.nnz());
        let mut values = Vec::with_capacity(self.nnz());
        let mut entries: Vec<(u32, T)> = Vec::new();
        for r in 0..self.nrows {
            let (cols, vals) = self.row(r);
            let row_start = col_idx.len();
            entries.clear();
            entries.extend(cols.iter().copied().zip(vals.iter().copied()));
            // Stable, so the first entry listed at a position stays first.
            entries.sort_by_key(|&(c, _)| c);
            for &(c, v) in &entries {
                if col_idx.len() > row_start && col_idx.last() == Some(&c) {
                    if duplicates == Duplicates::Sum {
                        let last = values.last_mut().expect("a value per column index");
                        *last = T::value_add(*last, v);
                    }
                } else {
                    col_idx.push(c);
                    values.push(v);
                }
            }
            row_ptr.push(col_idx.len() as u32);
        }
        Csr { nrows: self.nrows, ncols: self.ncols, row_ptr, col_idx, values }
    }

    /// `A` with a diagonal entry `value` added to every row that has none (rows that have one keep theirs, as
    /// PyTorch Geometric's `add_remaining_self_loops` does). The new entry goes before the row's first column
    /// index above the diagonal, so sorted rows stay sorted. `A` must be square.
    pub fn with_self_loops(&self, value: T) -> Result<Csr<T>> {
        if self.nrows != self.ncols {
            return Err(Error::shape("self-loops (a square matrix)", format!("{0} x {0}", self.nrows), self.shape()));
        }
        check_nnz("matrix with self-loops", self.nnz() + self.nrows)?;
        let mut row_ptr = Vec::with_capacity(self.nrows + 1);
        row_ptr.push(0u32);
        let mut col_idx = Vec::with_capacity(self.nnz() + self.nrows);
        let mut values = Vec::with_capacity(self.nnz() + self.nrows);
        for r in 0..self.nrows {
            let (cols, vals) = self.row(r);
            let diagonal = r as u32;
            let insert_at = if cols.contains(&diagonal) {
                None
            } else {
                Some(cols.iter().position(|&c| c > diagonal).unwrap_or(cols.len()))
            };
            for (at, (&c, &v)) in cols.iter().zip(vals).enumerate() {
                if insert_at == Some(at) {
                    col_idx.push(diagonal);
                    values.push(value);
                }
                col_idx.push(c);
                values.push(v);
            }
            if insert_at == Some(cols.len()) {
                col_idx.push(diagonal);
                values.push(value);
            }
            row_ptr.push(col_idx.len() as u32);
        }
        Ok(Csr { nrows: self.nrows, ncols: self.ncols, row_ptr, col_idx, values })
    }

    /// The same pattern with every value mapped through `f` (e.g. an `f32` graph as `i8` for quantized
    /// aggregation).
    pub fn map_values<U: Element>(&self, f: impl FnMut(T) -> U) -> Csr<U> {
        Csr {
            nrows: self.nrows,
            ncols: self.ncols,
            row_ptr: self.row_ptr.clone(),
            col_idx: self.col_idx.clone(),
            values: self.values.iter().copied().map(f).collect(),
        }
    }

    fn shape(&self) -> String {
        format!("{} x {}", self.nrows, self.ncols)
    }
}

/// What [`Csr::deduplicated`] does with several entries at the same position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Duplicates {
    /// Add their values (the Matrix Market and COO meaning of duplicates).
    Sum,
    /// Keep the first one listed (an unweighted graph with repeated edges).
    KeepFirst,
}

/// Rejects more nonzeros than 32-bit row pointers can count.
fn check_nnz(what: &str, nnz: usize) -> Result<()> {
    if nnz > u32::MAX as usize {
        return Err(Error::IndexOutOfRange {
            what: format!("{what}: nonzeros (CSR row pointers are 32-bit)"),
            index: nnz as u64,
            limit: u64::from(u32::MAX) + 1,
        });
    }
    Ok(())
}

/// Turns per-row counts (shifted by one: `counts[r + 1]` is row `r`'s) into row pointers, in place.
fn prefix_sum(row_ptr: &mut [u32]) {
    for r in 1..row_ptr.len() {
        row_ptr[r] += row_ptr[r - 1];
    }
}

/// A sparse matrix in coordinate form: nonzero `i` is `values[i]` at (`rows[i]`, `cols[i]`). Duplicates are
/// allowed and add up.
#[derive(Clone, Debug, PartialEq)]
pub struct Coo<T> {
    nrows: usize,
    ncols: usize,
    rows: Vec<u32>,
    cols: Vec<u32>,
    values: Vec<T>,
}

impl<T: Element> Coo<T> {
    /// A COO matrix from its arrays, checked: equal lengths, every index in range, and at most `u32::MAX`
    /// entries (so that it converts to CSR).
    pub fn new(nrows: usize, ncols: usize, rows: Vec<u32>, cols: Vec<u32>, values: Vec<T>) -> Result<Self> {
        if rows.len() != cols.len() || rows.len() != values.len() {
            return Err(Error::shape(
                "COO arrays (rows, cols, values)",
                format!("{0}, {0}, {0}", rows.len()),
                format!("{}, {}, {}", rows.len(), cols.len(), values.len()),
            ));
        }
        check_nnz("COO matrix", rows.len())?;
        for (what, indices, limit) in [("row", &rows, nrows), ("column", &cols, ncols)] {
            if let Some((at, &index)) = indices.iter().enumerate().find(|(_, &i)| i as usize >= limit) {
                return Err(Error::IndexOutOfRange {
                    what: format!("{what} index of nonzero {at}"),
                    index: index.into(),
                    limit: limit as u64,
                });
            }
        }
        Ok(Coo { nrows, ncols, rows, cols, values })
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Number of stored entries (duplicates counted).
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Row index of each entry.
    pub fn rows(&self) -> &[u32] {
        &self.rows
    }

    /// Column index of each entry.
    pub fn cols(&self) -> &[u32] {
        &self.cols
    }

    /// Value of each entry.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The same matrix in CSR form: entries sorted by row (stable, so each row keeps its entries' order);
    /// duplicates are kept as separate nonzeros.
    pub fn to_csr(&self) -> Csr<T> {
        let mut row_ptr = vec![0u32; self.nrows + 1];
        for &r in &self.rows {
            row_ptr[r as usize + 1] += 1;
        }
        prefix_sum(&mut row_ptr);
        let mut next: Vec<u32> = row_ptr[..self.nrows].to_vec();
        let mut col_idx = vec![0u32; self.nnz()];
        let mut values = vec![T::default(); self.nnz()];
        for ((&r, &c), &v) in self.rows.iter().zip(&self.cols).zip(&self.values) {
            let at = next[r as usize] as usize;
            next[r as usize] += 1;
            col_idx[at] = c;
            values[at] = v;
        }
        Csr { nrows: self.nrows, ncols: self.ncols, row_ptr, col_idx, values }
    }

    /// `A^T`: every entry's row and column swapped, in the same order.
    pub fn transpose(&self) -> Coo<T> {
        Coo {
            nrows: self.ncols,
            ncols: self.nrows,
            rows: self.cols.clone(),
            cols: self.rows.clone(),
            values: self.values.clone(),
        }
    }

    /// `A` with the mirror `(c, r)` of every off-diagonal entry `(r, c)` appended after the original entries:
    /// an undirected graph whose edges are listed once becomes a symmetric adjacency matrix. Edges listed in
    /// both directions come out twice in each; [`Csr::deduplicated`] removes them. `A` must be square.
    pub fn symmetrized(&self) -> Result<Coo<T>> {
        if self.nrows != self.ncols {
            return Err(Error::shape(
                "symmetrisation (a square matrix)",
                format!("{0} x {0}", self.nrows),
                format!("{} x {}", self.nrows, self.ncols),
            ));
        }
        let off_diagonal: Vec<usize> = (0..self.nnz()).filter(|&i| self.rows[i] != self.cols[i]).collect();
        check_nnz("symmetrised matrix", self.nnz() + off_diagonal.len())?;
        let mut rows = self.rows.clone();
        let mut cols = self.cols.clone();
        let mut values = self.values.clone();
        rows.extend(off_diagonal.iter().map(|&i| self.cols[i]));
        cols.extend(off_diagonal.iter().map(|&i| self.rows[i]));
        values.extend(off_diagonal.iter().map(|&i| self.values[i]));
        Ok(Coo { nrows: self.nrows, ncols: self.ncols, rows, cols, values })
    }
}

/// Byte alignment of the values of a [`Dense::zeros`] matrix: a cache line, so that rows whose width is a
/// multiple of 64 bytes each start a line and the SpMM's row gathers and streaming stores touch no line twice.
pub const DENSE_ALIGN: usize = 64;

/// A dense row-major matrix: row `r` is `values[r * cols..(r + 1) * cols]`.
pub struct Dense<T> {
    rows: usize,
    cols: usize,
    /// The values are `storage[offset..offset + rows * cols]`; the padding before them (in [`Dense::zeros`]
    /// matrices) aligns them to [`DENSE_ALIGN`] bytes.
    storage: Vec<T>,
    offset: usize,
}

impl<T> Dense<T> {
    fn values(&self) -> &[T] {
        &self.storage[self.offset..self.offset + self.rows * self.cols]
    }
}

impl<T: Copy + Default> Dense<T> {
    /// A `rows x cols` matrix of zeros (`T::default()`), its values aligned to [`DENSE_ALIGN`] bytes. On
    /// Linux, a large one is backed by transparent huge pages where the system allows it: an SpMM reads the
    /// rows of its `X` at random, and with 4 KiB pages nearly every read would also miss the TLB.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        let size = std::mem::size_of::<T>();
        let alignable = DENSE_ALIGN.is_multiple_of(size); // false for zero-sized types
        let padding = if alignable { DENSE_ALIGN / size - 1 } else { 0 };
        let storage = vec![T::default(); rows * cols + padding];
        // An allocation is aligned to its element size, so the distance to the next line is whole elements.
        let offset = if alignable { (storage.as_ptr() as usize).wrapping_neg() % DENSE_ALIGN / size } else { 0 };
        advise_huge_pages(&storage);
        Dense { rows, cols, storage, offset }
    }

    /// A matrix over row-major `data`, which must hold `rows * cols` values (kept where they are, so not
    /// necessarily aligned as in [`Dense::zeros`]).
    pub fn from_vec(rows: usize, cols: usize, data: Vec<T>) -> Result<Self> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::shape("dense matrix data", format!("{rows} x {cols} values"), data.len()));
        }
        Ok(Dense { rows, cols, storage: data, offset: 0 })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Row `r`.
    pub fn row(&self, r: usize) -> &[T] {
        &self.as_slice()[r * self.cols..(r + 1) * self.cols]
    }

    /// Row `r`, mutable.
    pub fn row_mut(&mut self, r: usize) -> &mut [T] {
        let cols = self.cols;
        &mut self.as_mut_slice()[r * cols..(r + 1) * cols]
    }

    /// All values, row-major.
    pub fn as_slice(&self) -> &[T] {
        self.values()
    }

    /// All values, row-major, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        let len = self.rows * self.cols;
        &mut self.storage[self.offset..self.offset + len]
    }

    /// The row-major values.
    pub fn into_vec(self) -> Vec<T> {
        let (mut storage, offset, len) = (self.storage, self.offset, self.rows * self.cols);
        storage.copy_within(offset..offset + len, 0);
        storage.truncate(len);
        storage
    }
}

impl<T: Copy + Default> Clone for Dense<T> {
    /// A copy with its values aligned as in [`Dense::zeros`].
    fn clone(&self) -> Self {
        let mut copy = Dense::zeros(self.rows, self.cols);
        copy.as_mut_slice().copy_from_slice(self.as_slice());
        copy
    }
}

impl<T: PartialEq> PartialEq for Dense<T> {
    /// Same shape and same values (wherever they lie in memory).
    fn eq(&self, other: &Self) -> bool {
        (self.rows, self.cols) == (other.rows, other.cols) && self.values() == other.values()
    }
}

impl<T: fmt::Debug> fmt::Debug for Dense<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dense")
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .field("values", &self.values())
            .finish()
    }
}

/// Asks Linux to back the 2 MiB-aligned interior of `data` with transparent huge pages. Only a hint, and
/// effective before the pages are first touched (as in a fresh zeroed allocation); where huge pages are
/// disabled nothing changes.
#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(data: &[T]) {
    const HUGE_PAGE: usize = 2 << 20;
    let start = data.as_ptr() as usize;
    let end = start + std::mem::size_of_val(data);
    let first = start.next_multiple_of(HUGE_PAGE);
    if end >= first + HUGE_PAGE {
        let len = (end - first) / HUGE_PAGE * HUGE_PAGE;
        // SAFETY: MADV_HUGEPAGE changes neither contents nor access rights, only how the kernel backs the
        // pages; the page-aligned range lies inside `data`, which is borrowed for the call.
        // A refusal (huge pages disabled) leaves ordinary pages, which is fine.
        let _ = unsafe { libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_data: &[T]) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries<T: Element>(a: &Csr<T>) -> Vec<(u32, u32, T)> {
        let coo = a.to_coo();
        (0..coo.nnz()).map(|i| (coo.rows()[i], coo.cols()[i], coo.values()[i])).collect()
    }

    /// 3 x 4, row 1 empty, row 2 unsorted with a repeated column.
    fn sample() -> Csr<i32> {
        Csr::new(3, 4, vec![0, 2, 2, 5], vec![3, 0, 2, 1, 2], vec![1, 2, 3, 4, 5]).unwrap()
    }

    #[test]
    fn row_blocks_stack_the_rows_of_each_range_with_every_column() {
        let a = sample();
        #[allow(clippy::reversed_empty_ranges)] // what a reversed range adds is part of the contract
        let blocks = a.row_blocks(&[2..3, 0..2, 5..9, 1..0]);
        assert_eq!((blocks.nrows(), blocks.ncols(), blocks.row_ptr()), (3, 4, &[0, 3, 5, 5][..]));
        assert_eq!(blocks.col_idx(), [2, 1, 2, 3, 0]);
        assert_eq!(blocks.values(), [3, 4, 5, 1, 2]);
        assert_eq!(a.row_range(0..3), a);
        assert_eq!(a.row_blocks(&[]).nrows(), 0);
    }

    #[test]
    fn dense_zeros_are_aligned_to_cache_lines() {
        fn check<T: Copy + Default + PartialEq + fmt::Debug>(rows: usize, cols: usize) {
            let zeros = Dense::<T>::zeros(rows, cols);
            assert_eq!(zeros.as_slice().as_ptr() as usize % DENSE_ALIGN, 0);
            assert_eq!(zeros.as_slice().len(), rows * cols);
            let copy = zeros.clone();
            assert_eq!(copy.as_slice().as_ptr() as usize % DENSE_ALIGN, 0);
            assert_eq!(copy, zeros);
        }
        for (rows, cols) in [(0, 0), (1, 1), (3, 5), (1000, 17)] {
            check::<f32>(rows, cols);
            check::<i16>(rows, cols);
            check::<i8>(rows, cols);
        }
    }

    #[test]
    fn dense_values_do_not_depend_on_where_they_lie() {
        let values: Vec<i32> = (0..12).collect();
        let mut zeros = Dense::zeros(3, 4);
        zeros.as_mut_slice().copy_from_slice(&values);
        let from_vec = Dense::from_vec(3, 4, values.clone()).unwrap();
        assert_eq!(zeros, from_vec);
        assert_eq!(zeros.row(2), &[8, 9, 10, 11]);
        zeros.row_mut(1)[0] = -1;
        assert_ne!(zeros, from_vec);
        assert_ne!(Dense::from_vec(4, 3, values.clone()).unwrap(), from_vec);
        let mut expected = values;
        expected[4] = -1;
        assert_eq!(zeros.into_vec(), expected);
    }

    /// The message `result` fails with; each variant has its own form (`shape mismatch in ...`, `invalid ...`,
    /// `...: index i out of range (limit n)`), so the message names the variant, the input and the limit.
    fn failure<T: fmt::Debug>(result: Result<T>) -> String {
        result.expect_err("accepted").to_string()
    }

    #[test]
    fn invalid_csr_arrays_are_errors() {
        assert_eq!(
            failure(Csr::new(2, 2, vec![0, 1], vec![0], vec![1])),
            "shape mismatch in CSR row pointers: expected 2 rows + 1, found 2"
        );
        assert_eq!(
            failure(Csr::new(1, 2, vec![0, 1], vec![0], vec![1, 2])),
            "shape mismatch in CSR values: expected 1, found 2"
        );
        assert_eq!(
            failure(Csr::new(1, 2, vec![1, 1], vec![0], vec![1])),
            "invalid CSR row pointers: must run from 0 to 1 (nonzeros), found 1..1"
        );
        assert_eq!(
            failure(Csr::new(2, 2, vec![0, 2, 1], vec![0, 1], vec![1, 2])),
            "invalid CSR row pointers: must run from 0 to 2 (nonzeros), found 0..1"
        );
        assert_eq!(
            failure(Csr::new(1, 2, vec![0, 1], vec![2], vec![1])),
            "column index of nonzero 0: index 2 out of range (limit 2)"
        );
        assert_eq!(
            failure(Coo::new(2, 2, vec![2], vec![0], vec![1])),
            "row index of nonzero 0: index 2 out of range (limit 2)"
        );
        assert_eq!(
            failure(Coo::new(2, 2, vec![1], vec![0, 1], vec![1])),
            "shape mismatch in COO arrays (rows, cols, values): expected 1, 1, 1, found 1, 2, 1"
        );
        assert_eq!(
            failure(Dense::from_vec(2, 2, vec![1])),
            "shape mismatch in dense matrix data: expected 2 x 2 values, found 1"
        );
        // Dimensions whose row-pointer count or element count overflows are shape errors, not panics.
        assert_eq!(
            failure(Csr::<i32>::new(usize::MAX, 2, vec![], vec![], vec![])),
            format!("shape mismatch in CSR row pointers: expected {} rows + 1, found 0", usize::MAX)
        );
        assert_eq!(
            failure(Dense::from_vec(usize::MAX, 2, vec![0; 2])),
            format!("shape mismatch in dense matrix data: expected {} x 2 values, found 2", usize::MAX)
        );
    }

    #[test]
    fn coo_and_csr_convert_both_ways() {
        let a = sample();
        assert_eq!(a.to_coo().to_csr(), a);
        let coo = Coo::new(3, 3, vec![2, 0, 2, 0], vec![1, 2, 0, 0], vec![1, 2, 3, 4]).unwrap();
        // Stable by row: each row keeps its entries' order.
        assert_eq!(entries(&coo.to_csr()), [(0, 2, 2), (0, 0, 4), (2, 1, 1), (2, 0, 3)]);
    }

    #[test]
    fn transpose_swaps_and_sorts() {
        let a = sample();
        let t = a.transpose();
        assert_eq!((t.nrows(), t.ncols()), (4, 3));
        assert_eq!(entries(&t), [(0, 0, 2), (1, 2, 4), (2, 2, 3), (2, 2, 5), (3, 0, 1)]);
        assert_eq!(t.transpose().deduplicated(Duplicates::Sum), a.deduplicated(Duplicates::Sum));
        let coo = a.to_coo().transpose();
        assert_eq!(coo.to_csr().deduplicated(Duplicates::Sum), t.deduplicated(Duplicates::Sum));
    }

    #[test]
    fn duplicates_sum_or_keep_the_first() {
        let a = sample();
        assert_eq!(entries(&a.deduplicated(Duplicates::Sum)), [(0, 0, 2), (0, 3, 1), (2, 1, 4), (2, 2, 8)]);
        assert_eq!(entries(&a.deduplicated(Duplicates::KeepFirst)), [(0, 0, 2), (0, 3, 1), (2, 1, 4), (2, 2, 3)]);
        let wrap = Csr::new(1, 1, vec![0, 2], vec![0, 0], vec![i8::MAX, 1]).unwrap();
        assert_eq!(wrap.deduplicated(Duplicates::Sum).values(), &[i8::MIN]);
    }

    #[test]
    fn self_loops_are_added_where_missing() {
        let a = Csr::new(3, 3, vec![0, 2, 3, 3], vec![0, 2, 0], vec![5, 6, 7]).unwrap();
        let with = a.with_self_loops(1).unwrap();
        assert_eq!(entries(&with), [(0, 0, 5), (0, 2, 6), (1, 0, 7), (1, 1, 1), (2, 2, 1)]);
        assert_eq!(with.with_self_loops(1).unwrap(), with);
        assert_eq!(
            failure(sample().with_self_loops(1)),
            "shape mismatch in self-loops (a square matrix): expected 3 x 3, found 3 x 4"
        );
    }

    #[test]
    fn symmetrized_mirrors_off_diagonal_entries() {
        let coo = Coo::new(3, 3, vec![0, 1, 2], vec![1, 1, 0], vec![1.0, 2.0, 3.0]).unwrap();
        let s = coo.symmetrized().unwrap();
        assert_eq!(s.rows(), &[0, 1, 2, 1, 0]);
        assert_eq!(s.cols(), &[1, 1, 0, 0, 2]);
        assert_eq!(s.values(), &[1.0, 2.0, 3.0, 1.0, 3.0]);
        assert_eq!(
            failure(Coo::new(2, 3, vec![], vec![], Vec::<f32>::new()).unwrap().symmetrized()),
            "shape mismatch in symmetrisation (a square matrix): expected 2 x 2, found 2 x 3"
        );
    }

    #[test]
    fn map_values_keeps_the_pattern() {
        let a = sample();
        let halves = a.map_values(|v| v as f32 / 2.0);
        assert_eq!((halves.row_ptr(), halves.col_idx()), (a.row_ptr(), a.col_idx()));
        assert_eq!(halves.values(), &[0.5, 1.0, 1.5, 2.0, 2.5]);
    }
}
