//! The side-by-side table of the benchmarks: each path's median wall and CPU time against pimgnn's CPU backend,
//! and its predicted time on PIM hardware when it is modelled, in milliseconds (an epoch on a small graph takes
//! less than one).

use std::fmt;
use std::time::Duration;

use crate::cli::table;
use comfy_table::Table;

/// Median seconds of one path (per run or per epoch), and its predicted time on PIM hardware when modelled.
pub(super) struct Times {
    pub wall: f64,
    pub cpu: f64,
    pub predicted: Option<Duration>,
}

impl Times {
    /// Times measured here with no hardware prediction (the CPU backend, PyTorch).
    pub fn measured(wall: f64, cpu: f64) -> Self {
        Times { wall, cpu, predicted: None }
    }
}

/// Paths timed side by side; the first row, pimgnn's CPU backend, is what the others are compared with.
pub(super) struct Comparison {
    table: Table,
    baseline_wall: f64,
}

impl Comparison {
    /// A table whose time columns are `per` (such as "" or " per epoch"), starting with pimgnn's CPU backend.
    pub fn new(per: &str, cpu_backend: &Times) -> Self {
        let table = table::with_header([
            "path".to_owned(),
            format!("wall{per} (ms)"),
            format!("CPU time{per} (ms)"),
            "wall against pimgnn CPU".to_owned(),
            format!("predicted on PIM hardware{per} (ms)"),
        ]);
        let mut comparison = Comparison { table, baseline_wall: cpu_backend.wall };
        comparison.add("pimgnn, CPU backend", cpu_backend);
        comparison
    }

    /// A row of `times` for `path`.
    pub fn add(&mut self, path: &str, times: &Times) {
        self.table.add_row([
            path.to_owned(),
            format!("{:.3}", times.wall * 1e3),
            format!("{:.3}", times.cpu * 1e3),
            format!("{:.2}x", times.wall / self.baseline_wall),
            times.predicted.map_or_else(|| "-".to_owned(), |p| format!("{:.3}", p.as_secs_f64() * 1e3)),
        ]);
    }

    /// A row for `path` that could not be timed, and why.
    pub fn add_unavailable(&mut self, path: &str, reason: &str) {
        self.table.add_row([path, "-", "-", reason, "-"]);
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut table = self.table.clone();
        table::fit_to_terminal(&mut table);
        table.fmt(f)
    }
}
