//! The kernel runs of `pimgnn check`: every SpMM kernel (CSR and COO, each value type) under each
//! [`Scenario`], each [`Operation`] of it, and the reduction, each compared with the CPU.

use std::time::{Duration, Instant};

use pimgnn::gnn::{Dtype, DEFAULT_TASKLETS};
use pimgnn::pim::abi::{FEATURE_CHUNK, MAX_TASKLETS};
use pimgnn::pim::cost::HardwareModel;
use pimgnn::pim::plan::{Format, Plan, XDelivery};
use pimgnn::pim::PimSpmm;
use pimgnn::{cpu, AttentionScores, Csr, Dense, Element, SpmmEngine};
use rand::{Rng as _, RngExt as _};
use upmem::{LoadedSet, MRAM_HEAP};

use super::compare::{compare, compare_dense};
use super::inputs::{self, CheckValue, MatrixShape, Values};
use super::report::{Failure, Label, Outcome};
use super::system::Dpus;

/// Features of every SpMM call: more than two of the kernels' chunks (one X read per chunk of
/// [`FEATURE_CHUNK`]) and, padded for any value type or split over two feature groups, a multiple of none.
const FEATURES: usize = 2 * FEATURE_CHUNK + 13;

/// Most nonzeros of the hub row under [`Scenario::InOrder`], where one tasklet sums it whole: a DPU multiplies
/// and adds `f32` in software, and the simulator's timing model predicts 0.64 s on hardware for the CSR `f32`
/// kernel with this hub on one tasklet (16 tasklets over a hub of any length take some 40 ms).
const IN_ORDER_MAX_HUB: usize = 500;

/// 64-bit integers per DPU of the reduction: more than one 2 KiB block per tasklet, the last block partial.
const REDUCE_ELEMENTS: usize = 5_000;
/// Tasklets of the reduction kernel, as `build.rs` builds it.
const REDUCE_TASKLETS: &str = env!("PIMGNN_TASKLETS_REDUCE");

/// What an SpMM run covers beyond its kernel and value type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// Row blocks (one per DPU) and tasklets cut inside rows (the hub row among them), whose partial sums the
    /// kernel merges after its barrier and the host across DPUs; each DPU gets only the X rows its nonzeros
    /// reference.
    CutRows,
    /// 2D tiles (two column blocks) over two feature groups, whole X slices, every tasklet the kernels have.
    Tiles,
    /// Whole rows on one tasklet, X broadcast: values that round, summed in the order the CPU sums them.
    InOrder,
    /// As [`Scenario::CutRows`], `i8` with small values in the matrix, so that the kernels write `Y` in 16 bits,
    /// all but the hub row, whose sums need 32.
    SixteenBitY,
}

impl Scenario {
    /// Every scenario, in the order the table lists them.
    pub const ALL: [Scenario; 4] = [Scenario::CutRows, Scenario::Tiles, Scenario::InOrder, Scenario::SixteenBitY];

    /// The scenario's name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::CutRows => "cut rows",
            Scenario::Tiles => "2D tiles",
            Scenario::InOrder => "in order",
            Scenario::SixteenBitY => "16-bit Y",
        }
    }

    /// What the scenario covers and what it is compared with, for the legend under the table.
    pub fn covers(self) -> &'static str {
        match self {
            Scenario::CutRows => {
                "rows cut between DPUs (the hub row) and between tasklets (partial sums merged on the DPU and on \
                 the host), empty rows, X rows sent as referenced; values whose sums are exact in any order, \
                 compared bit for bit with pimgnn's CPU SpMM"
            }
            Scenario::Tiles => {
                "2 column blocks x 2 feature groups (idle DPUs when the set has more), whole X slices, 24 \
                 tasklets; values exact in any order, compared bit for bit with pimgnn's CPU SpMM"
            }
            Scenario::InOrder => {
                "whole rows on 1 tasklet per DPU, X broadcast: f32 values that round, so the DPU's float \
                 arithmetic (software on hardware) must match the host's (Element::mul_add: each product rounded, \
                 then each sum) bit for bit in the rows' stored order"
            }
            Scenario::SixteenBitY => {
                "as cut rows, i8 only, the matrix's values of magnitude at most 2: the kernels write Y in 16 bits \
                 (forced with a model whose gather is 1,000 times slower, as on a server whose thousands of DPUs \
                 share it), the hub row, whose sums need 32 bits, after them; compared bit for bit with pimgnn's \
                 CPU SpMM"
            }
        }
    }

    /// The shape of the scenario's matrix on `dpus` DPUs.
    fn shape(self, dpus: u32) -> MatrixShape {
        let shape = MatrixShape::for_dpus(dpus as usize);
        match self {
            Scenario::CutRows | Scenario::Tiles | Scenario::SixteenBitY => shape,
            Scenario::InOrder => shape.with_hub_at_most(IN_ORDER_MAX_HUB),
        }
    }

    /// The values the scenario draws for the matrix.
    fn values(self) -> Values {
        match self {
            Scenario::CutRows | Scenario::Tiles => Values::Exact,
            Scenario::InOrder => Values::Rounded,
            Scenario::SixteenBitY => Values::Small,
        }
    }

    /// The values the scenario draws for X (and SDDMM's P).
    fn feature_values(self) -> Values {
        match self {
            Scenario::SixteenBitY => Values::Exact,
            other => other.values(),
        }
    }

    /// The model the engine predicts with, which decides how it takes `Y`.
    fn model(self) -> pimgnn::Result<HardwareModel> {
        let mut model = HardwareModel::configured()?;
        if self == Scenario::SixteenBitY {
            let gather = &mut model.transfers.gather;
            (gather.intercept, gather.per_rank) = (gather.intercept / 1e3, gather.per_rank / 1e3);
        }
        Ok(model)
    }

    /// The plan of `format` the scenario runs on `dpus` DPUs.
    fn plan(self, format: Format, dpus: u32) -> Plan {
        let one_dimensional = |row_blocks, tasklets| Plan {
            format,
            row_blocks,
            split_rows: true,
            col_blocks: 1,
            feature_groups: 1,
            x: XDelivery::Referenced,
            tasklets,
        };
        match self {
            Scenario::CutRows | Scenario::SixteenBitY => one_dimensional(dpus, DEFAULT_TASKLETS),
            Scenario::Tiles => {
                let col_blocks = if dpus >= 2 { 2 } else { 1 };
                let feature_groups = if dpus >= 4 { 2 } else { 1 };
                Plan {
                    row_blocks: (dpus / (col_blocks * feature_groups)).max(1),
                    col_blocks,
                    feature_groups,
                    x: XDelivery::Whole,
                    ..one_dimensional(dpus, MAX_TASKLETS as u32)
                }
            }
            Scenario::InOrder => Plan { split_rows: false, x: XDelivery::Whole, ..one_dimensional(dpus, 1) },
        }
    }

    /// What the scenario's result must equal: pimgnn's CPU SpMM, or for [`Scenario::InOrder`] each row's
    /// products summed in stored order with [`Element::mul_add`] (the CPU SpMM's order, but its AVX-512 `f32`
    /// kernel fuses each multiply and add, which the DPU kernels do not).
    fn expected<T: CheckValue>(self, a: &Csr<T>, x: &Dense<T>) -> pimgnn::Result<Dense<T::Acc>> {
        match self {
            Scenario::CutRows | Scenario::Tiles | Scenario::SixteenBitY => cpu::spmm(a, x),
            Scenario::InOrder => Ok(in_stored_order(a, x)),
        }
    }
}

/// `Y = A X`, each output the sum of its row's products in the order the row stores its nonzeros, from zero,
/// with [`Element::mul_add`].
fn in_stored_order<T: Element>(a: &Csr<T>, x: &Dense<T>) -> Dense<T::Acc> {
    let mut y = Dense::zeros(a.nrows(), x.cols());
    for row in 0..a.nrows() {
        let (columns, values) = a.row(row);
        let out = y.row_mut(row);
        for (&column, &value) in columns.iter().zip(values) {
            for (sum, &feature) in out.iter_mut().zip(x.row(column as usize)) {
                *sum = T::mul_add(*sum, value, feature);
            }
        }
    }
    y
}

/// What a run asks of the kernel once the matrix is loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// `Y = A X`.
    Spmm,
    /// New values for `A`'s structure (attention's, sent alone), then `Y = A X` with them.
    NewValues,
    /// SDDMM over `A`'s structure: `<P_i, X_j>` per nonzero, compared with pimgnn's CPU SDDMM (features summed in
    /// order, as the kernels sum them).
    Sddmm,
    /// Values per head ([`HEADS`] heads of X's columns, each with values of its own, sent alone): attention's
    /// heads in one call, compared with pimgnn's CPU SpMM per head.
    HeadValues,
    /// Attention weights computed by the kernels from random scores (`f32`, [`HEADS`] heads), compared with the
    /// same weights computed on the host; run where the rows' sums keep their stored order
    /// ([`Scenario::InOrder`]), as the weights are fractions.
    Attention,
}

/// Heads of the per-head operations: X's [`FEATURES`] columns in heads of 47, whose rows are not whole 8-byte
/// units of any value type (the engine pads them).
const HEADS: usize = 3;

impl Operation {
    /// Every operation, in the order the table lists them.
    pub const ALL: [Operation; 5] =
        [Operation::Spmm, Operation::NewValues, Operation::Sddmm, Operation::HeadValues, Operation::Attention];

    /// Whether a check runs this operation with `dtype` under `scenario`.
    fn runs(self, dtype: Dtype, scenario: Scenario) -> bool {
        match scenario {
            Scenario::SixteenBitY => dtype == Dtype::I8 && self == Operation::Spmm,
            _ => self != Operation::Attention || (dtype == Dtype::F32 && scenario == Scenario::InOrder),
        }
    }

    /// How the table's case column names a scenario run with this operation.
    fn case(self, scenario: Scenario) -> String {
        match self {
            Operation::Spmm => scenario.name().to_owned(),
            Operation::NewValues => format!("{}, new values", scenario.name()),
            Operation::Sddmm => format!("{}, SDDMM", scenario.name()),
            Operation::HeadValues => format!("{}, {HEADS} heads", scenario.name()),
            Operation::Attention => format!("{}, attention weights", scenario.name()),
        }
    }
}

/// An SpMM kernel run: kernel family, value type, scenario and operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpmmCase {
    /// The kernel family.
    pub format: Format,
    /// The value type.
    pub dtype: Dtype,
    /// What it covers.
    pub scenario: Scenario,
    /// What it computes.
    pub operation: Operation,
}

/// Every SpMM kernel run of a check: each family and value type under each scenario, with each operation.
pub fn spmm_cases() -> Vec<SpmmCase> {
    let mut cases = Vec::new();
    for format in [Format::Csr, Format::Coo] {
        for dtype in [Dtype::F32, Dtype::I32, Dtype::I16, Dtype::I8] {
            for scenario in Scenario::ALL {
                let operations = Operation::ALL.into_iter().filter(|operation| operation.runs(dtype, scenario));
                cases.extend(operations.map(|operation| SpmmCase { format, dtype, scenario, operation }));
            }
        }
    }
    cases
}

impl SpmmCase {
    /// The kernel's name, as `build.rs` builds it.
    pub fn kernel(&self) -> String {
        format!("spmm_{}_{}", self.format, self.dtype)
    }

    /// Runs the case on `dpus` DPUs (allocated from `sets`) with inputs drawn from `seed`.
    pub fn run(&self, sets: &Dpus, dpus: u32, seed: u64) -> Outcome {
        match self.dtype {
            Dtype::F32 => self.run_typed::<f32>(sets, dpus, seed),
            Dtype::I32 => self.run_typed::<i32>(sets, dpus, seed),
            Dtype::I16 => self.run_typed::<i16>(sets, dpus, seed),
            Dtype::I8 => self.run_typed::<i8>(sets, dpus, seed),
        }
    }

    fn run_typed<T: CheckValue>(&self, sets: &Dpus, dpus: u32, seed: u64) -> Outcome {
        let mut rng = inputs::rng(seed);
        let values = self.scenario.values();
        let a = inputs::matrix::<T>(self.scenario.shape(dpus), values, &mut rng);
        let x = inputs::dense::<T>(a.ncols(), FEATURES, self.scenario.feature_values(), &mut rng);
        let plan = self.scenario.plan(self.format, dpus);
        let used = plan.dpus_used() as u32;
        let label = Label {
            kernel: self.kernel(),
            dtype: T::NAME,
            case: self.operation.case(self.scenario),
            dpus: if used == dpus { dpus.to_string() } else { format!("{used} of {dpus}") },
            tasklets: plan.tasklets.to_string(),
            shape: format!("A {} x {}, {} nonzeros; X {} x {FEATURES}", a.nrows(), a.ncols(), a.nnz(), x.rows()),
            detail: format!("plan {plan}"),
        };
        match self.operation {
            Operation::Spmm | Operation::NewValues => {
                let revalued = match self.operation {
                    Operation::NewValues => Some(a.map_values(|_| T::draw(&mut rng, values))),
                    _ => None,
                };
                let expected = match self.scenario.expected(revalued.as_ref().unwrap_or(&a), &x) {
                    Ok(expected) => expected,
                    Err(error) => return Outcome::failed(label, format!("the CPU reference: {error}"), Duration::ZERO),
                };
                let started = Instant::now();
                let sixteen_bits = self.scenario == Scenario::SixteenBitY;
                let result = sets.allocate().map_err(pimgnn::Error::from).and_then(|set| {
                    let mut engine = PimSpmm::with_model(set, a, plan, self.scenario.model()?)?;
                    if let Some(revalued) = &revalued {
                        engine.set_values(revalued.values())?;
                    }
                    Ok((engine.y_in_16_bits(FEATURES), engine.spmm(&x)?))
                });
                let result = match result {
                    Ok((false, _)) if sixteen_bits => Err(pimgnn::Error::invalid(
                        format!("plan {plan}"),
                        "the engine takes Y in 32 bits where the scenario needs 16",
                    )),
                    other => other.map(|(_, y)| y),
                };
                let wall = started.elapsed();
                match result {
                    Ok(y) => Outcome { label, verdict: compare_dense(&y, &expected).map_err(Failure::Differs), wall },
                    Err(error) => Outcome::failed(label, error.to_string(), wall),
                }
            }
            Operation::HeadValues | Operation::Attention => {
                let (head_values, scores) = if self.operation == Operation::HeadValues {
                    ((0..a.nnz() * HEADS).map(|_| T::draw(&mut rng, values)).collect(), None)
                } else {
                    let mut draw = |n: usize| (0..n).map(|_| rng.random_range(-4.0f32..4.0)).collect::<Vec<f32>>();
                    let (source, target) = (draw(a.ncols() * HEADS), draw(a.nrows() * HEADS));
                    let scores = match AttentionScores::new(&a, &source, &target, HEADS, 0.2) {
                        Ok(scores) => scores,
                        Err(error) => return Outcome::failed(label, format!("the scores: {error}"), Duration::ZERO),
                    };
                    let weights = scores.weights(&a).ok().and_then(T::from_weights).unwrap_or_default();
                    (weights, Some(scores))
                };
                let expected = match cpu::spmm_heads(&a, &head_values, HEADS, &x) {
                    Ok(expected) => expected,
                    Err(error) => return Outcome::failed(label, format!("the CPU reference: {error}"), Duration::ZERO),
                };
                let started = Instant::now();
                let result = sets.allocate().map_err(pimgnn::Error::from).and_then(|set| {
                    let mut engine = PimSpmm::new(set, a, plan)?;
                    match &scores {
                        Some(scores) => engine.set_attention(scores)?,
                        None => engine.set_head_values(&head_values, HEADS)?,
                    }
                    engine.spmm(&x)
                });
                let wall = started.elapsed();
                match result {
                    Ok(y) => Outcome { label, verdict: compare_dense(&y, &expected).map_err(Failure::Differs), wall },
                    Err(error) => Outcome::failed(label, error.to_string(), wall),
                }
            }
            Operation::Sddmm => {
                let p = inputs::dense::<T>(a.nrows(), FEATURES, self.scenario.feature_values(), &mut rng);
                let expected = match cpu::sddmm(&a, &p, &x) {
                    Ok(expected) => expected,
                    Err(error) => return Outcome::failed(label, format!("the CPU reference: {error}"), Duration::ZERO),
                };
                let started = Instant::now();
                let result = sets.allocate().map_err(pimgnn::Error::from).and_then(|set| {
                    let mut engine = PimSpmm::new(set, a, plan)?;
                    engine.sddmm(&p, &x)
                });
                let wall = started.elapsed();
                match result {
                    Ok(scores) => {
                        let verdict = compare(&scores, &expected, |k| format!("nonzero {k}")).map_err(Failure::Differs);
                        Outcome { label, verdict, wall }
                    }
                    Err(error) => Outcome::failed(label, error.to_string(), wall),
                }
            }
        }
    }
}

/// The reduction (`dpu/reduce.c`) on `set`, loaded with it: each DPU sums its own [`REDUCE_ELEMENTS`] random
/// 64-bit integers (wrapping), compared with the CPU's sum DPU by DPU.
pub fn run_reduce(set: &mut LoadedSet, seed: u64) -> Outcome {
    let mut rng = inputs::rng(seed);
    let inputs: Vec<Vec<u64>> =
        (0..set.nr_dpus()).map(|_| (0..REDUCE_ELEMENTS).map(|_| rng.next_u64()).collect()).collect();
    let expected: Vec<u64> = inputs.iter().map(|dpu| dpu.iter().fold(0u64, |sum, &v| sum.wrapping_add(v))).collect();
    let label = Label {
        kernel: "reduce".into(),
        dtype: "u64",
        case: "sum".to_owned(),
        dpus: set.nr_dpus().to_string(),
        tasklets: REDUCE_TASKLETS.into(),
        shape: format!("{REDUCE_ELEMENTS} per DPU"),
        detail: "each DPU's sum of its own integers, streamed through WRAM in 2 KiB DMA blocks".into(),
    };
    let started = Instant::now();
    let result = (|| -> upmem::Result<Vec<u64>> {
        set.broadcast("nr_elements", 0, &[REDUCE_ELEMENTS as u32])?;
        set.push(MRAM_HEAP, 0, &inputs)?;
        set.launch()?;
        Ok(set.gather::<u64>("sum", 0, 1)?.into_iter().map(|sum| sum[0]).collect())
    })();
    let wall = started.elapsed();
    match result {
        Ok(sums) => Outcome {
            label,
            verdict: compare(&sums, &expected, |dpu| format!("sum of DPU {dpu}")).map_err(Failure::Differs),
            wall,
        },
        Err(error) => Outcome::failed(label, error.to_string(), wall),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every plan fits the DPUs it is given, from one DPU to a full server.
    #[test]
    fn every_plan_fits_its_dpus() {
        for dpus in [1, 2, 3, 4, 9, 2560] {
            for scenario in Scenario::ALL {
                let plan = scenario.plan(Format::Csr, dpus);
                assert!(plan.check(dpus as usize).is_ok(), "{dpus} DPUs: {plan}");
            }
        }
    }

    #[test]
    fn in_stored_order_sums_each_row_from_its_first_nonzero() {
        // Row 0: 1e8 * 1 + 1 * 1 - 1e8 * 1 = 0 in this order (1e8 + 1 rounds to 1e8), 1 in exact arithmetic.
        let a = Csr::new(2, 2, vec![0, 3, 3], vec![0, 1, 0], vec![1e8f32, 1.0, -1e8]).unwrap();
        let x = Dense::from_vec(2, 1, vec![1.0f32, 1.0]).unwrap();
        assert_eq!(in_stored_order(&a, &x).as_slice(), [0.0, 0.0]);
    }
}
