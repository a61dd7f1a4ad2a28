//! Co-execution: the first rows of `A` on the DPUs while the host cores compute the rest.

use std::time::{Duration, Instant};

use crate::attention::AttentionScores;
use crate::error::{Error, Result};
use crate::sparse::{Csr, Dense};
use crate::spmm::{CallShape, CpuSpmm, Phase, SpmmEngine};

use super::{PimElement, PimSpmm};

/// `Y = A X` with rows `..pim_rows` of `A` resident on DPUs and the others on the host CPU, both parts
/// running at the same time.
///
/// The phases of a call are the PIM part's, each named `PIM rows: ...`, then the CPU part's, then the
/// stacking of the two into `Y`. As the parts overlap, the CPU part's predicted time is only what it runs past
/// the PIM part's predicted end (its wall time here, less that), so the phases' predictions add up to the
/// later part's; the stacking is a host step at its wall time. On the simulator the CPU part shares the host's
/// cores with the simulated DPUs, so its wall time there is longer than beside real DPUs.
pub struct SplitSpmm<T: PimElement> {
    pim: PimSpmm<T>,
    cpu: CpuSpmm<T>,
    phases: Vec<Phase>,
}

impl<T: PimElement> SplitSpmm<T> {
    /// Runs `pim`'s rows (the first of `A`) on its DPUs and `cpu_rows` (the rest of `A`, with the same
    /// columns) on the host.
    pub fn new(pim: PimSpmm<T>, cpu_rows: Csr<T>) -> Result<Self> {
        let columns = pim.shape().1;
        if cpu_rows.ncols() != columns {
            return Err(Error::shape(
                "co-execution: columns of the CPU's rows (columns of A)",
                columns,
                cpu_rows.ncols(),
            ));
        }
        Ok(SplitSpmm { pim, cpu: CpuSpmm::new(cpu_rows), phases: Vec::new() })
    }

    /// Rows on the DPUs (the first of `A`).
    pub fn pim_rows(&self) -> usize {
        self.pim.shape().0
    }

    /// The PIM part.
    pub fn pim(&self) -> &PimSpmm<T> {
        &self.pim
    }

    /// The PIM part's phases of its last call, each named `PIM rows: ...`.
    fn pim_phases(&self) -> Vec<Phase> {
        let phases = self.pim.last_phases().iter();
        phases.map(|phase| Phase { name: format!("PIM rows: {}", phase.name).into(), ..phase.clone() }).collect()
    }
}

impl<T: PimElement> SpmmEngine<T> for SplitSpmm<T> {
    fn shape(&self) -> (usize, usize) {
        (self.pim.shape().0 + self.cpu.shape().0, self.pim.shape().1)
    }

    fn spmm(&mut self, x: &Dense<T>) -> Result<Dense<T::Acc>> {
        let (pim, cpu) = (&mut self.pim, &mut self.cpu);
        let (on_pim, on_cpu) = std::thread::scope(|scope| {
            let on_pim = scope.spawn(|| pim.spmm(x));
            let on_cpu = cpu.spmm(x);
            (on_pim.join(), on_cpu)
        });
        let on_pim = on_pim.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        let on_cpu = on_cpu?;

        let mut phases = self.pim_phases();
        let pim_end = phases.iter().map(|phase| phase.predicted.unwrap_or(phase.wall)).sum();
        let cpu_wall = self.cpu.last_phases().iter().map(|phase| phase.wall).sum();
        phases.push(Phase {
            name: "CPU rows, beside the DPUs (predicted: past their end)".into(),
            wall: cpu_wall,
            predicted: Some(cpu_wall.saturating_sub(pim_end)),
        });

        let started = Instant::now();
        let width = x.cols();
        let rows = on_pim.rows() + on_cpu.rows();
        let mut values = on_pim.into_vec();
        values.extend_from_slice(on_cpu.as_slice());
        let y = Dense::from_vec(rows, width, values)?;
        phases.push(Phase { name: "stack the rows".into(), wall: started.elapsed(), predicted: None });
        self.phases = phases;
        Ok(y)
    }

    fn last_phases(&self) -> &[Phase] {
        &self.phases
    }

    /// The first nonzeros (the PIM part's rows) go to the DPUs, the others to the host's part.
    fn set_values(&mut self, values: &[T]) -> Result<()> {
        let total = self.pim.nnz + self.cpu.matrix().nnz();
        if values.len() != total {
            return Err(Error::shape("co-execution: new values (one per nonzero of A)", total, values.len()));
        }
        let (on_pim, on_cpu) = values.split_at(self.pim.nnz);
        self.pim.set_values(on_pim)?;
        self.cpu.set_values(on_cpu)
    }

    /// As [`SplitSpmm::set_values`], `heads` values per nonzero.
    fn set_head_values(&mut self, values: &[T], heads: usize) -> Result<()> {
        let total = self.pim.nnz + self.cpu.matrix().nnz();
        crate::spmm::check_head_values(total, values.len(), heads)?;
        let (on_pim, on_cpu) = values.split_at(self.pim.nnz * heads);
        self.pim.set_head_values(on_pim, heads)?;
        self.cpu.set_head_values(on_cpu, heads)
    }

    /// The PIM part's rows of `scores` go to the DPUs, the others' to the host's part.
    fn set_attention(&mut self, scores: &AttentionScores) -> Result<()> {
        let (rows, pim_rows) = (self.shape().0, self.pim_rows());
        if scores.nr_rows() != rows {
            return Err(Error::shape("co-execution: rows of the attention scores (rows of A)", rows, scores.nr_rows()));
        }
        self.pim.set_attention(&scores.row_range(0..pim_rows))?;
        self.cpu.set_attention(&scores.row_range(pim_rows..rows))
    }

    /// The PIM part's prediction: the host's rows run beside it.
    fn predict_call(&self, call: CallShape) -> Option<Duration> {
        self.pim.predict_call(call)
    }

    /// The PIM part's rows of `p` on the DPUs while the host computes the others'; the phases are the PIM part's,
    /// then the host's.
    fn sddmm(&mut self, p: &Dense<T>, q: &Dense<T>) -> Result<Vec<T::Acc>> {
        let (rows, pim_rows) = (self.shape().0, self.pim_rows());
        if p.rows() != rows {
            return Err(Error::shape("co-execution SDDMM: rows of P (rows of A)", rows, p.rows()));
        }
        let (head, tail) = p.as_slice().split_at(pim_rows * p.cols());
        let (p_pim, p_cpu) = (
            Dense::from_vec(pim_rows, p.cols(), head.to_vec())?,
            Dense::from_vec(rows - pim_rows, p.cols(), tail.to_vec())?,
        );
        let (pim, cpu) = (&mut self.pim, &mut self.cpu);
        let (on_pim, on_cpu) = std::thread::scope(|scope| {
            let on_pim = scope.spawn(|| pim.sddmm(&p_pim, q));
            let on_cpu = cpu.sddmm(&p_cpu, q);
            (on_pim.join(), on_cpu)
        });
        let mut out = on_pim.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        out.extend(on_cpu?);
        let mut phases = self.pim_phases();
        phases.extend_from_slice(self.cpu.last_phases());
        self.phases = phases;
        Ok(out)
    }
}

#[cfg(all(test, feature = "simulator"))]
mod tests {
    use std::time::Duration;

    use upmem::{BackendKind, DpuSet};

    use super::*;
    use crate::cpu;

    /// 300 x 200 with a few nonzeros per row, in a pattern that differs from row to row.
    fn matrix() -> Csr<i32> {
        let mut row_ptr = vec![0u32];
        let (mut col_idx, mut values) = (Vec::new(), Vec::new());
        for row in 0..300u32 {
            for k in 0..row % 5 {
                col_idx.push((row * 31 + k * 17) % 200);
                values.push((row as i32 % 7) - 3 + k as i32);
            }
            row_ptr.push(col_idx.len() as u32);
        }
        Csr::new(300, 200, row_ptr, col_idx, values).unwrap()
    }

    /// Rows `..120` of `a` on 4 simulated DPUs, planned for `features` columns, the others on the host.
    fn split(a: &Csr<i32>, features: usize) -> SplitSpmm<i32> {
        let set = DpuSet::builder().dpus(4).backend(BackendKind::Simulator).allocate().unwrap();
        let pim = PimSpmm::auto(set, a.row_range(0..120), features, 4).unwrap();
        SplitSpmm::new(pim, a.row_range(120..300)).unwrap()
    }

    #[test]
    fn the_dpus_rows_and_the_cpus_rows_stack_into_the_whole_product() {
        let a = matrix();
        let x = Dense::from_vec(200, 6, (0..1200).map(|v| v % 11 - 5).collect()).unwrap();
        let mut split = split(&a, 6);
        assert_eq!((split.shape(), split.pim_rows()), ((300, 200), 120));
        assert_eq!(split.spmm(&x).unwrap(), cpu::spmm(&a, &x).unwrap(), "integer sums are exact on both sides");

        let phases = split.last_phases();
        let (pim, rest): (Vec<&Phase>, Vec<&Phase>) = phases.iter().partition(|p| p.name.starts_with("PIM rows: "));
        assert!(pim.iter().any(|phase| phase.name == "PIM rows: kernel"), "{phases:?}");
        let names: Vec<&str> = rest.iter().map(|phase| phase.name.as_ref()).collect();
        assert_eq!(names, ["CPU rows, beside the DPUs (predicted: past their end)", "stack the rows"]);
        // The CPU rows count only for what they run past the PIM part's predicted end.
        let pim_end: Duration = pim.iter().map(|phase| phase.predicted.unwrap_or(phase.wall)).sum();
        assert_eq!(rest[0].predicted, Some(rest[0].wall.saturating_sub(pim_end)));
    }

    #[test]
    fn new_values_go_to_the_part_holding_their_rows() {
        let a = matrix();
        let x = Dense::from_vec(200, 3, (0..600).map(|v| v % 7 - 3).collect()).unwrap();
        let mut split = split(&a, 3);
        let revalued = a.map_values(|v| 2 * v + 1);
        split.set_values(revalued.values()).unwrap();
        assert_eq!(split.spmm(&x).unwrap(), cpu::spmm(&revalued, &x).unwrap());
        assert_eq!(split.last_phases()[0].name, "PIM rows: send values");
        let error = split.set_values(&revalued.values()[1..]).unwrap_err();
        assert!(matches!(error, Error::Shape { .. }), "{error}");

        // Two heads of 3 features: each part takes its rows' values of both.
        let heads: Vec<i32> = (0..a.nnz() as i32 * 2).map(|v| v % 13 - 6).collect();
        split.set_head_values(&heads, 2).unwrap();
        let x = Dense::from_vec(200, 6, (0..1200).map(|v| v % 7 - 3).collect()).unwrap();
        assert_eq!(split.spmm(&x).unwrap(), cpu::spmm_heads(&a, &heads, 2, &x).unwrap());
        let error = split.set_head_values(&heads[1..], 2).unwrap_err();
        assert!(matches!(error, Error::Shape { .. }), "{error}");
    }

    #[test]
    fn sddmm_runs_the_dpus_rows_there_and_the_others_here() {
        let a = matrix();
        let p = Dense::from_vec(300, 5, (0..1500).map(|v| v % 9 - 4).collect()).unwrap();
        let q = Dense::from_vec(200, 5, (0..1000).map(|v| v % 5 - 2).collect()).unwrap();
        let mut split = split(&a, 5);
        assert_eq!(split.sddmm(&p, &q).unwrap(), cpu::sddmm(&a, &p, &q).unwrap());
        let names: Vec<&str> = split.last_phases().iter().map(|phase| phase.name.as_ref()).collect();
        assert_eq!(names.first(), Some(&"PIM rows: send P and Q"), "{names:?}");
        assert_eq!(names.last(), Some(&"cpu sddmm"), "{names:?}");
    }

    #[test]
    fn cpu_rows_of_other_columns_are_refused() {
        let a = matrix();
        let set = DpuSet::builder().dpus(1).backend(BackendKind::Simulator).allocate().unwrap();
        let pim = PimSpmm::auto(set, a.row_range(0..10), 4, 2).unwrap();
        let other = Csr::<i32>::new(1, 7, vec![0, 0], vec![], vec![]).unwrap();
        let error = SplitSpmm::new(pim, other).map(|_| ()).unwrap_err();
        assert!(matches!(error, Error::Shape { .. }), "{error}");
    }
}
