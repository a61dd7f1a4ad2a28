//! The cost model: predicted time of an SpMM plan on real UPMEM hardware, and the automatic plan choice.
//!
//! # Sources
//!
//! Figures other than the transfers' are PrIM's measurements on a 2,556-DPU server at 350 MHz (Gómez-Luna et al., "Benchmarking a New
//! Paradigm", arXiv 2105.03814), as collected in `upmem-compat.md` section 3.3, and the UPMEM documentation:
//!
//! - **Host <-> DPU transfers**: `upmem`'s [`TransferModel`](upmem::TransferModel), the one the runtime's
//!   timelines use: a full server's aggregate push and gather bandwidths over the ranks a transfer spans
//!   (measured on SDK 2025.1: push 5.3 GB/s at one rank to 13.2 GB/s from 32 ranks, gather 2.7 to 7.9 GB/s),
//!   broadcasts charged their delivered bytes (source bytes x DPUs). A parallel transfer moves the same size to
//!   every DPU of a rank, so the largest DPU buffer counts.
//! - **MRAM DMA**: `alpha + beta * bytes` cycles, alpha 77 (read) and 61 (write), beta 0.5 cycle per byte. The
//!   DMA engine serves one transfer at a time, so a DPU's DMA cycles add up.
//! - **Compute**: the pipeline issues one instruction per cycle once at least 11 tasklets are ready (a
//!   tasklet issues every 11 cycles), so `T < 11` tasklets run at `T / 11` of that. The kernels multiply a
//!   row's nonzeros in batches (as many X chunks as 512 bytes hold: 8 for i8, 4 for i16, 2 otherwise): a
//!   multiply-add costs its product, the feature's load and the add (a float's is software, 66); each feature of
//!   a batch 2 more (its sum's load and store) and each iteration of the feature loop, which takes 8 bytes of
//!   X, 4 (advance the index, count and branch); each batch 66 (its call, the values as factors and the X rows'
//!   addresses; fitted to the simulator's counts with the nonzero's and the row's constants below). Products in DPU instructions: a
//!   32-bit multiply 30 (the compiler runtime's `mul_step` sequence; PrIM's 10 MOPS at 350 MHz, 35 cycles,
//!   less its loop's 5); a float multiply 179 (software float; PrIM's 1.9 MOPS, and 4.9 for the add, less 5
//!   each); i16 and i8, which the kernels multiply
//!   in their own width, 7 and 1: UPMEM's DPU compiler (its LLVM fork, `llvm/lib/Target/DPU`) emits one
//!   8 x 8-bit multiply instruction (`mul_sl_sl`) for two extended bytes and a sequence of three byte
//!   multiplies and three `lsl_add`s after a first byte product for two 16-bit values
//!   (`EmitMul16WithCustomInserter`); PrIM did not measure them. Each nonzero costs 47 instructions besides
//!   its products (fitted to the simulator's count), in COO as in CSR (COO's test of the row takes the place of
//!   CSR's count: the walk's copy of the entry after a tasklet's last carries a row no row has): its index's
//!   walk, loop and DMA set-up, its X row's address `column * width` (a shift, 1, when a row's bytes are a
//!   power of two; in `i8` and `i16`, an `lsl_add` and a shift, 2, when they are three times one; a 16-bit
//!   multiply, 7, when the block's X has at most 2^16 rows; a 32-bit multiply, 30, otherwise), its place in the
//!   batch, and the advance of the values' walk (2). Each row costs 16 instructions besides its sums (its
//!   walk, store set-up and last batch; a pass finds its shared rows' partial slots once, so a row's test is two
//!   compares), less 2 per feature that its first batch saves by setting its sums
//!   rather than adding to them (fitted). A row without nonzeros in a tasklet's range has its sums
//!   cleared by the DPU libc's `memset`: 15 instructions and 3 per feature (memset.c.obj of the SDK 2025.1's
//!   compiled runtime).
//! - **X per nonzero** (`i8` and `i16`, [`CallLayout::x_per_nonzero`]): the host sends each DPU a row of X per
//!   nonzero in its block's order, cut into units of 8 bytes; a pass per unit walks the units and values 32 per
//!   DMA and keeps a row's sums in registers. A nonzero costs its unit's multiply-adds and 4 instructions (its
//!   value's load, the walks' advance and the loop's test, shared in pairs; both formats count a row's
//!   nonzeros by the block's row pointers, which a COO block of these types has too), a row 70 per unit and
//!   1 per feature of it (its count and run, its sums cleared and stored, the write's call), in 16 bits as a
//!   row by column (below): fitted to the simulator's counts (tests/pim_cost.rs: 0.98 to 1.02 of them at 4 to
//!   64 features, 0.99 to 1.01 in 16 bits). The model takes X so in a call when that predicts faster, the
//!   larger X it sends included: at narrow widths, where a nonzero's DMA of its X row outlasts its
//!   multiply-adds.
//! - **`Y` in 16 bits** (`i8`): a row whose sums the host bounds within 16 bits costs 2.75 instructions more per
//!   feature (its sums' load and 16-bit store; fitted to the simulator) and half the gather's bytes; a wide row
//!   costs 25 and an 8-byte read of its list. The model takes `Y` so in a call when that predicts faster: on a
//!   server, whose gather all DPUs share, it does unless most of a tile's rows are wide.
//! - **Kernel time** is the slowest DPU's `max(compute cycles, DMA cycles)`: a tasklet waiting for its DMA
//!   issues nothing, so with 11 or more tasklets the DMA latency hides behind other tasklets' compute, and
//!   whichever engine is busier bounds the time. Two of its DMA phases nothing hides, and they add: at each
//!   pass's start every tasklet waits for its walks' first blocks (CSR 3, COO 2, X per nonzero 3 per unit), which
//!   the engine serves one after another, and after the barrier the merge reads two partial sums and writes one
//!   per row shared between tasklets. On one DPU with 16 tasklets, CSR rows of 10 nonzeros, i8 at 8 to 64
//!   features, they take the model from 0.49 to 0.87 of the simulator's cycles to 0.66 to 1.28 on 16 to 100 rows
//!   (X per nonzero at 64 features the highest), and leave it at 0.93 to 1.15 on 400 to 3,000. Every launch also
//!   costs its own 8,130 cycles (the DPU's boot into `main` and the tasklets' way to the barrier: the simulator's
//!   launch with no work), and each tasklet with work sets up for 180 instructions and 185 more per pass (its
//!   work's read, its partial slots, its walks' starts), beside the pass starts' DMAs, which it overlaps. With them
//!   blocks of 1 to 10 rows a tasklet, by 1 and 16 tasklets, are predicted at 0.92 to 1.22 of the simulator's
//!   cycles (the highest where every tasklet holds whole rows, which an even cut of a tile rarely gives).
//! - **Rows shared between tasklets**: each tasklet walks its own piece of a row its work's cut falls in, at a
//!   row's cost. A cut falls inside a row as often as the tile's nonzeros weigh in its units (a row one, a
//!   nonzero one more), and each piece of a row so cut goes to a partial slot, which costs 40 instructions a
//!   pass (the slot's address, a 32-bit multiply, and the store's tests) and 60 a launch (the merge's test of
//!   the chain) beyond a row written to `Y` (measured: a tasklet holding 35 nonzeros of a shared row against
//!   one holding a whole row of 35, 90 to 222 instructions more at 8 to 256 features). After the barrier the
//!   first tasklet of a row's chain adds the chain's partial sums alone, at an instruction every 11 cycles and
//!   each read's latency in the open: a hub row spread over a dozen tasklets
//!   makes the kernel's tail. The model takes the tile's longest row, spread over tasklets as their shares of the
//!   work cut it, and ends the merge when that chain's or the DMA engine's work is done (38 instructions a partial
//!   sum and 4.6 a feature, fitted to the simulator). The same row makes the tasklets' work unequal: those
//!   within it run nonzeros only, the others the tile's other rows, whose walks cost more than a nonzero's
//!   multiply-adds at narrow widths and less at wide ones, so all run at the shared issue rate until the lighter
//!   are done and the heavier then at theirs ([`HardwareModel`]'s `issue_cycles`). A row over all 16 tasklets is
//!   predicted at 0.88 to 0.99 of the simulator's cycles (0.65 to 0.77 without the chain); R-MAT's blocks of
//!   2,048-DPU plans at 0.82 to 0.96 (i8, 8 to 64 features), and the slowest DPUs of `pimgnn bench spmm`'s
//!   2,048-DPU plans at 0.84 to 1.05 (f32, i8 and i16 at 8 to 256 features; 0.57 to 1.01 without the chain and
//!   the tasklets' unequal work).
//! - **Host work** (building per-DPU X buffers, merging partial Y tiles) is memory-bound at
//!   [`HardwareModel::host_bytes_per_second`], 5 GB/s by default: a conservative figure for copying scattered
//!   rows on a few cores, not a measurement of a UPMEM server's host.
//!
//! `upmem-compat.md` marks the PrIM figures as recalled, to be verified before citing. What can be checked
//! here is checked (`tests/pim_cost.rs`): the model's DMA cycles match the simulator's exact DMA count for the
//! same kernel run within 3%, and its kernel cycles (compute and DMA) match the simulator's modelled cycles,
//! which count the kernel's instructions with the DPU's software arithmetic and the DPU compiler's narrow
//! multiplies, within 10% for every element type (0.98x to 1.10x on the test graph at 4, 8, 16, 48 and 64 features
//! for f32, i32, i16 and i8, CSR and COO). On the simulator the timing tables show the
//! simulator's kernel time (`PimReport` also gives the model's). The model is deliberately simple and its
//! parameters are public, so a measured server can replace them.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use upmem::timeline::Operation;

use crate::error::{Error, Result};
use crate::pim::abi::{FEATURE_CHUNK, MAX_PARTIALS, MAX_TASKLETS, READ_ENTRIES, RESULT_BUFFER};
use crate::pim::partition::{Partition, TileStats};
use crate::pim::plan::{Format, Plan, XDelivery};
use crate::pim::PimElement;
use crate::sparse::Csr;
use crate::spmm::CallShape;

/// Parameters of a UPMEM server; [`HardwareModel::default`] is the 350 MHz PrIM server.
#[derive(Clone, Debug, PartialEq)]
pub struct HardwareModel {
    /// DPU clock in Hz.
    pub clock_hz: f64,
    /// Fixed cycles of an MRAM -> WRAM DMA.
    pub dma_read_alpha: f64,
    /// Fixed cycles of a WRAM -> MRAM DMA.
    pub dma_write_alpha: f64,
    /// DMA cycles per byte.
    pub dma_cycles_per_byte: f64,
    /// Tasklets needed to issue one instruction per cycle.
    pub pipeline_tasklets: f64,
    /// Cycles of a 32-bit integer multiply-add of one feature: load the feature, the product, the add (the
    /// lower bound; the batch loop's own instructions are `batch` costs).
    pub int_mac_cycles: f64,
    /// Cycles of a 16-bit integer multiply-add (the DPU compiler's 7-instruction byte-multiply sequence), loaded
    /// and added.
    pub i16_mac_cycles: f64,
    /// Cycles of an 8-bit integer multiply-add (one 8 x 8-bit multiply instruction), loaded and added.
    pub i8_mac_cycles: f64,
    /// Cycles of a float multiply-add (software multiply and add), loaded.
    pub float_mac_cycles: f64,
    /// Instructions per nonzero and feature chunk besides the products (index and value walks, loop, the X row's
    /// address and DMA set-up, its place in the batch).
    pub nonzero_instructions: f64,
    /// Instructions per row and feature chunk besides the sums (row walk, store setup).
    pub row_instructions: f64,
    /// Host <-> DPU transfers: the runtime's model of a server's push, gather and broadcast bandwidths over the
    /// ranks a transfer spans, the same one `upmem`'s timelines predict with.
    pub transfers: upmem::TransferModel,
    /// DPUs per rank.
    pub dpus_per_rank: usize,
    /// Host memory bandwidth for building buffers and merging, bytes per second.
    pub host_bytes_per_second: f64,
    /// MRAM heap per DPU available to a plan, bytes.
    pub mram_bytes: u64,
}

/// Instructions of one multiply-add besides its product: load the feature and add (the lower bound, with the
/// sum in a register).
const TERM_INSTRUCTIONS: f64 = 2.0;
/// Instructions per feature of a batch (spmm_kernel.h): load its sum before the batch's products, store it after.
const BATCH_FEATURE_INSTRUCTIONS: f64 = 2.0;
/// Instructions of one iteration of the kernels' feature loops, which take 8 bytes of X: advance the index,
/// compare, branch.
const FEATURE_LOOP_INSTRUCTIONS: f64 = 4.0;
/// Instructions per batch besides its features: the call, the batch size's digits, loading the batch's values
/// as factors and its X rows' addresses, and the loop's entry and exit. Fitted with [`NONZERO_INSTRUCTIONS`],
/// [`ROW_INSTRUCTIONS`] and [`FIRST_BATCH_SAVED_PER_FEATURE`] to the simulator's instruction counts (`pimgnn
/// bench kernels`, CSR, rows of 1, 8 and 16 nonzeros, i8 to i32 at 16, 48 and 64 features: model over simulator
/// 0.99 to 1.05), leaning to rows of few nonzeros, whose batches [`batches`] undercounts a little:
/// tests/pim_cost.rs's graph, of rows of 1 to 7, gives 0.95 to 1.
const BATCH_INSTRUCTIONS: f64 = 66.0;
/// Instructions per SDDMM multiply-add besides the SpMM kernels' (`TERM_INSTRUCTIONS`): the second factor's load.
const SDDMM_TERM_INSTRUCTIONS: f64 = 1.0;
/// Instructions per nonzero and chunk of the SDDMM kernels besides the products: the index walk, loop and DMA
/// set-up (24), Q's row address `column * width`, a 32-bit multiply on a DPU (30), the product loop's entry and
/// exit and the index reader's advance (26), and the result's write into its buffer (5).
const SDDMM_NONZERO_INSTRUCTIONS: f64 = 85.0;
/// Instructions of a nonzero's X row address `column * row_bytes` (spmm_kernel.h's enum spmm_row_addressing): the
/// DPU compiler's 16-bit byte-multiply sequence when both factors fit 16 bits, as [`NONZERO_INSTRUCTIONS`] counts
/// it; a shift when a row's bytes are a power of two; in the `i8` and `i16` kernels, `column * 3` (one `lsl_add`)
/// and a shift when they are three times one; the compiler runtime's 32-bit multiply otherwise.
const ROW_ADDRESS_MUL16: f64 = 7.0;
const ROW_ADDRESS_SHIFT: f64 = 1.0;
const ROW_ADDRESS_THREE_SHIFTED: f64 = 2.0;
const ROW_ADDRESS_MUL32: f64 = 30.0;

/// The instructions of a nonzero's X row address in a DPU's X of `x_rows` rows of `row_bytes` each, for values
/// of `value_bytes`.
fn row_address_instructions(row_bytes: usize, x_rows: usize, value_bytes: usize) -> f64 {
    if row_bytes.is_power_of_two() {
        ROW_ADDRESS_SHIFT
    } else if value_bytes <= 2 && row_bytes >> row_bytes.trailing_zeros() == 3 {
        ROW_ADDRESS_THREE_SHIFTED
    } else if x_rows <= 1 << 16 && row_bytes < 1 << 16 {
        ROW_ADDRESS_MUL16
    } else {
        ROW_ADDRESS_MUL32
    }
}

/// The fewest DPU instructions an SpMM kernel spends per nonzero and feature chunk besides its products
/// (spmm_kernel.h): its column's and value's loads and the readers' advances (6), its X row's address as a shift
/// and an add (2), the DMA (1), and the loop's count and branch (2). `pimgnn bench kernels` measures the kernels
/// against it.
pub const NONZERO_LOWER_BOUND: f64 = 11.0;
/// Instructions per nonzero and chunk of the SpMM kernels besides the products and the values' walk: the index
/// walk with its block test and loop, the X row's address (here a 16-bit multiply, [`ROW_ADDRESS_MUL16`]), the
/// DMA's set-up, the value's and count's place in the batch. Fitted with [`BATCH_INSTRUCTIONS`].
const NONZERO_INSTRUCTIONS: f64 = 45.0;
/// Instructions per nonzero of the values' walk (values and indices are separate arrays, so that new values move
/// without the structure): the value's pointer advance and the reload of that pointer, which the walk of the
/// indices' block test serves as well (spmm_kernel.h's struct spmm_nonzeros).
const VALUE_READER_INSTRUCTIONS: f64 = 2.0;
/// The batches the kernels multiply a tile's `nonzeros` in, over `rows` rows: a row of d nonzeros takes
/// floor(d / B) full batches of B (spmm_kernel.h's SPMM_BATCH: the X chunks of 512 bytes) and one per binary
/// digit of the rest, counted with the rest uniform in [0, B) (on average (B - 1) / 2 nonzeros in log2(B) / 2
/// batches), and every row with nonzeros at least one.
fn batches<T>(nonzeros: f64, rows: f64) -> f64 {
    let batch = batch_nonzeros::<T>();
    let rows = rows.min(nonzeros);
    let estimate = (nonzeros - rows * (batch - 1.0) / 2.0) / batch + rows * batch.log2() / 2.0;
    estimate.max(rows)
}

/// Nonzeros of a full batch in `T`'s kernels: as many X chunks as [`BATCH_BYTES`] hold (spmm_kernel.h's SPMM_BATCH).
fn batch_nonzeros<T>() -> f64 {
    (BATCH_BYTES / (FEATURE_CHUNK * std::mem::size_of::<T>())) as f64
}

/// Rows of X a tile's DPU holds in a call that sends X by column: its column block's, or the columns its nonzeros
/// reference, as `plan` delivers X.
fn x_rows(plan: &Plan, tile: &TileStats) -> usize {
    match plan.x {
        XDelivery::Whole => tile.width,
        XDelivery::Referenced => tile.referenced,
    }
}

/// Rows of X each DPU holds in a call that sends X per nonzero: the most nonzeros of a tile, rounded up to even
/// (the engine's stride between units, `dpu/spmm_args.h`'s `x_unit_stride`).
fn per_nonzero_x_rows(tiles: &[TileStats]) -> usize {
    tiles.iter().map(|tile| tile.nonzeros).max().unwrap_or(0).next_multiple_of(2)
}

/// Bytes of X chunks a tasklet's batch buffer holds (spmm_kernel.h).
const BATCH_BYTES: usize = 512;
/// Bytes of a nonzero's value in MRAM (`spmm_value`).
const VALUE_BYTES: f64 = 4.0;

/// Instructions per sum of a row written to `Y` in 16 bits (spmm_kernel.h's `spmm_store_narrow`): its load, its
/// 16-bit store and the loop's share. The simulator's modelled cycles of a call taking `Y` so less those of the same
/// call taking it in accumulators, per row and feature, i8 over rows of 1 to 7 nonzeros: 2.6 to 2.75 at 48 to 256
/// features, 2.9 (COO) and 3.2 (CSR) at 16, where the call around the loop weighs more; less where the DMA
/// engine sets the pace (rows of 1 to 30 nonzeros at 16 features: 1 to 1.3).
const NARROW_FEATURE_INSTRUCTIONS: f64 = 2.75;
/// Instructions per wide row and chunk of such a call: the list's next entry read (the test of its end, its
/// address and the DMA's set-up) and the cursor's advance.
const WIDE_ROW_INSTRUCTIONS: f64 = 25.0;
/// Instructions per row with nonzeros and chunk besides its sums: the row's walk, the store's set-up (two compares
/// for the tasklet's shared rows) and the end of its last batch (the digits' tests). Fitted with
/// [`BATCH_INSTRUCTIONS`].
const ROW_INSTRUCTIONS: f64 = 16.0;
/// Instructions per feature that a row's first batch saves by setting its sums rather than loading them and
/// adding its first product to them. Fitted with [`BATCH_INSTRUCTIONS`].
const FIRST_BATCH_SAVED_PER_FEATURE: f64 = 2.0;
/// A row without nonzeros in a tasklet's range has its sums cleared, which the compiler turns into a call of the
/// DPU libc's `memset`: 3 instructions per 4-byte word and 15 around them for a word-aligned area of whole words
/// (the SDK 2025.1's compiled runtime, memset.c.obj: entry, the aligned start, the word loop's set-up, the loop,
/// its exit, the no-tail jump and the return). A sum is one word.
const MEMSET_WORD_INSTRUCTIONS: f64 = 3.0;
const MEMSET_FIXED_INSTRUCTIONS: f64 = 15.0;
/// Instructions per nonzero and chunk of an attention call beyond an SpMM call's: the read of the column's scores
/// (the call and its address), the branch on the score's sign, its add and the clamp, and `attention_exp2_of`
/// (fraction and whole part, the table load, two 32-bit multiplies of about 30 instructions each, the count of
/// leading zeros and the float's bits). Measured as the simulator's modelled cycles (which count the kernel's
/// compiled instructions) of an attention call less those of the same call with values per head: 116 per weight
/// on `graph(3000)` of tests/pim_cost.rs at 1 head of 16 and 4 heads of 8 alike, of which 2 are the rows' share.
const ATTENTION_WEIGHT_INSTRUCTIONS: f64 = 114.0;
/// Instructions per row and chunk of an attention call: the mode test and the read of the row's scores.
const ATTENTION_ROW_INSTRUCTIONS: f64 = 8.0;
/// Cycles of a launch that its tasklets' work adds to: the DPU's boot into `main` (the SDK 2025.1's crt0: tasklet 0
/// enters `main` after 520 instructions, each tasklet boots the next, and fewer than 11 run meanwhile, so an
/// instruction takes 11 cycles), every built tasklet's way through `main` to the barrier and the stop. The
/// simulator's modelled cycles of a launch with no work (the SpMM kernels as built for the default chip, 24
/// tasklets): 8,155 (CSR) and 8,110 (COO).
const LAUNCH_CYCLES: f64 = 8130.0;
/// Instructions of each tasklet with work besides its nonzeros' and rows': per launch, its work's read and its
/// way to the barrier and the merge; and per pass (a chunk of features, or a unit with X per nonzero), the pass's
/// set-up (its Y and value addresses, its partial slots, its walks' starts). Fitted to the simulator: tiles of 1 to
/// 10 rows of 1 to 8 nonzeros per tasklet, i8 at 16 and 64 features, both formats and X layouts.
const TASKLET_INSTRUCTIONS: f64 = 180.0;
const PASS_TASKLET_INSTRUCTIONS: f64 = 185.0;
/// Instructions of the merge's first tasklet per partial sum of its chain after its own (the chain's test, the
/// read's call, the adds' loop) and per feature of it (its sum's load, add and store): the simulator's modelled
/// tail after the barrier of one DPU whose only row is spread over 16 tasklets, i8 with X per nonzero at 8
/// features (920 cycles a partial) and by column at 64 (3,800).
const MERGE_PARTIAL_INSTRUCTIONS: f64 = 38.0;
const MERGE_FEATURE_INSTRUCTIONS: f64 = 4.6;
/// Instructions of each row piece written to a partial slot (a row shared with another tasklet) beyond a row
/// written to Y: per pass, its slot's address (a 32-bit multiply) and the store's test of the slot; per launch, the
/// merge's test of whether the piece starts its row's chain. Measured as the simulator's instructions of a tasklet
/// holding a 35-nonzero piece of a row shared by 16 tasklets less those of one holding a whole row of 35, i8: 124
/// (X per nonzero at 8 features) and 158 (16), 90 (by column at 16 and 64) and 222 (256, four chunks).
const SHARED_PIECE_PASS_INSTRUCTIONS: f64 = 40.0;
const SHARED_PIECE_INSTRUCTIONS: f64 = 60.0;
/// With X per nonzero, instructions per nonzero and unit besides the unit's multiply-adds: the value's load,
/// the pointers' advances and the loop's test, which the nonzeros share in pairs. Fitted with the two below.
const UNIT_NONZERO_INSTRUCTIONS: f64 = 4.0;
/// With X per nonzero, instructions per row and unit: the row's count, its run to the end of the blocks held, its
/// test for a plain row and the write's call; and per feature of the unit, the sum's clearing and store.
const UNIT_ROW_INSTRUCTIONS: f64 = 70.0;
const UNIT_ROW_FEATURE_INSTRUCTIONS: f64 = 1.0;

/// A UPMEM server: the DPU clock and DMA costs of PrIM's, transfers as upmem models a full server on SDK 2025.1
/// ([`upmem::CLOCK_HZ`], [`upmem::DMA_READ_ALPHA_CYCLES`], [`upmem::TransferModel::default`]), and the kernels'
/// instruction counts.
impl HardwareModel {
    /// The default model with the transfers of [`upmem::TransferModel::configured`]: a server's profile named by
    /// `UPMEM_TRANSFER_PROFILE`, else the published defaults.
    pub fn configured() -> Result<HardwareModel> {
        let transfers = upmem::TransferModel::configured().map_err(upmem::Error::from)?;
        Ok(HardwareModel { transfers, ..HardwareModel::default() })
    }
}

impl Default for HardwareModel {
    fn default() -> Self {
        HardwareModel {
            clock_hz: upmem::CLOCK_HZ as f64,
            dma_read_alpha: f64::from(upmem::DMA_READ_ALPHA_CYCLES),
            dma_write_alpha: f64::from(upmem::DMA_WRITE_ALPHA_CYCLES),
            dma_cycles_per_byte: upmem::DMA_CYCLES_PER_BYTE,
            pipeline_tasklets: 11.0,
            // The product, the feature's load and the add (software for a float, 66 instructions).
            int_mac_cycles: 30.0 + TERM_INSTRUCTIONS,
            i16_mac_cycles: 7.0 + TERM_INSTRUCTIONS,
            i8_mac_cycles: 1.0 + TERM_INSTRUCTIONS,
            float_mac_cycles: 179.0 + 66.0 + TERM_INSTRUCTIONS - 1.0,
            nonzero_instructions: NONZERO_INSTRUCTIONS + VALUE_READER_INSTRUCTIONS,
            row_instructions: ROW_INSTRUCTIONS,
            transfers: upmem::TransferModel::default(),
            dpus_per_rank: 64,
            host_bytes_per_second: 5e9,
            mram_bytes: upmem::DEFAULT_MRAM_SIZE,
        }
    }
}

/// What one DPU's SpMM kernel runs over: its block of the matrix, the rows of X it sees, and its tasklets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelTile {
    /// The block's format.
    pub format: Format,
    /// Rows of the block.
    pub rows: usize,
    /// Nonzeros of the block.
    pub nonzeros: usize,
    /// Rows of the DPU's X (its block's columns as it numbers them).
    pub x_rows: usize,
    /// Tasklets the kernel runs.
    pub tasklets: u32,
    /// In a call that takes `Y` in 16 bits (`dpu/spmm_args.h`'s `y_narrow`), the rows written so; the others
    /// are the block's wide rows. 0 in a call that takes every row in accumulators.
    pub narrow_rows: usize,
    /// Whether the call sends X as one row per nonzero (`dpu/spmm_args.h`'s `x_per_nonzero`, types with
    /// [`PimElement::X_PER_NONZERO`]): the kernel then walks each unit of 8 bytes of features over the nonzeros in
    /// order, with no DMA per nonzero.
    pub x_per_nonzero: bool,
    /// Nonzeros of the block's longest row. A row spread over several tasklets has its partial sums merged by the
    /// first of them after the others are done: a hub row's merge is the kernel's tail.
    pub longest_row: usize,
}

/// How a tile's rows are shared between its tasklets, expected: the chain of tasklets over its longest row and the
/// row pieces written to partial slots ([`HardwareModel`]'s `longest_chain` and `shared_pieces`).
struct RowSharing {
    /// Tasklets sharing the longest row (1 when a single tasklet walks the tile).
    chain: f64,
    /// Row pieces written to partial slots, the chain's among them.
    pieces: f64,
    /// The chain's pieces: `chain` when any row is shared, else none.
    chain_pieces: f64,
}

impl RowSharing {
    /// The sharing of a tile of `rows` rows with `nonzeros`, `longest_row` of them in its longest, by `walks`
    /// tasklets.
    fn of(walks: f64, nonzeros: f64, rows: f64, longest_row: f64) -> Self {
        let chain = HardwareModel::longest_chain(walks, nonzeros + rows, longest_row);
        let pieces = HardwareModel::shared_pieces(walks, nonzeros, rows, chain);
        RowSharing { chain, pieces, chain_pieces: chain.min(pieces) }
    }
}

/// How a call lays out X and Y on the DPUs: what [`HardwareModel`] predicts fastest for a call (the engine
/// follows it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallLayout {
    /// X as one row per nonzero, in each block's nonzero order ([`KernelTile::x_per_nonzero`]); else the rows
    /// of X the block's columns address.
    pub x_per_nonzero: bool,
    /// `Y` in 16 bits (`dpu/spmm_args.h`'s `y_narrow`) but for each block's wide rows.
    pub y_16: bool,
}

/// What a call's layout is fixed to: each `None` leaves that choice to the model, each `Some` fixes it where the
/// call's type and shape allow it ([`PimSpmm::set_x_per_nonzero`](super::PimSpmm::set_x_per_nonzero),
/// [`PimSpmm::set_y_in_16_bits`](super::PimSpmm::set_y_in_16_bits)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayoutChoice {
    /// X per nonzero ([`CallLayout::x_per_nonzero`]).
    pub x_per_nonzero: Option<bool>,
    /// `Y` in 16 bits ([`CallLayout::y_16`]).
    pub y_16: Option<bool>,
}

/// The values a layout's choice may take: `fixed` where `allowed`, both when not fixed, else the default `false`.
fn choices(fixed: Option<bool>, allowed: bool) -> &'static [bool] {
    match fixed {
        Some(true) if allowed => &[true],
        Some(_) => &[false],
        None if allowed => &[false, true],
        None => &[false],
    }
}

/// Cycles of one DPU's kernel: the pipeline's and the DMA engine's, which overlap, and those in which the
/// tasklets wait for the DMA engine together.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KernelCycles {
    /// Instructions issued, scaled by the pipeline's issue rate.
    pub compute: f64,
    /// DMA engine cycles (the simulator counts these exactly), `serial`'s included.
    pub dma: f64,
    /// DMA cycles nothing overlaps: at each pass's start every tasklet waits for its walks' first blocks, which
    /// the engine serves one after another, and after the barrier the rows shared between tasklets are merged
    /// by reads and writes of their partial sums.
    pub serial: f64,
    /// The tasklets' set-up at the launch and at each pass (their work's read, their partial slots, their walks'
    /// addresses), scaled by the pipeline's issue rate as `compute` is: a tasklet sets up while others wait for
    /// their first blocks, so it overlaps `serial`.
    pub setup: f64,
    /// The launch's cycles before and around the tasklets' work: the DPU's boot and the tasklets' way through
    /// `main` with no work.
    pub launch: f64,
}

impl KernelCycles {
    /// The kernel's cycles: the busier of the two engines, then the DMAs nothing overlaps or the tasklets' set-up
    /// beside them, and the launch's own.
    pub fn total(&self) -> f64 {
        self.compute.max(self.dma - self.serial) + self.serial.max(self.setup) + self.launch
    }
}

/// Predicted hardware time of one SpMM call, by phase.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prediction {
    /// Building X buffers on the host and sending them.
    pub send_x: Duration,
    /// The slowest DPU's kernel.
    pub kernel: Duration,
    /// Reading Y back.
    pub gather: Duration,
    /// Adding partial tiles and scattering into Y on the host.
    pub merge: Duration,
}

impl Prediction {
    /// Sum of the phases.
    pub fn total(&self) -> Duration {
        self.send_x + self.kernel + self.gather + self.merge
    }

    /// The share of the total that moves data between host and DPUs (send X and gather), 0 to 1.
    pub fn transfer_share(&self) -> f64 {
        let total = self.total().as_secs_f64();
        if total == 0.0 {
            return 0.0;
        }
        (self.send_x + self.gather).as_secs_f64() / total
    }
}

/// Phase by phase: the prediction of a sequence of calls.
impl std::ops::Add for Prediction {
    type Output = Prediction;

    fn add(self, other: Prediction) -> Prediction {
        Prediction {
            send_x: self.send_x + other.send_x,
            kernel: self.kernel + other.kernel,
            gather: self.gather + other.gather,
            merge: self.merge + other.merge,
        }
    }
}

impl fmt::Display for Prediction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "{:.3} ms (send X {:.3}, kernel {:.3}, gather {:.3}, merge {:.3})",
            ms(self.total()),
            ms(self.send_x),
            ms(self.kernel),
            ms(self.gather),
            ms(self.merge)
        )
    }
}

/// Padded features per DPU of a call with `features` columns split over `groups`: even and a multiple of 8
/// bytes of `T`, as the kernels need. [`HardwareModel::kernel_cycles`] takes features so padded.
///
/// ```
/// use pimgnn::pim::cost::padded_features;
///
/// assert_eq!(padded_features::<i8>(4, 1), 8);
/// assert_eq!(padded_features::<f32>(256, 64), 4);
/// ```
pub fn padded_features<T>(features: usize, groups: usize) -> usize {
    let unit = 8 / std::mem::size_of::<T>();
    features.div_ceil(groups).div_ceil(unit).max(1) * unit
}

/// Padded features per DPU of a call with `features` columns in `heads` attention heads of equal width (a
/// multiple of 8 bytes of `T`), split over `groups`: as [`padded_features`], then widened to whole heads or to a
/// whole fraction of one, so that every DPU's slice starts where a head does, or inside one head only.
pub(crate) fn padded_head_features<T>(features: usize, groups: usize, heads: usize) -> usize {
    let padded = padded_features::<T>(features, groups);
    let head = features / heads.max(1);
    if heads <= 1 || head == 0 {
        return padded;
    }
    if padded >= head {
        return padded.next_multiple_of(head);
    }
    let unit = 8 / std::mem::size_of::<T>();
    (padded..head).step_by(unit).find(|width| head.is_multiple_of(*width)).unwrap_or(head)
}

/// The features per value set of a DPU's slice of `padded` features when the call has `heads` heads over
/// `features` columns ([`padded_head_features`]): a head's width, or the slice's when it is one head or less.
pub(crate) fn set_features(features: usize, padded: usize, heads: usize) -> usize {
    if heads <= 1 {
        padded
    } else {
        padded.min(features / heads)
    }
}

/// The widths of the feature chunks a kernel pass takes over `padded` features in value sets of `set_features`
/// each: at most [`FEATURE_CHUNK`], none across two sets (`dpu/spmm_kernel.h`'s `main`).
pub(crate) fn chunk_widths(padded: usize, set_features: usize) -> impl Iterator<Item = usize> {
    let set_features = set_features.max(1);
    (0..padded.div_ceil(set_features)).flat_map(move |set| {
        let width = set_features.min(padded - set * set_features);
        (0..width).step_by(FEATURE_CHUNK).map(move |first| (width - first).min(FEATURE_CHUNK))
    })
}

/// Bytes of one DPU's MRAM image of a tile: its structure and values, and the wide-row list of a type whose `Y`
/// may come back in 16 bits. A COO block of a type that takes X per nonzero has row pointers too, which that walk
/// counts a row's nonzeros by.
pub(crate) fn matrix_bytes<T: PimElement>(format: Format, tile: &TileStats) -> usize {
    let wide_rows = if T::NARROW_Y.is_some() { tile.wide_rows.next_multiple_of(2) * 4 } else { 0 };
    let row_ptrs = (tile.rows + 1).next_multiple_of(2) * 4;
    wide_rows
        + match format {
            Format::Csr => row_ptrs + tile.nonzeros * 8,
            Format::Coo if T::X_PER_NONZERO => row_ptrs + (tile.nonzeros * 3).next_multiple_of(2) * 4,
            Format::Coo => (tile.nonzeros * 3).next_multiple_of(2) * 4,
        }
}

/// Bytes of a DPU's `Y` block of `padded` features, as gathered (transfers are the same size on every DPU, so the
/// largest tile decides): every row's accumulators, or with `narrow`, every row in 16 bits and then the wide rows'
/// accumulators.
pub(crate) fn y_bytes<T: PimElement>(tiles: &[TileStats], padded: usize, narrow: bool) -> usize {
    let max = |f: &dyn Fn(&TileStats) -> usize| tiles.iter().map(f).max().unwrap_or(0);
    let acc = std::mem::size_of::<T::Acc>();
    if narrow {
        max(&|tile| tile.rows) * padded * 2 + max(&|tile| tile.wide_rows) * padded * acc
    } else {
        max(&|tile| tile.rows) * padded * acc
    }
}

/// MRAM a DPU needs during a call: its matrix, X, the partial rows, Y (as accumulators, which hold `Y` in 16 bits
/// too).
pub(crate) fn call_bytes<T: PimElement>(matrix: usize, x_rows: usize, rows: usize, features: usize) -> usize {
    let acc = std::mem::size_of::<T::Acc>();
    matrix
        + x_rows * features * std::mem::size_of::<T>()
        + MAX_TASKLETS * MAX_PARTIALS * features * acc
        + rows * features * acc
}

impl HardwareModel {
    /// Predicted time to load a matrix of `bytes_per_dpu` (the largest DPU's image) onto `dpus` DPUs.
    pub fn load_time(&self, dpus: usize, bytes_per_dpu: usize) -> Duration {
        self.parallel_transfer(Operation::Push, dpus, bytes_per_dpu)
    }

    /// Time of a parallel transfer (or a broadcast) of `bytes_per_dpu` to or from each of `dpus` DPUs, which
    /// span `dpus / dpus_per_rank` ranks (rounded up).
    fn parallel_transfer(&self, operation: Operation, dpus: usize, bytes_per_dpu: usize) -> Duration {
        let ranks = dpus.div_ceil(self.dpus_per_rank.max(1));
        self.transfers.parallel_time(operation, bytes_per_dpu as u64, dpus, ranks).unwrap_or_default()
    }

    fn host(&self, bytes: usize) -> Duration {
        Duration::from_secs_f64(bytes as f64 / self.host_bytes_per_second)
    }

    /// Cycles of one DPU's kernel for `tile` over `features` padded features ([`padded_features`]).
    pub fn kernel_cycles<T: PimElement>(&self, tile: KernelTile, features: usize) -> KernelCycles {
        self.kernel_cycles_in_sets::<T>(tile, features, features)
    }

    /// As [`HardwareModel::kernel_cycles`] with the features in value sets (attention heads) of `set_features`
    /// each, whose chunks stop at every set's end.
    pub fn kernel_cycles_in_sets<T: PimElement>(
        &self,
        tile: KernelTile,
        features: usize,
        set_features: usize,
    ) -> KernelCycles {
        if tile.x_per_nonzero {
            return self.unit_kernel_cycles::<T>(tile, features);
        }
        let KernelTile { format, rows, nonzeros, x_rows, tasklets, narrow_rows, .. } = tile;
        let size = std::mem::size_of::<T>() as f64;
        let mac = self.mac_cycles::<T>();
        let nonzero = self.nonzero_instructions - ROW_ADDRESS_MUL16
            + row_address_instructions(features * std::mem::size_of::<T>(), x_rows, std::mem::size_of::<T>());
        let y_narrow = narrow_rows > 0;
        let (nz, rows, narrow_rows, tasklets) = (nonzeros as f64, rows as f64, narrow_rows as f64, f64::from(tasklets));
        let wide_rows = if y_narrow { rows - narrow_rows } else { 0.0 };
        // Each pass walks the tile's structure and values again.
        let walks = tasklets.min(nz + rows);
        let walk_dma = self.index_reads(format, rows, nz, walks) + self.reads(nz, VALUE_BYTES, walks);
        let batches = batches::<T>(nz, rows);
        // Rows that certainly have no nonzeros, whose sums are cleared rather than set by a first batch.
        let empty_rows = (rows - nz).max(0.0);
        let batch_feature = BATCH_FEATURE_INSTRUCTIONS + FEATURE_LOOP_INSTRUCTIONS * size / 8.0;
        let chunks = chunk_widths(features, set_features).count() as f64;
        let mut cycles = KernelCycles {
            setup: walks * (TASKLET_INSTRUCTIONS + chunks * PASS_TASKLET_INSTRUCTIONS) / self.issue_share(walks),
            launch: LAUNCH_CYCLES,
            ..KernelCycles::default()
        };
        // The instructions of the tile's longest row: its nonzeros, and its walk and partial sum by each tasklet
        // sharing it.
        let longest = tile.longest_row as f64;
        let RowSharing { chain, pieces: shared_pieces, chain_pieces } = RowSharing::of(walks, nz, rows, longest);
        let batch = batch_nonzeros::<T>();
        let mut longest_row_instructions = 0.0;
        for width in chunk_widths(features, set_features) {
            let width = width as f64;
            longest_row_instructions += longest
                * (width * mac + nonzero + (width * batch_feature + BATCH_INSTRUCTIONS) / batch)
                + chain * (self.row_instructions - FIRST_BATCH_SAVED_PER_FEATURE * width)
                + chain_pieces * SHARED_PIECE_PASS_INSTRUCTIONS;
            cycles.dma += nz * (self.dma_read_alpha + self.dma_cycles_per_byte * width * size);
            cycles.dma += walk_dma;
            cycles.dma += (rows - narrow_rows) * (self.dma_write_alpha + self.dma_cycles_per_byte * width * 4.0)
                + narrow_rows * (self.dma_write_alpha + self.dma_cycles_per_byte * width * 2.0)
                + wide_rows * (self.dma_read_alpha + self.dma_cycles_per_byte * 8.0);
            cycles.compute += narrow_rows * NARROW_FEATURE_INSTRUCTIONS * width + wide_rows * WIDE_ROW_INSTRUCTIONS;
            cycles.compute += nz * (width * mac + nonzero)
                + batches * (width * batch_feature + BATCH_INSTRUCTIONS)
                + (Self::row_pieces(walks, nz, rows) - empty_rows)
                    * (self.row_instructions - FIRST_BATCH_SAVED_PER_FEATURE * width)
                + empty_rows * (MEMSET_FIXED_INSTRUCTIONS + MEMSET_WORD_INSTRUCTIONS * width)
                + shared_pieces * SHARED_PIECE_PASS_INSTRUCTIONS;
        }
        cycles.compute += shared_pieces * SHARED_PIECE_INSTRUCTIONS;
        longest_row_instructions += chain_pieces * SHARED_PIECE_INSTRUCTIONS;
        cycles.compute = self.issue_cycles(walks, nz + rows, cycles.compute, longest, longest_row_instructions);
        let first_blocks: &[f64] = match format {
            Format::Csr => &[4.0, 4.0, VALUE_BYTES],
            Format::Coo => &[8.0, VALUE_BYTES],
        };
        for width in chunk_widths(features, set_features) {
            let (engine, merge) = self.merge_cycles(walks, chain, width as f64);
            cycles.dma += engine;
            cycles.serial += self.pass_start_cycles(first_blocks, walks) + merge;
        }
        cycles
    }

    /// The share of the pipeline's issue slots that `working` tasklets use: all of them from
    /// [`HardwareModel::pipeline_tasklets`] on, else one slot in that many each (a tile without work counts one,
    /// having nothing to issue).
    fn issue_share(&self, working: f64) -> f64 {
        (working.max(1.0) / self.pipeline_tasklets).min(1.0)
    }

    /// The DMA cycles of a pass's start, which nothing overlaps: each of `walks` tasklets starting its walks reads
    /// one block of each of `first_blocks` (entry bytes, [`READ_ENTRIES`] entries a block), all at once. (The
    /// walks' DMA cycles count these blocks already.)
    fn pass_start_cycles(&self, first_blocks: &[f64], walks: f64) -> f64 {
        let block =
            |entry_bytes: f64| self.dma_read_alpha + self.dma_cycles_per_byte * READ_ENTRIES as f64 * entry_bytes;
        walks * first_blocks.iter().map(|&bytes| block(bytes)).sum::<f64>()
    }

    /// The merge after the barrier of a chunk of `width` features (spmm_kernel.h's spmm_merge), as (DMA engine
    /// cycles, cycles until it ends). Each of the `walks - 1` rows a tasklet shares with the next costs the engine
    /// two partial sums read and their sum written. The first tasklet of a row's chain adds the chain's partials
    /// one after another, alone in the pipeline: an instruction every 11 cycles, and every read's latency in the
    /// open. `chain` is the longest chain's tasklets ([`Self::longest_chain`]); the merge ends when the engine
    /// or that chain's first tasklet is done.
    fn merge_cycles(&self, walks: f64, chain: f64, width: f64) -> (f64, f64) {
        let partial = width * 4.0 * self.dma_cycles_per_byte;
        let (read, write) = (self.dma_read_alpha + partial, self.dma_write_alpha + partial);
        let engine = (walks - 1.0).max(0.0) * (2.0 * read + write);
        if chain < 2.0 {
            return (engine, engine);
        }
        let add = self.pipeline_tasklets * (MERGE_PARTIAL_INSTRUCTIONS + MERGE_FEATURE_INSTRUCTIONS * width);
        (engine, engine.max(read + write + (chain - 1.0) * (read + add)))
    }

    /// Cycles the pipeline takes to issue `instructions` of `walks` tasklets that take equal shares of a tile's
    /// `units` of work (a row one, a nonzero one more), `longest_row_instructions` of them the tile's longest row's
    /// (of `longest_row` nonzeros). A tasklet issues every [`HardwareModel::pipeline_tasklets`] cycles and the
    /// pipeline one instruction a cycle, so tasklets of equal work take `instructions / issue share`. But a row
    /// walk costs more than a nonzero's multiply-adds at narrow widths and less at wide ones, so the tasklets within
    /// a hub row and those holding the tile's other rows do unequal work: all run at the shared rate until the
    /// lighter are done, then the heavier at theirs.
    fn issue_cycles(
        &self,
        walks: f64,
        units: f64,
        instructions: f64,
        longest_row: f64,
        longest_row_instructions: f64,
    ) -> f64 {
        let share = units / walks;
        let (hub_units, rest_units) = (longest_row + 1.0, units - longest_row - 1.0);
        if walks < 2.0 || hub_units < share || rest_units <= 0.0 {
            return instructions / self.issue_share(walks);
        }
        let per_hub_unit = longest_row_instructions / hub_units;
        let per_rest_unit = (instructions - longest_row_instructions) / rest_units;
        let hub_tasklet = share * per_hub_unit;
        let rest_held = rest_units.min(share);
        let rest_tasklet = rest_held * per_rest_unit + (share - rest_held) * per_hub_unit;
        let (light, heavy, heavy_tasklets) = if rest_tasklet > hub_tasklet {
            (hub_tasklet, rest_tasklet, (rest_units / share).max(1.0))
        } else {
            (rest_tasklet, hub_tasklet, hub_units / share)
        };
        let cycles_per_instruction = |tasklets: f64| tasklets.max(self.pipeline_tasklets);
        light * cycles_per_instruction(walks) + (heavy - light) * cycles_per_instruction(heavy_tasklets)
    }

    /// The cuts between `walks` tasklets' work that fall inside a row of a tile of `rows` rows with `nonzeros`,
    /// expected: a cut falls at an even share of the tile's units (a row one, a nonzero one more), inside its row
    /// unless at the row's own unit.
    fn cuts_inside_rows(walks: f64, nonzeros: f64, rows: f64) -> f64 {
        if nonzeros > 0.0 {
            (walks - 1.0).max(0.0) * nonzeros / (nonzeros + rows)
        } else {
            0.0
        }
    }

    /// The row pieces `walks` tasklets walk over a tile of `rows` rows with `nonzeros`: each row, and once more
    /// each cut inside a row, whose both sides are walked.
    fn row_pieces(walks: f64, nonzeros: f64, rows: f64) -> f64 {
        rows + Self::cuts_inside_rows(walks, nonzeros, rows)
    }

    /// The row pieces that `walks` tasklets over a tile of `rows` rows with `nonzeros` write to partial slots,
    /// expected, the longest row's chain of `chain` tasklets among them: a cut inside a row makes both its sides
    /// such pieces, but one inside a row already shared adds one piece, and the chain's `chain - 1` cuts share one
    /// row.
    fn shared_pieces(walks: f64, nonzeros: f64, rows: f64, chain: f64) -> f64 {
        let cuts = Self::cuts_inside_rows(walks, nonzeros, rows);
        if cuts == 0.0 {
            return 0.0;
        }
        (2.0 * cuts - (chain - 2.0).max(0.0)).max(chain)
    }

    /// The tasklets among `walks` that share a tile's longest row of `longest_row` nonzeros, expected, each walking
    /// its own piece of it: tasklets take equal shares of the tile's `units` of work (a row costs one, a nonzero
    /// one more), so the row's units cross a tasklet's boundary once per share, wherever it starts. At least the
    /// pair of a row cut in two: with two walks or more, the work's cuts fall inside rows.
    fn longest_chain(walks: f64, units: f64, longest_row: f64) -> f64 {
        if walks < 2.0 {
            return 1.0;
        }
        (1.0 + (longest_row + 1.0) * walks / units).clamp(2.0, walks)
    }

    /// Cycles of one DPU's kernel for `tile` over `features` padded features with X per nonzero: a pass per unit
    /// of 8 bytes of features over the tile's nonzeros in order, their units of X and values read
    /// [`READ_ENTRIES`] at a time, each row's sums kept in registers and written to `Y` (spmm_kernel.h's
    /// spmm_unit_row). Value sets need no chunks of their own: a unit never straddles two.
    fn unit_kernel_cycles<T: PimElement>(&self, tile: KernelTile, features: usize) -> KernelCycles {
        let KernelTile { rows, nonzeros, tasklets, narrow_rows, .. } = tile;
        let unit = (8 / std::mem::size_of::<T>()) as f64;
        let units = (features * std::mem::size_of::<T>()).div_ceil(8) as f64;
        let (nz, rows, narrow_rows, tasklets) = (nonzeros as f64, rows as f64, narrow_rows as f64, f64::from(tasklets));
        let wide_rows = if narrow_rows > 0.0 { rows - narrow_rows } else { 0.0 };
        let walks = tasklets.min(nz + rows);
        let nonzero = unit * self.mac_cycles::<T>() + UNIT_NONZERO_INSTRUCTIONS;
        let row = UNIT_ROW_INSTRUCTIONS + UNIT_ROW_FEATURE_INSTRUCTIONS * unit;
        let longest = tile.longest_row as f64;
        let RowSharing { chain, pieces: shared_pieces, chain_pieces } = RowSharing::of(walks, nz, rows, longest);
        let longest_row_instructions = longest * nonzero + chain * row + chain_pieces * SHARED_PIECE_PASS_INSTRUCTIONS;
        // Both formats walk the block's row pointers and no indices (spmm_kernel.h's spmm_walk_units).
        let (index_dma, first_blocks) = (self.reads(rows, 4.0, walks), [4.0, VALUE_BYTES, 8.0]);
        let pass = KernelCycles {
            dma: index_dma
                + self.reads(nz, VALUE_BYTES, walks)
                + self.reads(nz, 8.0, walks)
                + (rows - narrow_rows) * (self.dma_write_alpha + self.dma_cycles_per_byte * unit * 4.0)
                + narrow_rows * (self.dma_write_alpha + self.dma_cycles_per_byte * unit * 2.0)
                + wide_rows * (self.dma_read_alpha + self.dma_cycles_per_byte * 8.0),
            compute: nz * nonzero
                + Self::row_pieces(walks, nz, rows) * row
                + shared_pieces * SHARED_PIECE_PASS_INSTRUCTIONS
                + narrow_rows * NARROW_FEATURE_INSTRUCTIONS * unit
                + wide_rows * WIDE_ROW_INSTRUCTIONS,
            ..KernelCycles::default()
        };
        let (engine, merges) = chunk_widths(features, features)
            .map(|width| self.merge_cycles(walks, chain, width as f64))
            .fold((0.0, 0.0), |(engine, merges), (e, m)| (engine + e, merges + m));
        KernelCycles {
            dma: units * pass.dma + engine,
            compute: self.issue_cycles(
                walks,
                nz + rows,
                units * pass.compute + shared_pieces * SHARED_PIECE_INSTRUCTIONS,
                longest,
                units * longest_row_instructions + chain_pieces * SHARED_PIECE_INSTRUCTIONS,
            ),
            serial: units * self.pass_start_cycles(&first_blocks, walks) + merges,
            setup: walks * (TASKLET_INSTRUCTIONS + units * PASS_TASKLET_INSTRUCTIONS) / self.issue_share(walks),
            launch: LAUNCH_CYCLES,
        }
    }

    /// Cycles an attention call adds to a kernel's (`SPMM_MODE_ATTENTION`) for a tile of `rows` rows and
    /// `nonzeros` nonzeros over `features` padded features in value sets of `set_features`: per chunk, a read of
    /// each row's scores and, per nonzero, a read of its column's and the instructions that make its weight
    /// (measured against the simulator: `ATTENTION_WEIGHT_INSTRUCTIONS`).
    pub fn attention_cycles(
        &self,
        rows: usize,
        nonzeros: usize,
        features: usize,
        set_features: usize,
        tasklets: u32,
    ) -> KernelCycles {
        let chunks = chunk_widths(features, set_features).count() as f64;
        let (rows, nz) = (rows.min(nonzeros) as f64, nonzeros as f64);
        let read = |bytes: f64| self.dma_read_alpha + self.dma_cycles_per_byte * bytes;
        let mut cycles = KernelCycles {
            dma: chunks * (nz * read(8.0) + rows * read(16.0)),
            compute: chunks * (nz * ATTENTION_WEIGHT_INSTRUCTIONS + rows * ATTENTION_ROW_INSTRUCTIONS),
            ..KernelCycles::default()
        };
        cycles.compute /= self.issue_share(f64::from(tasklets));
        cycles
    }

    /// DMA cycles of `walks` walks (one per tasklet and pass) of a kernel reader over `entries` entries of
    /// `entry_bytes` each (spmm_kernel.h): a block of [`READ_ENTRIES`] entries when a walk starts and each time
    /// one is used up.
    fn reads(&self, entries: f64, entry_bytes: f64, walks: f64) -> f64 {
        let block = self.dma_read_alpha + self.dma_cycles_per_byte * READ_ENTRIES as f64 * entry_bytes;
        ((entries / READ_ENTRIES as f64).floor() + walks) * block
    }

    /// DMA cycles of the walks over a tile's structure: its nonzeros' indices, and CSR's row pointers.
    fn index_reads(&self, format: Format, rows: f64, nonzeros: f64, walks: f64) -> f64 {
        match format {
            Format::Csr => self.reads(nonzeros, 4.0, walks) + self.reads(rows, 4.0, walks),
            Format::Coo => self.reads(nonzeros, 8.0, walks),
        }
    }

    /// Cycles of one product and its sum in `T`'s kernels: the feature's load, the product and the add, the
    /// fewest instructions a multiply-add takes on a DPU (spmm_kernel.h's lower bounds).
    pub fn mac_cycles<T: PimElement>(&self) -> f64 {
        match T::NAME {
            "f32" => self.float_mac_cycles,
            "i16" => self.i16_mac_cycles,
            "i8" => self.i8_mac_cycles,
            _ => self.int_mac_cycles,
        }
    }

    /// Cycles of one DPU's SDDMM kernel for a tile of `rows` rows and `nonzeros` nonzeros over `features` padded
    /// features, run by `tasklets` tasklets: the SpMM kernel's index walk and X (here Q) reads per nonzero and
    /// chunk, a read of P's chunk per nonzero (per row when the features fit one chunk), the same instructions
    /// per product and per nonzero, and the results written [`RESULT_BUFFER`] at a time; no rows are written.
    pub fn sddmm_kernel_cycles<T: PimElement>(
        &self,
        format: Format,
        rows: usize,
        nonzeros: usize,
        features: usize,
        tasklets: u32,
    ) -> KernelCycles {
        let size = std::mem::size_of::<T>() as f64;
        let mac = self.mac_cycles::<T>();
        let (nz, rows, tasklets) = (nonzeros as f64, rows as f64, f64::from(tasklets));
        // An SDDMM call walks each tasklet's nonzeros once.
        let walks = tasklets.min(nz);
        let mut cycles = KernelCycles {
            setup: walks * (TASKLET_INSTRUCTIONS + PASS_TASKLET_INSTRUCTIONS) / self.issue_share(walks),
            launch: LAUNCH_CYCLES,
            ..KernelCycles::default()
        };
        cycles.dma += self.index_reads(format, rows, nz, walks);
        let p_reads = if features <= FEATURE_CHUNK { rows.min(nz) } else { nz };
        for first in (0..features).step_by(FEATURE_CHUNK) {
            let width = (features - first).min(FEATURE_CHUNK) as f64;
            let read = self.dma_read_alpha + self.dma_cycles_per_byte * width * size;
            cycles.dma += (nz + p_reads) * read;
            let term = mac + SDDMM_TERM_INSTRUCTIONS + FEATURE_LOOP_INSTRUCTIONS * size / 8.0;
            cycles.compute += nz * (width * term + SDDMM_NONZERO_INSTRUCTIONS);
        }
        let writes = (nz / RESULT_BUFFER as f64).ceil() + 2.0 * walks;
        cycles.dma += writes * self.dma_write_alpha + self.dma_cycles_per_byte * nz * 4.0;
        cycles.compute /= self.issue_share(walks);
        cycles
    }

    /// Predicted time of one SDDMM call of `plan` over tiles of these sizes: Q sent as SpMM sends X, P pushed
    /// (each DPU its rows), the slowest kernel, the results and edge slots gathered, and their assembly on the
    /// host (`send_x` holds both sends, `merge` the assembly).
    pub(crate) fn predict_sddmm<T: PimElement>(
        &self,
        plan: &Plan,
        tiles: &[TileStats],
        nonzeros: usize,
        features: usize,
        nr_dpus: usize,
    ) -> Prediction {
        // Q goes as SpMM's X by column: the SDDMM kernels address it by column.
        let by_column = LayoutChoice { x_per_nonzero: Some(false), ..LayoutChoice::default() };
        let spmm = self.predict_laid_out::<T>(plan, tiles, 0, CallShape::plain(features), nr_dpus, by_column);
        let padded = padded_features::<T>(features, plan.feature_groups as usize);
        let max = |f: &dyn Fn(&TileStats) -> usize| tiles.iter().map(f).max().unwrap_or(0);
        let p_bytes = max(&|tile| tile.rows) * padded * std::mem::size_of::<T>();
        let send_p = self.host(tiles.len() * plan.feature_groups as usize * p_bytes)
            + self.parallel_transfer(Operation::Push, nr_dpus, p_bytes);
        let cycles = tiles
            .iter()
            .map(|tile| {
                self.sddmm_kernel_cycles::<T>(plan.format, tile.rows, tile.nonzeros, padded, plan.tasklets).total()
            })
            .fold(0.0, f64::max);
        let out_bytes = max(&|tile| tile.nonzeros).next_multiple_of(2) * 4;
        let gather = self.parallel_transfer(Operation::Gather, nr_dpus, out_bytes)
            + self.parallel_transfer(Operation::Gather, nr_dpus, MAX_TASKLETS * 2 * 8);
        let merge = self.host(nonzeros * 4 * plan.feature_groups as usize * 2);
        Prediction {
            send_x: spmm.send_x + send_p,
            kernel: Duration::from_secs_f64(cycles / self.clock_hz),
            gather,
            merge,
        }
    }

    /// Predicted time of one call of `plan` over tiles of these sizes (in tile order, as [`Partition`] makes
    /// them) of shape `call`, on a set of `nr_dpus` DPUs for a matrix of `nrows` rows, laid out as
    /// [`HardwareModel::call_layout`] picks.
    pub(crate) fn predict<T: PimElement>(
        &self,
        plan: &Plan,
        tiles: &[TileStats],
        nrows: usize,
        call: CallShape,
        nr_dpus: usize,
    ) -> Prediction {
        self.predict_laid_out::<T>(plan, tiles, nrows, call, nr_dpus, LayoutChoice::default())
    }

    /// As [`HardwareModel::predict`], laid out as `choice` fixes and the model picks otherwise.
    pub(crate) fn predict_laid_out<T: PimElement>(
        &self,
        plan: &Plan,
        tiles: &[TileStats],
        nrows: usize,
        call: CallShape,
        nr_dpus: usize,
        choice: LayoutChoice,
    ) -> Prediction {
        let (_, prediction) = self.fastest_layout::<T>(plan, tiles, call, nr_dpus, choice);
        let merge = self.host(nrows * call.features * std::mem::size_of::<T::Acc>() * plan.col_blocks as usize);
        Prediction { merge, ..prediction }
    }

    /// How a call of `plan` over tiles of these sizes, of shape `call`, lays out X and Y: of the layouts its type
    /// and shape allow (X per nonzero for [`PimElement::X_PER_NONZERO`] types, `Y` in 16 bits for
    /// [`PimElement::NARROW_Y`] ones, neither with attention, and only what fits the MRAM), the one predicted
    /// fastest. Writing a row in 16 bits costs its DPU about 3 instructions per sum and saves 2 bytes of the
    /// gather, which all DPUs share: on a server, 16 bits win unless a tile's rows are mostly wide. X per nonzero
    /// sends a row of X per nonzero rather than per column a block addresses, and spares the kernel a DMA per
    /// nonzero: it wins at narrow widths, where that DMA outlasts the nonzero's multiply-adds. `choice` fixes
    /// either (where allowed).
    pub(crate) fn call_layout<T: PimElement>(
        &self,
        plan: &Plan,
        tiles: &[TileStats],
        call: CallShape,
        nr_dpus: usize,
        choice: LayoutChoice,
    ) -> CallLayout {
        self.fastest_layout::<T>(plan, tiles, call, nr_dpus, choice).0
    }

    /// The layout [`HardwareModel::call_layout`] picks and its prediction (without the merge).
    fn fastest_layout<T: PimElement>(
        &self,
        plan: &Plan,
        tiles: &[TileStats],
        call: CallShape,
        nr_dpus: usize,
        choice: LayoutChoice,
    ) -> (CallLayout, Prediction) {
        let padded = padded_head_features::<T>(call.features, plan.feature_groups as usize, call.heads);
        let max = |f: &dyn Fn(&TileStats) -> usize| tiles.iter().map(f).max().unwrap_or(0);
        // 16-bit blocks must also fit where the accumulators would (the MRAM a call is checked for).
        let y_16_allowed = T::NARROW_Y.is_some()
            && !call.attention
            && y_bytes::<T>(tiles, padded, true) <= y_bytes::<T>(tiles, padded, false);
        let x_per_nonzero_allowed = T::X_PER_NONZERO && !call.attention && {
            let matrix = max(&|tile| matrix_bytes::<T>(plan.format, tile));
            let x_rows = per_nonzero_x_rows(tiles);
            call_bytes::<T>(matrix, x_rows, max(&|tile| tile.rows), padded) as u64 <= self.mram_bytes
        };
        let mut best: Option<(CallLayout, Prediction)> = None;
        for &x_per_nonzero in choices(choice.x_per_nonzero, x_per_nonzero_allowed) {
            let send_x = self.send_x_time::<T>(plan, tiles, padded, x_per_nonzero, nr_dpus);
            for &y_16 in choices(choice.y_16, y_16_allowed) {
                let layout = CallLayout { x_per_nonzero, y_16 };
                let (kernel, gather) = self.kernel_and_gather::<T>(plan, tiles, call, layout, nr_dpus);
                let prediction = Prediction { send_x, kernel, gather, merge: Duration::ZERO };
                if best.as_ref().is_none_or(|(_, fastest)| prediction.total() < fastest.total()) {
                    best = Some((layout, prediction));
                }
            }
        }
        best.expect("the layout of X by column and Y in accumulators is always allowed")
    }

    /// Time to build and send each DPU its X of `padded` features: by column as `plan` delivers it (a broadcast
    /// when every DPU gets the same), or one row per nonzero, each DPU its own.
    fn send_x_time<T: PimElement>(
        &self,
        plan: &Plan,
        tiles: &[TileStats],
        padded: usize,
        x_per_nonzero: bool,
        nr_dpus: usize,
    ) -> Duration {
        let groups = plan.feature_groups as usize;
        let row_bytes = padded * std::mem::size_of::<T>();
        if x_per_nonzero {
            let x_bytes = per_nonzero_x_rows(tiles) * row_bytes;
            return self.host(tiles.len() * groups * x_bytes)
                + self.parallel_transfer(Operation::Push, nr_dpus, x_bytes);
        }
        let x_bytes = tiles.iter().map(|tile| x_rows(plan, tile)).max().unwrap_or(0) * row_bytes;
        if plan.broadcasts_x() {
            return self.parallel_transfer(Operation::Broadcast, nr_dpus, x_bytes);
        }
        let built = match plan.x {
            XDelivery::Whole => plan.col_blocks as usize * groups * x_bytes,
            XDelivery::Referenced => tiles.len() * groups * x_bytes,
        };
        self.host(built) + self.parallel_transfer(Operation::Push, nr_dpus, x_bytes)
    }

    /// The slowest DPU's kernel and the gather of `Y` of a call laid out as `layout`.
    fn kernel_and_gather<T: PimElement>(
        &self,
        plan: &Plan,
        tiles: &[TileStats],
        call: CallShape,
        layout: CallLayout,
        nr_dpus: usize,
    ) -> (Duration, Duration) {
        let CallShape { features, heads, attention } = call;
        let padded = padded_head_features::<T>(features, plan.feature_groups as usize, heads);
        let set_features = set_features(features, padded, heads);
        let cycles = tiles
            .iter()
            .map(|tile| {
                let (rows, nonzeros) = (tile.rows, tile.nonzeros);
                let shape = KernelTile {
                    format: plan.format,
                    rows,
                    nonzeros,
                    x_rows: x_rows(plan, tile),
                    tasklets: plan.tasklets,
                    narrow_rows: if layout.y_16 { rows - tile.wide_rows } else { 0 },
                    x_per_nonzero: layout.x_per_nonzero,
                    longest_row: tile.longest_row,
                };
                let mut cycles = self.kernel_cycles_in_sets::<T>(shape, padded, set_features);
                if attention {
                    let weights = self.attention_cycles(rows, nonzeros, padded, set_features, plan.tasklets);
                    cycles.compute += weights.compute;
                    cycles.dma += weights.dma;
                }
                cycles.total()
            })
            .fold(0.0, f64::max);
        let gather = self.parallel_transfer(Operation::Gather, nr_dpus, y_bytes::<T>(tiles, padded, layout.y_16));
        (Duration::from_secs_f64(cycles / self.clock_hz), gather)
    }

    /// MRAM bytes the fullest DPU of `plan` needs during a call. Transfers are the same size on every DPU, so
    /// the largest matrix, X and Y blocks add up even when they belong to different tiles.
    fn mram_needed<T: PimElement>(&self, plan: &Plan, tiles: &[TileStats], features: usize) -> u64 {
        let padded = padded_features::<T>(features, plan.feature_groups as usize);
        let max = |f: &dyn Fn(&TileStats) -> usize| tiles.iter().map(f).max().unwrap_or(0);
        let matrix = max(&|tile| matrix_bytes::<T>(plan.format, tile));
        let x_rows = max(&|tile| x_rows(plan, tile));
        call_bytes::<T>(matrix, x_rows, max(&|tile| tile.rows), padded) as u64
    }

    /// Host bytes a call of `plan` on `nr_dpus` simulated DPUs holds. The simulator stores bytes sent alike to
    /// several DPUs once, shared copy-on-write until one of them writes them: so each tile's matrix block once
    /// however many feature groups hold it (and the empty block of unused DPUs once), each whole `X` slice once
    /// (column block and feature group), and every DPU's own `Y` block and partial sums (the engine writes
    /// every DPU of the set, used or not). Besides, the host holds its copy of every DPU's gathered `Y` block
    /// until the merge, as large as the `Y` blocks in MRAM (with 8 column blocks, 8 partial results per row:
    /// on ogbn-products' shape at 100 features, 7.8 GB).
    fn simulator_bytes<T: PimElement>(&self, plan: &Plan, tiles: &[TileStats], features: usize, nr_dpus: u32) -> u64 {
        let padded = padded_features::<T>(features, plan.feature_groups as usize);
        let max = |f: &dyn Fn(&TileStats) -> usize| tiles.iter().map(f).max().unwrap_or(0) as u64;
        let matrix = max(&|tile| matrix_bytes::<T>(plan.format, tile));
        let x_rows = max(&|tile| x_rows(plan, tile));
        let x_bytes = x_rows * (padded * std::mem::size_of::<T>()) as u64;
        let own = call_bytes::<T>(0, 0, max(&|tile| tile.rows) as usize, padded) as u64;
        let distinct_blocks = u64::from(plan.row_blocks) * u64::from(plan.col_blocks) + 1;
        let x = match plan.x {
            XDelivery::Whole => x_bytes * u64::from(plan.col_blocks) * u64::from(plan.feature_groups),
            XDelivery::Referenced => x_bytes * u64::from(nr_dpus),
        };
        let gathered = max(&|tile| tile.rows) * (padded * std::mem::size_of::<T::Acc>()) as u64 * u64::from(nr_dpus);
        own * u64::from(nr_dpus) + matrix * distinct_blocks + x + gathered
    }
}

/// Where a chosen plan runs, which decides what the choice weighs besides predicted hardware time.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Target {
    /// UPMEM hardware: the plan predicted fastest.
    Hardware,
    /// The simulator, which keeps every DPU's MRAM in host memory: plans whose DPUs' MRAM needs at most
    /// `host_budget` bytes of it (see [`simulator_host_bytes`]), and among those predicted within `tolerance`
    /// of the fastest of them, the one cheapest to simulate ([`simulation_work`]) when it saves at least
    /// [`SIMULATOR_MIN_SAVING`] of the fastest's work, else the fastest.
    Simulator {
        /// Host bytes the simulated DPUs' MRAM and the gathered results may hold.
        host_budget: u64,
        /// How much slower than the fastest a plan may be predicted, as a fraction of the fastest's time
        /// ([`SIMULATOR_TOLERANCE`] in [`Target::simulator`]).
        tolerance: f64,
    },
}

impl Target {
    /// The simulator with `host_budget` bytes for its DPUs' MRAM and [`SIMULATOR_TOLERANCE`].
    pub fn simulator(host_budget: u64) -> Target {
        Target::Simulator { host_budget, tolerance: SIMULATOR_TOLERANCE }
    }
}

/// How much slower than the fastest plan a plan may be predicted on hardware and still be run on the simulator
/// for being cheaper to simulate: 5%, inside the model's own error (see the module documentation), while the
/// simulator's time can differ by several times between plans (feature groups multiply the DMAs).
pub const SIMULATOR_TOLERANCE: f64 = 0.05;

/// How much less simulation work a plan within [`SIMULATOR_TOLERANCE`] must take than the fastest to be run
/// instead of it: a quarter. Smaller savings are within the estimate's error and do not pay for simulating a
/// plan that hardware would not run.
pub const SIMULATOR_MIN_SAVING: f64 = 0.25;

/// The simulator's host time for one DMA, in multiply-adds of simulated kernel code: each DMA makes the issuing
/// tasklet wait its turn and switch. Measured with `pimgnn bench spmm` at 256 features on its default graph
/// (1,000,000 nonzeros, 2,048 DPUs): 4 feature groups (4 M DMAs) took 2,297 ms and 64 groups (64 M DMAs) 8,490
/// ms for the same 256 M multiply-adds, so one DMA cost about 100 ns and one multiply-add about 7.
const SIMULATED_DMA_IN_MULTIPLY_ADDS: f64 = 14.0;

/// The simulator's work for one call of `plan` over these tiles with `features` columns, in multiply-adds
/// (see [`simulation_work`]).
fn tiles_simulation_work<T: PimElement>(plan: &Plan, tiles: &[TileStats], features: usize) -> f64 {
    let padded = padded_features::<T>(features, plan.feature_groups as usize);
    let chunks = padded.div_ceil(FEATURE_CHUNK);
    let per_group: f64 = tiles
        .iter()
        .map(|tile| {
            let dmas = chunks * (tile.nonzeros + tile.rows);
            dmas as f64 * SIMULATED_DMA_IN_MULTIPLY_ADDS + (tile.nonzeros * padded) as f64
        })
        .sum();
    per_group * f64::from(plan.feature_groups)
}

/// A plan with its predicted time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costed {
    /// The plan.
    pub plan: Plan,
    /// Its predicted hardware time (summed phase by phase over the calls it was chosen for).
    pub prediction: Prediction,
}

/// The outcome of an automatic choice.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The plan to run: on hardware the fastest predicted; on the simulator the one cheapest to simulate
    /// among those within the host's memory budget predicted within the target's tolerance of the fastest of
    /// them, if it saves at least [`SIMULATOR_MIN_SAVING`] of the fastest's work (see [`Target`]).
    pub best: Costed,
    /// The fastest predicted plan that fits the DPUs' MRAM, budget or not (the choice for hardware); the same
    /// as `best` on hardware. Never predicted slower than `pygim`.
    pub fastest: Costed,
    /// PyGim's default plan on the same input (`None` when no PyGim plan fits the DPUs' MRAM).
    pub pygim: Option<Costed>,
    /// Every candidate that may run on the target (within the simulator's budget), fastest first.
    pub candidates: Vec<Costed>,
}

/// Powers of two from 1 up to `limit`.
fn powers_of_two(limit: u64) -> impl Iterator<Item = u32> {
    std::iter::successors(Some(1u32), |p| p.checked_mul(2)).take_while(move |&p| u64::from(p) <= limit)
}

/// Plans considered by [`choose`]: PyGim's plans ([`Plan::pygim`]), and for powers of two of feature groups
/// (up to the features, at most 64) and of column blocks (up to 16) the row blocks that fill the set, cut
/// inside long rows, in both formats and both X deliveries.
pub fn candidates(nr_dpus: u32, features: usize, tasklets: u32) -> Vec<Plan> {
    let mut plans = Vec::new();
    for groups in powers_of_two(features.clamp(1, 64) as u64) {
        if groups <= nr_dpus {
            plans.push(Plan::pygim(nr_dpus, groups, tasklets));
        }
        for col_blocks in powers_of_two(16) {
            let row_blocks = nr_dpus / (groups * col_blocks);
            if row_blocks == 0 {
                continue;
            }
            for format in [Format::Csr, Format::Coo] {
                for x in [XDelivery::Whole, XDelivery::Referenced] {
                    let split_rows = true;
                    plans.push(Plan {
                        format,
                        row_blocks,
                        split_rows,
                        col_blocks,
                        feature_groups: groups,
                        x,
                        tasklets,
                    });
                }
            }
        }
    }
    plans
}

/// Host bytes a call of `plan` for `a` with `features` columns holds on `nr_dpus` simulated DPUs: every DPU's
/// own MRAM bytes, each whole `X` slice once (its pages are shared copy-on-write by the DPUs that receive it),
/// and the host's copy of the gathered `Y` blocks until the merge.
pub fn simulator_host_bytes<T: PimElement>(
    model: &HardwareModel,
    a: &Csr<T>,
    plan: &Plan,
    features: usize,
    nr_dpus: u32,
) -> u64 {
    model.simulator_bytes::<T>(plan, &Partition::new(a, plan).stats(a), features, nr_dpus)
}

/// The simulator's work for one call of `plan` for `a` with `features` columns, in multiply-adds of simulated
/// kernel code: over every DPU the plan uses, its multiply-adds (nonzeros x padded features) and its DMAs (one
/// per nonzero and one per row for each feature chunk), a DMA weighing as much as 14 multiply-adds. Its host
/// time is about proportional to this; a plan cut into more feature groups runs the same multiply-adds with
/// more, smaller DMAs.
pub fn simulation_work<T: PimElement>(a: &Csr<T>, plan: &Plan, features: usize) -> f64 {
    tiles_simulation_work::<T>(plan, &Partition::new(a, plan).stats(a), features)
}

/// MRAM bytes the fullest DPU of `plan` needs for `a` during a call with `features` columns.
pub fn mram_per_dpu<T: PimElement>(model: &HardwareModel, a: &Csr<T>, plan: &Plan, features: usize) -> u64 {
    model.mram_needed::<T>(plan, &Partition::new(a, plan).stats(a), features)
}

/// Predicts `plan` for `a` and `features` columns on `nr_dpus` DPUs.
pub fn predict<T: PimElement>(
    model: &HardwareModel,
    a: &Csr<T>,
    plan: &Plan,
    features: usize,
    nr_dpus: usize,
) -> Prediction {
    let partition = Partition::new(a, plan);
    model.predict::<T>(plan, &partition.stats(a), a.nrows(), CallShape::plain(features), nr_dpus)
}

/// The tile statistics of each partition `plans` cut `a` into, by (row blocks, column blocks, rows split): one
/// pass over the nonzeros per row cut, for all its column-block counts.
fn candidate_stats<T: PimElement>(a: &Csr<T>, plans: &[Plan]) -> HashMap<(u32, u32, bool), Vec<TileStats>> {
    let mut row_cuts: HashMap<(u32, bool), (Plan, Vec<u32>)> = HashMap::new();
    for plan in plans {
        let (_, col_blocks) = row_cuts.entry((plan.row_blocks, plan.split_rows)).or_insert_with(|| (*plan, Vec::new()));
        if !col_blocks.contains(&plan.col_blocks) {
            col_blocks.push(plan.col_blocks);
        }
    }
    let mut stats = HashMap::new();
    for ((row_blocks, split_rows), (plan, col_blocks)) in row_cuts {
        let rows = Partition::new(a, &plan);
        let partitions: Vec<Partition> = col_blocks.iter().map(|&cb| rows.with_col_blocks(cb as usize)).collect();
        let refs: Vec<&Partition> = partitions.iter().collect();
        for (cb, tiles) in col_blocks.into_iter().zip(Partition::stats_sharing_rows(a, &refs)) {
            stats.insert((row_blocks, cb, split_rows), tiles);
        }
    }
    stats
}

/// Costs every [candidate](candidates) that fits the DPUs' MRAM and picks the plan to run on `target`
/// ([`Choice::best`]): on hardware the fastest predicted. The simulator keeps every DPU's MRAM in host memory
/// (a whole `X` slice once, see [`simulator_host_bytes`]), so runs on it pass the memory they may use and, among
/// the plans within it predicted nearly as fast as the fastest, get the one cheapest to simulate; then
/// [`Choice::fastest`] stays the hardware choice.
pub fn choose<T: PimElement>(
    model: &HardwareModel,
    a: &Csr<T>,
    features: usize,
    nr_dpus: u32,
    tasklets: u32,
    target: Target,
) -> Result<Choice> {
    choose_for_calls(model, a, &[features], nr_dpus, tasklets, target)
}

/// As [`choose`] for one resident matrix serving a sequence of calls, one per entry of `widths` (a GNN
/// aggregates at one width per layer): a plan must fit the MRAM at every width, and the plans are ranked by
/// their predicted total over the calls, which each [`Costed::prediction`] holds phase by phase (on the
/// simulator, their simulation work by its total over the calls).
pub fn choose_for_calls<T: PimElement>(
    model: &HardwareModel,
    a: &Csr<T>,
    widths: &[usize],
    nr_dpus: u32,
    tasklets: u32,
    target: Target,
) -> Result<Choice> {
    let (Some(&narrowest), Some(&widest)) = (widths.iter().min(), widths.iter().max()) else {
        return Err(Error::invalid("plan choice", "no call width to plan for"));
    };
    let plans = candidates(nr_dpus, narrowest, tasklets);
    for plan in &plans {
        plan.check(nr_dpus as usize)?;
    }
    let stats = candidate_stats(a, &plans);
    let mut fitting = Vec::new();
    // The candidates that may run on the target, with their simulation work over the calls.
    let mut allowed: Vec<(Costed, f64)> = Vec::new();
    let mut pygim: Option<Costed> = None;
    let mut least_needed = u64::MAX;
    // Of the plans that fit the MRAM, the least host memory one holds on the simulator.
    let mut least_on_simulator = u64::MAX;
    // Feature groups up to the narrowest call, so that every call gives every group a column.
    for plan in plans {
        let tiles = &stats[&(plan.row_blocks, plan.col_blocks, plan.split_rows)];
        let needed = widths.iter().map(|&width| model.mram_needed::<T>(&plan, tiles, width)).max().unwrap_or(0);
        least_needed = least_needed.min(needed);
        if needed > model.mram_bytes {
            continue;
        }
        let prediction = widths
            .iter()
            .map(|&width| model.predict::<T>(&plan, tiles, a.nrows(), CallShape::plain(width), nr_dpus as usize))
            .fold(Prediction::default(), |sum, call| sum + call);
        let costed = Costed { plan, prediction };
        // PyGim's default: its fewest groups that fit (candidates come in increasing groups).
        if pygim.is_none() && plan == Plan::pygim(nr_dpus, plan.feature_groups, tasklets) {
            pygim = Some(costed);
        }
        fitting.push(costed);
        let on_simulator =
            || widths.iter().map(|&width| model.simulator_bytes::<T>(&plan, tiles, width, nr_dpus)).max().unwrap_or(0);
        let fits_target = match target {
            Target::Hardware => true,
            Target::Simulator { host_budget, .. } => {
                let bytes = on_simulator();
                least_on_simulator = least_on_simulator.min(bytes);
                bytes <= host_budget
            }
        };
        if fits_target {
            let work = widths.iter().map(|&width| tiles_simulation_work::<T>(&plan, tiles, width)).sum();
            allowed.push((costed, work));
        }
    }
    let problem = format!(
        "a {}x{} matrix with {} nonzeros and {widest} features on {nr_dpus} DPUs",
        a.nrows(),
        a.ncols(),
        a.nnz()
    );
    let fastest = *fitting.iter().min_by_key(|costed| costed.prediction.total()).ok_or_else(|| Error::Capacity {
        what: format!("MRAM per DPU (bytes) for {problem} (least of any plan)"),
        needed: least_needed,
        limit: model.mram_bytes,
    })?;
    allowed.sort_by_key(|(costed, _)| costed.prediction.total());
    let (quickest, _) = *allowed.first().ok_or_else(|| Error::Capacity {
        what: format!(
            "host memory (bytes) holding the simulated MRAM of {problem} (least of any plan that fits the MRAM)"
        ),
        needed: least_on_simulator,
        // Once a plan fits the MRAM, only the simulator's budget can leave none allowed.
        limit: match target {
            Target::Simulator { host_budget, .. } => host_budget,
            Target::Hardware => u64::MAX,
        },
    })?;
    let best = match target {
        Target::Hardware => quickest,
        Target::Simulator { tolerance, .. } => {
            let (limit, quickest_work) = (quickest.prediction.total().mul_f64(1.0 + tolerance.max(0.0)), allowed[0].1);
            // The fastest predicted of the least work (min_by keeps the first of equals), if it saves enough.
            allowed
                .iter()
                .take_while(|(costed, _)| costed.prediction.total() <= limit)
                .min_by(|(_, a), (_, b)| a.total_cmp(b))
                .filter(|(_, work)| *work <= quickest_work * (1.0 - SIMULATOR_MIN_SAVING))
                .map_or(quickest, |&(costed, _)| costed)
        }
    };
    let candidates = allowed.into_iter().map(|(costed, _)| costed).collect();
    Ok(Choice { best, fastest, pygim, candidates })
}
