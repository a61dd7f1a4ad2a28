//! Property tests of PIM SpMM on the simulator: graphs, feature widths, plans, tasklet counts, DPU sets and
//! tasklet interleavings drawn independently of one another, and the engine's `Y` checked against the CPU's
//! (`pimgnn::cpu::spmm`): exactly for the integer types (wrapping sums), and for `f32` within what two summation
//! orders can differ by, bit for bit when the plan keeps the CPU's order.
//!
//! What is drawn, each on its own:
//! - the graph: 0 to 300 rows, as many columns or another count (rectangular), edges from a list in which
//!   repeated entries, empty rows and hub rows (three rows that draw a large share of the edges) occur;
//! - one or two calls on the loaded matrix, each of a width of 0, 1, a few, around one X DMA of the kernels
//!   (`SPMM_FEATURE_CHUNK`, 64 features) or above two;
//! - the DPUs: 1 to 8, up to 2 of them disabled, v1A or v1B chips;
//! - the plan: the basic row plan (one row block per DPU), PyGim's (`Plan::pygim`) or any shape of row
//!   blocks, column blocks and feature groups that fits the DPUs, in either format and X delivery, cutting
//!   inside rows or not; with 1 up to the chip's number of tasklets;
//! - the simulator's schedule: modelled, fast, or shuffled with a drawn seed (races show as wrong sums).
//!
//! Case counts and seeds: each property runs `CI_CASES` cases, or the count in `PIMGNN_PROPTEST_CASES`
//! (proptest's own `PROPTEST_CASES` is not read, since these properties set their count). The cases come from a
//! fixed seed, so that a run is reproducible, unless `PROPTEST_RNG_SEED` gives another. A failing case is
//! reported shrunk (fewest edges, calls, DPUs and blocks, smallest sizes and seeds that still fail) as the
//! `Case` that `check_case` replays; nothing is written to disk, so a failure found belongs in
//! `tests/pim_spmm.rs` as a named test.

use std::fmt::Debug;

use pimgnn::pim::plan::{Format, Plan, XDelivery};
use pimgnn::pim::{PimElement, PimSpmm};
use pimgnn::{compare, cpu, Csr, Dense, SpmmEngine};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use rand::rngs::ChaCha8Rng;
use rand::SeedableRng;
use upmem::sim::{Schedule, SimConfig};
use upmem::{BackendKind, ChipVersion, DpuSet, Topology};

/// Cases per property when `PIMGNN_PROPTEST_CASES` is not set: the four properties take about 20 s together on
/// two cores in the debug build `cargo test` makes.
const CI_CASES: u32 = 128;

/// The environment variable that sets the cases per property.
const CASES_VAR: &str = "PIMGNN_PROPTEST_CASES";

/// Shrinking steps and time a failing case may take, unless `PROPTEST_MAX_SHRINK_ITERS` or
/// `PROPTEST_MAX_SHRINK_TIME` (milliseconds) say otherwise: proptest's automatic limit, 4 steps per case, stops
/// one edge deletion at a time long before a graph of a thousand edges is down to the few a defect needs.
const SHRINK_STEPS: u32 = 20_000;
const SHRINK_MILLISECONDS: u32 = 180_000;

/// The generator's seed when `PROPTEST_RNG_SEED` is not set.
const DEFAULT_SEED: u64 = 0x5eed_0005_0a11;

/// Most rows, and most columns, of a drawn graph.
const MAX_SIDE: usize = 300;

/// Most edges of a drawn graph.
const MAX_EDGES: usize = 1200;

/// Where an edge's row or column is drawn, then taken modulo the graph's rows or columns: a small range, so
/// that shrinking one takes few steps.
const INDEX: std::ops::Range<u32> = 0..1024;

/// Most DPUs of a drawn set, and most of them disabled.
const MAX_DPUS: u32 = 8;
const MAX_DISABLED: usize = 2;

/// The unit roundoff of `f32` (round to nearest): `2^-24`.
const F32_UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 24) as f64;

fn config() -> ProptestConfig {
    let cases = match std::env::var(CASES_VAR) {
        Ok(text) => text.parse().unwrap_or_else(|_| panic!("{CASES_VAR}={text}: expected a number of cases")),
        Err(_) => CI_CASES,
    };
    let mut config = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
    // What the environment did not set (proptest's defaults: a random seed, automatic or no shrinking limits).
    if config.rng_seed == RngSeed::Random {
        config.rng_seed = RngSeed::Fixed(DEFAULT_SEED);
    }
    if config.max_shrink_iters == u32::MAX {
        config.max_shrink_iters = SHRINK_STEPS;
    }
    if config.max_shrink_time == 0 {
        config.max_shrink_time = SHRINK_MILLISECONDS;
    }
    config
}

/// A value type under test: how its nonzeros and features are drawn, and how the engine's `Y` must agree with
/// the CPU's.
trait Value: PimElement + Debug {
    /// Nonzero values.
    fn nonzero() -> BoxedStrategy<Self>;
    /// A feature value of `X` (drawn from a seeded generator: `X` is too large to shrink usefully).
    fn feature(rng: &mut ChaCha8Rng) -> Self;
    /// Whether `y`, the engine's `A X`, is right; `order_kept` when the plan sums every output in the order
    /// the row's nonzeros are stored (one tasklet, one column block, no row cut between row blocks).
    fn agrees(a: &Csr<Self>, x: &Dense<Self>, y: &Dense<Self::Acc>, order_kept: bool) -> Result<(), String>;
}

/// Integers: full-range values, so that products and sums wrap, and `Y` equal to the CPU's.
macro_rules! integer_value {
    ($($ty:ty),*) => { $(
        impl Value for $ty {
            fn nonzero() -> BoxedStrategy<Self> {
                any::<$ty>().boxed()
            }
            fn feature(rng: &mut ChaCha8Rng) -> Self {
                rng.next_u32() as $ty
            }
            fn agrees(a: &Csr<Self>, x: &Dense<Self>, y: &Dense<i32>, _: bool) -> Result<(), String> {
                let expected = cpu::spmm(a, x).map_err(|e| e.to_string())?;
                first_difference(y, &expected, |_, got, want| got == want)
            }
        }
    )* };
}
integer_value!(i32, i16, i8);

/// `f32`: fractions of three decimal digits, whose products and sums round. Whichever tree of partial sums a plan
/// adds a row of `k` nonzeros in (pieces cut between tasklets, DPUs and column blocks, added up after), each
/// product goes through at most `k` roundings (its own and at most `k - 1` additions; adding a zero partial is
/// exact), so the sum is within `gamma(k) * sum |a_rc x_cf|` of the exact one (Higham, *Accuracy and Stability
/// of Numerical Algorithms*, 3.1 and 4.2), as is the CPU's (a fused multiply-add only rounds less): the two
/// differ by at most twice that.
impl Value for f32 {
    fn nonzero() -> BoxedStrategy<Self> {
        (-100_000i32..=100_000).prop_map(|thousandths| thousandths as f32 / 1000.0).boxed()
    }
    fn feature(rng: &mut ChaCha8Rng) -> Self {
        rng.random_range(-4.0f32..4.0)
    }
    fn agrees(a: &Csr<f32>, x: &Dense<f32>, y: &Dense<f32>, order_kept: bool) -> Result<(), String> {
        let expected = cpu::spmm(a, x).map_err(|e| e.to_string())?;
        // A NaN or an infinity on either side fails here, named as such.
        compare::max_abs_difference("PIM SpMM", y, &expected).map_err(|e| e.to_string())?;
        let bounds = reordering_bounds(a, x);
        first_difference(y, &expected, |at, got, want| f64::from((got - want).abs()) <= bounds[at])?;
        if order_kept {
            first_difference(y, &in_stored_order(a, x), |_, got, want| got == want)
                .map_err(|e| format!("the plan keeps the stored order, yet: {e}"))?;
        }
        Ok(())
    }
}

/// `gamma(n) = n u / (1 - n u)`, the bound on the relative error of `n` roundings.
fn gamma(n: usize) -> f64 {
    let nu = n as f64 * F32_UNIT_ROUNDOFF;
    nu / (1.0 - nu)
}

/// Per element of `Y` (row-major), how far two summation orders of it may differ: `2 gamma(k) sum |a x|`.
fn reordering_bounds(a: &Csr<f32>, x: &Dense<f32>) -> Vec<f64> {
    let features = x.cols();
    let mut bounds = vec![0.0; a.nrows() * features];
    if features == 0 {
        return bounds;
    }
    for (r, row_bounds) in bounds.chunks_mut(features).enumerate() {
        let (cols, values) = a.row(r);
        for (&c, &v) in cols.iter().zip(values) {
            for (bound, &xv) in row_bounds.iter_mut().zip(x.row(c as usize)) {
                *bound += f64::from(v.abs()) * f64::from(xv.abs());
            }
        }
        let scale = 2.0 * gamma(cols.len());
        row_bounds.iter_mut().for_each(|bound| *bound *= scale);
    }
    bounds
}

/// `A X` summed as the kernels and the CPU's portable kernel sum an unshared row: from zero, each product
/// rounded and then added, in the order the nonzeros are stored.
fn in_stored_order(a: &Csr<f32>, x: &Dense<f32>) -> Dense<f32> {
    let mut y = Dense::zeros(a.nrows(), x.cols());
    for r in 0..a.nrows() {
        let (cols, values) = a.row(r);
        let mut sums = vec![0.0f32; x.cols()];
        for (&c, &v) in cols.iter().zip(values) {
            sums.iter_mut().zip(x.row(c as usize)).for_each(|(sum, &xv)| *sum += v * xv);
        }
        y.row_mut(r).copy_from_slice(&sums);
    }
    y
}

/// The first element of `y` (row-major index, value) that `agree` rejects against `expected`'s, described;
/// shapes must match.
fn first_difference<A: Copy + Default + Debug>(
    y: &Dense<A>,
    expected: &Dense<A>,
    agree: impl Fn(usize, A, A) -> bool,
) -> Result<(), String> {
    if (y.rows(), y.cols()) != (expected.rows(), expected.cols()) {
        return Err(format!("Y is {} x {}, expected {} x {}", y.rows(), y.cols(), expected.rows(), expected.cols()));
    }
    let mut pairs = y.as_slice().iter().zip(expected.as_slice()).enumerate();
    match pairs.find(|&(at, (&got, &want))| !agree(at, got, want)) {
        None => Ok(()),
        Some((at, (got, want))) => {
            let (row, feature) = (at / y.cols(), at % y.cols());
            Err(format!("Y[{row}][{feature}] is {got:?}, expected {want:?}"))
        }
    }
}

/// A graph as a list of edges `(row, column, value)`, so that shrinking removes and simplifies edges.
#[derive(Clone, Debug)]
struct Graph<T> {
    rows: usize,
    cols: usize,
    edges: Vec<(u32, u32, T)>,
}

impl<T: Value> Graph<T> {
    /// The CSR matrix: edges grouped by row, in list order within a row (repeated edges kept: they add up).
    fn csr(&self) -> Csr<T> {
        let mut edges = self.edges.clone();
        edges.sort_by_key(|&(row, ..)| row);
        let mut row_ptr = vec![0u32; self.rows + 1];
        for &(row, ..) in &edges {
            row_ptr[row as usize + 1] += 1;
        }
        for r in 0..self.rows {
            row_ptr[r + 1] += row_ptr[r];
        }
        let (cols, values) = edges.into_iter().map(|(_, col, value)| (col, value)).unzip();
        Csr::new(self.rows, self.cols, row_ptr, cols, values).expect("edges lie inside the graph")
    }
}

/// Which row an edge is in: any, or one of three hub rows (the first, the middle and the last), which then hold
/// a large share of the edges: rows long enough to be cut between DPUs and tasklets.
#[derive(Clone, Copy, Debug)]
enum RowPick {
    Any(u32),
    Hub(u8),
}

impl RowPick {
    fn row(self, rows: usize) -> u32 {
        match self {
            RowPick::Any(raw) => raw % rows as u32,
            RowPick::Hub(hub) => [0, rows / 2, rows - 1][usize::from(hub)] as u32,
        }
    }
}

/// Rows or columns of a graph: none, a few (fewer than the DPUs or tasklets), or up to [`MAX_SIDE`].
fn side() -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(0), 2 => 1..=8usize, 6 => 0..=MAX_SIDE]
}

fn graph<T: Value>() -> impl Strategy<Value = Graph<T>> {
    let row_pick = prop_oneof![3 => INDEX.prop_map(RowPick::Any), 2 => (0..3u8).prop_map(RowPick::Hub)];
    let edge = (row_pick, INDEX, T::nonzero());
    let cols = prop_oneof![Just(None), side().prop_map(Some)];
    (side(), cols, vec(edge, 0..=MAX_EDGES)).prop_map(|(rows, cols, edges)| {
        let cols = cols.unwrap_or(rows);
        let edges = if rows == 0 || cols == 0 {
            Vec::new()
        } else {
            edges.into_iter().map(|(pick, col, value)| (pick.row(rows), col % cols as u32, value)).collect()
        };
        Graph { rows, cols, edges }
    })
}

/// A simulated set: `dpus` DPUs of one rank, `disabled` of them unusable, of `chip`.
#[derive(Clone, Debug)]
struct Dpus {
    dpus: u32,
    disabled: Vec<u32>,
    chip: ChipVersion,
}

impl Dpus {
    fn enabled(&self) -> u32 {
        self.dpus - self.disabled.len() as u32
    }

    /// The set, in strict mode, its tasklets interleaved by `schedule`.
    fn allocate(&self, schedule: Schedule) -> Result<DpuSet, String> {
        let topology = Topology::new(1, self.dpus).with_disabled(self.disabled.iter().copied()).with_chip(self.chip);
        let mut config = SimConfig::new(topology);
        config.strict = true;
        config.schedule = schedule;
        DpuSet::builder().backend(BackendKind::Simulator).simulator(config).allocate().map_err(|e| e.to_string())
    }
}

fn dpus() -> impl Strategy<Value = Dpus> {
    let chip = prop_oneof![3 => Just(ChipVersion::V1A), 1 => Just(ChipVersion::V1B)];
    (1..=MAX_DPUS, vec(any::<u32>(), 0..=MAX_DISABLED), chip).prop_map(|(dpus, raw, chip)| {
        let mut disabled: Vec<u32> = raw.into_iter().map(|d| d % dpus).collect();
        disabled.sort_unstable();
        disabled.dedup();
        // At least one DPU stays enabled.
        disabled.truncate(dpus as usize - 1);
        Dpus { dpus, disabled, chip }
    })
}

/// The kinds of plan, drawn so that the two named ones come up often.
#[derive(Clone, Copy, Debug)]
enum PlanKind {
    /// One row block per DPU, one column block, one group.
    Rows,
    /// [`Plan::pygim`] with some groups.
    PyGim,
    /// Any numbers of row blocks, column blocks and feature groups that fit the DPUs.
    Tiled,
}

/// A plan's choices before they are fitted to a set: counts are taken modulo what the set allows, so that they
/// shrink towards 1.
#[derive(Clone, Copy, Debug)]
struct PlanDraw {
    kind: PlanKind,
    format: Format,
    x: XDelivery,
    split_rows: bool,
    row_blocks: u32,
    col_blocks: u32,
    groups: u32,
    tasklets: u32,
}

impl PlanDraw {
    /// The plan on `dpus` usable DPUs of `threads` hardware threads each.
    fn fit(self, dpus: u32, threads: u32) -> Plan {
        let tasklets = 1 + self.tasklets % threads;
        let (format, x, split_rows) = (self.format, self.x, self.split_rows);
        match self.kind {
            PlanKind::Rows => {
                Plan { format, row_blocks: dpus, split_rows, col_blocks: 1, feature_groups: 1, x, tasklets }
            }
            PlanKind::PyGim => Plan::pygim(dpus, 1 + self.groups % dpus, tasklets),
            PlanKind::Tiled => {
                let row_blocks = 1 + self.row_blocks % dpus;
                let col_blocks = 1 + self.col_blocks % (dpus / row_blocks);
                let feature_groups = 1 + self.groups % (dpus / (row_blocks * col_blocks));
                Plan { format, row_blocks, split_rows, col_blocks, feature_groups, x, tasklets }
            }
        }
    }
}

fn plan_draw() -> impl Strategy<Value = PlanDraw> {
    let kind = prop_oneof![Just(PlanKind::Tiled), Just(PlanKind::Rows), Just(PlanKind::PyGim)];
    let format = prop_oneof![Just(Format::Csr), Just(Format::Coo)];
    let x = prop_oneof![Just(XDelivery::Whole), Just(XDelivery::Referenced)];
    let counts = (0..64u32, 0..64u32, 0..64u32, 0..64u32);
    (kind, format, x, any::<bool>(), counts).prop_map(
        |(kind, format, x, split_rows, (row_blocks, col_blocks, groups, tasklets))| PlanDraw {
            kind,
            format,
            x,
            split_rows,
            row_blocks,
            col_blocks,
            groups,
            tasklets,
        },
    )
}

/// Columns of `X` in one call: none, one, a few (not a multiple of 8 bytes), around one X DMA of the kernels
/// (64 features), or more than two of them.
fn width() -> impl Strategy<Value = usize> {
    prop_oneof![Just(0usize), Just(1), 2..=9usize, 60..=70usize, 129..=140usize]
}

fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        1 => Just(Schedule::Modelled),
        4 => any::<u64>().prop_map(|seed| Schedule::Shuffle { seed }),
        1 => Just(Schedule::Fast),
    ]
}

/// One drawn case: a graph loaded once under a plan on a set, then multiplied by an `X` per width.
#[derive(Clone, Debug)]
struct Case<T> {
    graph: Graph<T>,
    dpus: Dpus,
    plan: Plan,
    widths: Vec<usize>,
    schedule: Schedule,
    x_seed: u64,
}

/// The parts of a case shrink in this order: the DPUs, the plan, the calls, the schedule, then the graph (its
/// sides, then edge by edge), so that a failure is first reduced to the fewest DPUs, blocks, tasklets and calls.
fn case<T: Value>() -> impl Strategy<Value = Case<T>> {
    (dpus(), plan_draw(), vec(width(), 1..=2), schedule(), any::<u64>(), graph::<T>()).prop_map(
        |(dpus, draw, widths, schedule, x_seed, graph)| {
            let plan = draw.fit(dpus.enabled(), dpus.chip.hardware_threads());
            Case { graph, dpus, plan, widths, schedule, x_seed }
        },
    )
}

/// Whether `plan` sums every output of `Y` in the order its row's nonzeros are stored: no row is cut between
/// tasklets (one tasklet), between row blocks (no cut inside rows, or one block) or between column blocks.
fn keeps_stored_order(plan: &Plan) -> bool {
    plan.tasklets == 1 && plan.col_blocks == 1 && (!plan.split_rows || plan.row_blocks == 1)
}

/// Runs `case`: loads its graph, then each call's `Y` must agree with the CPU's.
fn check_case<T: Value>(case: &Case<T>) -> Result<(), String> {
    let a = case.graph.csr();
    let set = case.dpus.allocate(case.schedule)?;
    let mut engine = PimSpmm::new(set, a.clone(), case.plan).map_err(|e| format!("loading: {e}"))?;
    let mut rng = ChaCha8Rng::seed_from_u64(case.x_seed);
    for (call, &width) in case.widths.iter().enumerate() {
        let values = (0..a.ncols() * width).map(|_| T::feature(&mut rng)).collect();
        let x = Dense::from_vec(a.ncols(), width, values).expect("X of its shape");
        let y = engine.spmm(&x).map_err(|e| format!("call {call} (F = {width}): {e}"))?;
        T::agrees(&a, &x, &y, keeps_stored_order(&case.plan)).map_err(|e| format!("call {call} (F = {width}): {e}"))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn f32_spmm_agrees_with_the_cpu(case in case::<f32>()) {
        check_case(&case).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn i32_spmm_equals_the_cpu(case in case::<i32>()) {
        check_case(&case).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn i16_spmm_equals_the_cpu(case in case::<i16>()) {
        check_case(&case).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn i8_spmm_equals_the_cpu(case in case::<i8>()) {
        check_case(&case).map_err(TestCaseError::fail)?;
    }
}
