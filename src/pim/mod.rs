//! SpMM on UPMEM DPUs: `A` is cut by a [`Plan`], loaded once and kept on the DPUs; each call sends only `X`,
//! launches the CSR or COO kernel (`dpu/spmm_csr.c`, `dpu/spmm_coo.c`), reads `Y` back and merges it on all
//! host cores. Quantized `i8` calls read `Y` in 16 bits, all but the rows whose sums may not fit
//! ([`PimSpmm::y_in_16_bits`]). New values for the same structure ([`SpmmEngine::set_values`], attention's) go to the DPUs as
//! one parallel write of their values region; the structure stays where it is. Attention heads go in one call
//! ([`SpmmEngine::set_head_values`]: each head's values a value set, each DPU's feature group given only its
//! heads' sets), or the kernels compute the heads' weights themselves from per-node scores
//! ([`SpmmEngine::set_attention`], f32: [`crate::attention`]). SDDMM ([`PimSpmm::sddmm`],
//! `<P_i, Q_j>` for every nonzero) runs the same kernels in their SDDMM mode over the same resident blocks. A streamed call ([`SpmmEngine::spmm_streamed`]) merges `Y` by ranges of row blocks and hands each
//! range to the caller's step as soon as it is merged, while the other ranges are still being merged.
//!
//! ```no_run
//! # fn main() -> pimgnn::Result<()> {
//! use pimgnn::pim::PimSpmm;
//! use pimgnn::{Csr, Dense, SpmmEngine};
//! use upmem::DpuSet;
//!
//! let a = Csr::new(2, 2, vec![0, 1, 2], vec![1, 0], vec![1.0f32, 2.0])?;
//! let set = DpuSet::builder().dpus(64).allocate()?;
//! let mut engine = PimSpmm::auto(set, a, 16, 16)?; // plan chosen by the cost model for 16 features
//! let y = engine.spmm(&Dense::from_vec(2, 16, vec![1.0; 32])?)?;
//! println!("{}", engine.report());
//! # Ok(()) }
//! ```
//!
//! Every budget is checked on the host before anything runs: the plan against the set's DPUs, the matrix and
//! each call's X, partial rows and Y against the MRAM heap (a [`crate::Error::Capacity`] naming the limit).
//! WRAM use is fixed at build time (`dpu/spmm_kernel.h`: a 256-byte row of sums and a 512-byte batch buffer,
//! SDDMM's 136 bytes of results, 24 bytes of attention scores, 8 bytes of the wide-row list and the sequential
//! readers' caches per tasklet, the f32 kernels' 2 KiB table of powers of two, 24 stacks of
//! `STACK_SIZE_DEFAULT`), so a kernel that loads fits.

pub mod abi;
pub mod auto;
mod coexec;
pub mod cost;
mod element;
mod heads;
pub(crate) mod partition;
pub(crate) mod placement;
pub mod plan;
mod report;
mod sddmm;
mod tasklets;

use std::marker::PhantomData;
use std::ops::Range;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use upmem::{BackendKind, DpuSet, LoadedSet, MRAM_HEAP};

pub use coexec::SplitSpmm;
pub use element::{NarrowY, PimElement};
pub use report::{LoadBalance, PimReport, SimulatedWork};

use crate::attention::AttentionScores;
use crate::error::{Error, Result};
use crate::sparse::{Csr, Dense};
use crate::spmm::{
    check_streamed_outputs, rows_of_outputs, step_whole, CallShape, Chunk, Phase, RowStep, SpmmEngine, StreamedStage,
};
use abi::{AttentionColumn, AttentionRow, CallArgs, MatrixArgs, TaskletWork};
use cost::{HardwareModel, Prediction, Target};
use heads::ValueSets;
use partition::{Image, NonzeroIds, Partition, Tile, TileStats, XRows};
use plan::{Plan, XDelivery};

/// The least of [`simulator_mram_budget`]: what a run of the default workload stays within.
pub const SIMULATOR_MIN_MRAM_BUDGET: u64 = 2 << 30;

/// Bytes all simulated DPUs' MRAM and the host's copy of their gathered results may hold together when a plan is
/// chosen automatically: the simulator keeps every DPU's MRAM in host memory (a broadcast X once: its pages are
/// shared copy-on-write). Half the host's physical memory, leaving the other half to the host's own copies of
/// the graph, the features and the layers' outputs, and at least
/// [`SIMULATOR_MIN_MRAM_BUDGET`] (also when the system does not say how much it has): a full-size graph such as
/// Reddit's needs more than 2 GiB of MRAM under any plan.
pub fn simulator_mram_budget() -> u64 {
    crate::host_memory::physical_bytes()
        .map_or(SIMULATOR_MIN_MRAM_BUDGET, |bytes| (bytes / 2).max(SIMULATOR_MIN_MRAM_BUDGET))
}

/// What an automatic plan choice weighs on `backend`: on hardware the predicted time alone; on the simulator
/// also [`simulator_mram_budget`] and the time to simulate the plan ([`Target::Simulator`]).
pub fn plan_target(backend: BackendKind) -> Target {
    match backend {
        BackendKind::Hardware => Target::Hardware,
        _ => Target::simulator(simulator_mram_budget()),
    }
}

/// Fewest rows a streamed call hands on at once (unless Y has fewer): enough for an efficient GEMM, and more
/// than the `gemm` crate's small-matrix sizes, whose blocking differs, so that a product over the ranges
/// sums every element in the same order as one product over all rows.
const MIN_CHUNK_ROWS: usize = 128;

/// A call whose Y blocks are on the host, waiting to be merged.
struct Call {
    features: usize,
    padded: usize,
    predicted: Prediction,
    x_per_nonzero: bool,
}

/// What stays on the host of a tile once its block of `A` is on the DPUs.
#[derive(Debug)]
struct ResidentTile {
    rows: Range<usize>,
    x_rows: XRows,
    stats: TileStats,
    nonzero_ids: NonzeroIds,
    /// Each working tasklet's nonzeros (DPU-local), in tasklet order.
    tasklet_nonzeros: Vec<Range<usize>>,
    /// Local rows whose sums may not fit 16 bits, ascending: in a call that takes `Y` in 16 bits, the `k`-th
    /// comes back in accumulators after every row's 16 bits.
    wide_rows: Vec<u32>,
    /// Each nonzero's global row of `X`, in the tile's order, for calls that send `X` per nonzero (types with
    /// [`PimElement::X_PER_NONZERO`]; else empty).
    nonzero_x_rows: Vec<u32>,
}

/// How the last call's `Y` blocks came back.
#[derive(Clone, Copy)]
enum YLayout<A> {
    /// Every row in accumulators ([`PimSpmm`]'s `y_buffers`).
    Full,
    /// Every row in 16 bits (`y16_buffers`), a tile's wide rows' 16 bits unused, and from `wide_at` (in 16-bit
    /// units) the wide rows' accumulators as pairs of 16-bit halves, low first.
    Narrow { wide_at: usize, widen: fn(i32) -> A },
}

/// The PIM SpMM engine; see the [module documentation](self).
pub struct PimSpmm<T: PimElement> {
    set: LoadedSet,
    plan: Plan,
    model: HardwareModel,
    nrows: usize,
    ncols: usize,
    nnz: usize,
    partition: Partition,
    tiles: Vec<ResidentTile>,
    /// Bytes of the largest DPU's matrix image, where X starts.
    matrix_bytes: usize,
    /// 32-bit words of every DPU's values region (MRAM heap offset 0).
    values_words: usize,
    /// Sending the values set since the last call, the first phase of the next.
    values_sent: Option<Phase>,
    /// Values per attention head (or the scores to compute them from), when set instead of one set.
    head_values: Option<heads::HeadValues<T>>,
    /// Whether the kernels' table of powers of two for attention weights is in their WRAM.
    exp2_table_sent: bool,
    /// Whether the DPUs hold the values `A` was loaded with, whose sums the wide-row lists bound.
    loaded_values: bool,
    heap_bytes: usize,
    /// The calls' layout where fixed ([`PimSpmm::set_x_per_nonzero`], [`PimSpmm::set_y_in_16_bits`]).
    layout_set: cost::LayoutChoice,
    report: PimReport,
    phases: Vec<Phase>,
    y_layout: YLayout<T::Acc>,
    y_buffers: Vec<Vec<T::Acc>>,
    y16_buffers: Vec<Vec<i16>>,
    _values: PhantomData<T>,
}

impl<T: PimElement> PimSpmm<T> {
    /// Loads `a` onto `set` as `plan` says. Checks the plan and the MRAM budget first: on error nothing has
    /// been written to the DPUs.
    pub fn new(set: DpuSet, a: Csr<T>, plan: Plan) -> Result<Self> {
        Self::with_model(set, a, plan, HardwareModel::configured()?)
    }

    /// Loads `a` onto `set` with the plan the cost model predicts fastest for `features` columns of X and
    /// `tasklets` tasklets per DPU (on the simulator, a plan nearly as fast that is cheaper to simulate, within
    /// [`simulator_mram_budget`]: see [`plan_target`]).
    pub fn auto(set: DpuSet, a: Csr<T>, features: usize, tasklets: u32) -> Result<Self> {
        let model = HardwareModel::configured()?;
        let target = plan_target(set.backend());
        let choice = cost::choose(&model, &a, features, set.nr_dpus() as u32, tasklets, target)?;
        Self::with_model(set, a, choice.best.plan, model)
    }

    /// As [`PimSpmm::new`], predicting hardware time with `model`.
    pub fn with_model(set: DpuSet, a: Csr<T>, plan: Plan, model: HardwareModel) -> Result<Self> {
        let started = Instant::now();
        plan.check(set.nr_dpus())?;
        let threads = set.hardware_threads();
        if plan.tasklets > threads {
            return Err(Error::invalid(
                format!("plan {plan}"),
                format!("{} tasklets: the set's {} DPUs run at most {threads}", plan.tasklets, set.chip()),
            ));
        }
        let kernel = crate::kernel(&format!("spmm_{}_{}", plan.format, T::NAME));
        let mut set = set.load(&kernel)?;
        let heap_bytes = set.symbol(MRAM_HEAP)?.size as usize;
        let partition = Partition::new(&a, &plan);
        let tiles = partition.tiles(&a, plan.x);
        let values_words = tiles.iter().map(Tile::nnz).max().unwrap_or(0).next_multiple_of(2);
        let images: Vec<Image> =
            tiles.par_iter().map(|tile| tile.encode(plan.format, values_words, T::X_PER_NONZERO)).collect();
        let image_words = images.iter().map(|image| image.words.len()).max().unwrap_or(0);
        let matrix_bytes = image_words * 4;
        if matrix_bytes > heap_bytes {
            return Err(Error::Capacity {
                what: format!("MRAM per DPU for the matrix's largest block under plan {plan}"),
                needed: matrix_bytes as u64,
                limit: heap_bytes as u64,
            });
        }
        let nr_dpus = set.nr_dpus();
        let used = plan.dpus_used() as usize;
        let tile_of = |dpu: usize| tile_of_dpu(dpu, used, tiles.len());
        let empty = vec![0u32; image_words];
        let padded: Vec<Vec<u32>> = images
            .par_iter()
            .map(|image| {
                let mut words = image.words.clone();
                words.resize(image_words, 0);
                words
            })
            .collect();
        let dpu_images: Vec<&[u32]> =
            (0..nr_dpus).map(|dpu| tile_of(dpu).map_or(empty.as_slice(), |tile| padded[tile].as_slice())).collect();
        let splits: Vec<[TaskletWork; abi::MAX_TASKLETS]> = tiles
            .par_iter()
            .map(|tile| tasklets::split(&tile.row_ptr, &tile.wide_rows, plan.tasklets as usize))
            .collect();
        let args: Vec<[MatrixArgs; 1]> = (0..nr_dpus)
            .map(|dpu| match tile_of(dpu) {
                None => [MatrixArgs::default()],
                Some(t) => [MatrixArgs {
                    nr_rows: tiles[t].rows.len() as u32,
                    nr_nonzeros: tiles[t].nnz() as u32,
                    row_ptr_offset: (images[t].row_ptr_at * 4) as u32,
                    indices_offset: (images[t].indices_at * 4) as u32,
                    values_offset: 0,
                    nr_tasklets: plan.tasklets,
                    nr_x_rows: tiles[t].x_rows.len() as u32,
                    wide_rows_offset: (images[t].wide_rows_at * 4) as u32,
                    nr_wide_rows: tiles[t].wide_rows.len() as u32,
                    reserved: 0,
                    tasklets: splits[t],
                }],
            })
            .collect();
        if image_words > 0 {
            set.push(MRAM_HEAP, 0, &dpu_images)?;
        }
        set.push("matrix", 0, &args)?;
        drop(padded);
        let tiles: Vec<ResidentTile> = tiles
            .into_iter()
            .zip(partition.stats(&a))
            .zip(&splits)
            .map(|((tile, stats), split)| ResidentTile {
                // Before `x_rows` moves.
                nonzero_x_rows: if T::X_PER_NONZERO {
                    tile.columns.iter().map(|&column| tile.x_rows.global(column as usize) as u32).collect()
                } else {
                    Vec::new()
                },
                rows: tile.rows,
                x_rows: tile.x_rows,
                stats,
                nonzero_ids: tile.nonzero_ids,
                tasklet_nonzeros: split
                    .iter()
                    .take(plan.tasklets as usize)
                    .map(|work| work.nz_begin as usize..work.nz_end as usize)
                    .collect(),
                wide_rows: tile.wide_rows,
            })
            .collect();
        let balance = LoadBalance::of((0..used).map(|dpu| tiles[dpu % tiles.len()].stats.nonzeros));
        let predicted = model.load_time(nr_dpus, matrix_bytes);
        let load = Phase { name: "load A".into(), wall: started.elapsed(), predicted: Some(predicted) };
        let report = PimReport::new(plan, nr_dpus, balance, load);
        Ok(PimSpmm {
            set,
            plan,
            model,
            nrows: a.nrows(),
            ncols: a.ncols(),
            nnz: a.nnz(),
            partition,
            tiles,
            matrix_bytes,
            values_words,
            values_sent: None,
            head_values: None,
            exp2_table_sent: false,
            loaded_values: true,
            heap_bytes,
            layout_set: cost::LayoutChoice::default(),
            report,
            phases: Vec::new(),
            y_layout: YLayout::Full,
            y_buffers: Vec::new(),
            y16_buffers: Vec::new(),
            _values: PhantomData,
        })
    }

    /// The plan the engine runs.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Whether a call of `features` columns over the loaded values takes `Y` back in 16 bits: `i8`
    /// ([`PimElement::NARROW_Y`]) when the model predicts that faster, which it is on a server unless most of a
    /// tile's rows are wide (may not fit 16 bits), or as [`PimSpmm::set_y_in_16_bits`] says when set; not after
    /// new values ([`SpmmEngine::set_values`], [`SpmmEngine::set_head_values`]).
    pub fn y_in_16_bits(&self, features: usize) -> bool {
        self.call_layout(features).y_16
    }

    /// Whether a call of `features` columns sends X as one row per nonzero, in each block's nonzero order
    /// (`dpu/spmm_args.h`'s `x_per_nonzero`): `i8` and `i16` ([`PimElement::X_PER_NONZERO`]) when the model
    /// predicts that faster, as it does at narrow widths, where a nonzero's DMA of its row outlasts its
    /// multiply-adds; never with attention weights; as [`PimSpmm::set_x_per_nonzero`] says when set.
    pub fn x_per_nonzero(&self, features: usize) -> bool {
        self.call_layout(features).x_per_nonzero
    }

    /// Fixes whether calls send X per nonzero ([`PimSpmm::x_per_nonzero`]); `None` leaves it to the model (the
    /// default). Predictions follow. `Some(true)` is refused for a type whose kernels cannot take X so.
    pub fn set_x_per_nonzero(&mut self, x_per_nonzero: Option<bool>) -> Result<()> {
        if x_per_nonzero == Some(true) && !T::X_PER_NONZERO {
            return Err(Error::invalid(
                "X per nonzero",
                format!("the {} kernels take X by column only (X per nonzero: i8 and i16)", T::NAME),
            ));
        }
        self.layout_set.x_per_nonzero = x_per_nonzero;
        Ok(())
    }

    /// Fixes whether calls take `Y` in 16 bits ([`PimSpmm::y_in_16_bits`]); `None` leaves it to the model (the
    /// default). `Some(true)` holds for the calls that can take `Y` so (over the loaded values, without
    /// attention, within the MRAM), and is refused for a type whose kernels cannot (`Y` in 16 bits: i8).
    pub fn set_y_in_16_bits(&mut self, y_16: Option<bool>) -> Result<()> {
        if y_16 == Some(true) && T::NARROW_Y.is_none() {
            return Err(Error::invalid(
                "Y in 16 bits",
                format!("the {} kernels write Y in accumulators only (Y in 16 bits: i8)", T::NAME),
            ));
        }
        self.layout_set.y_16 = y_16;
        Ok(())
    }

    /// How a call of `features` columns lays out X and Y ([`HardwareModel::call_layout`] for the call's values
    /// and heads; `Y` in 16 bits only over the values the wide-row lists bound).
    fn call_layout(&self, features: usize) -> cost::CallLayout {
        let call = self.call_shape(features);
        let own_values = call.heads <= 1 && !call.attention && self.own_values();
        let stats = self.call_stats(own_values);
        let layout = self.model.call_layout::<T>(&self.plan, &stats, call, self.set.nr_dpus(), self.layout_set);
        cost::CallLayout { y_16: layout.y_16 && self.own_values(), ..layout }
    }

    /// Timings, load balance, modelled cycles and predictions of the last call (and of loading `A`).
    pub fn report(&self) -> &PimReport {
        &self.report
    }

    /// The last call's kernel launch on the simulator: the slowest DPU's modelled cycles and every DPU's
    /// instructions by class and DMA traffic; `None` on hardware, which does not say.
    #[cfg(feature = "simulator")]
    pub fn launch_stats(&self) -> Result<Option<upmem::sim::SetStats>> {
        Ok(self.set.launch_stats()?)
    }

    /// Predicted hardware time of a call with `features` columns (in the heads of the values per head, when
    /// set).
    pub fn predict(&self, features: usize) -> Prediction {
        self.predict_shape(self.call_shape(features))
    }

    /// The shape of a call of `features` columns over the values set.
    fn call_shape(&self, features: usize) -> CallShape {
        self.head_values.as_ref().map_or(CallShape::plain(features), |head_values| CallShape {
            features,
            heads: head_values.heads,
            attention: head_values.attention(),
        })
    }

    /// Predicted hardware time of a call of shape `call`, whatever values are set.
    fn predict_shape(&self, call: CallShape) -> Prediction {
        let own_values = call.heads <= 1 && !call.attention && self.own_values();
        let stats = self.call_stats(own_values);
        let nr_dpus = self.set.nr_dpus();
        self.model.predict_laid_out::<T>(&self.plan, &stats, self.nrows, call, nr_dpus, self.layout_set)
    }

    /// Whether calls run over the values `A` was loaded with: no values per head, no values set since.
    fn own_values(&self) -> bool {
        self.loaded_values && self.head_values.is_none()
    }

    /// The tiles' statistics for a call over the loaded values (`own_values`) or others, whose sums the wide-row
    /// lists do not bound: then every row counts as wide.
    fn call_stats(&self, own_values: bool) -> Vec<TileStats> {
        let stats = |tile: &ResidentTile| TileStats {
            wide_rows: if own_values { tile.stats.wide_rows } else { tile.stats.rows },
            ..tile.stats
        };
        self.tiles.iter().map(stats).collect()
    }

    /// How a call of `padded` features per DPU takes `Y`, in 16 bits or not as `y_16` says
    /// ([`PimSpmm::y_in_16_bits`]).
    fn y_layout(&self, y_16: bool, padded: usize) -> YLayout<T::Acc> {
        match T::NARROW_Y {
            Some(narrow) if y_16 => {
                let max_rows = self.tiles.iter().map(|tile| tile.rows.len()).max().unwrap_or(0);
                YLayout::Narrow { wide_at: max_rows * padded, widen: narrow.widen }
            }
            _ => YLayout::Full,
        }
    }

    /// The call's MRAM layout after the matrix and the value sets (with attention scores after Y, whose space is
    /// that of accumulators even when `y` takes it in 16 bits), checked against the heap.
    fn call_args(
        &self,
        features: usize,
        sets: &ValueSets,
        y: YLayout<T::Acc>,
        x_per_nonzero: bool,
    ) -> Result<CallArgs> {
        let size = std::mem::size_of::<T>();
        let acc = std::mem::size_of::<T::Acc>();
        let max_x_rows = self.tiles.iter().map(|tile| tile.x_rows.len()).max().unwrap_or(0);
        let max_rows = self.tiles.iter().map(|tile| tile.rows.len()).max().unwrap_or(0);
        let x_offset = self.matrix_bytes + sets.bytes;
        // Per nonzero, X's units are each `values_words` entries apart: every DPU's nonzeros, rounded up to even.
        let x_rows = if x_per_nonzero { self.values_words } else { max_x_rows };
        let partials_offset = x_offset + x_rows * features * size;
        let y_offset = partials_offset + abi::MAX_TASKLETS * abi::MAX_PARTIALS * features * acc;
        let column_scores_offset = y_offset + max_rows * features * acc;
        let (column_scores_stride, row_scores_stride) = if sets.attention {
            (max_x_rows * size_of::<AttentionColumn>(), max_rows * size_of::<AttentionRow>())
        } else {
            (0, 0)
        };
        let row_scores_offset = column_scores_offset + sets.sets(features) * column_scores_stride;
        let end = row_scores_offset + sets.sets(features) * row_scores_stride;
        if end > self.heap_bytes {
            return Err(Error::Capacity {
                what: format!(
                    "MRAM per DPU for {features} padded features under plan {} (matrix {} B, values per head {} B, \
                     X {} B, Y {} B, attention scores {} B)",
                    self.plan,
                    self.matrix_bytes,
                    sets.bytes,
                    partials_offset - x_offset,
                    column_scores_offset - y_offset,
                    end - column_scores_offset
                ),
                needed: end as u64,
                limit: self.heap_bytes as u64,
            });
        }
        Ok(CallArgs {
            nr_features: features as u32,
            x_offset: x_offset as u32,
            y_offset: y_offset as u32,
            partials_offset: partials_offset as u32,
            mode: if sets.attention { abi::MODE_ATTENTION } else { abi::MODE_SPMM },
            head_features: sets.set_features as u32,
            values_offset: sets.offset as u32,
            values_stride: sets.stride as u32,
            column_scores_offset: column_scores_offset as u32,
            column_scores_stride: column_scores_stride as u32,
            row_scores_offset: row_scores_offset as u32,
            row_scores_stride: row_scores_stride as u32,
            y_narrow: u32::from(matches!(y, YLayout::Narrow { .. })),
            y_wide_offset: match y {
                YLayout::Narrow { wide_at, .. } => (y_offset + wide_at * size_of::<i16>()) as u32,
                YLayout::Full => 0,
            },
            x_per_nonzero: u32::from(x_per_nonzero),
            x_unit_stride: if x_per_nonzero { self.values_words as u32 } else { 0 },
            ..CallArgs::default()
        })
    }

    /// Sends each DPU its rows of X, `padded` features of its group, as `args` lay them out.
    fn send_x(&mut self, x: &Dense<T>, padded: usize, args: &CallArgs) -> Result<()> {
        let offset = args.x_offset;
        let groups = self.plan.feature_groups as usize;
        if args.x_per_nonzero != 0 {
            let stride = args.x_unit_stride as usize;
            let buffers: Vec<Vec<Vec<T>>> = self
                .tiles
                .par_iter()
                .map(|tile| fill_x_per_nonzero(x, &tile.nonzero_x_rows, groups, padded, stride))
                .collect();
            return self.push_tile_buffers(&buffers, offset);
        }
        let max_x_rows = self.tiles.iter().map(|tile| tile.x_rows.len()).max().unwrap_or(0);
        if max_x_rows == 0 {
            return Ok(());
        }
        let broadcast = self.plan.broadcasts_x();
        if broadcast && padded == x.cols() {
            return Ok(self.set.broadcast(MRAM_HEAP, offset, x.as_slice())?);
        }
        // One buffer per distinct (rows of X, feature group): per column block for whole slices, per tile for
        // referenced rows.
        let sources: Vec<&XRows> = match self.plan.x {
            XDelivery::Whole => (0..self.partition.col_blocks()).map(|cb| &self.tiles[cb].x_rows).collect(),
            XDelivery::Referenced => self.tiles.iter().map(|tile| &tile.x_rows).collect(),
        };
        let buffers: Vec<Vec<Vec<T>>> =
            sources.par_iter().map(|rows| fill_x(x, rows, groups, padded, max_x_rows)).collect();
        if broadcast {
            return Ok(self.set.broadcast(MRAM_HEAP, offset, &buffers[0][0])?);
        }
        let used = self.plan.dpus_used() as usize;
        let nr_tiles = self.tiles.len();
        let col_blocks = self.partition.col_blocks();
        let per_dpu: Vec<&[T]> = (0..self.set.nr_dpus())
            .map(|dpu| {
                let dpu = if dpu < used { dpu } else { 0 };
                let (group, tile) = (dpu / nr_tiles, dpu % nr_tiles);
                let source = match self.plan.x {
                    XDelivery::Whole => tile % col_blocks,
                    XDelivery::Referenced => tile,
                };
                buffers[source][group].as_slice()
            })
            .collect();
        Ok(self.set.push(MRAM_HEAP, offset, &per_dpu)?)
    }

    /// Pushes each DPU the buffer of its tile and feature group, `buffers[tile][group]`, to heap offset `offset`
    /// (the DPUs the plan leaves unused get tile 0's).
    fn push_tile_buffers(&mut self, buffers: &[Vec<Vec<T>>], offset: u32) -> Result<()> {
        let nr_tiles = self.tiles.len();
        let used = self.plan.dpus_used() as usize;
        let per_dpu: Vec<&[T]> = (0..self.set.nr_dpus())
            .map(|dpu| {
                let dpu = if dpu < used { dpu } else { 0 };
                buffers[dpu % nr_tiles][dpu / nr_tiles].as_slice()
            })
            .collect();
        Ok(self.set.push(MRAM_HEAP, offset, &per_dpu)?)
    }

    /// Reads every DPU's Y block, laid out as `y` says, into the reused buffers.
    fn gather_y(&mut self, args: &CallArgs, y: YLayout<T::Acc>) -> Result<()> {
        self.y_layout = y;
        let padded = args.nr_features as usize;
        let nr_dpus = self.set.nr_dpus();
        match y {
            YLayout::Full => {
                let max_rows = self.tiles.iter().map(|tile| tile.rows.len()).max().unwrap_or(0);
                gather_blocks(&mut self.set, args.y_offset, &mut self.y_buffers, nr_dpus, max_rows * padded)
            }
            YLayout::Narrow { wide_at, .. } => {
                let max_wide = self.tiles.iter().map(|tile| tile.wide_rows.len()).max().unwrap_or(0);
                let length = wide_at + max_wide * padded * size_of::<T::Acc>() / size_of::<i16>();
                gather_blocks(&mut self.set, args.y_offset, &mut self.y16_buffers, nr_dpus, length)
            }
        }
    }

    /// Ranges of Y's rows a streamed call hands on: whole row blocks (a row shared with the next block goes
    /// with the first), at least [`MIN_CHUNK_ROWS`] rows each unless Y is smaller.
    fn chunks(&self) -> Vec<Range<usize>> {
        let mut chunks: Vec<Range<usize>> = Vec::new();
        let mut start = 0;
        for rb in 0..self.partition.row_blocks() {
            let end = self.partition.block(rb).rows.end.min(self.nrows);
            if end >= start + MIN_CHUNK_ROWS {
                chunks.push(start..end);
                start = end;
            }
        }
        match chunks.last_mut() {
            Some(last) if self.nrows - start < MIN_CHUNK_ROWS => last.end = self.nrows,
            _ => chunks.push(start..self.nrows),
        }
        chunks
    }

    /// Adds the tiles' Y blocks into `rows` of Y, `out` (zeros): row by row in row block order, the first
    /// column block copied into a row no other row block has, every block added into a row shared between
    /// row blocks (a long row cut over several DPUs).
    fn merge_rows(&self, rows: Range<usize>, out: &mut [T::Acc], padded: usize) {
        if rows.is_empty() {
            return;
        }
        let features = out.len() / rows.len();
        let first = (0..self.partition.row_blocks()).find(|&rb| self.partition.block(rb).rows.end > rows.start);
        for rb in first.into_iter().flat_map(|first| first..self.partition.row_blocks()) {
            let block = self.partition.block(rb);
            if block.rows.start >= rows.end {
                break;
            }
            let last = block.rows.len().saturating_sub(1);
            for row in block.rows.start.max(rows.start)..block.rows.end.min(rows.end) {
                let local = row - block.rows.start;
                let shared = (block.head_shared && local == 0) || (block.tail_shared && local == last);
                let at = (row - rows.start) * features;
                self.merge_row(rb, local, &mut out[at..at + features], padded, !shared);
            }
        }
    }

    /// Adds row `local` of row block `rb`, from every column block and feature group, into `out` (a row of Y).
    /// With `overwrite`, column block 0 is copied rather than added.
    fn merge_row(&self, rb: usize, local: usize, out: &mut [T::Acc], padded: usize, overwrite: bool) {
        let features = out.len();
        let col_blocks = self.partition.col_blocks();
        for cb in 0..col_blocks {
            let tile = rb * col_blocks + cb;
            let copy = overwrite && cb == 0;
            // In 16-bit blocks, the row's place among the tile's wide rows, the same in every feature group.
            let wide_slot = match self.y_layout {
                YLayout::Narrow { .. } => self.tiles[tile].wide_rows.binary_search(&(local as u32)).ok(),
                YLayout::Full => None,
            };
            for group in 0..self.plan.feature_groups as usize {
                let first = group * padded;
                if first >= features {
                    break;
                }
                let width = padded.min(features - first);
                let dpu = group * self.tiles.len() + tile;
                let out = &mut out[first..first + width];
                match self.y_layout {
                    YLayout::Full => {
                        let part = &self.y_buffers[dpu][local * padded..local * padded + width];
                        if copy {
                            out.copy_from_slice(part);
                        } else {
                            out.iter_mut().zip(part).for_each(|(o, &p)| *o = T::acc_add(*o, p));
                        }
                    }
                    YLayout::Narrow { wide_at, widen } => {
                        let buffer = &self.y16_buffers[dpu];
                        match wide_slot {
                            Some(k) => {
                                let halves = &buffer[wide_at + k * padded * 2..][..width * 2];
                                let sums = halves.chunks_exact(2).map(|pair| widen(join_halves(pair[0], pair[1])));
                                merge_into::<T>(out, sums, copy);
                            }
                            None => {
                                let sums = buffer[local * padded..][..width].iter().map(|&v| widen(i32::from(v)));
                                merge_into::<T>(out, sums, copy);
                            }
                        }
                    }
                }
            }
        }
    }

    /// The part of a call up to Y's blocks on the host: checks X, sends it, launches and gathers, recording
    /// those phases; `None` (and no phases) when X has no columns.
    fn run_kernel(&mut self, x: &Dense<T>) -> Result<Option<Call>> {
        if x.rows() != self.ncols {
            return Err(Error::shape("PIM SpMM: rows of X (columns of A)", self.ncols, x.rows()));
        }
        self.phases.clear();
        let features = x.cols();
        if features == 0 {
            return Ok(None);
        }
        let heads = self.head_values.as_ref().map_or(1, |head_values| head_values.heads);
        if !features.is_multiple_of(heads) {
            let expected = format!("a multiple of the {heads} heads of the values per head");
            return Err(Error::shape("PIM SpMM: columns of X", expected, features));
        }
        let padded = cost::padded_head_features::<T>(features, self.plan.feature_groups as usize, heads);
        let sets = self.value_sets(features, padded);
        let layout = self.call_layout(features);
        let (y_layout, x_per_nonzero) = (self.y_layout(layout.y_16, padded), layout.x_per_nonzero);
        let args = self.call_args(padded, &sets, y_layout, x_per_nonzero)?;
        self.send_head_values(features, padded, &sets, &args)?;
        let predicted = self.predict(features);
        let mut phases = Vec::with_capacity(5);
        phases.extend(self.values_sent.take());
        let mut timed = |name: &'static str, predicted, started: Instant| {
            phases.push(Phase { name: name.into(), wall: started.elapsed(), predicted: Some(predicted) })
        };

        let started = Instant::now();
        self.send_x(x, padded, &args)?;
        self.set.broadcast("call", 0, &[args])?;
        timed("send X", predicted.send_x, started);

        let started = Instant::now();
        self.set.launch()?;
        let kernel = self.simulated_kernel_time().unwrap_or(predicted.kernel);
        timed("kernel", kernel, started);

        let started = Instant::now();
        self.gather_y(&args, y_layout)?;
        timed("gather", predicted.gather, started);

        self.phases = phases;
        Ok(Some(Call { features, padded, predicted, x_per_nonzero }))
    }

    /// Records a finished call in the report.
    fn finish_call(&mut self, call: &Call) -> Result<()> {
        let (cycles, simulated) = self.simulator_figures()?;
        let layout = cost::CallLayout {
            x_per_nonzero: call.x_per_nonzero,
            y_16: matches!(self.y_layout, YLayout::Narrow { .. }),
        };
        self.report.record_call(call.features, &self.phases, call.predicted, cycles, simulated, layout);
        Ok(())
    }

    /// The last launch's predicted hardware time from the simulator's modelled cycles (the slowest DPU's, plus
    /// the launch overhead), which count the kernel's actual instructions where the cost model estimates them;
    /// `None` on hardware. Takes the set's timeline, so it stays one call long.
    fn simulated_kernel_time(&mut self) -> Option<Duration> {
        let timeline = self.set.take_timeline();
        let launch = timeline.events().iter().rev().find(|event| event.operation == upmem::timeline::Operation::Launch);
        launch.and_then(|launch| launch.predicted)
    }

    /// On the simulator, the last launch's modelled cycles and DMA cycles of the slowest DPU with work (under a
    /// schedule whose cycles predict the hardware's), and what it executed over those DPUs.
    #[cfg(feature = "simulator")]
    fn simulator_figures(&self) -> Result<SimulatorFigures> {
        let mut slowest = (0, 0);
        let mut work = SimulatedWork::default();
        for dpu in 0..self.plan.dpus_used() as usize {
            let Some(stats) = self.set.simulator_stats(dpu)? else { return Ok((None, None)) };
            slowest = (slowest.0.max(stats.cycles), slowest.1.max(stats.dma_cycles));
            work.add(&stats);
        }
        Ok((self.set.models_hardware_cycles().then_some(slowest), Some(work)))
    }

    /// Without the simulator no launch has modelled cycles or simulated work.
    #[cfg(not(feature = "simulator"))]
    fn simulator_figures(&self) -> Result<SimulatorFigures> {
        Ok((None, None))
    }
}

/// On the simulator, a launch's slowest DPU's modelled cycles and DMA cycles (when the schedule predicts the
/// hardware's) and what it executed over every DPU with work.
type SimulatorFigures = (Option<(u64, u64)>, Option<SimulatedWork>);

/// Reads `length` values of every DPU's `Y` block at heap offset `offset` into `buffers`, one per DPU, reused
/// from call to call.
fn gather_blocks<V: upmem::DpuCopy + Default>(
    set: &mut LoadedSet,
    offset: u32,
    buffers: &mut Vec<Vec<V>>,
    nr_dpus: usize,
    length: usize,
) -> Result<()> {
    buffers.resize_with(nr_dpus, Vec::new);
    for buffer in buffers.iter_mut() {
        buffer.resize(length, V::default());
    }
    if length > 0 {
        set.gather_into(MRAM_HEAP, offset, buffers)?;
    }
    Ok(())
}

/// A 32-bit sum from its halves as a DPU wrote it to MRAM (little-endian), read back as two `i16`s.
fn join_halves(low: i16, high: i16) -> i32 {
    (i32::from(high) << 16) | i32::from(low as u16)
}

/// `out = sums` (with `copy`) or `out += sums`.
fn merge_into<T: PimElement>(out: &mut [T::Acc], sums: impl Iterator<Item = T::Acc>, copy: bool) {
    if copy {
        out.iter_mut().zip(sums).for_each(|(o, s)| *o = s);
    } else {
        out.iter_mut().zip(sums).for_each(|(o, s)| *o = T::acc_add(*o, s));
    }
}

/// The tile DPU `dpu` holds when `used` DPUs hold `tiles` tiles (feature groups repeat them); `None` for a DPU
/// without work.
fn tile_of_dpu(dpu: usize, used: usize, tiles: usize) -> Option<usize> {
    (dpu < used).then(|| dpu % tiles)
}

/// `x`'s `rows` for each of `groups` feature groups of `padded` columns: one buffer per group of `length` rows of
/// `padded` values (the rest stays zero), each row of `x` read once for all its groups. Callers run it in
/// parallel, so the buffers' zeroed pages are also allocated in parallel: cloning one zeroed buffer per DPU on one
/// thread was half of `infer`'s send X.
fn fill_x<T: Copy + Default>(x: &Dense<T>, rows: &XRows, groups: usize, padded: usize, length: usize) -> Vec<Vec<T>> {
    let mut buffers: Vec<Vec<T>> = (0..groups).map(|_| vec![T::default(); length * padded]).collect();
    let mut copy = |local: usize, global: usize| {
        let row = x.row(global);
        for (group, buffer) in buffers.iter_mut().enumerate() {
            let features = (group * padded).min(row.len())..((group + 1) * padded).min(row.len());
            buffer[local * padded..local * padded + features.len()].copy_from_slice(&row[features]);
        }
    };
    match rows {
        XRows::Range(range) => range.clone().enumerate().for_each(|(local, global)| copy(local, global)),
        XRows::List(list) => list.iter().enumerate().for_each(|(local, &global)| copy(local, global as usize)),
    }
    buffers
}

/// One DPU's X per nonzero ([`CallArgs::x_per_nonzero`]), one buffer per feature group of `padded` features:
/// unit `u` (8 bytes of features) of nonzero `k`, whose row of X is `x_rows[k]`, at `(u * stride + k)` units.
fn fill_x_per_nonzero<T: Copy + Default>(
    x: &Dense<T>,
    x_rows: &[u32],
    groups: usize,
    padded: usize,
    stride: usize,
) -> Vec<Vec<T>> {
    let unit = 8 / size_of::<T>();
    (0..groups)
        .map(|group| {
            let mut buffer = vec![T::default(); padded * stride];
            let first = (group * padded).min(x.cols());
            let features = first..((group + 1) * padded).min(x.cols());
            for (k, &row) in x_rows.iter().enumerate() {
                let row = &x.row(row as usize)[features.clone()];
                for (u, part) in row.chunks(unit).enumerate() {
                    let at = (u * stride + k) * unit;
                    buffer[at..at + part.len()].copy_from_slice(part);
                }
            }
            buffer
        })
        .collect()
}

impl<T: PimElement> SpmmEngine<T> for PimSpmm<T> {
    fn shape(&self) -> (usize, usize) {
        (self.nrows, self.ncols)
    }

    fn spmm(&mut self, x: &Dense<T>) -> Result<Dense<T::Acc>> {
        if let Some((head, padded)) = self.unaligned_heads(x.cols()) {
            let y = self.spmm(&heads::pad_heads(x, head, padded)?)?;
            return heads::unpad_heads(&y, head, padded);
        }
        let Some(call) = self.run_kernel(x)? else { return Ok(Dense::zeros(self.nrows, x.cols())) };
        let started = Instant::now();
        let mut y = Dense::zeros(self.nrows, call.features);
        let chunks = self.chunks();
        let mut rest = y.as_mut_slice();
        let mut parts = Vec::with_capacity(chunks.len());
        for rows in chunks {
            let (part, tail) = rest.split_at_mut(rows.len() * call.features);
            parts.push((rows, part));
            rest = tail;
        }
        parts.into_par_iter().for_each(|(rows, part)| self.merge_rows(rows, part, call.padded));
        self.phases.push(Phase {
            name: "merge".into(),
            wall: started.elapsed(),
            predicted: Some(call.predicted.merge),
        });
        self.finish_call(&call)?;
        Ok(y)
    }

    fn spmm_streamed(
        &mut self,
        x: &Dense<T>,
        outs: &mut [Dense<f32>],
        step: &RowStep<'_, T::Acc>,
    ) -> Result<StreamedStage> {
        check_streamed_outputs(self.nrows, outs)?;
        if self.unaligned_heads(x.cols()).is_some() {
            return step_whole(&mut self.spmm(x)?, outs, step);
        }
        let Some(call) = self.run_kernel(x)? else {
            return step_whole(&mut Dense::zeros(self.nrows, 0), outs, step);
        };
        let started = Instant::now();
        let mut y = Dense::zeros(self.nrows, call.features);
        let ranges = self.chunks();
        let mut y_rest = y.as_mut_slice();
        let mut y_parts = Vec::with_capacity(ranges.len());
        for rows in &ranges {
            let (part, tail) = y_rest.split_at_mut(rows.len() * call.features);
            y_parts.push(part);
            y_rest = tail;
        }
        let out_parts = rows_of_outputs(outs, &ranges);
        let chunks = ranges
            .into_par_iter()
            .zip(y_parts)
            .zip(out_parts)
            .map(|((rows, y_part), mut out_parts)| {
                let merging = Instant::now();
                self.merge_rows(rows.clone(), y_part, call.padded);
                let stepping = Instant::now();
                let count = rows.len();
                step(rows, y_part, &mut out_parts)?;
                Ok(Chunk { rows: count, merge: stepping - merging, step: stepping.elapsed() })
            })
            .collect::<Result<Vec<Chunk>>>()?;
        let stage = StreamedStage { wall: started.elapsed(), merge_predicted: Some(call.predicted.merge), chunks };
        self.finish_call(&call)?;
        Ok(stage)
    }

    fn last_phases(&self) -> &[Phase] {
        &self.phases
    }

    /// Writes every DPU's values region (its tile's values, picked from `values` in `A`'s nonzero order) with one
    /// parallel transfer; the row pointers and columns stay as loaded. Sending them is the next call's first
    /// phase, "send values".
    fn set_values(&mut self, values: &[T]) -> Result<()> {
        if values.len() != self.nnz {
            return Err(Error::shape("PIM SpMM: new values (one per nonzero of A)", self.nnz, values.len()));
        }
        let started = Instant::now();
        let words = self.values_words;
        if words > 0 {
            let regions: Vec<Vec<u32>> = self
                .tiles
                .par_iter()
                .map(|tile| {
                    let mut region = vec![0u32; words];
                    tile.nonzero_ids.pick_into(&mut region[..tile.stats.nonzeros], |k| values[k].value_bits());
                    region
                })
                .collect();
            let empty = vec![0u32; words];
            let used = self.plan.dpus_used() as usize;
            let per_dpu: Vec<&[u32]> = (0..self.set.nr_dpus())
                .map(|dpu| tile_of_dpu(dpu, used, regions.len()).map_or(empty.as_slice(), |t| regions[t].as_slice()))
                .collect();
            self.set.push(MRAM_HEAP, 0, &per_dpu)?;
        }
        let predicted = self.model.load_time(self.set.nr_dpus(), words * 4);
        self.values_sent =
            Some(Phase { name: "send values".into(), wall: started.elapsed(), predicted: Some(predicted) });
        self.head_values = None;
        // The DPUs' wide-row lists bound the loaded values' sums, not these: Y comes back in accumulators.
        self.loaded_values = false;
        Ok(())
    }

    /// Keeps the values per head on the host until the next call, whose width decides which heads each DPU's
    /// feature group covers; that call sends each DPU only its heads' values (its first phase, "send values"),
    /// and later calls of the same width reuse them. A head narrower than 8 bytes of `T` per row or not a
    /// whole number of them is padded to one with zeros in X for the call.
    fn set_head_values(&mut self, values: &[T], heads: usize) -> Result<()> {
        crate::spmm::check_head_values(self.nnz, values.len(), heads)?;
        let source = heads::HeadSource::Values(values.to_vec());
        self.head_values = Some(heads::HeadValues { source, heads, sent_for: None });
        self.values_sent = None;
        Ok(())
    }

    /// The call's prediction ([`PimSpmm::predict`] of its shape) and sending its values per head or attention
    /// scores to every DPU.
    fn predict_call(&self, call: CallShape) -> Option<Duration> {
        let prediction = self.predict_shape(call);
        let padded = cost::padded_head_features::<T>(call.features, self.plan.feature_groups as usize, call.heads);
        let sets = padded / cost::set_features(call.features, padded, call.heads);
        let max = |of: &dyn Fn(&ResidentTile) -> usize| self.tiles.iter().map(of).max().unwrap_or(0);
        let bytes = if call.attention {
            sets * (max(&|tile| tile.x_rows.len()) * size_of::<AttentionColumn>()
                + max(&|tile| tile.rows.len()) * size_of::<AttentionRow>())
        } else {
            sets * self.values_words * 4
        };
        Some(prediction.total() + self.model.load_time(self.set.nr_dpus(), bytes))
    }

    /// The kernels compute the weights (f32 only): each DPU gets its heads' scores of its rows and of its rows of
    /// X at the next call ("send scores"), and the table of powers of two once per engine.
    fn set_attention(&mut self, scores: &AttentionScores) -> Result<()> {
        self.set_attention_scores(scores)
    }

    fn sddmm(&mut self, p: &Dense<T>, q: &Dense<T>) -> Result<Vec<T::Acc>> {
        PimSpmm::sddmm(self, p, q)
    }
}

impl<T: PimElement> std::fmt::Debug for PimSpmm<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PimSpmm")
            .field("plan", &self.plan)
            .field("shape", &(self.nrows, self.ncols))
            .finish_non_exhaustive()
    }
}
