/*
 * What the CSR and COO SpMM kernels share: the value types, the WRAM buffers, the X reads and Y writes, the
 * merge of rows shared between tasklets, SDDMM's dot products and result writes, and main(). A family's .c file
 * includes this header and defines spmm_walk(), which walks one tasklet's nonzeros for one chunk of features
 * (spmm_pass() builds it once per way of finding X rows), spmm_walk_units() (i8 and i16), which walks them for one
 * unit of features with X per nonzero, and sddmm_pass(), which walks them once for an SDDMM call (spmm_args.h,
 * SPMM_MODE_SDDMM).
 *
 * Value type: built once per type with -DSPMM_TYPE_F32, _I32, _I16 or _I8. A's values are 32 bits in MRAM
 * (spmm_value); X has the value type; Y and partial sums are float for f32 and 32-bit integers otherwise.
 * Integer products and sums wrap modulo 2^32 (computed in uint32_t, so no signed overflow), exactly as the
 * host's Element::mul_add does; f32 is multiplied then added with two roundings (built with
 * -ffp-contract=off), as on the host.
 *
 * Work split (the host computes it, src/pim/tasklets.rs): each tasklet gets a contiguous range of the DPU's
 * nonzeros, balanced by nonzeros plus rows, cut inside a row when a row is long; see struct
 * spmm_tasklet_work. Features go in chunks of at most SPMM_FEATURE_CHUNK, none across two value sets (attention heads, spmm_args.h): for each chunk a tasklet walks its
 * nonzeros (SPMM_READ_ENTRIES per DMA, see struct spmm_reader), reads the chunk of the referenced X row (one mram_read of
 * at most SPMM_FEATURE_CHUNK * 4 = 256 bytes) into its batch buffer and, per batch of nonzeros, adds their
 * products to the row's sums (see SPMM_BATCH); a finished row goes to Y (or to the tasklet's partial slot when
 * shared) with one mram_write.
 *
 * Lower bounds (DPU instructions, from the ISA and the SDK 2025.1 compiler runtime) against what the kernels
 * execute and the cycles the simulator models, on one DPU with 16 tasklets, CSR, rows of 8 nonzeros, 64 features
 * (`pimgnn bench kernels` prints this for every type, format and width):
 *
 *   type  multiply-add bound                      with a nonzero's 11   executed   modelled cycles  DMA floor
 *   i8    3   (load the byte, mul_sl_sl, add)     3.17                  3.76       3.83  (1.21x)    2.07
 *   i16   9   (load, 7 of the 16-bit byte-        9.17                  10.29      10.31 (1.12x)    2.57
 *              multiply sequence, add)
 *   i32   32  (load, 30 of mul_step, add)         32.17                 34.56      34.59 (1.08x)    3.57
 *   f32   246 (load, software multiply 179        246.17                248.57     248.59 (1.01x)   3.57
 *              and add 66)
 *
 * The DMA floor is the DMA engine's cycles for each nonzero's X chunk (77 + bytes / 2) and each row's Y chunk
 * (61 + bytes / 2) per multiply-add: a kernel that reads X from MRAM goes no faster however few instructions it
 * runs. At 16 features it is above the instruction bound of i8 and i16 (6.04 and 6.54), and i8 is at both limits:
 * 5.8 instructions and 6.04 DMA cycles per multiply-add; at 8 features, the width a feature group gives a DPU in
 * the plans hardware would use for 16, 11.33 DMA cycles. There the host sends X per nonzero (spmm_args.h's
 * x_per_nonzero, below), and the kernel needs no DMA per nonzero at all. A WRAM copy of X's most referenced
 * rows would spare DMAs but not instructions: a build that did (the host numbering a DPU's columns by
 * references, 6 KiB of rows beside 24 tasklets' buffers, a walk of its own that tests each column against them and
 * copies a hot chunk by a call, to stay in IRAM) ran 0.43 more instructions per multiply-add with 9% of nonzeros hot
 * (uniform columns), its modelled cycles 2% above the build without, and fewer DMAs cannot take 5.77 below 1.3x the
 * bound (4.80). Nor does a DPU's whole X in WRAM: a build that copied it there at launch (2 KiB DMAs by all tasklets,
 * then a barrier) and batched row pointers in place of row copies took the DMA engine from 99% to 22% busy at 16
 * features (1,024 rows, X 16 KiB, a v1B build's 20 KiB array), but ran 7.08 instructions per multiply-add with
 * batches of 8 (the host compiler spills eight row pointers and eight factors) and 6.31 with batches of 4 (a sum's
 * load and store per 4 products), 1.76x the bound against 1.82x, and grew i8 CSR to 4,341 instructions of IRAM.
 *
 * X per nonzero (i8 and i16, spmm_args.h's x_per_nonzero): the host sends one row of X per nonzero, in the block's
 * nonzero order, cut into units of 8 bytes (8 i8 or 4 i16 features), unit by unit. A pass per unit walks the
 * tasklet's units and values in step, 32 per DMA, keeps each row's sums in registers and takes its nonzeros in pairs
 * (spmm_unit_row): a multiply-add is its feature's load, the product and the add, and a nonzero adds half its pair's
 * value loads, pointer advances and loop test; no column is read, no row address computed. Measured as above (8
 * nonzeros per row), against X by column:
 *
 *   type, F   by column (cycles, x bound)   per nonzero   DMA busy
 *   i8, 8     12.58 (2.88x)                 4.73 (1.08x)  100% -> 56%
 *   i8, 16    6.70  (1.82x)                 4.68 (1.27x)  99% -> 57%
 *   i16, 8    16.62 (1.60x)                 12.19 (1.17x) 78% -> 41%
 *   i16, 16   12.93 (1.33x)                 12.13 (1.25x) 55% -> 42%
 *
 * A COO block of these types has row pointers too (spmm_args.h), and both families count a row's nonzeros by them
 * (spmm_walk_units), so COO runs as CSR does: a walk over its indices that counted each row's entries cost 6 to 12.5
 * instructions per nonzero and unit more (i8 COO at 8 features 6.71 cycles, 1.53x the bound, now 4.71, 1.08x).
 *
 * A row costs about 75 instructions per unit (its count, its run to the blocks' end, its sums cleared and stored,
 * the Y write), about 20 more in 16 bits (its sums packed: i8 at 8 and 16 features 5.05 and 5.01 cycles, 1.15x and
 * 1.36x the bound, from 5.95 and 5.90 through spmm_store), and a shared or wide row about 55 more (spmm_walk_units).
 * So by column wins from 32 features on, where one DMA brings a row's whole chunk; the host's model
 * picks per call, and also counts the X it sends: one row per nonzero instead of one per column a block addresses
 * (on the default graph over 2,560 DPUs at 16 features, 1.09 times as many).
 *
 * With 16 tasklets the pipeline stays full while some wait for their DMA, so the cycles are the instructions and
 * little more. Of the executed, 0.17 (i8) to 0.22 (f32) per multiply-add are stack loads and stores, at narrow
 * widths up to 0.9: most are spills of the host compiler's 16 registers, which a DPU's 24 may not need
 * (upmem_sim::InstructionClass).
 *
 * A nonzero's bound: its column's and value's loads and the readers' advances (6), its X row's address as a
 * shift and an add (2), the DMA (1) and the loop's count and branch (2). The kernels spend about 33 (i8 at 64
 * features) to 41 (16) per nonzero and chunk as the simulator counts them (the readers' advance and test, mram_read as the SDK's source executes
 * it, the X row's address (enum spmm_row_addressing), the batch's bookkeeping and its call) and 2 per feature and
 * batch (the sum's load and store; a row's first batch sets its sums instead, so rows are never cleared first).
 * Narrow types at narrow widths stay furthest from the bound, and there the DMA engine sets the pace (the DMA
 * floor above). After a barrier, each shared row is summed in tasklet order by the tasklet holding its first
 * partial, so the result never depends on interleaving.
 *
 * Y in 16 bits (i8 kernels, spmm_args.h's y_narrow): a finished row whose sums the host's bound says fit
 * goes through the tasklet's batch buffer as int16_t (a load and a 16-bit store per sum) and out with one
 * mram_write of half the bytes; a wide row goes in 32 bits to its place after Y, found by a cursor over the DPU's
 * wide-row list that moves with the rows (one 8-byte read per wide row). A row shared between tasklets is summed in
 * 32 bits and goes out the same way. On a server the gather's bytes, which all DPUs share, cost far more than the
 * pack's 3 instructions per sum; the host's model decides per call. The pack is a row's, outside the bound's inner
 * loops: with rows of 8 nonzeros, i8 by column at 64 features runs 4.19 cycles per multiply-add against 3.83 in
 * accumulators, and per nonzero at 16 features 5.01 against 4.68 (`pimgnn bench kernels --y-bits 32,16`).
 *
 * SDDMM: each tasklet walks its nonzeros once; per nonzero (i, j) it reads Q_j chunk by chunk into `incoming`
 * (and P_i into `row_sum`, once per row when the features fit one chunk) and sums the products in one accumulator,
 * features in order, so the result is what the host's sequential sum gives. Results collect in a WRAM buffer
 * written in whole words; a range's odd first or last result goes to the tasklet's edge slot (spmm_args.h).
 *
 * Attention (SPMM_MODE_ATTENTION, f32 kernels): a pass over value set h reads each row's scores once and, per
 * nonzero, its column's, and makes the nonzero's weight (attention_exp2_of) in place of its stored value.
 *
 * WRAM per tasklet: 256 B of sums, 512 B of batch buffer, 136 B of SDDMM results, 24 B of attention scores (f32),
 * 8 B of the wide-row list (i8) and the readers' blocks (CSR 3 x 128 B, COO 256 + 128 B); the f32 kernels' table of ATTENTION_EXP2_ENTRIES powers of two (2 KiB); stacks are
 * STACK_SIZE_DEFAULT.
 */
#ifndef PIMGNN_SPMM_KERNEL_H
#define PIMGNN_SPMM_KERNEL_H

#include <barrier.h>
#include <defs.h>
#include <mram.h>
#include <stdint.h>

#include "spmm_args.h"

#if NR_TASKLETS > SPMM_MAX_TASKLETS
#error "SpMM kernels are built with at most SPMM_MAX_TASKLETS tasklets (a chip's threads); the host chooses how many get work"
#endif

#if defined(SPMM_TYPE_F32)
typedef float spmm_feature;
typedef float spmm_acc;
#define SPMM_VALUE(v) ((v).f32)
typedef float spmm_factor;
#define SPMM_FACTOR(v) ((v).f32)
#define SPMM_MUL_ADD(acc, a, x) ((acc) + (a) * (x))
#define SPMM_ADD(a, b) ((a) + (b))
#elif defined(SPMM_TYPE_I32) || defined(SPMM_TYPE_I16) || defined(SPMM_TYPE_I8)
#if defined(SPMM_TYPE_I32)
typedef int32_t spmm_feature;
#elif defined(SPMM_TYPE_I16)
typedef int16_t spmm_feature;
#else
typedef int8_t spmm_feature;
#endif
typedef uint32_t spmm_acc;
#define SPMM_VALUE(v) ((v).i32)
/* A nonzero's value as a factor of the batch loops: i8 and i16 values are loaded in their own width, so the DPU
 * compiler (and the simulator's count) sees two narrow factors. */
typedef int32_t spmm_factor;
#if defined(SPMM_TYPE_I32)
#define SPMM_FACTOR(v) ((v).i32)
#else
#define SPMM_FACTOR(v) ((int32_t)(spmm_feature)(v).i32)
#endif
#if defined(SPMM_TYPE_I32)
/* 32 x 32 bits, wrapping: unsigned arithmetic has no overflow. */
#define SPMM_MUL_ADD(acc, a, x) ((acc) + (uint32_t)(a) * (uint32_t)(x))
#else
/* Both factors fit in the value type, so the product fits in int32 and the compiler can use the DPU's 8 x 8-bit
 * multiply steps (one for i8, four for i16) instead of a 32-bit multiply. */
#define SPMM_MUL_ADD(acc, a, x) ((acc) + (uint32_t)((int32_t)(spmm_feature)(a) * (int32_t)(x)))
#endif
#define SPMM_ADD(a, b) ((a) + (b))
#else
#error "define one of SPMM_TYPE_F32, SPMM_TYPE_I32, SPMM_TYPE_I16, SPMM_TYPE_I8"
#endif

/* Whether the kernel writes Y in 16 bits when a call asks (spmm_call_args.y_narrow): i8, whose rows' sums mostly fit
 * 16 bits, as the host bounds them from A's values (i16 features alone fill 16 bits). */
#if defined(SPMM_TYPE_I8)
#define SPMM_NARROW_Y 1
#else
#define SPMM_NARROW_Y 0
#endif

/*
 * The feature loops take 8 bytes of X per iteration: SPMM_UNIT features (2 f32 or i32, 4 i16, 8 i8), written
 * out one after another so that the loop's counting, pointer advances and branch are paid once per unit
 * rather than once per feature. The host pads rows (nr_features) to a multiple of 8 bytes of X and
 * SPMM_FEATURE_CHUNK is a multiple of 8, so every loop's width is a multiple of SPMM_UNIT.
 * SPMM_FOR_UNIT(step) expands to step(0) ... step(SPMM_UNIT - 1).
 */
#if defined(SPMM_TYPE_I8)
#define SPMM_UNIT 8
#define SPMM_FOR_UNIT(step) step(0) step(1) step(2) step(3) step(4) step(5) step(6) step(7)
#elif defined(SPMM_TYPE_I16)
#define SPMM_UNIT 4
#define SPMM_FOR_UNIT(step) step(0) step(1) step(2) step(3)
#else
#define SPMM_UNIT 2
#define SPMM_FOR_UNIT(step) step(0) step(1)
#endif
_Static_assert(SPMM_UNIT * sizeof(spmm_feature) == 8, "a unit is 8 bytes of X");
_Static_assert(SPMM_FEATURE_CHUNK % SPMM_UNIT == 0, "a chunk is whole units");

/*
 * A row's nonzeros are multiplied in batches of up to SPMM_BATCH, as many X chunks as the tasklet's 512-byte
 * buffer holds (8 for i8, 4 for i16, 2 for i32 and f32): their X chunks are read one after another into the
 * tasklet's batch buffer, then each feature's sum is loaded once, takes the batch's products in nonzero order in a
 * register and is stored once, so a multiply-add is its feature's load, its product and an add. A batch of
 * n < SPMM_BATCH (a row's last) goes as its binary digits: 4, 2 and 1 nonzeros. The order of a feature's additions
 * is the row's nonzero order in every case, so f32 rounds as the host does.
 */
#if defined(SPMM_TYPE_I8)
#define SPMM_BATCH 8
#elif defined(SPMM_TYPE_I16)
#define SPMM_BATCH 4
#else
#define SPMM_BATCH 2
#endif
_Static_assert(SPMM_BATCH * SPMM_FEATURE_CHUNK * sizeof(spmm_feature) == 512, "a batch is 512 bytes of X");
#define SPMM_TERMS_1(term) term(0)
#define SPMM_TERMS_2(term) term(0) term(1)
#define SPMM_TERMS_4(term) term(0) term(1) term(2) term(3)
#define SPMM_TERMS_8(term) term(0) term(1) term(2) term(3) term(4) term(5) term(6) term(7)

__host struct spmm_matrix_args matrix;
__host struct spmm_call_args call;

/* Per tasklet: the row being accumulated, and the X chunks of a batch of its nonzeros (in the merge, an incoming
 * partial; in SDDMM, a chunk of Q), with the batch's values. */
static __dma_aligned spmm_acc row_sum[NR_TASKLETS][SPMM_FEATURE_CHUNK];
static __dma_aligned union {
    spmm_feature x[SPMM_BATCH * SPMM_FEATURE_CHUNK];
    spmm_acc partial[SPMM_FEATURE_CHUNK];
    int16_t narrow[SPMM_FEATURE_CHUNK]; /* a finished row's sums in 16 bits, on their way to Y */
} incoming[NR_TASKLETS];
static spmm_value batch_values[NR_TASKLETS][SPMM_BATCH];

/* Per tasklet: SDDMM results waiting to be written, and the word written to an edge slot. */
static __dma_aligned spmm_acc results[NR_TASKLETS][SDDMM_RESULT_BUFFER];
static __dma_aligned spmm_acc edge_word[NR_TASKLETS][2];

BARRIER_INIT(partials_written, NR_TASKLETS);

static inline uint32_t spmm_heap(void) {
    return (uint32_t)DPU_MRAM_HEAP_POINTER;
}

/*
 * A tasklet's walks over MRAM arrays of 4- or 8-byte entries (row pointers, its nonzeros' indices and values):
 * SPMM_READ_ENTRIES entries at a time by one DMA into a WRAM block aligned to its size, so that the next entry is
 * a pointer's add and a test of its low bits inline; the SDK's seqread_get is a call of 8 instructions and keeps
 * twice the WRAM. A walk's first block starts at an even entry, 8-byte aligned as DMAs must be, so no entry
 * straddles two blocks. A block may run past the array's end: what lies there is read, never used.
 */
struct spmm_reader {
    uint32_t next_at; /* MRAM address of the block after the one held */
};

/* Starts a walk at entry `entry` of the array at MRAM heap offset `offset`, entries of `size` bytes, into `block`
 * (SPMM_READ_ENTRIES entries); returns the entry's place in WRAM. */
static inline const void *spmm_read_from(struct spmm_reader *reader, void *block, uint32_t offset, uint32_t entry,
                                         uint32_t size) {
    const uint32_t first = entry & ~1u;
    const uint32_t at = spmm_heap() + offset + first * size;
    mram_read((__mram_ptr void *)at, block, SPMM_READ_ENTRIES * size);
    reader->next_at = at + SPMM_READ_ENTRIES * size;
    return (const uint8_t *)block + (entry - first) * size;
}

/* Whether `next`, one entry past the last one used, is past its block of `size`-byte entries. */
static inline int spmm_read_ended(const void *next, uint32_t size) {
    return ((uintptr_t)next & (SPMM_READ_ENTRIES * size - 1)) == 0;
}

/* Reads the next block over the one `next` is past; returns its first entry. */
static inline const void *spmm_read_block(struct spmm_reader *reader, const void *next, uint32_t size) {
    void *block = (uint8_t *)next - SPMM_READ_ENTRIES * size;
    mram_read((__mram_ptr void *)reader->next_at, block, SPMM_READ_ENTRIES * size);
    reader->next_at += SPMM_READ_ENTRIES * size;
    return block;
}

/* The entry after `entry` (of `size` bytes). */
static inline __attribute__((always_inline)) const void *spmm_read_next(struct spmm_reader *reader,
                                                                        const void *entry, uint32_t size) {
    const void *next = (const uint8_t *)entry + size;
    return spmm_read_ended(next, size) ? spmm_read_block(reader, next, size) : next;
}

/*
 * A tasklet's nonzeros: their indices (a family's SPMM_INDEX_BYTES each: a CSR column, a COO struct
 * spmm_coo_index) and their values, walked in step. Both walks start at the same even nonzero, so both blocks end
 * at the same nonzero and one test serves the two.
 */
struct spmm_nonzeros {
    const uint8_t *index;
    const spmm_value *value;
    struct spmm_reader indices;
    struct spmm_reader values;
};

static inline struct spmm_nonzeros spmm_nonzeros_from(uint8_t *index_block, spmm_value *value_block,
                                                      uint32_t values_at, uint32_t nonzero) {
    struct spmm_nonzeros nonzeros;
    nonzeros.index = spmm_read_from(&nonzeros.indices, index_block, matrix.indices_offset, nonzero,
                                    SPMM_INDEX_BYTES);
    nonzeros.value = spmm_read_from(&nonzeros.values, value_block, values_at, nonzero, sizeof(spmm_value));
    return nonzeros;
}

/* Moves to the next nonzero; returns whether that read the next blocks. */
static inline __attribute__((always_inline)) int spmm_nonzeros_next(struct spmm_nonzeros *nonzeros) {
    nonzeros->index += SPMM_INDEX_BYTES;
    nonzeros->value++;
    if (!spmm_read_ended(nonzeros->index, SPMM_INDEX_BYTES))
        return 0;
    nonzeros->index = spmm_read_block(&nonzeros->indices, nonzeros->index, SPMM_INDEX_BYTES);
    nonzeros->value = spmm_read_block(&nonzeros->values, nonzeros->value, sizeof(spmm_value));
    return 1;
}

/* A WRAM block of a walk over `size`-byte entries, aligned to its size as spmm_read_ended needs. */
#define SPMM_READ_BLOCK(name, size) static __aligned(SPMM_READ_ENTRIES * (size)) uint8_t name[NR_TASKLETS][SPMM_READ_ENTRIES * (size)]

/* The values' block of every walk (both families' nonzeros, X per nonzero's units). */
SPMM_READ_BLOCK(value_block, sizeof(spmm_value));

/*
 * X per nonzero (spmm_args.h's x_per_nonzero): a pass over one unit of features walks its nonzeros' units of X (8
 * bytes each, in nonzero order) and their values in step, as spmm_nonzeros walks indices and values: 32 of each
 * per DMA, both from the same even nonzero, so one test serves both. A row's sums over the unit stay in
 * registers (spmm_unit_row): a multiply-add is the feature's load, the product and the add, and a nonzero adds
 * its value's load and the walk's advance. No column is read and no X row is addressed.
 */
#if defined(SPMM_TYPE_I8) || defined(SPMM_TYPE_I16)
#define SPMM_X_PER_NONZERO 1
#else
#define SPMM_X_PER_NONZERO 0
#endif
#if SPMM_X_PER_NONZERO
#define SPMM_UNIT_BYTES 8
SPMM_READ_BLOCK(unit_block, SPMM_UNIT_BYTES);

struct spmm_units {
    const spmm_feature *x;
    const spmm_value *value;
    struct spmm_reader xs;
    struct spmm_reader values;
};

/* Starts the walk of a unit whose X is at heap offset `x_at` at nonzero `nonzero`, the values of the pass's set at
 * heap offset `values_at` read into `value_block`. */
static inline struct spmm_units spmm_units_from(uint32_t tasklet, uint32_t x_at, spmm_value *value_block,
                                                uint32_t values_at, uint32_t nonzero) {
    struct spmm_units units;
    units.x = spmm_read_from(&units.xs, unit_block[tasklet], x_at, nonzero, SPMM_UNIT_BYTES);
    units.value = spmm_read_from(&units.values, value_block, values_at, nonzero, sizeof(spmm_value));
    return units;
}

/* sum[0..SPMM_UNIT) = 0 + a_0 x_0 + a_1 x_1 + ... over the walk's next `count` nonzeros, in order (as the host adds
 * them), the sums in registers. The nonzeros go in runs to the end of the blocks held, so that the loop over a run
 * has no test of the blocks and no call: the next blocks are read between runs, once a run ends the blocks. */
static inline __attribute__((always_inline)) void spmm_unit_row(struct spmm_units *units, uint32_t count,
                                                                spmm_acc *sum) {
#define SPMM_UNIT_ZERO(i) spmm_acc s##i = 0;
#define SPMM_UNIT_TERM(i) s##i = SPMM_MUL_ADD(s##i, a, x[i]);
#define SPMM_UNIT_TERM2(i) s##i = SPMM_MUL_ADD(SPMM_MUL_ADD(s##i, a, x[i]), b, x[SPMM_UNIT + (i)]);
#define SPMM_UNIT_STORE(i) sum[i] = s##i;
    const uintptr_t block_mask = SPMM_READ_ENTRIES * sizeof(spmm_value) - 1;
    const spmm_value *value = units->value;
    const spmm_value *row_end = value + count; /* past the held block when the row goes on in the next */
    const spmm_feature *x = units->x;
    SPMM_FOR_UNIT(SPMM_UNIT_ZERO)
    while (value != row_end) {
        const spmm_value *const block_end = (const spmm_value *)(((uintptr_t)value | block_mask) + 1);
        const spmm_value *const stop = row_end < block_end ? row_end : block_end;
        if ((stop - value) & 1) {
            const spmm_factor a = SPMM_FACTOR(*value);
            SPMM_FOR_UNIT(SPMM_UNIT_TERM)
            x += SPMM_UNIT;
            value++;
        }
        while (value != stop) {
            const spmm_factor a = SPMM_FACTOR(value[0]);
            const spmm_factor b = SPMM_FACTOR(value[1]);
            SPMM_FOR_UNIT(SPMM_UNIT_TERM2)
            x += 2 * SPMM_UNIT;
            value += 2;
        }
        if (spmm_read_ended(value, sizeof(spmm_value))) {
            x = spmm_read_block(&units->xs, x, SPMM_UNIT_BYTES);
            value = spmm_read_block(&units->values, value, sizeof(spmm_value));
            row_end -= SPMM_READ_ENTRIES; /* the next block is read where the held one was */
        }
    }
    units->value = value;
    units->x = x;
    SPMM_FOR_UNIT(SPMM_UNIT_STORE)
#undef SPMM_UNIT_ZERO
#undef SPMM_UNIT_TERM
#undef SPMM_UNIT_TERM2
#undef SPMM_UNIT_STORE
}
#endif

/* Where one pass's attention scores lie: its value set's column and row records (spmm_args.h). */
struct spmm_scores {
    uint32_t columns;
    uint32_t rows;
};

static inline struct spmm_scores spmm_scores_of(uint32_t set) {
    const struct spmm_scores scores = {call.column_scores_offset + set * call.column_scores_stride,
                                       call.row_scores_offset + set * call.row_scores_stride};
    return scores;
}

#if defined(SPMM_TYPE_F32)
/*
 * Attention weights (SPMM_MODE_ATTENTION): per nonzero and value set, w = 2^x for the fixed-point x <= 0 of
 * spmm_args.h, as a float. With x = -(n + f), n whole and f in [0, 1): 2^-f = T[hi] (1 - lo ln 2) up to
 * (lo ln 2)^2 / 2 < 9.2e-7 relative, T the host's table over the fraction's top ATTENTION_EXP2_BITS and lo the rest
 * (below 2^-9); n goes into the float's exponent, so small weights keep all 24 bits, and a weight below 2^-126 is
 * 0. Integer adds and shifts, two 32-bit multiplies and a count of leading zeros: no floating point.
 * pimgnn::pim::attention computes the same bits on the host.
 */
__host uint32_t attention_exp2[ATTENTION_EXP2_ENTRIES];
static __dma_aligned struct attention_column column_score[NR_TASKLETS];
static __dma_aligned struct attention_row row_score[NR_TASKLETS];

static inline float attention_exp2_of(int32_t x) {
    const uint32_t magnitude = (uint32_t)(-x);
    const uint32_t whole = magnitude >> ATTENTION_FRACTION_BITS;
    const uint32_t fraction = magnitude & ((1u << ATTENTION_FRACTION_BITS) - 1);
    const uint32_t rest_bits = ATTENTION_FRACTION_BITS - ATTENTION_EXP2_BITS;
    const uint32_t top = attention_exp2[fraction >> rest_bits];
    /* lo ln 2 in units of 2^-ATTENTION_FRACTION_BITS (ln 2 as 2839 / 4096), then top * lo ln 2. */
    const uint32_t rest_ln2 = ((fraction & ((1u << rest_bits) - 1)) * 2839u) >> 12;
    const uint32_t mantissa = top - (((top >> rest_bits) * rest_ln2) >> (ATTENTION_FRACTION_BITS - rest_bits));
    /* mantissa / 2^31 is in (1/2, 1]: its leading one sets the exponent. */
    const uint32_t leading = (uint32_t)__builtin_clz(mantissa);
    const int32_t exponent = 127 - (int32_t)leading - (int32_t)whole;
    if (exponent <= 0)
        return 0.0f;
    union {
        uint32_t bits;
        float value;
    } weight = {.bits = ((uint32_t)exponent << 23) | (((mantissa << leading) >> 8) & 0x7fffffu)};
    return weight.value;
}

/* Before a row's nonzeros: reads its scores when the call computes attention weights. */
static inline void spmm_row_scores(struct spmm_scores scores, uint32_t tasklet, uint32_t row) {
    if (call.mode == SPMM_MODE_ATTENTION)
        mram_read((__mram_ptr void *)(spmm_heap() + scores.rows + row * (uint32_t)sizeof(struct attention_row)),
                  &row_score[tasklet], sizeof(struct attention_row));
}

/* A nonzero's value: `stored`, or in an attention call its weight from its column's and row's scores. */
static inline spmm_value spmm_nonzero_value(struct spmm_scores scores, uint32_t tasklet, spmm_value stored,
                                            uint32_t column) {
    if (call.mode != SPMM_MODE_ATTENTION)
        return stored;
    mram_read((__mram_ptr void *)(spmm_heap() + scores.columns + column * (uint32_t)sizeof(struct attention_column)),
              &column_score[tasklet], sizeof(struct attention_column));
    const struct attention_column *source = &column_score[tasklet];
    const struct attention_row *target = &row_score[tasklet];
    int32_t x = source->source > target->threshold ? target->above + source->source : target->below + source->sloped;
    if (x > 0)
        x = 0;
    spmm_value value;
    value.f32 = attention_exp2_of(x);
    return value;
}
#else
/* Integer kernels take no attention calls: values are the stored ones. */
static inline void spmm_row_scores(struct spmm_scores scores, uint32_t tasklet, uint32_t row) {
    (void)scores;
    (void)tasklet;
    (void)row;
}

static inline spmm_value spmm_nonzero_value(struct spmm_scores scores, uint32_t tasklet, spmm_value stored,
                                            uint32_t column) {
    (void)scores;
    (void)tasklet;
    (void)column;
    return stored;
}
#endif

/*
 * How a pass finds X row `column` at `column * row_bytes`: a shift when the row's bytes are a power of two (common
 * widths, and the narrow slices of feature groups); in the i8 and i16 kernels, an lsl_add (column * 3) and a shift
 * when they are three times a power of two (48, 96 or 192 features of i8, 24 or 48 of i16); else a 16-bit
 * multiply, the DPU compiler's 7-instruction byte-multiply sequence, when both factors fit 16 bits (at most 2^16 rows
 * of at most 2^16 - 1 bytes), else a 32 x 32-bit product, the compiler runtime's 30-instruction mul_step sequence.
 * spmm_pass builds the family's walk once per way that shifts, each with the way constant, so the choice costs
 * nothing per nonzero; the two that multiply share one build (SPMM_ROWS_BY_MULTIPLYING), whose nonzeros test the
 * batch's choice: 2 instructions beside a 7- or 30-instruction product, for a walk's worth of IRAM. The i32 and f32
 * kernels, whose products are 30 and 245 instructions, go without the lsl_add build: it would save them under 0.1%
 * and cost them IRAM.
 */
#if defined(SPMM_TYPE_I8) || defined(SPMM_TYPE_I16)
#define SPMM_ROWS_THREE_SHIFTED 1
#else
#define SPMM_ROWS_THREE_SHIFTED 0
#endif
enum spmm_row_addressing {
    SPMM_ROWS_BY_SHIFT,
    SPMM_ROWS_BY_THREE_SHIFTED,
    SPMM_ROWS_BY_MUL16,
    SPMM_ROWS_BY_MUL32,
    SPMM_ROWS_BY_MULTIPLYING /* by MUL16 or MUL32, as the batch says */
};

static inline enum spmm_row_addressing spmm_row_addressing(void) {
    const uint32_t row_bytes = call.nr_features * (uint32_t)sizeof(spmm_feature);
    if ((row_bytes & (row_bytes - 1)) == 0)
        return SPMM_ROWS_BY_SHIFT;
    if (SPMM_ROWS_THREE_SHIFTED && (row_bytes >> __builtin_ctz(row_bytes)) == 3)
        return SPMM_ROWS_BY_THREE_SHIFTED;
    if (matrix.nr_x_rows <= 0x10000 && row_bytes <= 0xffff)
        return SPMM_ROWS_BY_MUL16;
    return SPMM_ROWS_BY_MUL32;
}

/* How a pass writes Y: every row in accumulators, or in 16 bits (spmm_args.h's y_narrow, i8 kernels), or as the
 * call says, asked per row. spmm_pass builds the walk that finds X rows by a shift (the common widths) once per
 * width, so that a walk writing accumulators is what it would be without the other. The other walks ask per row
 * and are built once: the one by three times a shift (48, 96 or 192 features of i8) inline, whose rows of 48 or more
 * multiply-adds per nonzero hide the 2 instructions of a row's question, and the ones that multiply, whose every
 * nonzero costs a 7- or 30-instruction product, out of line. That keeps the i8 kernels in IRAM (i8 CSR, 16
 * tasklets: 3,533 instructions estimated from clang's code and 3,820 from gcc's, against a v1B's 3,968; 3,645 and
 * 4,017 with a build of the walk by three times a shift per width; 3,630 and 3,927 before the walk with X per nonzero
 * had a fast path of its own, spmm_walk_units). */
enum spmm_y_width { SPMM_Y_ACC, SPMM_Y_16, SPMM_Y_AS_CALLED };

/* The family's walk over one tasklet's nonzeros for features [first, first + width) of value set `set`, whose
 * values are at heap offset `values_at`, finding X rows as `addressing` says and writing Y as `y_width` says. */
static inline __attribute__((always_inline)) void spmm_walk(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                                            uint32_t first, uint32_t width, uint32_t set,
                                                            uint32_t values_at, enum spmm_row_addressing addressing,
                                                            enum spmm_y_width y_width);

#if SPMM_X_PER_NONZERO
/* The walks over one tasklet's nonzeros for features [first, first + width) of the value set whose values are at
 * heap offset `values_at`, with X per nonzero: one per unit (spmm_walk_units). */
static void spmm_pass_units(const struct spmm_tasklet_work *work, uint32_t tasklet, uint32_t first, uint32_t width,
                            uint32_t values_at);
#endif

/* The family's walk that finds X rows by multiplying, built once and writing Y as the call says. */
static __attribute__((noinline)) void spmm_pass_multiplying(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                                            uint32_t first, uint32_t width, uint32_t set,
                                                            uint32_t values_at) {
    spmm_walk(work, tasklet, first, width, set, values_at, SPMM_ROWS_BY_MULTIPLYING, SPMM_Y_AS_CALLED);
}

/* The family's walk, built once per way of finding X rows (enum spmm_row_addressing) and, for those that shift, of
 * writing Y. */
static void spmm_pass(const struct spmm_tasklet_work *work, uint32_t tasklet, uint32_t first, uint32_t width,
                      uint32_t set, uint32_t values_at) {
#if SPMM_X_PER_NONZERO
    if (call.x_per_nonzero) {
        spmm_pass_units(work, tasklet, first, width, values_at);
        return;
    }
#endif
    const int y_16 = SPMM_NARROW_Y && call.y_narrow;
#define SPMM_WALK(addressing)                                                                                      \
    if (y_16)                                                                                                      \
        spmm_walk(work, tasklet, first, width, set, values_at, addressing, SPMM_Y_16);                             \
    else                                                                                                           \
        spmm_walk(work, tasklet, first, width, set, values_at, addressing, SPMM_Y_ACC);
    const enum spmm_row_addressing addressing = spmm_row_addressing();
    switch (addressing) {
    case SPMM_ROWS_BY_SHIFT:
        SPMM_WALK(SPMM_ROWS_BY_SHIFT)
        break;
#if SPMM_ROWS_THREE_SHIFTED
    case SPMM_ROWS_BY_THREE_SHIFTED:
        spmm_walk(work, tasklet, first, width, set, values_at, SPMM_ROWS_BY_THREE_SHIFTED, SPMM_Y_AS_CALLED);
        break;
#endif
    default:
        spmm_pass_multiplying(work, tasklet, first, width, set, values_at);
    }
#undef SPMM_WALK
}

/* The family's walk over one tasklet's nonzeros for an SDDMM call. */
static void sddmm_pass(const struct spmm_tasklet_work *work, uint32_t tasklet);

/* sum[0..width) = 0; width is a multiple of SPMM_UNIT. */
static inline void spmm_clear(spmm_acc *sum, uint32_t width) {
    for (uint32_t f = 0; f < width; f += SPMM_UNIT) {
#define SPMM_CLEAR_STEP(i) sum[f + (i)] = 0;
        SPMM_FOR_UNIT(SPMM_CLEAR_STEP)
#undef SPMM_CLEAR_STEP
    }
}

/* sum[0..width) += a_j * x_j[0..width) for the batch's n nonzeros j in order (spmm_accumulate_n), or, for a row's
 * first batch, sum[0..width) = 0 + a_0 x_0 + ... (spmm_start_n: the sums need no clearing and are not loaded); x_j is
 * slot j of the batch buffer and width a multiple of SPMM_UNIT (8 bytes of X), at most SPMM_FEATURE_CHUNK. Starting
 * from 0 adds the first product to 0 as the host does (f32: -0 + 0 is +0). */
#define SPMM_LOAD_FACTOR(j) const spmm_factor a##j = SPMM_FACTOR(values[j]);
#define SPMM_TERM(j) acc = SPMM_MUL_ADD(acc, a##j, x[(j) * SPMM_FEATURE_CHUNK]);
#define SPMM_DEFINE_ACCUMULATE(n, name, from)                                                                      \
    static inline void name(spmm_acc *sum, const spmm_feature *xs, const spmm_value *values, uint32_t width) {    \
        SPMM_TERMS_##n(SPMM_LOAD_FACTOR) for (uint32_t f = 0; f < width; f += SPMM_UNIT) {                        \
            SPMM_FOR_UNIT(SPMM_FEATURE_##n##_##from)                                                               \
        }                                                                                                          \
    }
#define SPMM_FEATURE(terms, i, initial)                                                                            \
    {                                                                                                              \
        const spmm_feature *x = xs + f + (i);                                                                      \
        spmm_acc acc = (initial);                                                                                  \
        terms(SPMM_TERM) sum[f + (i)] = acc;                                                                       \
    }
#define SPMM_FEATURE_1_SUM(i) SPMM_FEATURE(SPMM_TERMS_1, i, sum[f + (i)])
#define SPMM_FEATURE_2_SUM(i) SPMM_FEATURE(SPMM_TERMS_2, i, sum[f + (i)])
#define SPMM_FEATURE_4_SUM(i) SPMM_FEATURE(SPMM_TERMS_4, i, sum[f + (i)])
#define SPMM_FEATURE_8_SUM(i) SPMM_FEATURE(SPMM_TERMS_8, i, sum[f + (i)])
#define SPMM_FEATURE_1_ZERO(i) SPMM_FEATURE(SPMM_TERMS_1, i, 0)
#define SPMM_FEATURE_2_ZERO(i) SPMM_FEATURE(SPMM_TERMS_2, i, 0)
#define SPMM_FEATURE_4_ZERO(i) SPMM_FEATURE(SPMM_TERMS_4, i, 0)
#define SPMM_FEATURE_8_ZERO(i) SPMM_FEATURE(SPMM_TERMS_8, i, 0)
SPMM_DEFINE_ACCUMULATE(1, spmm_accumulate_1, SUM)
SPMM_DEFINE_ACCUMULATE(1, spmm_start_1, ZERO)
#if SPMM_BATCH >= 2
SPMM_DEFINE_ACCUMULATE(2, spmm_accumulate_2, SUM)
SPMM_DEFINE_ACCUMULATE(2, spmm_start_2, ZERO)
#endif
#if SPMM_BATCH >= 4
SPMM_DEFINE_ACCUMULATE(4, spmm_accumulate_4, SUM)
SPMM_DEFINE_ACCUMULATE(4, spmm_start_4, ZERO)
#endif
#if SPMM_BATCH >= 8
SPMM_DEFINE_ACCUMULATE(8, spmm_accumulate_8, SUM)
SPMM_DEFINE_ACCUMULATE(8, spmm_start_8, ZERO)
#endif

/* Adds the tasklet's batch of `count` nonzeros (1 to SPMM_BATCH) to sum[0..width), or with `fresh` (the row's first
 * batch) sets sum to it: as one loop when full, as its binary digits otherwise, the first nonzeros first. Not
 * inlined: its unrolled loops are most of a kernel's code, and a copy in each of a pass's two builds would not fit
 * a DPU's IRAM (4,096 instructions); the call is a few instructions per batch. */
static __attribute__((noinline)) void spmm_accumulate_batch(uint32_t tasklet, spmm_acc *sum, uint32_t count,
                                                            uint32_t width, int fresh) {
    const spmm_feature *xs = incoming[tasklet].x;
    const spmm_value *values = batch_values[tasklet];
#define SPMM_BATCH_DIGIT(n)                                                                                        \
    if (count & (n)) {                                                                                             \
        if (fresh)                                                                                                 \
            spmm_start_##n(sum, xs, values, width);                                                                \
        else                                                                                                       \
            spmm_accumulate_##n(sum, xs, values, width);                                                           \
        fresh = 0;                                                                                                 \
        xs += (n) * SPMM_FEATURE_CHUNK;                                                                            \
        values += (n);                                                                                             \
    }
#if SPMM_BATCH >= 8
    SPMM_BATCH_DIGIT(8)
#endif
#if SPMM_BATCH >= 4
    SPMM_BATCH_DIGIT(4)
#endif
#if SPMM_BATCH >= 2
    SPMM_BATCH_DIGIT(2)
#endif
    SPMM_BATCH_DIGIT(1)
#undef SPMM_BATCH_DIGIT
}

/* A pass's batch: where X's rows and the chunk's features lie, how many nonzeros wait in the buffer, and whether the
 * row's sums are still unwritten (its first batch sets them). */
struct spmm_batch {
    uint32_t x_at;      /* MRAM address of features [first, ..) of X row 0 */
    uint32_t row_bytes; /* of an X row */
    uint32_t row_shift; /* the position of row_bytes' lowest bit: log2 of row_bytes or of row_bytes / 3 */
    uint32_t width;     /* features of the chunk */
    uint32_t count;
    uint32_t fresh;
    uint32_t multiply16; /* whether SPMM_ROWS_BY_MULTIPLYING finds rows as SPMM_ROWS_BY_MUL16 (else MUL32) */
};

static inline struct spmm_batch spmm_batch_start(uint32_t first, uint32_t width) {
    const uint32_t row_bytes = call.nr_features * (uint32_t)sizeof(spmm_feature);
    const struct spmm_batch batch = {.x_at = spmm_heap() + call.x_offset + first * (uint32_t)sizeof(spmm_feature),
                                     .row_bytes = row_bytes,
                                     .row_shift = (uint32_t)__builtin_ctz(row_bytes),
                                     .width = width,
                                     .count = 0,
                                     .fresh = 1,
                                     .multiply16 = spmm_row_addressing() == SPMM_ROWS_BY_MUL16};
    return batch;
}

/* Byte offset of X row `column` in X, found as `addressing` says. */
static inline __attribute__((always_inline)) uint32_t spmm_x_row_at(const struct spmm_batch *batch, uint32_t column,
                                                                    enum spmm_row_addressing addressing) {
    switch (addressing) {
    case SPMM_ROWS_BY_SHIFT:
        return column << batch->row_shift;
    case SPMM_ROWS_BY_THREE_SHIFTED:
        return (column + (column << 1)) << batch->row_shift;
    case SPMM_ROWS_BY_MUL16:
        return (uint32_t)(uint16_t)column * (uint32_t)(uint16_t)batch->row_bytes;
    case SPMM_ROWS_BY_MUL32:
        return column * batch->row_bytes;
    default:
        return batch->multiply16 ? (uint32_t)(uint16_t)column * (uint32_t)(uint16_t)batch->row_bytes
                                 : column * batch->row_bytes;
    }
}

/* Reads the chunk of X row `column` into the batch buffer with the nonzero's value, and adds the batch to sum when
 * it is full. */
static inline __attribute__((always_inline)) void spmm_batch_push(struct spmm_batch *batch, uint32_t tasklet,
                                                                  spmm_acc *sum, spmm_value value, uint32_t column,
                                                                  enum spmm_row_addressing addressing) {
    mram_read((__mram_ptr void *)(batch->x_at + spmm_x_row_at(batch, column, addressing)),
              &incoming[tasklet].x[batch->count * SPMM_FEATURE_CHUNK], batch->width * (uint32_t)sizeof(spmm_feature));
    batch_values[tasklet][batch->count] = value;
    if (++batch->count == SPMM_BATCH) {
        spmm_accumulate_batch(tasklet, sum, SPMM_BATCH, batch->width, batch->fresh);
        batch->count = 0;
        batch->fresh = 0;
    }
}

/* At a row's end: adds what waits in the batch buffer, or clears the sums of a row without nonzeros; the next row
 * starts fresh. */
static inline void spmm_batch_finish(struct spmm_batch *batch, uint32_t tasklet, spmm_acc *sum) {
    if (batch->count > 0)
        spmm_accumulate_batch(tasklet, sum, batch->count, batch->width, batch->fresh);
    else if (batch->fresh)
        spmm_clear(sum, batch->width);
    batch->count = 0;
    batch->fresh = 1;
}

/* Byte offset of features [first, ..) of partial slot `slot` of `tasklet`. */
static inline uint32_t spmm_partial_at(uint32_t tasklet, uint32_t slot, uint32_t first) {
    return call.partials_offset +
           ((tasklet * SPMM_MAX_PARTIALS + slot) * call.nr_features + first) * (uint32_t)sizeof(spmm_acc);
}

/* Bytes of a value of Y: an accumulator's, or 2 when the call takes Y in 16 bits. */
static inline uint32_t spmm_y_value_bytes(void) {
#if SPMM_NARROW_Y
    if (call.y_narrow)
        return sizeof(int16_t);
#endif
    return sizeof(spmm_acc);
}

/* Heap offset of features [first, ..) of Y's row `row`. A pass computes it for its first row only and then adds a
 * row's bytes (spmm_y_row_bytes) per row: the product is the compiler runtime's 30-instruction 32-bit multiply. */
static inline uint32_t spmm_y_at(uint32_t row, uint32_t first) {
    return call.y_offset + (row * call.nr_features + first) * spmm_y_value_bytes();
}

static inline uint32_t spmm_y_row_bytes(void) {
    return call.nr_features * spmm_y_value_bytes();
}

/* No wide row: past the end of the wide-row list. */
#define SPMM_NO_WIDE_ROW UINT32_MAX

/* A pass's place in the DPU's wide-row list (spmm_call_args.y_narrow): the first wide row at or after the rows it
 * has stored, and its index in the list. */
struct spmm_wide_cursor {
    uint32_t row;
    uint32_t index;
};

/* No row's number. */
#define SPMM_NO_ROW UINT32_MAX

/* Where a pass writes its finished rows: the tasklet's shared rows (SPMM_NO_ROW past nr_partials) with their
 * partial slots' heap offsets, computed once per pass so that a row's test is two compares rather than an offset's
 * 32-bit multiply, and its place in the wide-row list. */
struct spmm_rows_out {
    uint32_t partial_row[SPMM_MAX_PARTIALS];
    uint32_t partial_at[SPMM_MAX_PARTIALS];
    struct spmm_wide_cursor wide;
};
_Static_assert(SPMM_MAX_PARTIALS == 2, "spmm_partial_slot tests two partial rows");

/* Not a partial slot's offset: what spmm_partial_slot gives for a row the tasklet does not share. */
#define SPMM_NOT_SHARED UINT32_MAX

/* The heap offset of `row`'s partial slot, SPMM_NOT_SHARED unless the tasklet shares the row. */
static inline uint32_t spmm_partial_slot(const struct spmm_rows_out *out, uint32_t row) {
    if (row == out->partial_row[0])
        return out->partial_at[0];
    if (row == out->partial_row[1])
        return out->partial_at[1];
    return SPMM_NOT_SHARED;
}

#if SPMM_NARROW_Y
/* Per tasklet: the 8-byte word of the wide-row list last read. */
static __dma_aligned uint32_t wide_word[NR_TASKLETS][2];

/* Entry `index` of the DPU's wide-row list, SPMM_NO_WIDE_ROW past its end: one DMA per wide row, a few per block. */
static uint32_t spmm_wide_row(uint32_t tasklet, uint32_t index) {
    if (index >= matrix.nr_wide_rows)
        return SPMM_NO_WIDE_ROW;
    mram_read((__mram_ptr void *)(spmm_heap() + matrix.wide_rows_offset + (index & ~1u) * (uint32_t)sizeof(uint32_t)),
              wide_word[tasklet], sizeof(wide_word[tasklet]));
    return wide_word[tasklet][index & 1];
}

/* The index of `row` in the wide-row list, searched from `index`, the first wide row at or after one not after
 * `row`; SPMM_NO_WIDE_ROW when it is not wide. */
static uint32_t spmm_wide_index_of(uint32_t tasklet, uint32_t index, uint32_t row) {
    for (;; index++) {
        const uint32_t wide = spmm_wide_row(tasklet, index);
        if (wide == row)
            return index;
        if (wide > row)
            return SPMM_NO_WIDE_ROW;
    }
}

/* Writes a finished row's chunk to Y in 16 bits at heap offset `y_at`, or, a wide row (`wide_index` its index in
 * the list), in 32 bits to its row of the wide rows. The row's sums fit 16 bits unless it is wide. */
static inline void spmm_write_narrow(uint32_t tasklet, const spmm_acc *sum, uint32_t wide_index, uint32_t y_at,
                                     uint32_t first, uint32_t width) {
    if (wide_index != SPMM_NO_WIDE_ROW) {
        const uint32_t at = call.y_wide_offset + (wide_index * call.nr_features + first) * (uint32_t)sizeof(spmm_acc);
        mram_write(sum, (__mram_ptr void *)(spmm_heap() + at), width * (uint32_t)sizeof(spmm_acc));
        return;
    }
    int16_t *narrow = incoming[tasklet].narrow;
    for (uint32_t f = 0; f < width; f += SPMM_UNIT) {
#define SPMM_NARROW_STEP(i) narrow[f + (i)] = (int16_t)sum[f + (i)];
        SPMM_FOR_UNIT(SPMM_NARROW_STEP)
#undef SPMM_NARROW_STEP
    }
    mram_write(narrow, (__mram_ptr void *)(spmm_heap() + y_at), width * (uint32_t)sizeof(int16_t));
}

/* spmm_store of the tasklet's row sums in a call that takes Y in 16 bits: one copy for the walks that may take it
 * so (spmm_pass), which keeps the kernel in IRAM. */
static __attribute__((noinline)) void spmm_store_narrow(uint32_t tasklet, uint32_t row, uint32_t y_at, uint32_t first,
                                                        uint32_t width, struct spmm_rows_out *out) {
    const spmm_acc *sum = row_sum[tasklet];
    uint32_t wide_index = SPMM_NO_WIDE_ROW;
    if (row == out->wide.row) {
        wide_index = out->wide.index++;
        out->wide.row = spmm_wide_row(tasklet, out->wide.index);
    }
    const uint32_t partial_at = spmm_partial_slot(out, row);
    if (partial_at != SPMM_NOT_SHARED) {
        mram_write(sum, (__mram_ptr void *)(spmm_heap() + partial_at), width * (uint32_t)sizeof(spmm_acc));
        return;
    }
    spmm_write_narrow(tasklet, sum, wide_index, y_at, first, width);
}
#endif

/* Where a pass over features [first, ..) writes `work`'s rows: its partial slots, and its cursor at the first wide
 * row of its range (no wide rows unless the call takes Y in 16 bits). Once per pass, and out of line: every walk
 * calls it. */
static __attribute__((noinline)) struct spmm_rows_out spmm_rows_out_start(const struct spmm_tasklet_work *work,
                                                                          uint32_t tasklet, uint32_t first) {
    struct spmm_rows_out out = {{SPMM_NO_ROW, SPMM_NO_ROW}, {0, 0}, {SPMM_NO_WIDE_ROW, work->wide_begin}};
    for (uint32_t slot = 0; slot < work->nr_partials; slot++) {
        out.partial_row[slot] = work->partial_rows[slot];
        out.partial_at[slot] = spmm_partial_at(tasklet, slot, first);
    }
#if SPMM_NARROW_Y
    if (call.y_narrow)
        out.wide.row = spmm_wide_row(tasklet, out.wide.index);
#endif
    return out;
}

/* Writes a finished row's chunk to Y at heap offset `y_at` (in 16 bits as `y_width` says), or to the tasklet's
 * partial slot when the row is shared; `out`'s wide-row cursor moves past the row. */
static inline __attribute__((always_inline)) void spmm_store(struct spmm_rows_out *out, uint32_t tasklet, uint32_t row,
                                                             const spmm_acc *sum, uint32_t y_at, uint32_t first,
                                                             uint32_t width, enum spmm_y_width y_width) {
#if SPMM_NARROW_Y
    if (y_width == SPMM_Y_16 || (y_width == SPMM_Y_AS_CALLED && call.y_narrow)) {
        spmm_store_narrow(tasklet, row, y_at, first, width, out);
        return;
    }
#else
    (void)tasklet;
    (void)first;
    (void)y_width;
#endif
    const uint32_t partial_at = spmm_partial_slot(out, row);
    const uint32_t at = partial_at != SPMM_NOT_SHARED ? partial_at : y_at;
    mram_write(sum, (__mram_ptr void *)(spmm_heap() + at), width * (uint32_t)sizeof(spmm_acc));
}

#if SPMM_X_PER_NONZERO
/* Where a pass over one unit reads X and writes Y: found for a chunk's first unit and moved a unit along for each
 * next, with no multiply per pass. */
struct spmm_unit_pass {
    uint32_t first; /* the unit's first feature */
    uint32_t x_at;  /* heap offset of the unit's X */
    uint32_t y_at;  /* heap offset of the unit's features in the tasklet's first row of Y */
    struct spmm_rows_out out;
};

/* The plain rows of a unit walk, which go straight to Y: all of the tasklet's but those it shares (at most its first
 * and its last), [first, first + count) when the call takes Y in accumulators, [narrow_first, narrow_first +
 * narrow_count) when in 16 bits (but for the wide rows). The walk tests a row with one compare (two in 16 bits); the
 * others go through spmm_store. */
struct spmm_plain_rows {
    uint32_t first;
    uint32_t count;
    uint32_t narrow_first;
    uint32_t narrow_count;
};

static struct spmm_plain_rows spmm_plain_rows(const struct spmm_tasklet_work *work) {
    uint32_t first = work->row_begin, end = work->row_end;
    for (uint32_t slot = 0; slot < work->nr_partials; slot++) {
        if (work->partial_rows[slot] == first)
            first++;
        else if (work->partial_rows[slot] + 1 == end)
            end--;
    }
    const uint32_t count = end < first ? 0 : end - first;
    const int narrow = SPMM_NARROW_Y && call.y_narrow;
    const struct spmm_plain_rows plain = {first, narrow ? 0 : count, first, narrow ? count : 0};
    return plain;
}

/* The family's WRAM block for a walk over `tasklet`'s row pointers (SPMM_READ_BLOCK of 4-byte entries). */
static void *spmm_row_ptr_block(uint32_t tasklet);

/* The walk over one tasklet's nonzeros for one unit of features, at `pass`, of the value set whose values are at
 * heap offset `values_at`, with X per nonzero (spmm_units). Both families walk the block's row pointers
 * (spmm_args.h: a COO block has them too in these kernels): row r's nonzeros are the walk's next up to
 * min(row_ptr[r + 1], nz_end), as the tasklet's rows end in order at or after nz_begin (spmm_args.h), so no row's
 * start is read or clamped. A plain row (spmm_plain_rows) goes to Y with one DMA, packed to 16 bits first when the
 * call takes Y so; the others through spmm_store.
 * Out of line: the host compiler then allocates its registers apart from the other walks', which an edit to either
 * used to move (and with half the stack spills: 0.28 per multiply-add at i8, from 0.55). */
static __attribute__((noinline)) void spmm_walk_units(const struct spmm_tasklet_work *work, uint32_t tasklet,
                                                      const struct spmm_unit_pass *pass, uint32_t values_at) {
    struct spmm_reader row_ptrs;
    const uint32_t *row_ptr = spmm_read_from(&row_ptrs, spmm_row_ptr_block(tasklet), matrix.row_ptr_offset,
                                             work->row_begin, sizeof(uint32_t));
    struct spmm_units units =
        spmm_units_from(tasklet, pass->x_at, (spmm_value *)value_block[tasklet], values_at, work->nz_begin);
    spmm_acc *sum = row_sum[tasklet];
    const uint32_t y_row_bytes = spmm_y_row_bytes();
    uint32_t y_at = pass->y_at;
    struct spmm_rows_out out = pass->out;
    const struct spmm_plain_rows plain = spmm_plain_rows(work);
    const uint32_t nz_end = work->nz_end;
    uint32_t walked = work->nz_begin;
    for (uint32_t row = work->row_begin; row < work->row_end; row++) {
        row_ptr = spmm_read_next(&row_ptrs, row_ptr, sizeof(uint32_t));
        const uint32_t stop = *row_ptr < nz_end ? *row_ptr : nz_end;
        spmm_unit_row(&units, stop - walked, sum);
        walked = stop;
        if (row - plain.first < plain.count)
            mram_write(sum, (__mram_ptr void *)(spmm_heap() + y_at), SPMM_UNIT * (uint32_t)sizeof(spmm_acc));
#if SPMM_NARROW_Y
        else if (row - plain.narrow_first < plain.narrow_count && row != out.wide.row)
            spmm_write_narrow(tasklet, sum, SPMM_NO_WIDE_ROW, y_at, pass->first, SPMM_UNIT);
#endif
        else
            spmm_store(&out, tasklet, row, sum, y_at, pass->first, SPMM_UNIT, SPMM_Y_AS_CALLED);
        y_at += y_row_bytes;
    }
}

static void spmm_pass_units(const struct spmm_tasklet_work *work, uint32_t tasklet, uint32_t first, uint32_t width,
                            uint32_t values_at) {
    const uint32_t unit_bytes = call.x_unit_stride * SPMM_UNIT_BYTES;
    struct spmm_unit_pass pass = {first, call.x_offset + (first / SPMM_UNIT) * unit_bytes,
                                  spmm_y_at(work->row_begin, first), spmm_rows_out_start(work, tasklet, first)};
    const uint32_t y_unit_bytes = SPMM_UNIT * spmm_y_value_bytes();
    for (uint32_t unit = 0; unit < width / SPMM_UNIT; unit++) {
        spmm_walk_units(work, tasklet, &pass, values_at);
        pass.first += SPMM_UNIT;
        pass.x_at += unit_bytes;
        pass.y_at += y_unit_bytes;
        pass.out.partial_at[0] += SPMM_UNIT * (uint32_t)sizeof(spmm_acc);
        pass.out.partial_at[1] += SPMM_UNIT * (uint32_t)sizeof(spmm_acc);
    }
}
#endif

/* Whether `tasklet`'s partial `slot` is the first of its row's chain (the previous tasklet's last partial is
 * another row). */
static inline int spmm_starts_chain(uint32_t tasklet, uint32_t slot) {
    if (slot > 0 || tasklet == 0)
        return 1;
    const struct spmm_tasklet_work *previous = &matrix.tasklets[tasklet - 1];
    return previous->nr_partials == 0 ||
           previous->partial_rows[previous->nr_partials - 1] != matrix.tasklets[tasklet].partial_rows[0];
}

/* For each chain of partials this tasklet starts: adds the chain's slots in tasklet order and writes Y. */
static void spmm_merge(uint32_t tasklet) {
    const struct spmm_tasklet_work *work = &matrix.tasklets[tasklet];
    spmm_acc *sum = row_sum[tasklet];
    spmm_acc *other = incoming[tasklet].partial;
    const uint32_t tasklet_stride = SPMM_MAX_PARTIALS * call.nr_features * (uint32_t)sizeof(spmm_acc);
    for (uint32_t slot = 0; slot < work->nr_partials; slot++) {
        if (!spmm_starts_chain(tasklet, slot))
            continue;
        const uint32_t row = work->partial_rows[slot];
        for (uint32_t first = 0; first < call.nr_features; first += SPMM_FEATURE_CHUNK) {
            const uint32_t left = call.nr_features - first;
            const uint32_t width = left < SPMM_FEATURE_CHUNK ? left : SPMM_FEATURE_CHUNK;
            const uint32_t bytes = width * (uint32_t)sizeof(spmm_acc);
            mram_read((__mram_ptr void *)(spmm_heap() + spmm_partial_at(tasklet, slot, first)), sum, bytes);
            /* The chain goes on while the next tasklet's first partial is the same row; the next tasklet's first
             * slot is a tasklet's slots further on. */
            uint32_t at = spmm_partial_at(tasklet + 1, 0, first);
            for (uint32_t next = tasklet + 1; next < NR_TASKLETS; next++, at += tasklet_stride) {
                const struct spmm_tasklet_work *after = &matrix.tasklets[next];
                if (after->nr_partials == 0 || after->partial_rows[0] != row)
                    break;
                mram_read((__mram_ptr void *)(spmm_heap() + at), other, bytes);
                for (uint32_t f = 0; f < width; f += SPMM_UNIT) {
#define SPMM_ADD_STEP(i) sum[f + (i)] = SPMM_ADD(sum[f + (i)], other[f + (i)]);
                    SPMM_FOR_UNIT(SPMM_ADD_STEP)
#undef SPMM_ADD_STEP
                }
            }
#if SPMM_NARROW_Y
            if (call.y_narrow) {
                const uint32_t wide_index = spmm_wide_index_of(tasklet, work->wide_begin, row);
                spmm_write_narrow(tasklet, sum, wide_index, spmm_y_at(row, first), first, width);
                continue;
            }
#endif
            mram_write(sum, (__mram_ptr void *)(spmm_heap() + spmm_y_at(row, first)), bytes);
        }
    }
}

/* Where a tasklet's SDDMM results go: `next` is the nonzero of the next result, `run` the first nonzero of the
 * buffered ones (even), `buffered` how many there are. */
struct sddmm_results {
    uint32_t next;
    uint32_t begin;
    uint32_t end;
    uint32_t run;
    uint32_t buffered;
};

static inline void sddmm_start(struct sddmm_results *out, const struct spmm_tasklet_work *work) {
    out->next = work->nz_begin;
    out->begin = work->nz_begin;
    out->end = work->nz_end;
    out->run = (work->nz_begin + 1) & ~1u;
    out->buffered = 0;
}

/* Writes the buffered results: an even count from an even nonzero, so whole 8-byte words. */
static void sddmm_flush(struct sddmm_results *out, uint32_t tasklet) {
    if (out->buffered == 0)
        return;
    mram_write(results[tasklet], (__mram_ptr void *)(spmm_heap() + call.out_offset + out->run * (uint32_t)sizeof(spmm_acc)),
               out->buffered * (uint32_t)sizeof(spmm_acc));
    out->run += out->buffered;
    out->buffered = 0;
}

static void sddmm_edge(uint32_t tasklet, uint32_t slot, spmm_acc value) {
    edge_word[tasklet][0] = value;
    edge_word[tasklet][1] = 0;
    mram_write(edge_word[tasklet], (__mram_ptr void *)(spmm_heap() + call.edges_offset + (tasklet * 2 + slot) * 8), 8);
}

/* The result of the next nonzero of the tasklet's range. */
static void sddmm_put(struct sddmm_results *out, uint32_t tasklet, spmm_acc value) {
    const uint32_t k = out->next++;
    if ((k & 1) && k == out->begin) {
        sddmm_edge(tasklet, SDDMM_EDGE_FIRST, value);
        return;
    }
    if ((out->end & 1) && k + 1 == out->end) {
        sddmm_flush(out, tasklet);
        sddmm_edge(tasklet, SDDMM_EDGE_LAST, value);
        return;
    }
    results[tasklet][out->buffered++] = value;
    if (out->buffered == SDDMM_RESULT_BUFFER)
        sddmm_flush(out, tasklet);
}

/* P's row `row` (its first chunk, all of it when the features fit one chunk) into the tasklet's P buffer. */
static inline void sddmm_read_p(uint32_t tasklet, uint32_t row, uint32_t first, uint32_t width) {
    const uint32_t at = call.p_offset + (row * call.nr_features + first) * (uint32_t)sizeof(spmm_feature);
    mram_read((__mram_ptr void *)(spmm_heap() + at), row_sum[tasklet], width * (uint32_t)sizeof(spmm_feature));
}

/* <P_row, Q_column> over every feature, in feature order. With `p_read`, the row fits one chunk and is already in
 * the tasklet's P buffer. */
static spmm_acc sddmm_dot(uint32_t tasklet, uint32_t row, uint32_t column, int p_read) {
    const spmm_feature *p = (const spmm_feature *)row_sum[tasklet];
    const spmm_feature *q = incoming[tasklet].x;
    spmm_acc sum = 0;
    for (uint32_t first = 0; first < call.nr_features; first += SPMM_FEATURE_CHUNK) {
        const uint32_t left = call.nr_features - first;
        const uint32_t width = left < SPMM_FEATURE_CHUNK ? left : SPMM_FEATURE_CHUNK;
        if (!p_read)
            sddmm_read_p(tasklet, row, first, width);
        const uint32_t at = call.x_offset + (column * call.nr_features + first) * (uint32_t)sizeof(spmm_feature);
        mram_read((__mram_ptr void *)(spmm_heap() + at), incoming[tasklet].x, width * (uint32_t)sizeof(spmm_feature));
        for (uint32_t f = 0; f < width; f += SPMM_UNIT) {
#define SDDMM_DOT_STEP(i) sum = SPMM_MUL_ADD(sum, p[f + (i)], q[f + (i)]);
            SPMM_FOR_UNIT(SDDMM_DOT_STEP)
#undef SDDMM_DOT_STEP
        }
    }
    return sum;
}

int main(void) {
    const uint32_t tasklet = me();
    const struct spmm_tasklet_work *work = &matrix.tasklets[tasklet];
    if (call.mode == SPMM_MODE_SDDMM) {
        if (work->nz_begin < work->nz_end)
            sddmm_pass(work, tasklet);
        return 0;
    }
    if (work->row_begin < work->row_end) {
        /* Chunks never straddle two value sets: each pass reads one set's values. */
        for (uint32_t first = 0; first < call.nr_features;) {
            const uint32_t set = first / call.head_features;
            const uint32_t left = (set + 1) * call.head_features - first;
            const uint32_t width = left < SPMM_FEATURE_CHUNK ? left : SPMM_FEATURE_CHUNK;
            spmm_pass(work, tasklet, first, width, set, call.values_offset + set * call.values_stride);
            first += width;
        }
    }
    barrier_wait(&partials_written);
    spmm_merge(tasklet);
    return 0;
}

#endif /* PIMGNN_SPMM_KERNEL_H */
