//! PIM SpMM and SDDMM against the CPU oracles (`pimgnn::cpu::spmm`, `pimgnn::cpu::sddmm`) on the simulator:
//! every plan, type and format, empty and hub rows, feature counts that are not multiples of anything, disabled DPUs and several tasklet counts,
//! with the simulator switching tasklets at every DMA (races show up) and in strict mode.

use std::any::Any;

use pimgnn::pim::abi::{MAX_TASKLETS, READ_ENTRIES};
use pimgnn::pim::cost::{self, HardwareModel, Target};
use pimgnn::pim::plan::{Format, Plan, XDelivery};
use pimgnn::pim::{PimElement, PimSpmm};
use pimgnn::{cpu, AttentionScores, Csr, Dense, Element, Error, SpmmEngine};
use rand::rngs::ChaCha8Rng;
use rand::{Rng as _, RngExt, SeedableRng};
use upmem::sim::{Schedule, SimConfig};
use upmem::{BackendKind, DpuSet, Topology};

/// The seeded generator of test graphs and features.
type Rng = ChaCha8Rng;

/// A value type with a way to draw test values: small integers for f32, so that every sum is exact in any order.
trait TestValue: PimElement {
    fn draw(rng: &mut Rng) -> Self;
}

impl TestValue for f32 {
    fn draw(rng: &mut Rng) -> Self {
        rng.random_range(-8i32..=8) as f32
    }
}

impl TestValue for i32 {
    /// Full-range values, so sums wrap.
    fn draw(rng: &mut Rng) -> Self {
        rng.next_u32() as i32
    }
}

impl TestValue for i16 {
    fn draw(rng: &mut Rng) -> Self {
        rng.next_u32() as i16
    }
}

impl TestValue for i8 {
    fn draw(rng: &mut Rng) -> Self {
        rng.next_u32() as i8
    }
}

/// An `n x n` graph: each row has 0 to `2 * degree` random neighbours (so some rows are empty), and each row of
/// `hubs` has `hub_degree` nonzeros spread over all columns.
fn random_graph<T: TestValue>(n: usize, degree: usize, hubs: &[usize], hub_degree: usize, seed: u64) -> Csr<T> {
    let mut rng = Rng::seed_from_u64(seed);
    let mut row_ptr = vec![0u32];
    let mut cols = Vec::new();
    let mut values = Vec::new();
    for r in 0..n {
        let count = if hubs.contains(&r) { hub_degree } else { rng.random_range(0..=2 * degree) };
        for _ in 0..count {
            cols.push(rng.random_range(0..n as u32));
            values.push(T::draw(&mut rng));
        }
        row_ptr.push(cols.len() as u32);
    }
    Csr::new(n, n, row_ptr, cols, values).unwrap()
}

fn random_dense<T: TestValue>(rows: usize, cols: usize, seed: u64) -> Dense<T> {
    let mut rng = Rng::seed_from_u64(seed);
    Dense::from_vec(rows, cols, (0..rows * cols).map(|_| T::draw(&mut rng)).collect()).unwrap()
}

/// A simulated set of every enabled DPU of `ranks x per_rank` with `disabled` DPUs, its tasklets interleaved
/// by the seeded shuffle schedule (so a race between tasklets shows as a wrong result), faulting on what the
/// hardware only tolerates.
fn sim_set(ranks: u32, per_rank: u32, disabled: &[u32]) -> DpuSet {
    let mut config = SimConfig::new(Topology::new(ranks, per_rank).with_disabled(disabled.iter().copied()));
    config.strict = true;
    config.schedule = Schedule::Shuffle { seed: 0x5eed };
    DpuSet::builder().backend(BackendKind::Simulator).simulator(config).allocate().unwrap()
}

fn plan(format: Format, rows: u32, cols: u32, groups: u32, x: XDelivery, tasklets: u32) -> Plan {
    Plan { format, row_blocks: rows, split_rows: true, col_blocks: cols, feature_groups: groups, x, tasklets }
}

/// Runs `plan` once per width of `features` (A stays loaded between calls), then once more with new values for
/// A's structure, comparing with the CPU exactly.
fn check<T: TestValue>(set: DpuSet, a: &Csr<T>, plan: Plan, features: &[usize]) {
    check_calls(set, a, plan, features, true);
}

/// As [`check`], with the calls with values per head and attention weights only when `per_head`.
fn check_calls<T: TestValue>(set: DpuSet, a: &Csr<T>, plan: Plan, features: &[usize], per_head: bool) {
    let mut engine = PimSpmm::new(set, a.clone(), plan).unwrap_or_else(|e| panic!("{plan}: {e}"));
    for (call, &f) in features.iter().enumerate() {
        let x = random_dense::<T>(a.ncols(), f, 7 + call as u64);
        let y = engine.spmm(&x).unwrap_or_else(|e| panic!("{plan}, F = {f}: {e}"));
        expect_product(a, &x, &y, &format!("{plan}, F = {f}"));
        assert_eq!(engine.last_phases().len(), 4);
        let report = engine.report().to_string();
        assert!(report.contains(&plan.to_string()) && report.contains("kernel"), "{report}");
    }
    let mut rng = Rng::seed_from_u64(11);
    let revalued = a.map_values(|_| T::draw(&mut rng));
    engine.set_values(revalued.values()).unwrap_or_else(|e| panic!("{plan}: new values: {e}"));
    let x = random_dense::<T>(a.ncols(), features[0], 13);
    let y = engine.spmm(&x).unwrap_or_else(|e| panic!("{plan}, new values: {e}"));
    expect_product(&revalued, &x, &y, &format!("{plan}, new values"));
    let phases: Vec<&str> = engine.last_phases().iter().map(|phase| phase.name.as_ref()).collect();
    assert_eq!(phases, ["send values", "send X", "kernel", "gather", "merge"], "{plan}");
    // Heads of 8 features: whole heads or parts of one per DPU; sent once for two calls of the same width.
    let head_values = per_head.then(|| check_heads(&mut engine, a, 3, 8, 23, true));
    if let Some(head_values) = &head_values {
        check_heads_again(&mut engine, a, head_values, 3, 8, 29, false);
    }
    for (call, &f) in features.iter().enumerate() {
        let (p, q) = (random_dense::<T>(a.nrows(), f, 17 + call as u64), random_dense::<T>(a.ncols(), f, 19));
        let scores = engine.sddmm(&p, &q).unwrap_or_else(|e| panic!("{plan}, SDDMM F = {f}: {e}"));
        let expected = cpu::sddmm(a, &p, &q).unwrap();
        if let Some(wrong) = (0..expected.len()).find(|&k| scores[k] != expected[k]) {
            panic!("{} {plan}, SDDMM F = {f}: nonzero {wrong}: {:?} vs {:?}", T::NAME, scores[wrong], expected[wrong]);
        }
        assert_eq!(scores.len(), a.nnz());
        // A matrix without nonzeros has nothing to compute, and no phases.
        let phases: Vec<&str> = engine.last_phases().iter().map(|phase| phase.name.as_ref()).collect();
        let expected: &[&str] = if a.nnz() > 0 { &["send P and Q", "SDDMM kernel", "gather", "assemble"] } else { &[] };
        assert_eq!(phases, expected, "{plan}");
    }
    // After an SDDMM, whose operands took their place (when there was something to compute), the values go
    // again. Heads of one feature are narrower than the kernels' 8-byte units (padded), heads of 72 take two
    // feature chunks each.
    if let Some(head_values) = &head_values {
        check_heads_again(&mut engine, a, head_values, 3, 8, 31, a.nnz() > 0);
        check_heads(&mut engine, a, 4, 1, 37, true);
        check_heads(&mut engine, a, 2, 72, 41, true);
        check_attention(&mut engine, a);
    }
}

/// Attention weights computed by the kernels (f32) from random scores, for heads of 8, of 1 (padded) and of 72
/// features (two chunks each), against the CPU with the same weights; other types refuse.
fn check_attention<T: TestValue>(engine: &mut PimSpmm<T>, a: &Csr<T>) {
    let plan = *engine.plan();
    for (heads, width, seed) in [(3, 8, 43), (4, 1, 47), (2, 72, 53)] {
        let mut rng = Rng::seed_from_u64(seed);
        let mut draw = |n: usize| (0..n).map(|_| rng.random_range(-4.0f32..4.0)).collect::<Vec<f32>>();
        let (source, target) = (draw(a.ncols() * heads), draw(a.nrows() * heads));
        let scores = AttentionScores::new(a, &source, &target, heads, 0.2).unwrap();
        let call = format!("{} {plan}, attention, {heads} heads of {width}", T::NAME);
        let typed = (engine as &mut dyn Any).downcast_mut::<PimSpmm<f32>>();
        let (Some(engine), Some(a)) = (typed, (a as &dyn Any).downcast_ref::<Csr<f32>>()) else {
            let error = engine.set_attention(&scores).unwrap_err();
            assert!(matches!(error, Error::Invalid { .. }), "{call}: {error}");
            continue;
        };
        engine.set_attention(&scores).unwrap_or_else(|e| panic!("{call}: {e}"));
        let x = random_dense::<f32>(a.ncols(), heads * width, seed);
        let y = engine.spmm(&x).unwrap_or_else(|e| panic!("{call}: {e}"));
        // The weights are fractions, so where a row's sum is cut (a long row over DPUs or tasklets) the parts add
        // up in another order than the host's: within 1e-5 of the sum of the products' magnitudes.
        let weights = scores.weights(a).unwrap();
        let expected = cpu::spmm_heads(a, &weights, heads, &x).unwrap();
        let magnitudes = Dense::from_vec(x.rows(), x.cols(), x.as_slice().iter().map(|v| v.abs()).collect()).unwrap();
        let sizes = cpu::spmm_heads(a, &weights, heads, &magnitudes).unwrap();
        for (at, (&got, (&want, &size))) in
            y.as_slice().iter().zip(expected.as_slice().iter().zip(sizes.as_slice())).enumerate()
        {
            assert!((got - want).abs() <= 1e-5 * size, "{call}: Y[{at}] = {got}, the CPU's {want}");
        }
        assert_eq!(engine.last_phases()[0].name, "send scores", "{call}");
    }
}

/// Sets new values for `heads` heads and checks a call with heads of `width` features against the CPU; returns
/// the values.
fn check_heads<T: TestValue>(
    engine: &mut PimSpmm<T>,
    a: &Csr<T>,
    heads: usize,
    width: usize,
    seed: u64,
    sends: bool,
) -> Vec<T> {
    let mut rng = Rng::seed_from_u64(seed);
    let values: Vec<T> = (0..a.nnz() * heads).map(|_| T::draw(&mut rng)).collect();
    engine.set_head_values(&values, heads).unwrap_or_else(|e| panic!("{}: {heads} heads: {e}", engine.plan()));
    check_heads_again(engine, a, &values, heads, width, seed, sends);
    values
}

/// A call with the values per head already set, `heads` of `width` features each, against the CPU; `sends` says
/// whether the call is to send the values first.
fn check_heads_again<T: TestValue>(
    engine: &mut PimSpmm<T>,
    a: &Csr<T>,
    values: &[T],
    heads: usize,
    width: usize,
    seed: u64,
    sends: bool,
) {
    let plan = *engine.plan();
    let x = random_dense::<T>(a.ncols(), heads * width, seed);
    let call = format!("{} {plan}, {heads} heads of {width}", T::NAME);
    let y = engine.spmm(&x).unwrap_or_else(|e| panic!("{call}: {e}"));
    let expected = cpu::spmm_heads(a, values, heads, &x).unwrap();
    if let Some(wrong) = (0..y.rows()).find(|&r| y.row(r) != expected.row(r)) {
        panic!("{call}: row {wrong} differs: {:?} vs {:?}", y.row(wrong), expected.row(wrong));
    }
    let sent = engine.last_phases().iter().any(|phase| phase.name == "send values");
    assert_eq!(sent, sends, "{call}: {:?}", engine.last_phases());
}

/// Panics naming the first row of `y` that is not `a x`.
fn expect_product<T: TestValue>(a: &Csr<T>, x: &Dense<T>, y: &Dense<T::Acc>, call: &str) {
    let expected = cpu::spmm(a, x).unwrap();
    if *y != expected {
        let wrong = (0..y.rows()).find(|&r| y.row(r) != expected.row(r)).unwrap();
        let f = x.cols().min(8);
        panic!("{} {call}: row {wrong} differs: {:?} vs {:?}", T::NAME, &y.row(wrong)[..f], &expected.row(wrong)[..f]);
    }
}

fn every_plan(dpus: u32, tasklets: u32) -> Vec<Plan> {
    let mut plans = Vec::new();
    for format in [Format::Csr, Format::Coo] {
        for x in [XDelivery::Whole, XDelivery::Referenced] {
            plans.push(plan(format, dpus, 1, 1, x, tasklets));
            plans.push(plan(format, dpus / 2, 2, 1, x, tasklets));
            plans.push(plan(format, 2, 1, 3, x, tasklets));
            plans.push(plan(format, 1, 2, 3, x, tasklets));
            plans.push(Plan { split_rows: false, ..plan(format, dpus / 2, 2, 1, x, tasklets) });
        }
    }
    plans.push(Plan::pygim(dpus, 3, tasklets));
    plans
}

/// Every plan with every tasklet count of `TASKLET_COUNTS`: one, a few, and up to a v1A DPU's 24, which cut the
/// hub row and the rows around it differently; values per head and attention weights with those of
/// `PER_HEAD_TASKLET_COUNTS`.
fn every_plan_on<T: TestValue>() {
    // 8 DPUs with one disabled: 7 in the set, 301 rows divide over nothing.
    let a = random_graph::<T>(301, 3, &[5], 400, 1);
    for plan in every_plan(7, 16) {
        for tasklets in TASKLET_COUNTS {
            let per_head = PER_HEAD_TASKLET_COUNTS.contains(&tasklets);
            check_calls(sim_set(1, 8, &[2]), &a, Plan { tasklets, ..plan }, &[5, 37], per_head);
        }
    }
}

/// Tasklet counts every plan runs with in `every_plan_*`.
const TASKLET_COUNTS: [u32; 5] = [1, 3, 11, 16, 24];
/// Of those, the ones every plan also runs values per head and attention weights with: a few tasklets and a
/// DPU's most, which cut the hub row differently.
const PER_HEAD_TASKLET_COUNTS: [u32; 2] = [3, 24];

#[test]
fn every_plan_f32() {
    every_plan_on::<f32>();
}

#[test]
fn every_plan_i32() {
    every_plan_on::<i32>();
}

#[test]
fn every_plan_i16() {
    every_plan_on::<i16>();
}

#[test]
fn every_plan_i8() {
    every_plan_on::<i8>();
}

/// X per nonzero (i8 and i16) on every plan and tasklet count, exact: one unit of 8 bytes (5 features, padded),
/// several (37), two chunks of features (72), values per head (heads of 8 and of 72), and an SDDMM between, which
/// takes X by column again.
fn every_plan_with_x_per_nonzero_on<T: TestValue>() {
    let a = random_graph::<T>(301, 3, &[5], 400, 1);
    for plan in every_plan(7, 16) {
        for tasklets in TASKLET_COUNTS {
            let plan = Plan { tasklets, ..plan };
            let mut engine = PimSpmm::new(sim_set(1, 8, &[2]), a.clone(), plan).unwrap();
            engine.set_x_per_nonzero(Some(true)).unwrap();
            for (call, f) in [5, 37, 72].into_iter().enumerate() {
                assert!(engine.x_per_nonzero(f), "{plan}, F = {f}");
                let x = random_dense::<T>(a.ncols(), f, 3 + call as u64);
                let y = engine.spmm(&x).unwrap_or_else(|e| panic!("{plan}, F = {f}: {e}"));
                expect_product(&a, &x, &y, &format!("{plan}, F = {f}, X per nonzero"));
                assert!(engine.report().to_string().contains("X per nonzero"), "{}", engine.report());
            }
            let (p, q) = (random_dense::<T>(a.nrows(), 16, 5), random_dense::<T>(a.ncols(), 16, 6));
            assert_eq!(engine.sddmm(&p, &q).unwrap(), cpu::sddmm(&a, &p, &q).unwrap(), "{plan}, SDDMM");
            check_heads(&mut engine, &a, 3, 8, 23, true);
            check_heads(&mut engine, &a, 2, 72, 41, true);
        }
    }
}

#[test]
fn every_plan_i16_with_x_per_nonzero() {
    every_plan_with_x_per_nonzero_on::<i16>();
}

#[test]
fn every_plan_i8_with_x_per_nonzero() {
    every_plan_with_x_per_nonzero_on::<i8>();
}

/// The model sends X per nonzero where a nonzero's DMA outlasts its multiply-adds (i8 at 8 features on a plan of
/// many DPUs, whose blocks reference nearly as many rows of X as they have nonzeros) and by column at 256; f32
/// never, and refuses to be made to.
#[test]
fn x_goes_per_nonzero_where_the_model_predicts_it_faster() {
    let a = random_graph::<i8>(20_000, 8, &[], 0, 3);
    let plan = plan(Format::Csr, 64, 1, 1, XDelivery::Referenced, 16);
    let engine = PimSpmm::new(sim_set(1, 64, &[]), a.clone(), plan).unwrap();
    assert!(engine.x_per_nonzero(8) && !engine.x_per_nonzero(256));
    let faster = |x_per_nonzero| {
        let mut engine = PimSpmm::new(sim_set(1, 64, &[]), a.clone(), plan).unwrap();
        engine.set_x_per_nonzero(Some(x_per_nonzero)).unwrap();
        engine.predict(8).total()
    };
    assert!(faster(true) < faster(false));
    let mut f32_engine =
        PimSpmm::new(sim_set(1, 8, &[]), random_graph::<f32>(301, 3, &[], 0, 1), Plan::pygim(8, 1, 16)).unwrap();
    assert!(!f32_engine.x_per_nonzero(8));
    let refused = f32_engine.set_x_per_nonzero(Some(true)).unwrap_err().to_string();
    assert!(refused.contains("X per nonzero") && refused.contains("i8 and i16"), "{refused}");
}

/// `Y` in 16 bits as the model picks, or as fixed: an i8 call takes it when told to and computes the same product,
/// a call whose model would take it does not when told not to, and a type whose kernels cannot is refused.
#[test]
fn y_in_16_bits_can_be_fixed_either_way() {
    let a = random_graph::<i8>(301, 3, &[], 0, 1).map_values(|v| v / 48);
    let x = random_dense::<i8>(301, 16, 5);
    let plan = Plan::pygim(8, 1, 16);
    let mut engine = PimSpmm::with_model(sim_set(1, 8, &[]), a.clone(), plan, slow_gather()).unwrap();
    assert!(engine.y_in_16_bits(16));
    engine.set_y_in_16_bits(Some(false)).unwrap();
    assert!(!engine.y_in_16_bits(16));
    let mut engine = PimSpmm::new(sim_set(1, 8, &[]), a.clone(), plan).unwrap();
    assert!(!engine.y_in_16_bits(16));
    engine.set_y_in_16_bits(Some(true)).unwrap();
    assert!(engine.y_in_16_bits(16));
    let y = engine.spmm(&x).unwrap();
    expect_product(&a, &x, &y, "Y in 16 bits as fixed");
    assert!(engine.report().to_string().contains("Y in 16 bits"), "{}", engine.report());
    let mut i16_engine = PimSpmm::new(sim_set(1, 8, &[]), random_graph::<i16>(301, 3, &[], 0, 1), plan).unwrap();
    let refused = i16_engine.set_y_in_16_bits(Some(true)).unwrap_err().to_string();
    assert!(refused.contains("Y in 16 bits") && refused.contains("i8"), "{refused}");
}

/// The default model with a gather 100 times slower: on these few DPUs the engine takes Y in 16 bits, as it does
/// on a full server, where the gather's bytes are shared by thousands of DPUs.
fn slow_gather() -> HardwareModel {
    let mut model = HardwareModel::default();
    let gather = &mut model.transfers.gather;
    (gather.intercept, gather.per_rank) = (gather.intercept / 100.0, gather.per_rank / 100.0);
    model
}

/// i8 calls of `features` columns on a model whose gather makes them take Y in 16 bits, exact.
fn check_y_in_16_bits(set: DpuSet, a: &Csr<i8>, plan: Plan, features: &[usize]) {
    let mut engine = PimSpmm::with_model(set, a.clone(), plan, slow_gather()).unwrap_or_else(|e| panic!("{plan}: {e}"));
    for &f in features {
        assert!(engine.y_in_16_bits(f), "{plan}, F = {f}");
        let x = random_dense::<i8>(a.ncols(), f, f as u64);
        let y = engine.spmm(&x).unwrap_or_else(|e| panic!("{plan}, F = {f}: {e}"));
        expect_product(a, &x, &y, &format!("{plan}, F = {f}, Y in 16 bits"));
    }
}

/// i8 values small enough that most rows' sums fit 16 bits, so calls take Y in 16 bits: a hub row whose sums do
/// not (wide, in 32 bits), a long row that fits yet is cut between tasklets (merged after the barrier), and a row of
/// 255 ones whose sum meets the bound when every feature is -128. Every plan and tasklet count, exact; new values
/// after loading take Y in 32 bits again (check_calls).
#[test]
fn every_plan_i8_with_y_in_16_bits() {
    let base = random_graph::<i8>(301, 3, &[5, 150, 200], 400, 1);
    let mut values = Vec::with_capacity(base.nnz());
    for r in 0..base.nrows() {
        let span = base.row_ptr()[r] as usize..base.row_ptr()[r + 1] as usize;
        values.extend(base.values()[span.clone()].iter().enumerate().map(|(k, &v)| match r {
            5 => (v / 48).abs() + 1,
            150 => i8::from(k < 255),
            200 => i8::from(k % 3 == 0) - i8::from(k % 5 == 0),
            _ => v / 48,
        }));
    }
    let a = Csr::new(301, 301, base.row_ptr().to_vec(), base.col_idx().to_vec(), values).unwrap();
    let bound = |row: usize| a.row(row).1.iter().map(|v| u64::from(v.unsigned_abs())).sum::<u64>() * 128;
    assert!(bound(5) > i16::MAX as u64 && bound(150) == 255 * 128 && bound(200) <= i16::MAX as u64);
    let mut x = random_dense::<i8>(301, 16, 43);
    (0..301).for_each(|row| x.row_mut(row)[0] = i8::MIN);
    for plan in every_plan(7, 16) {
        for tasklets in TASKLET_COUNTS {
            let plan = Plan { tasklets, ..plan };
            let mut engine = PimSpmm::with_model(sim_set(1, 8, &[2]), a.clone(), plan, slow_gather()).unwrap();
            // X by column and per nonzero, each written through the kernel's own walk.
            for x_per_nonzero in [false, true] {
                engine.set_x_per_nonzero(Some(x_per_nonzero)).unwrap();
                let call = format!("{plan}, Y in 16 bits, X per nonzero: {x_per_nonzero}");
                assert!(engine.y_in_16_bits(16) && engine.x_per_nonzero(16) == x_per_nonzero, "{call}");
                let y = engine.spmm(&x).unwrap_or_else(|e| panic!("{call}: {e}"));
                expect_product(&a, &x, &y, &call);
                assert_eq!(y.row(150)[0], -255 * 128);
                assert!(y.row(5)[0] < i32::from(i16::MIN), "the hub's sum needs 32 bits");
                assert!(engine.report().to_string().contains("Y in 16 bits"), "{}", engine.report());
            }
            drop(engine);
            check_calls(sim_set(1, 8, &[2]), &a, plan, &[5, 37], false);
        }
    }
}

#[test]
fn feature_widths_from_1_to_512() {
    let a = random_graph::<f32>(97, 4, &[], 0, 2);
    let widths = [1, 2, 7, 8, 12, 48, 63, 64, 65, 129, 255, 512];
    check(sim_set(1, 4, &[]), &a, plan(Format::Csr, 4, 1, 1, XDelivery::Referenced, 16), &widths);
    check(sim_set(1, 4, &[]), &a, plan(Format::Coo, 2, 1, 2, XDelivery::Whole, 5), &widths);
    let a = random_graph::<i8>(97, 4, &[], 0, 3);
    check(sim_set(1, 4, &[]), &a, plan(Format::Csr, 2, 2, 1, XDelivery::Whole, 24), &widths);
    // Rows of 40 bytes, found by a 16-bit multiply, with Y in 16 bits and in accumulators.
    let plan = plan(Format::Coo, 2, 1, 1, XDelivery::Whole, 16);
    check_y_in_16_bits(sim_set(1, 4, &[]), &a, plan, &[40]);
    check_calls(sim_set(1, 4, &[]), &a, plan, &[40], false);
}

/// The kernels find an X row by a shift when its bytes are a power of two, in i8 and i16 by `column * 3` and a
/// shift when they are three times one, else by a 16-bit multiply when X has at most 2^16 rows, else by a 32-bit
/// multiply (spmm_kernel.h's enum spmm_row_addressing): rows of 24, 32 and 40 bytes of i32, i16 and i8 in an X of
/// 70,000 rows, columns spread to its end (`feature_widths_from_1_to_512` has the 16-bit multiply's); i8 with Y in
/// 16 bits, then in accumulators after new values.
#[test]
fn x_rows_past_2_to_the_16_are_found_in_every_way() {
    let (rows, cols) = (40, 70_000);
    let mut row_ptr = vec![0u32];
    let mut col_idx = Vec::new();
    for r in 0..rows {
        let mut row: Vec<u32> = (0..7).map(|k| ((r * 7 + k) * 9_973 % cols) as u32).collect();
        row.push((cols - 1 - r) as u32);
        row.sort_unstable();
        row.dedup();
        col_idx.extend(row);
        row_ptr.push(col_idx.len() as u32);
    }
    let value = |k: usize| (k % 7) as i32 - 3;
    let values = (0..col_idx.len()).map(value).collect();
    let a = Csr::new(rows, cols, row_ptr.clone(), col_idx.clone(), values).unwrap();
    let narrow_values = (0..col_idx.len()).map(|k| value(k) as i16).collect();
    let narrow = Csr::new(rows, cols, row_ptr.clone(), col_idx.clone(), narrow_values).unwrap();
    let byte_values = (0..col_idx.len()).map(|k| value(k) as i8).collect();
    let bytes = Csr::new(rows, cols, row_ptr, col_idx, byte_values).unwrap();
    for format in [Format::Csr, Format::Coo] {
        let plan = plan(format, 1, 1, 1, XDelivery::Whole, 11);
        check_calls(sim_set(1, 1, &[]), &a, plan, &[6, 8, 10], false);
        check_calls(sim_set(1, 1, &[]), &narrow, plan, &[12, 16, 20], false);
        check_y_in_16_bits(sim_set(1, 1, &[]), &bytes, plan, &[40, 24, 32]);
        check_calls(sim_set(1, 1, &[]), &bytes, plan, &[40, 24, 32], false);
    }
}

#[test]
fn hub_rows_of_more_than_10000_nonzeros() {
    let a = random_graph::<i32>(3000, 2, &[0, 1500, 2999], 12_000, 4);
    for tasklets in [1, 7, 16, 24] {
        check(sim_set(1, 6, &[0]), &a, plan(Format::Csr, 5, 1, 1, XDelivery::Referenced, tasklets), &[3]);
        check(sim_set(1, 6, &[0]), &a, plan(Format::Coo, 2, 2, 1, XDelivery::Referenced, tasklets), &[3]);
    }
}

#[test]
fn f32_with_fractions_matches_to_rounding() {
    let mut rng = Rng::seed_from_u64(9);
    let base = random_graph::<f32>(500, 6, &[3], 2000, 5);
    let values: Vec<f32> =
        base.values().iter().map(|_| rng.random_range(0..1_000_000u32) as f32 / 777.0 - 600.0).collect();
    let a = Csr::new(500, 500, base.row_ptr().to_vec(), base.col_idx().to_vec(), values).unwrap();
    let x = Dense::from_vec(500, 33, (0..500 * 33).map(|_| rng.random_range(0..10_000u32) as f32 / 99.0).collect())
        .unwrap();
    let expected = cpu::spmm(&a, &x).unwrap();
    let mut engine =
        PimSpmm::new(sim_set(1, 8, &[]), a, plan(Format::Csr, 4, 2, 1, XDelivery::Referenced, 16)).unwrap();
    let y = engine.spmm(&x).unwrap();
    for (got, want) in y.as_slice().iter().zip(expected.as_slice()) {
        assert!((got - want).abs() <= 1e-3 * want.abs().max(1.0), "{got} vs {want}");
    }
}

#[test]
fn many_dpus_and_the_automatic_plan() {
    let a = random_graph::<f32>(20_000, 8, &[10], 15_000, 6);
    let nr_dpus = 4 * 64 - 3;
    let choice = cost::choose(&HardwareModel::default(), &a, 16, nr_dpus, 16, Target::Hardware).unwrap();
    let pygim = choice.pygim.expect("PyGim's default fits");
    assert!(choice.best.prediction.total() <= pygim.prediction.total());
    assert_eq!(choice.best, choice.fastest, "no memory budget");
    check(sim_set(4, 64, &[1, 100, 200]), &a, choice.best.plan, &[16]);
    let mut engine = PimSpmm::auto(sim_set(4, 64, &[1, 100, 200]), a.clone(), 16, 16).unwrap();
    engine.spmm(&random_dense(a.ncols(), 16, 3)).unwrap();
    println!("{}", engine.report());
}

#[test]
fn bad_input_is_refused_before_launch() {
    let a = random_graph::<i32>(50, 2, &[], 0, 8);
    let mut engine =
        PimSpmm::new(sim_set(1, 4, &[]), a.clone(), plan(Format::Csr, 4, 1, 1, XDelivery::Whole, 16)).unwrap();
    let wrong = Dense::<i32>::zeros(49, 4);
    assert!(matches!(engine.spmm(&wrong), Err(Error::Shape { .. })));
    assert!(engine.last_phases().is_empty(), "nothing ran");
    // SDDMM: P a row short, Q a row short, P and Q of different widths; new values one short.
    let (p, q) = (Dense::<i32>::zeros(50, 4), Dense::<i32>::zeros(50, 4));
    for (p, q) in [(&wrong, &q), (&p, &wrong), (&p, &Dense::zeros(50, 3))] {
        let error = engine.sddmm(p, q).unwrap_err();
        assert!(matches!(&error, Error::Shape { what, .. } if what.starts_with("PIM SDDMM")), "{error}");
    }
    let error = engine.set_values(&vec![1; a.nnz() - 1]).unwrap_err();
    assert!(matches!(error, Error::Shape { .. }), "{error}");
    assert!(engine.last_phases().is_empty(), "nothing ran");

    // A plan wanting more DPUs than the set has.
    let err =
        PimSpmm::new(sim_set(1, 4, &[1]), a.clone(), plan(Format::Csr, 4, 1, 1, XDelivery::Whole, 16)).unwrap_err();
    assert!(err.to_string().contains("limit 3"), "{err}");

    // A graph too large for 1 MiB of MRAM per DPU, and X too wide for what is left.
    let mut config = SimConfig::new(Topology { mram_size: 1 << 20, ..Topology::new(1, 2) });
    config.strict = true;
    let small = || DpuSet::builder().backend(BackendKind::Simulator).simulator(config.clone()).allocate().unwrap();
    let big = random_graph::<i32>(60_000, 10, &[], 0, 9);
    let err = PimSpmm::new(small(), big, plan(Format::Csr, 2, 1, 1, XDelivery::Whole, 16)).unwrap_err();
    assert!(matches!(err, Error::Capacity { .. }) && err.to_string().contains("MRAM"), "{err}");
    let mut engine = PimSpmm::new(small(), a, plan(Format::Csr, 2, 1, 1, XDelivery::Whole, 16)).unwrap();
    let err = engine.spmm(&Dense::<i32>::zeros(50, 4096)).unwrap_err();
    assert!(matches!(err, Error::Capacity { .. }), "{err}");
    let err = engine.sddmm(&Dense::<i32>::zeros(50, 4096), &Dense::<i32>::zeros(50, 4096)).unwrap_err();
    assert!(matches!(err, Error::Capacity { .. }) && err.to_string().contains("SDDMM"), "{err}");
}

#[test]
fn shape_of_the_engine_is_the_matrix() {
    let a = random_graph::<i16>(10, 1, &[], 0, 10);
    let engine = PimSpmm::new(sim_set(1, 2, &[]), a, plan(Format::Coo, 1, 1, 1, XDelivery::Referenced, 2)).unwrap();
    assert_eq!(engine.shape(), (10, 10));
    let _: fn(i16, i16) -> i32 = |a, b| <i16 as Element>::mul_add(0, a, b);
}

#[test]
fn more_dpus_and_tasklets_than_work() {
    let tiny = Csr::new(3, 3, vec![0, 0, 2, 2], vec![2, 0], vec![5i32, -3]).unwrap();
    let empty = Csr::new(4, 4, vec![0; 5], Vec::new(), Vec::<i32>::new()).unwrap();
    for a in [tiny, empty] {
        for format in [Format::Csr, Format::Coo] {
            check(sim_set(1, 8, &[]), &a, plan(format, 8, 1, 1, XDelivery::Referenced, 24), &[3]);
            check(sim_set(1, 8, &[]), &a, plan(format, 2, 2, 2, XDelivery::Whole, 24), &[3]);
        }
    }
}

/// On v1B DPUs (16 hardware threads) the engine loads the kernels' v1B builds and runs plans of up to 16 tasklets,
/// cutting rows between all of them, and refuses a plan of more, naming the chip.
#[test]
fn v1b_dpus_run_up_to_16_tasklets() {
    let v1b_set = || {
        let mut config = SimConfig::new(Topology::new(1, 4).with_chip(upmem::ChipVersion::V1B));
        config.strict = true;
        DpuSet::builder().backend(BackendKind::Simulator).simulator(config).allocate().unwrap()
    };
    let a = random_graph::<i16>(300, 6, &[5], 400, 11);
    for format in [Format::Csr, Format::Coo] {
        check(v1b_set(), &a, plan(format, 4, 1, 1, XDelivery::Referenced, 16), &[70]);
        let error = PimSpmm::new(v1b_set(), a.clone(), plan(format, 4, 1, 1, XDelivery::Referenced, 17)).err();
        let error = error.expect("a plan of 17 tasklets ran on v1B DPUs").to_string();
        assert!(error.contains("17 tasklets: the set's v1B DPUs run at most 16"), "{error}");
    }
}

/// A streamed call hands every row of Y once, by ranges, to its step, with the values `spmm` gives and the same
/// rows of each output: under every plan (rows shared between row blocks included), on a graph large enough for
/// several ranges.
#[test]
fn streamed_calls_hand_every_row_once_with_spmms_values() {
    let a = random_graph::<f32>(700, 3, &[5, 400], 900, 2);
    for plan in every_plan(7, 16) {
        let mut engine = PimSpmm::new(sim_set(1, 8, &[2]), a.clone(), plan).unwrap_or_else(|e| panic!("{plan}: {e}"));
        let x = random_dense::<f32>(a.ncols(), 9, 3);
        let expected = engine.spmm(&x).unwrap();
        let handed = std::sync::Mutex::new(vec![0u32; a.nrows()]);
        let mut outs = [Dense::zeros(a.nrows(), 9), Dense::zeros(a.nrows(), 1)];
        let step = |rows: std::ops::Range<usize>, y: &mut [f32], outs: &mut [&mut [f32]]| {
            handed.lock().unwrap()[rows.clone()].iter_mut().for_each(|count| *count += 1);
            outs[0].copy_from_slice(y);
            outs[1].iter_mut().zip(rows).for_each(|(out, row)| *out = row as f32);
            Ok(())
        };
        let stage = engine.spmm_streamed(&x, &mut outs, &step).unwrap_or_else(|e| panic!("{plan}: {e}"));
        assert!(handed.into_inner().unwrap().iter().all(|&count| count == 1), "{plan}: a row handed twice or never");
        assert_eq!(outs[0], expected, "{plan}");
        assert!(outs[1].as_slice().iter().enumerate().all(|(row, &v)| v == row as f32), "{plan}: rows of outputs");
        assert!(stage.overlapped() && (stage.chunks.len() > 1) == (plan.row_blocks > 1), "{plan}: {stage:?}");
        assert_eq!(stage.chunks.iter().map(|chunk| chunk.rows).sum::<usize>(), a.nrows());
        let names: Vec<&str> = engine.last_phases().iter().map(|phase| phase.name.as_ref()).collect();
        assert_eq!(names, ["send X", "kernel", "gather"], "{plan}");
    }
}

/// A step's error comes back from the streamed call.
#[test]
fn a_failing_step_fails_the_streamed_call() {
    let a = random_graph::<f32>(300, 3, &[], 0, 4);
    let mut engine =
        PimSpmm::new(sim_set(1, 8, &[]), a.clone(), plan(Format::Csr, 4, 1, 1, XDelivery::Whole, 8)).unwrap();
    let x = random_dense::<f32>(300, 4, 5);
    let step = |_: std::ops::Range<usize>, _: &mut [f32], _: &mut [&mut [f32]]| Err(Error::invalid("step", "refused"));
    let error = engine.spmm_streamed(&x, &mut [Dense::zeros(a.nrows(), 1)], &step).unwrap_err();
    assert!(error.to_string().contains("refused"), "{error}");
    let ok = |_: std::ops::Range<usize>, _: &mut [f32], _: &mut [&mut [f32]]| Ok(());
    let mut short = [Dense::zeros(a.nrows(), 1), Dense::zeros(a.nrows() - 1, 1)];
    assert!(matches!(engine.spmm_streamed(&x, &mut short, &ok), Err(Error::Shape { .. })));
}

/// The kernels' reader blocks are aligned to their size as the linker places them: a walk tells that it has used
/// up its block from the low bits of its pointer's WRAM address (spmm_kernel.h's `spmm_read_ended`), so a block
/// aligned to 8 bytes only would give wrong nonzeros.
#[test]
fn the_reader_blocks_of_the_spmm_kernels_are_aligned_to_their_size() {
    for family in ["csr", "coo"] {
        for ty in ["f32", "i32", "i16", "i8"] {
            let name = format!("spmm_{family}_{ty}");
            let kernel = pimgnn::kernel(&name);
            let binary = kernel
                .simulator_binary(upmem::ChipVersion::V1A)
                .unwrap_or_else(|| panic!("{name} was built for the simulator"));
            let program = upmem_sim::Program::from_file(binary).unwrap();
            // Each block and the bytes of its entries.
            let blocks: &[(&str, usize)] = if family == "csr" {
                &[("row_ptr_block", 4), ("column_block", 4), ("value_block", 4)]
            } else {
                &[("index_block", 8), ("value_block", 4)]
            };
            for &(block, entry_bytes) in blocks {
                let bytes = READ_ENTRIES * entry_bytes;
                let symbol = program.symbol(block, 0).unwrap_or_else(|| panic!("{name} has {block}"));
                assert_eq!(symbol.address as usize % bytes, 0, "{name}: {block} at {:#x}", symbol.address);
                assert_eq!(symbol.size as usize, MAX_TASKLETS * bytes, "{name}: {block} is a block per tasklet");
            }
        }
    }
}
