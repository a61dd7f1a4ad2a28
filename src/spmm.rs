//! SpMM engines: `Y = A X` for a sparse `A` fixed at construction and dense `X` given per call, on the CPU or
//! on PIM. GNN layers aggregate through this trait, so they run unchanged on every backend.

use std::time::{Duration, Instant};

use crate::cpu;
use crate::error::Result;
use crate::sparse::{Csr, Dense, Element};

/// One phase of an SpMM call (e.g. "send X", "kernel", "gather", "merge"), with the wall time it took here
/// and, when a model can tell, the time it would take on real UPMEM hardware.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// Short name, as printed in timing tables.
    pub name: &'static str,
    /// Wall time on this machine.
    pub wall: Duration,
    /// Predicted time on UPMEM hardware, when the engine models it.
    pub predicted: Option<Duration>,
}

/// Computes `Y = A X` for the sparse matrix it was built with.
pub trait SpmmEngine<T: Element>: Send {
    /// `(rows, columns)` of `A`.
    fn shape(&self) -> (usize, usize);

    /// `Y = A X`; `X` must have as many rows as `A` has columns.
    fn spmm(&mut self, x: &Dense<T>) -> Result<Dense<T::Acc>>;

    /// The phases of the last [`SpmmEngine::spmm`] call, in order (empty before the first call).
    fn last_phases(&self) -> &[Phase];
}

/// The CPU engine: [`cpu::spmm`] on all host cores.
#[derive(Debug)]
pub struct CpuSpmm<T> {
    a: Csr<T>,
    phases: Vec<Phase>,
}

impl<T: Element> CpuSpmm<T> {
    /// An engine over `a`.
    pub fn new(a: Csr<T>) -> Self {
        CpuSpmm { a, phases: Vec::new() }
    }

    /// The sparse matrix.
    pub fn matrix(&self) -> &Csr<T> {
        &self.a
    }
}

impl<T: Element> SpmmEngine<T> for CpuSpmm<T> {
    fn shape(&self) -> (usize, usize) {
        (self.a.nrows(), self.a.ncols())
    }

    fn spmm(&mut self, x: &Dense<T>) -> Result<Dense<T::Acc>> {
        let started = Instant::now();
        let y = cpu::spmm(&self.a, x)?;
        self.phases = vec![Phase { name: "cpu spmm", wall: started.elapsed(), predicted: None }];
        Ok(y)
    }

    fn last_phases(&self) -> &[Phase] {
        &self.phases
    }
}
