//! `pimgnn check`: runs every DPU kernel the crate ships on small seeded inputs and compares each result with
//! the CPU's, bit for bit; the first command to run on a new UPMEM server, and in CI on the simulator.
//!
//! One set runs the reduction after the system report (its loaded program gives the MRAM size); each SpMM run
//! then allocates a set of the same DPUs, loads its kernel, runs one call and frees the set, so a failing run
//! leaves nothing behind for the next.

mod cases;
mod compare;
mod inputs;
mod report;
mod system;

use anyhow::Context as _;
use clap::Args;
use indicatif::ProgressBar;
use pimgnn::gnn::Backend;
use upmem::BackendKind;

use super::{pim_args, progress};
use cases::Scenario;
use report::Outcome;
use system::{Description, Dpus};

/// Arguments of `pimgnn check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Where the kernels run: auto (UPMEM hardware when present, else the simulator), sim or hw.
    #[arg(long, default_value = "auto", value_parser = dpu_backend)]
    backend: BackendKind,
    /// DPUs to check, 1 to 2,560 (default: every DPU of the hardware; on the simulator, a machine of 3 ranks
    /// of 4 DPUs with one disabled in each, 9 DPUs).
    #[arg(long, value_parser = pim_args::dpus())]
    dpus: Option<u32>,
    /// Seed of the random inputs: the same seed draws the same inputs, to reproduce a failure.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// `--backend`: a PIM backend as `pimgnn infer` takes it; `cpu` has no DPU kernel to check.
fn dpu_backend(text: &str) -> Result<BackendKind, String> {
    match text.parse() {
        Ok(Backend::Auto) => Ok(BackendKind::Auto),
        Ok(Backend::Pim(kind) | Backend::Split(kind)) => Ok(kind),
        Ok(Backend::Cpu) => Err("the CPU backend runs no DPU kernel, so there is nothing to check: use auto, \
                                 simulator or hardware"
            .into()),
        Err(_) => Err(format!("`{text}` is not one of auto, simulator (sim), hardware (hw)")),
    }
}

/// Runs `pimgnn check`.
pub fn run(args: &CheckArgs) -> anyhow::Result<()> {
    let requested = Dpus::new(args.backend, args.dpus);
    let set = requested.allocate().context("allocating the DPUs to check")?;
    let dpus = set.nr_dpus() as u32;
    let sets = requested.as_in(&set);
    let mut set = set.load(&pimgnn::kernel("reduce")).context("loading the reduction kernel")?;
    println!("{}", Description::of(&set, args.backend)?);
    println!("inputs: seed {} (--seed N draws others)", args.seed);

    // Every later set is the same DPUs again: the first allocation's log lines say all there is to say.
    let _quiet = QuietLog::warnings_only();
    let spmm = cases::spmm_cases();
    let bar = progress::counter(1 + spmm.len() as u64);
    bar.set_message("reduce");
    let mut outcomes = vec![cases::run_reduce(&mut set, case_seed(args.seed, 0))];
    drop(set);
    bar.inc(1);
    for (index, case) in spmm.iter().enumerate() {
        bar.set_message(format!("{} ({:?}, {:?})", case.kernel(), case.scenario, case.operation));
        outcomes.push(case.run(&sets, dpus, case_seed(args.seed, index + 1)));
        bar.inc(1);
    }
    finish(bar, &outcomes);
    report::verdict(&outcomes, args.seed)?;
    println!("all {} kernel runs match the CPU", outcomes.len());
    Ok(())
}

/// Clears the progress bar and prints the table and its legend.
fn finish(bar: ProgressBar, outcomes: &[Outcome]) {
    bar.finish_and_clear();
    println!("{}", report::table(outcomes));
    for scenario in Scenario::ALL {
        println!("{}: {}", scenario.name(), scenario.covers());
    }
    println!(
        "new values: the same run with new values for the matrix's structure, sent alone (attention's); SDDMM: \
         <P_i, X_j> for every nonzero (i, j) on the same blocks, compared bit for bit with pimgnn's CPU SDDMM; 3 \
         heads: X's columns in 3 heads of 47, each with values of its own; attention weights: the kernels make each \
         weight from fixed-point scores, compared bit for bit with the same weights made on the host"
    );
}

/// Lowers the log from its default, info, to warnings for as long as it lives (a log level chosen with
/// `RUST_LOG` other than info is kept).
struct QuietLog(log::LevelFilter);

impl QuietLog {
    fn warnings_only() -> Self {
        let level = log::max_level();
        if level == log::LevelFilter::Info {
            log::set_max_level(log::LevelFilter::Warn);
        }
        QuietLog(level)
    }
}

impl Drop for QuietLog {
    fn drop(&mut self) {
        log::set_max_level(self.0);
    }
}

/// The seed of run `index`, drawn from the run's `seed`.
fn case_seed(seed: u64, index: usize) -> u64 {
    seed ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_backend_is_refused_saying_why() {
        let error = dpu_backend("cpu").unwrap_err();
        assert!(error.contains("nothing to check") && error.contains("auto, simulator or hardware"), "{error}");
        assert_eq!(dpu_backend("sim"), Ok(BackendKind::Simulator));
        assert_eq!(dpu_backend("hw"), Ok(BackendKind::Hardware));
        assert_eq!(dpu_backend("auto"), Ok(BackendKind::Auto));
        assert_eq!(dpu_backend("Simulator"), Ok(BackendKind::Simulator));
        assert!(dpu_backend("gpu").unwrap_err().contains("not one of auto, simulator (sim), hardware (hw)"));
    }
}
