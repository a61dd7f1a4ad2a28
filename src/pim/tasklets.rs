//! How one DPU's block is split between its tasklets: by nonzeros plus rows, cutting inside long rows.

use super::abi::{TaskletWork, MAX_TASKLETS};
use super::partition::first_index;

/// A point in the block's nonzero order: `nonzero` lies in `row` (or, when it is `row_ptr[row]`, the cut falls
/// just before the row starts).
#[derive(Clone, Copy)]
struct Cut {
    row: usize,
    nonzero: usize,
}

impl Cut {
    /// Whether the cut falls strictly inside a row, which is then shared by the tasklets on either side.
    fn inside(self, row_ptr: &[u32]) -> bool {
        self.nonzero > row_ptr[self.row] as usize
    }
}

/// The cut after `weight` units of work, where a row costs one unit (writing it) and each nonzero one more.
fn cut_at(row_ptr: &[u32], weight: usize) -> Cut {
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

/// Work of `tasklets` tasklets over a block with these row pointers; entries past `tasklets` are empty.
///
/// Tasklet `t` gets the nonzeros between cuts `t` and `t + 1`; a row cut through is shared and listed in the
/// `partial_rows` of every tasklet touching it, so the kernel adds its pieces after a barrier.
pub(crate) fn split(row_ptr: &[u32], tasklets: usize) -> [TaskletWork; MAX_TASKLETS] {
    assert!((1..=MAX_TASKLETS).contains(&tasklets), "1..={MAX_TASKLETS} tasklets, not {tasklets}");
    let rows = row_ptr.len() - 1;
    let total = row_ptr[rows] as usize + rows;
    let cuts: Vec<Cut> = (0..=tasklets).map(|t| cut_at(row_ptr, total * t / tasklets)).collect();
    let mut work = [TaskletWork::default(); MAX_TASKLETS];
    for (t, pair) in cuts.windows(2).enumerate() {
        let (begin, end) = (pair[0], pair[1]);
        let mut shared = Vec::with_capacity(2);
        if begin.inside(row_ptr) {
            shared.push(begin.row as u32);
        }
        let row_end = if end.inside(row_ptr) {
            if shared.last() != Some(&(end.row as u32)) {
                shared.push(end.row as u32);
            }
            end.row + 1
        } else {
            end.row
        };
        let mut partial_rows = [0; 2];
        partial_rows[..shared.len()].copy_from_slice(&shared);
        work[t] = TaskletWork {
            nz_begin: begin.nonzero as u32,
            nz_end: end.nonzero as u32,
            row_begin: begin.row as u32,
            row_end: row_end as u32,
            nr_partials: shared.len() as u32,
            partial_rows,
            reserved: 0,
        };
    }
    work
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every nonzero is covered once, every row is written by exactly one tasklet or shared, in order.
    fn check(row_ptr: &[u32], tasklets: usize) {
        let work = split(row_ptr, tasklets);
        let rows = row_ptr.len() - 1;
        let mut next_nonzero = 0;
        let mut writers = vec![0u32; rows];
        for w in &work[..tasklets] {
            assert_eq!(w.nz_begin, next_nonzero);
            next_nonzero = w.nz_end;
            for row in w.row_begin..w.row_end {
                let shared = w.partial_rows[..w.nr_partials as usize].contains(&row);
                if !shared {
                    writers[row as usize] += 1;
                    let (start, end) = (row_ptr[row as usize], row_ptr[row as usize + 1]);
                    assert!(
                        w.nz_begin <= start && end <= w.nz_end,
                        "row {row} written whole by a tasklet without all of it"
                    );
                }
            }
        }
        assert_eq!(next_nonzero, row_ptr[rows]);
        for (row, &count) in writers.iter().enumerate() {
            let shared =
                work[..tasklets].iter().any(|w| w.partial_rows[..w.nr_partials as usize].contains(&(row as u32)));
            assert_eq!(count + u32::from(shared), 1, "row {row}: {count} writers, shared {shared}");
        }
        assert!(work[tasklets..].iter().all(|w| *w == TaskletWork::default()));
    }

    #[test]
    fn covers_every_row_and_nonzero_once() {
        let cases: [&[u32]; 6] = [
            &[0],
            &[0, 0, 0, 0],
            &[0, 1, 2, 3, 4, 5],
            &[0, 1000, 1000, 1001],
            &[0, 0, 0, 5000, 5000],
            &[0, 3, 3, 10, 11, 40, 40, 41],
        ];
        for row_ptr in cases {
            for tasklets in [1, 2, 3, 11, 16, 24] {
                check(row_ptr, tasklets);
            }
        }
    }

    #[test]
    fn a_hub_row_is_shared_by_all() {
        let work = split(&[0, 2400], 24);
        assert!(work.iter().all(|w| w.nr_partials == 1 && w.partial_rows[0] == 0));
        assert!(work.iter().all(|w| (99..=101).contains(&(w.nz_end - w.nz_begin))));
    }
}
