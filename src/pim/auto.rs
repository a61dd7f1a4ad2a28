//! `--backend auto`: the host CPU, PIM, or both at once, whichever the model predicts fastest for this matrix
//! and these call widths.
//!
//! The PIM side is the cost model's prediction for the modelled server ([`HardwareModel`]). The CPU side is
//! measured here: [`cpu_time`] times this host's SpMM on a sample of the matrix's rows (evenly spaced blocks,
//! every column, so `X` is as large as in the real call and its rows are fetched as sparsely) and scales it by
//! the nonzeros; a measurement is kept for the process, so an engine rebuilt for the same matrix does not
//! pay for it again. The split gives each side a share of the nonzeros in proportion to its throughput, so
//! both would finish together, cuts the rows there, and predicts the DPUs' part by planning it afresh: its
//! predicted time is the later of the two sides'. The DPUs' time is not proportional to their rows (sending `X`
//! and launching cost the same for fewer rows), so the cut is made again with the throughput the DPUs' part was
//! planned at, up to [`SPLIT_REBALANCES`] times, and the fastest of the cuts is kept. That assumes the host
//! cores running the CPU rows do not slow the transfers of the PIM part down; on a server whose transfers are
//! host-bound they share memory bandwidth, which the split's prediction does not model.

use std::collections::HashMap;
use std::fmt;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::ops::Range;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::cpu;
use crate::error::Result;
use crate::pim::cost::{self, HardwareModel, Target};
use crate::sparse::{Csr, Dense, Element};

use super::PimElement;

/// Nonzeros of the sample the CPU is timed on: about a millisecond per feature column on a two-core host, so
/// timing a three-layer model's widths stays well under a second, while a sample this large spans every
/// cache level the matrix's rows of `X` go through.
pub const CPU_SAMPLE_NONZEROS: usize = 1 << 20;

/// Blocks the sample's rows come in, evenly spaced over the matrix, so that a graph whose rows change along
/// the order (generators, degree-sorted files) is sampled along all of it.
const SAMPLE_BLOCKS: usize = 16;

/// Timed runs per width, after one untimed run: the fastest is kept (the others met interference).
const TIMED_RUNS: usize = 3;

/// The CPU time of one matrix's calls, as measured on a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuTime {
    /// The calls' time over the whole matrix: the sample's, scaled by nonzeros.
    pub predicted: Duration,
    /// Nonzeros timed.
    pub sample_nonzeros: usize,
    /// Host threads it ran on.
    pub threads: usize,
}

/// What the process has measured: per matrix (a hash of its sampled structure), value type, width and threads.
type MeasuredKey = (u64, &'static str, usize, usize);
static MEASURED: Mutex<Option<HashMap<MeasuredKey, Duration>>> = Mutex::new(None);

/// Rows of `a` in [`SAMPLE_BLOCKS`] evenly spaced blocks holding about [`CPU_SAMPLE_NONZEROS`] nonzeros in all;
/// every row when `a` holds no more than that.
fn sample_rows<T: Element>(a: &Csr<T>) -> Vec<Range<usize>> {
    let (rows, nnz) = (a.nrows(), a.nnz());
    if nnz <= CPU_SAMPLE_NONZEROS {
        return std::iter::once(0..rows).collect();
    }
    let rows_per_block = (rows as u128 * CPU_SAMPLE_NONZEROS as u128 / nnz as u128 / SAMPLE_BLOCKS as u128) as usize;
    let rows_per_block = rows_per_block.max(1);
    (0..SAMPLE_BLOCKS)
        .map(|block| {
            let start = block * rows / SAMPLE_BLOCKS;
            start..(start + rows_per_block).min(rows)
        })
        .collect()
}

/// The CPU's time for calls of `widths` on `a` with every host thread, measured on a sample of `a` (see the
/// module documentation) or taken from an earlier measurement of the same sample in this process.
pub fn cpu_time<T: Element>(a: &Csr<T>, widths: &[usize]) -> Result<CpuTime> {
    let sample = a.row_blocks(&sample_rows(a));
    let threads = rayon::current_num_threads();
    let scale = if sample.nnz() == 0 { 0.0 } else { a.nnz() as f64 / sample.nnz() as f64 };
    let fingerprint = {
        let mut hasher = DefaultHasher::new();
        (a.nrows(), a.ncols(), a.nnz(), sample.row_ptr(), sample.col_idx()).hash(&mut hasher);
        hasher.finish()
    };
    let mut predicted = Duration::ZERO;
    for &width in widths {
        let key = (fingerprint, T::NAME, width, threads);
        let known = MEASURED.lock().unwrap_or_else(PoisonError::into_inner).as_ref().and_then(|m| m.get(&key).copied());
        let time = match known {
            Some(time) => time,
            None => {
                let time = time_sample(&sample, width)?;
                MEASURED
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert_with(HashMap::new)
                    .insert(key, time);
                time
            }
        };
        predicted += time.mul_f64(scale);
    }
    Ok(CpuTime { predicted, sample_nonzeros: sample.nnz(), threads })
}

/// The fastest of [`TIMED_RUNS`] SpMMs of `sample` at `width`, after an untimed one, each making its `Y` as the
/// CPU engine's calls do. `X` holds the matrix's own values, so every page of it is real memory (a zeroed
/// allocation would read one shared zero page).
fn time_sample<T: Element>(sample: &Csr<T>, width: usize) -> Result<Duration> {
    if sample.nnz() == 0 || width == 0 {
        return Ok(Duration::ZERO);
    }
    let values = sample.values();
    let x: Vec<T> = (0..sample.ncols() * width).map(|at| values[at % values.len()]).collect();
    let x = Dense::from_vec(sample.ncols(), width, x)?;
    cpu::spmm(sample, &x)?;
    let mut fastest = Duration::MAX;
    for _ in 0..TIMED_RUNS {
        let started = Instant::now();
        let y = cpu::spmm(sample, &x)?;
        fastest = fastest.min(started.elapsed());
        drop(y);
    }
    Ok(fastest)
}

/// Where `auto` runs a matrix's aggregation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// On the host CPU.
    Cpu,
    /// On the DPUs.
    Pim,
    /// Rows `..pim_rows` on the DPUs and the rest on the host CPU, at the same time.
    Split {
        /// Rows on the DPUs, from the first.
        pim_rows: usize,
    },
}

/// A split of the rows between the DPUs and the host, with its prediction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitPrediction {
    /// Rows on the DPUs, from the first.
    pub pim_rows: usize,
    /// The DPUs' share of the nonzeros.
    pub pim_share: f64,
    /// The DPUs' part, planned for those rows.
    pub pim: Duration,
    /// The host's part, by its share of the nonzeros.
    pub cpu: Duration,
}

impl SplitPrediction {
    /// The later of the two parts, which run at once.
    pub fn total(&self) -> Duration {
        self.pim.max(self.cpu)
    }
}

/// `auto`'s choice and the predictions it rests on, over all the calls of the widths it was made for.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// What runs fastest by these predictions.
    pub pick: Pick,
    /// The host CPU, as measured here.
    pub cpu: CpuTime,
    /// The DPUs alone: the fastest plan's prediction on the modelled server.
    pub pim: Duration,
    /// Both at once, unless one side would get no rows.
    pub split: Option<SplitPrediction>,
    /// DPUs the PIM predictions are for.
    pub nr_dpus: u32,
    /// Where the model's transfer figures come from.
    pub transfers: String,
}

impl Decision {
    /// The picked backend's predicted time.
    pub fn predicted(&self) -> Duration {
        match (self.pick, self.split) {
            (Pick::Cpu, _) => self.cpu.predicted,
            (Pick::Split { .. }, Some(split)) => split.total(),
            _ => self.pim,
        }
    }

    /// The pick in a word: `cpu`, `pim` or `split`.
    pub fn pick_name(&self) -> &'static str {
        match self.pick {
            Pick::Cpu => "cpu",
            Pick::Pim => "pim",
            Pick::Split { .. } => "split",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |time: Duration| time.as_secs_f64() * 1e3;
        write!(
            f,
            "{}: CPU {:.3} ms (measured here on {} threads, sample of {} nonzeros), PIM {:.3} ms (predicted on {} \
             DPUs, transfers as measured with {})",
            self.pick_name(),
            ms(self.cpu.predicted),
            self.cpu.threads,
            self.cpu.sample_nonzeros,
            ms(self.pim),
            self.nr_dpus,
            self.transfers
        )?;
        match &self.split {
            Some(split) => write!(
                f,
                ", split {:.3} ms ({} rows, {:.0}% of the nonzeros, on the DPUs: {:.3} ms beside the CPU's {:.3} ms)",
                ms(split.total()),
                split.pim_rows,
                split.pim_share * 1e2,
                ms(split.pim),
                ms(split.cpu)
            ),
            None => f.write_str(", no split (one side would get no rows)"),
        }
    }
}

/// Decides where calls of `widths` on `a` run fastest: the CPU as measured here, or `nr_dpus` DPUs of `model`
/// (the fastest plan for hardware, whatever the simulator would run), or a split of the rows between them.
pub fn decide<T: PimElement>(
    model: &HardwareModel,
    a: &Csr<T>,
    widths: &[usize],
    nr_dpus: u32,
    tasklets: u32,
) -> Result<Decision> {
    let cpu = cpu_time(a, widths)?;
    let pim_time = |rows: &Csr<T>| -> Result<Duration> {
        let choice = cost::choose_for_calls(model, rows, widths, nr_dpus, tasklets, Target::Hardware)?;
        Ok(choice.fastest.prediction.total())
    };
    let pim = pim_time(a)?;
    let split = balance_split(a, cpu.predicted, pim, |pim_rows| pim_time(&a.row_range(0..pim_rows)))?;
    let mut pick = if cpu.predicted <= pim { Pick::Cpu } else { Pick::Pim };
    let best_alone = cpu.predicted.min(pim);
    if let Some(split) = split.filter(|split| split.total() < best_alone) {
        pick = Pick::Split { pim_rows: split.pim_rows };
    }
    Ok(Decision { pick, cpu, pim, split, nr_dpus, transfers: model.transfers.source.clone() })
}

/// How many times the split is cut again after the first cut, with the DPUs' throughput as planned for their
/// part; each cut plans the DPUs' part once more. Three bring a part whose fixed costs are half its time to
/// within 5% of the balance (the tests' case).
pub const SPLIT_REBALANCES: usize = 3;

/// The fastest of the cuts of `a`'s rows between the DPUs (`pim_time` predicts their part for its first rows)
/// and the CPU (`cpu` for the whole matrix, `pim` the DPUs' for the whole matrix): first in proportion to the
/// throughputs on the whole matrix, then [`SPLIT_REBALANCES`] times with the DPUs' throughput on their last
/// part. `None` when every cut would leave a side without rows.
fn balance_split<T: Element>(
    a: &Csr<T>,
    cpu: Duration,
    pim: Duration,
    mut pim_time: impl FnMut(usize) -> Result<Duration>,
) -> Result<Option<SplitPrediction>> {
    let mut best: Option<SplitPrediction> = None;
    // The DPUs' time for the whole matrix at the throughput last seen.
    let mut pim_whole = pim.as_secs_f64();
    let mut last_rows = None;
    for _ in 0..=SPLIT_REBALANCES {
        let Some((pim_rows, pim_share)) = cut_rows(a, throughput_share(cpu.as_secs_f64(), pim_whole)) else {
            break;
        };
        if last_rows == Some(pim_rows) {
            break;
        }
        let part = pim_time(pim_rows)?;
        let split = SplitPrediction { pim_rows, pim_share, pim: part, cpu: cpu.mul_f64(1.0 - pim_share) };
        if best.is_none_or(|best| split.total() < best.total()) {
            best = Some(split);
        }
        pim_whole = part.as_secs_f64() / pim_share;
        last_rows = Some(pim_rows);
    }
    Ok(best)
}

/// The DPUs' share of the two sides' throughputs (1 / time for the whole matrix): `cpu / (cpu + pim)`; 0 when
/// either time is not positive.
fn throughput_share(cpu: f64, pim: f64) -> f64 {
    if cpu > 0.0 && pim > 0.0 {
        cpu / (cpu + pim)
    } else {
        0.0
    }
}

/// Where to cut `a`'s rows so that the DPUs get `pim_share` of the nonzeros, and the share as cut: `None` when
/// either side would get no rows.
fn cut_rows<T: Element>(a: &Csr<T>, pim_share: f64) -> Option<(usize, f64)> {
    if a.nnz() == 0 {
        return None;
    }
    let target = (a.nnz() as f64 * pim_share).round() as u32;
    let pim_rows = a.row_ptr().partition_point(|&end| end < target).min(a.nrows());
    let share = f64::from(a.row_ptr()[pim_rows]) / a.nnz() as f64;
    (pim_rows > 0 && pim_rows < a.nrows() && share > 0.0 && share < 1.0).then_some((pim_rows, share))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rows` rows of `per_row` nonzeros each over 1,000 columns.
    fn uniform(rows: usize, per_row: usize) -> Csr<f32> {
        let row_ptr = (0..=rows).map(|r| (r * per_row) as u32).collect();
        let col_idx = (0..rows * per_row).map(|at| ((at * 7919) % 1000) as u32).collect();
        Csr::new(rows, 1000, row_ptr, col_idx, vec![1.0; rows * per_row]).unwrap()
    }

    #[test]
    fn the_sample_is_every_row_of_a_small_matrix_and_spaced_blocks_of_a_large_one() {
        assert_eq!(sample_rows(&uniform(100, 4)), std::iter::once(0..100).collect::<Vec<_>>());
        let large = uniform(1 << 16, 64);
        let blocks = sample_rows(&large);
        assert_eq!(blocks.len(), SAMPLE_BLOCKS);
        assert_eq!(blocks[1], 4096..5120);
        let sampled: usize = blocks.iter().map(|rows| rows.len() * 64).sum();
        assert_eq!(sampled, CPU_SAMPLE_NONZEROS);
    }

    /// The cut gives the DPUs the faster side's larger share: three times the CPU's throughput, three quarters
    /// of the nonzeros; none when one side's time is zero or the share leaves a side without rows.
    #[test]
    fn the_cut_follows_the_throughputs() {
        let a = uniform(400, 5);
        assert_eq!(cut_rows(&a, throughput_share(30.0, 10.0)), Some((300, 0.75)));
        assert_eq!(cut_rows(&a, throughput_share(10.0, 10.0)), Some((200, 0.5)));
        assert_eq!(cut_rows(&a, throughput_share(0.0, 10.0)), None);
        assert_eq!(cut_rows(&a, throughput_share(1.0, 100_000.0)), None);
    }

    /// DPUs whose part costs 50 ms whatever its size plus 50 ms per whole matrix, beside a CPU taking 100 ms:
    /// the first cut (half each) predicts 75 ms, the balance is a third on the DPUs at 66.7 ms, and the
    /// rebalanced cuts come within 2% of it.
    #[test]
    fn the_split_is_rebalanced_for_the_dpus_fixed_costs() {
        let a = uniform(400, 5);
        let ms = |ms: f64| Duration::from_secs_f64(ms / 1e3);
        let mut planned = Vec::new();
        let split = balance_split(&a, ms(100.0), ms(100.0), |rows| {
            planned.push(rows);
            Ok(ms(50.0 + 50.0 * rows as f64 / 400.0))
        });
        let split = split.unwrap().expect("a split");
        assert_eq!(planned.len(), SPLIT_REBALANCES + 1, "{planned:?}");
        assert_eq!(planned[0], 200);
        assert!(split.total() < ms(66.7 * 1.02), "{split:?}");
        assert!((split.pim_share - 1.0 / 3.0).abs() < 0.02, "{split:?}");
    }

    #[test]
    fn a_measurement_is_kept_for_the_same_matrix_and_width() {
        let a = uniform(2000, 8);
        let first = cpu_time(&a, &[16]).unwrap();
        assert_eq!(first.sample_nonzeros, a.nnz());
        assert!(first.predicted > Duration::ZERO);
        assert_eq!(cpu_time(&a, &[16]).unwrap(), first, "measured again instead of reused");
        let both = cpu_time(&a, &[16, 16]).unwrap();
        assert_eq!(both.predicted, first.predicted * 2);
    }

    #[test]
    fn the_decision_picks_the_fastest_prediction_and_says_why() {
        let a = uniform(4000, 8);
        let decision = decide(&HardwareModel::default(), &a, &[16, 32], 64, 16).unwrap();
        let alone = decision.cpu.predicted.min(decision.pim);
        assert!(decision.predicted() <= alone, "{decision}");
        if let Some(split) = decision.split {
            assert_eq!(matches!(decision.pick, Pick::Split { .. }), split.total() < alone, "{decision}");
        }
        let line = decision.to_string();
        assert!(line.starts_with(decision.pick_name()) && line.contains("measured here on"), "{line}");
    }
}
