//! "The chosen plan is never slower than PyGim's" checked on the simulator rather than by construction: the
//! choice takes the least predicted time over candidates that include PyGim's plan, so the predictions alone
//! cannot disagree. Here both plans run on the same input and the simulator measures their kernels (its
//! modelled cycles, calibrated on published UPMEM measurements, count the kernels' actual instructions and DMAs,
//! where the cost model estimates them from tile sizes); the transfers are the model's (the simulator's timeline
//! predicts them with the same transfer model). The chosen plan's call, so timed, must not be slower than
//! PyGim's beyond the cost model's own error.

use std::time::Duration;

use pimgnn::pim::cost::{self, HardwareModel, Target};
use pimgnn::pim::plan::Plan;
use pimgnn::pim::PimSpmm;
use pimgnn::{Csr, Dense, SpmmEngine};
use upmem::sim::{Schedule, SimConfig};
use upmem::{BackendKind, DpuSet, Topology};

/// DPUs of the simulated set: two ranks, so that plans differ in how they fill them.
const DPUS: u32 = 128;

/// Tasklets per DPU of every plan.
const TASKLETS: u32 = 16;

/// How much slower than PyGim's the chosen plan may measure: the cost model's kernel estimate is within a few
/// per cent of the simulator's cycles (tests/pim_cost.rs), so between two plans predicted about equal the
/// measurement may order them the other way by that much.
const MODEL_ERROR: f64 = 0.05;

/// `n` nodes, row `r` with `1 + r % 5` nonzeros spread over the columns, and `hubs` rows of `hub_degree`.
fn graph(n: usize, hubs: usize, hub_degree: usize) -> Csr<f32> {
    let mut row_ptr = vec![0u32];
    let mut cols = Vec::new();
    for r in 0..n {
        let degree = if r % (n / hubs.max(1)) == 0 && hubs > 0 { hub_degree } else { 1 + r % 5 };
        cols.extend((0..degree).map(|k| ((r * 7919 + k * 104_729) % n) as u32));
        row_ptr.push(cols.len() as u32);
    }
    let values = vec![1.0; cols.len()];
    Csr::new(n, n, row_ptr, cols, values).unwrap()
}

/// One call of `plan` on the simulator under its modelled schedule: the kernel as the simulator measured it
/// plus the model's transfers and merge.
fn simulated_call(a: &Csr<f32>, plan: Plan, features: usize) -> Duration {
    let mut config = SimConfig::new(Topology::new(DPUS.div_ceil(64), 64.min(DPUS)));
    config.schedule = Schedule::Modelled;
    let set = DpuSet::builder().backend(BackendKind::Simulator).simulator(config).allocate().unwrap();
    let mut engine = PimSpmm::new(set, a.clone(), plan).unwrap_or_else(|e| panic!("{plan}: {e}"));
    engine.spmm(&Dense::from_vec(a.ncols(), features, vec![1.0; a.ncols() * features]).unwrap()).unwrap();
    assert!(engine.report().modelled_cycles.is_some(), "{plan}: the simulator measured the kernel");
    engine.last_phases().iter().map(|phase| phase.predicted.expect("every phase has a predicted time")).sum()
}

fn chosen_plan_is_not_slower_than_pygims_on_the_simulator(a: &Csr<f32>, features: usize) {
    let choice = cost::choose(&HardwareModel::default(), a, features, DPUS, TASKLETS, Target::Hardware).unwrap();
    let pygim = choice.pygim.expect("a PyGim plan fits").plan;
    let (chosen, theirs) = (simulated_call(a, choice.best.plan, features), simulated_call(a, pygim, features));
    println!("F = {features}: chosen {} {chosen:?}, PyGim's {pygim} {theirs:?}", choice.best.plan);
    assert!(
        chosen.as_secs_f64() <= theirs.as_secs_f64() * (1.0 + MODEL_ERROR),
        "F = {features}: the chosen plan {} took {chosen:?} on the simulator, PyGim's {pygim} {theirs:?}",
        choice.best.plan
    );
}

#[test]
fn the_chosen_plan_is_not_slower_than_pygims_on_a_graph_with_hubs() {
    let a = graph(12_000, 4, 3_000);
    for features in [4, 16, 64] {
        chosen_plan_is_not_slower_than_pygims_on_the_simulator(&a, features);
    }
}

#[test]
fn the_chosen_plan_is_not_slower_than_pygims_on_a_graph_without_hubs() {
    let a = graph(12_000, 0, 0);
    for features in [4, 16, 64] {
        chosen_plan_is_not_slower_than_pygims_on_the_simulator(&a, features);
    }
}
