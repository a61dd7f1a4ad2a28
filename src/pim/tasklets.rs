//! How one DPU's block is split between its tasklets: by nonzeros plus rows, cutting inside long rows.

use super::abi::{TaskletWork, MAX_TASKLETS};
use super::partition::{cut_at, piece, Cut};

/// Work of `tasklets` tasklets over a block with these row pointers and wide rows (ascending, see
/// [`TaskletWork::wide_begin`]); entries past `tasklets` are empty.
///
/// Tasklet `t` gets the nonzeros between cuts `t` and `t + 1`; a row cut through is shared and listed in the
/// `partial_rows` of every tasklet touching it, so the kernel adds its pieces after a barrier.
pub(crate) fn split(row_ptr: &[u32], wide_rows: &[u32], tasklets: usize) -> [TaskletWork; MAX_TASKLETS] {
    assert!((1..=MAX_TASKLETS).contains(&tasklets), "1..={MAX_TASKLETS} tasklets, not {tasklets}");
    let rows = row_ptr.len() - 1;
    let total = row_ptr[rows] as usize + rows;
    let cuts: Vec<Cut> = (0..=tasklets).map(|t| cut_at(row_ptr, total * t / tasklets)).collect();
    let mut work = [TaskletWork::default(); MAX_TASKLETS];
    for (t, pair) in cuts.windows(2).enumerate() {
        let piece = piece(row_ptr, pair[0], pair[1]);
        let mut shared = Vec::with_capacity(2);
        if piece.head_shared {
            shared.push(piece.rows.start as u32);
        }
        if piece.tail_shared && shared.last() != Some(&(piece.rows.end as u32 - 1)) {
            shared.push(piece.rows.end as u32 - 1);
        }
        let mut partial_rows = [0; 2];
        partial_rows[..shared.len()].copy_from_slice(&shared);
        work[t] = TaskletWork {
            nz_begin: piece.nonzeros.start as u32,
            nz_end: piece.nonzeros.end as u32,
            row_begin: piece.rows.start as u32,
            row_end: piece.rows.end as u32,
            nr_partials: shared.len() as u32,
            partial_rows,
            wide_begin: wide_rows.partition_point(|&row| row < piece.rows.start as u32) as u32,
        };
    }
    work
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every nonzero is covered once, every row is written by exactly one tasklet or shared, in order.
    fn check(row_ptr: &[u32], tasklets: usize) {
        let work = split(row_ptr, &[], tasklets);
        let rows = row_ptr.len() - 1;
        let mut next_nonzero = 0;
        let mut writers = vec![0u32; rows];
        for w in &work[..tasklets] {
            assert_eq!(w.nz_begin, next_nonzero);
            next_nonzero = w.nz_end;
            for row in w.row_begin..w.row_end {
                // The kernels count a row's nonzeros from the walk's position, up to its end (spmm_args.h).
                assert!(row_ptr[row as usize + 1] >= w.nz_begin, "row {row} ends before the tasklet's nonzeros");
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
        let work = split(&[0, 2400], &[], 24);
        assert!(work.iter().all(|w| w.nr_partials == 1 && w.partial_rows[0] == 0));
        assert!(work.iter().all(|w| (99..=101).contains(&(w.nz_end - w.nz_begin))));
    }

    #[test]
    fn each_tasklet_starts_at_the_first_wide_row_of_its_range() {
        let row_ptr = [0, 4, 8, 12, 16, 20, 24, 28, 32];
        let wide_rows = [1, 2, 6];
        let work = split(&row_ptr, &wide_rows, 4);
        let begins: Vec<(u32, u32)> = work[..4].iter().map(|w| (w.row_begin, w.wide_begin)).collect();
        assert_eq!(begins, [(0, 0), (2, 1), (4, 2), (6, 2)]);
    }
}
