//! What a check run reports: each kernel run's outcome, the table of them, and the verdict that decides the
//! exit status.

use std::time::Duration;

use anyhow::bail;
use comfy_table::{Cell, CellAlignment, Table};

use super::compare::Difference;
use crate::cli::table;

/// What a kernel run was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// The kernel, by the name `build.rs` gives it.
    pub kernel: String,
    /// The value type.
    pub dtype: &'static str,
    /// The scenario's name.
    pub case: String,
    /// DPUs given work (and of how many, when some stay idle).
    pub dpus: String,
    /// Tasklets per DPU given work.
    pub tasklets: String,
    /// The inputs' shape.
    pub shape: String,
    /// What else a failure report needs to reproduce the run (the plan).
    pub detail: String,
}

/// Why a kernel run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// It ran, and its output differs from the CPU's.
    Differs(Difference),
    /// It did not run to the end (an allocation, a transfer, a DPU fault): the error.
    Failed(String),
}

/// A kernel run and how it went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// What ran.
    pub label: Label,
    /// Whether its output equals the CPU's.
    pub verdict: Result<(), Failure>,
    /// Wall time of the run on the DPUs: transfers, launch and reading back, and for an SpMM run allocating
    /// its set and loading its kernel too (the reduction's set is allocated and loaded before, for the system
    /// report).
    pub wall: Duration,
}

impl Outcome {
    /// A run that stopped with `error` after `wall`.
    pub fn failed(label: Label, error: String, wall: Duration) -> Self {
        Outcome { label, verdict: Err(Failure::Failed(error)), wall }
    }

    /// The table's result cell.
    fn result(&self) -> String {
        match &self.verdict {
            Ok(()) => "ok".into(),
            Err(Failure::Differs(difference)) => format!("DIFFERS: {difference}"),
            Err(Failure::Failed(error)) => format!("FAILED: {error}"),
        }
    }
}

/// One row per run: kernel, type, case, DPUs, tasklets, shape, result, wall time.
pub fn table(outcomes: &[Outcome]) -> Table {
    let mut table = table::with_header(["kernel", "type", "case", "DPUs", "tasklets", "shape", "result", "wall (ms)"]);
    for outcome in outcomes {
        let label = &outcome.label;
        table.add_row([
            Cell::new(&label.kernel),
            Cell::new(label.dtype),
            Cell::new(&label.case),
            Cell::new(&label.dpus).set_alignment(CellAlignment::Right),
            Cell::new(&label.tasklets).set_alignment(CellAlignment::Right),
            Cell::new(&label.shape),
            Cell::new(outcome.result()),
            Cell::new(format!("{:.1}", outcome.wall.as_secs_f64() * 1e3)).set_alignment(CellAlignment::Right),
        ]);
    }
    table::fit_to_terminal(&mut table);
    table
}

/// Passes when every run's output equals the CPU's; otherwise fails naming each failing kernel, its case and
/// inputs, and its first differing element (or the error that stopped it).
pub fn verdict(outcomes: &[Outcome], seed: u64) -> anyhow::Result<()> {
    let failures: Vec<String> = outcomes
        .iter()
        .filter_map(|outcome| {
            let label = &outcome.label;
            let what = match outcome.verdict.as_ref().err()? {
                Failure::Differs(difference) => format!("differs from the CPU: {difference}"),
                Failure::Failed(error) => format!("failed: {error}"),
            };
            Some(format!(
                "{} ({}, {}; {}; {}) {what}",
                label.kernel,
                label.case,
                label.shape,
                label.detail,
                label.dpus_phrase()
            ))
        })
        .collect();
    if failures.is_empty() {
        return Ok(());
    }
    bail!(
        "{} of {} kernel runs failed (inputs from --seed {seed}):\n  {}",
        failures.len(),
        outcomes.len(),
        failures.join("\n  ")
    )
}

impl Label {
    /// "on 8 DPUs x 16 tasklets".
    fn dpus_phrase(&self) -> String {
        let plural = |count: &str| if count == "1" { "" } else { "s" };
        format!("on {} DPU{} x {} tasklet{}", self.dpus, plural(&self.dpus), self.tasklets, plural(&self.tasklets))
    }
}

#[cfg(test)]
mod tests {
    use super::super::compare::compare_dense;
    use super::*;
    use pimgnn::Dense;

    fn label(kernel: &str) -> Label {
        Label {
            kernel: kernel.into(),
            dtype: "f32",
            case: "cut rows".to_owned(),
            dpus: "9".into(),
            tasklets: "16".into(),
            shape: "A 3 x 2".into(),
            detail: "plan csr:rows=9".into(),
        }
    }

    /// A run whose output was deliberately altered in one element.
    fn wrong_run() -> Outcome {
        let expected = Dense::from_vec(2, 2, vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let mut wrong = expected.clone();
        wrong.row_mut(1)[0] = 3.5;
        let verdict = compare_dense(&wrong, &expected).map_err(Failure::Differs);
        Outcome { label: label("spmm_coo_f32"), verdict, wall: Duration::from_millis(3) }
    }

    #[test]
    fn a_wrong_result_fails_the_check_naming_the_kernel_and_the_first_differing_element() {
        let passed = Outcome { label: label("spmm_csr_f32"), verdict: Ok(()), wall: Duration::from_millis(2) };
        assert!(verdict(std::slice::from_ref(&passed), 1).is_ok());

        let outcomes = [passed, wrong_run()];
        let message = verdict(&outcomes, 7).unwrap_err().to_string();
        assert!(message.starts_with("1 of 2 kernel runs failed (inputs from --seed 7)"), "{message}");
        assert!(
            message.contains("spmm_coo_f32 (cut rows, A 3 x 2; plan csr:rows=9; on 9 DPUs x 16 tasklets)"),
            "{message}"
        );
        assert!(message.contains("Y[1][0] = 3.5 (bits 0x40600000), expected 3.0 (bits 0x40400000)"), "{message}");
        assert!(!message.contains("spmm_csr_f32"), "a run that passed is reported as failed: {message}");

        let printed = table(&outcomes).to_string();
        assert!(printed.contains("ok") && printed.contains("DIFFERS: Y[1][0]"), "{printed}");
    }

    #[test]
    fn a_run_that_stopped_fails_the_check_with_its_error() {
        let stopped = Outcome::failed(label("reduce"), "1 DPU(s) in fault".into(), Duration::ZERO);
        let message = verdict(&[stopped], 1).unwrap_err().to_string();
        assert!(
            message.contains(
                "reduce (cut rows, A 3 x 2; plan csr:rows=9; on 9 DPUs x 16 tasklets) failed: 1 DPU(s) in fault"
            ),
            "{message}"
        );
    }
}
