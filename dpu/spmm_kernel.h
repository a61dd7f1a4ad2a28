/*
 * What the CSR and COO SpMM kernels share: the value types, the WRAM buffers, the X reads and Y writes, the
 * merge of rows shared between tasklets, and main(). A family's .c file includes this header and defines
 * spmm_pass(), which walks one tasklet's nonzeros for one chunk of features.
 *
 * Value type: built once per type with -DSPMM_TYPE_F32, _I32, _I16 or _I8. A's values are 32 bits in MRAM
 * (spmm_value); X has the value type; Y and partial sums are float for f32 and 32-bit integers otherwise.
 * Integer products and sums wrap modulo 2^32 (computed in uint32_t, so no signed overflow), exactly as the
 * host's Element::mul_add does; f32 is multiplied then added with two roundings (built with
 * -ffp-contract=off), as on the host.
 *
 * Work split (the host computes it, src/pim/tasklets.rs): each tasklet gets a contiguous range of the DPU's
 * nonzeros, balanced by nonzeros plus rows, cut inside a row when a row is long; see struct
 * spmm_tasklet_work. Features go in chunks of SPMM_FEATURE_CHUNK: for each chunk a tasklet walks its
 * nonzeros (seqread, SPMM_SEQREAD bytes per DMA), reads the chunk of the referenced X row (one mram_read of
 * at most SPMM_FEATURE_CHUNK * 4 = 256 bytes) and accumulates into WRAM; a finished row goes to Y (or to the
 * tasklet's partial slot when shared) with one mram_write. After a barrier, each shared row is summed in
 * tasklet order by the tasklet holding its first partial, so the result never depends on interleaving.
 *
 * WRAM per tasklet: 2 x 256 B of row buffers and the seqread caches; stacks are STACK_SIZE_DEFAULT.
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

/* A seqread cache's alignment: SEQREAD_CACHE_SIZE. The SDK's seqread_get refills when adding the increment to
 * the pointer carries out of the log2(SEQREAD_CACHE_SIZE) low bits of its WRAM address (the SDK 2025.1's compiled
 * runtime, seqread128.c.obj: `add r0, r0, r1, nc7`), so a cache that is not aligned to its size is refilled too
 * early and yields pointers before it. A 2 x SEQREAD_CACHE_SIZE row of a cache array stays aligned. */
#define SPMM_SEQREAD_ALIGNED __aligned(SEQREAD_CACHE_SIZE)

__host struct spmm_matrix_args matrix;
__host struct spmm_call_args call;

/* Per tasklet: the row being accumulated, and the X chunk just read (also an incoming partial in the merge). */
static __dma_aligned spmm_acc row_sum[NR_TASKLETS][SPMM_FEATURE_CHUNK];
static __dma_aligned spmm_acc incoming[NR_TASKLETS][SPMM_FEATURE_CHUNK];

BARRIER_INIT(partials_written, NR_TASKLETS);

/* The family's walk over one tasklet's nonzeros for features [first, first + width). */
static void spmm_pass(const struct spmm_tasklet_work *work, uint32_t tasklet, uint32_t first, uint32_t width);

static inline uint32_t spmm_heap(void) {
    return (uint32_t)DPU_MRAM_HEAP_POINTER;
}

/* sum[0..width) = 0; width is a multiple of SPMM_UNIT. */
static inline void spmm_clear(spmm_acc *sum, uint32_t width) {
    for (uint32_t f = 0; f < width; f += SPMM_UNIT) {
#define SPMM_CLEAR_STEP(i) sum[f + (i)] = 0;
        SPMM_FOR_UNIT(SPMM_CLEAR_STEP)
#undef SPMM_CLEAR_STEP
    }
}

/* sum[0..width) += value * X[column][first..first + width). width is a multiple of SPMM_UNIT (8 bytes of X)
 * and at most SPMM_FEATURE_CHUNK. */
static inline void spmm_accumulate(spmm_acc *sum, spmm_acc *buffer, spmm_value value, uint32_t column,
                                   uint32_t first, uint32_t width) {
    const uint32_t x_row = call.x_offset + column * call.nr_features * (uint32_t)sizeof(spmm_feature);
    mram_read((__mram_ptr void *)(spmm_heap() + x_row + first * (uint32_t)sizeof(spmm_feature)), buffer,
              width * (uint32_t)sizeof(spmm_feature));
    const spmm_feature *x = (const spmm_feature *)buffer;
    for (uint32_t f = 0; f < width; f += SPMM_UNIT) {
#define SPMM_ACCUMULATE_STEP(i) sum[f + (i)] = SPMM_MUL_ADD(sum[f + (i)], SPMM_VALUE(value), x[f + (i)]);
        SPMM_FOR_UNIT(SPMM_ACCUMULATE_STEP)
#undef SPMM_ACCUMULATE_STEP
    }
}

/* Byte offset of features [first, ..) of partial slot `slot` of `tasklet`. */
static inline uint32_t spmm_partial_at(uint32_t tasklet, uint32_t slot, uint32_t first) {
    return call.partials_offset +
           ((tasklet * SPMM_MAX_PARTIALS + slot) * call.nr_features + first) * (uint32_t)sizeof(spmm_acc);
}

/* Writes a finished row's chunk to Y, or to the tasklet's partial slot when the row is shared. */
static inline void spmm_store(const struct spmm_tasklet_work *work, uint32_t tasklet, uint32_t row,
                              const spmm_acc *sum, uint32_t first, uint32_t width) {
    uint32_t at = call.y_offset + (row * call.nr_features + first) * (uint32_t)sizeof(spmm_acc);
    for (uint32_t slot = 0; slot < work->nr_partials; slot++)
        if (work->partial_rows[slot] == row)
            at = spmm_partial_at(tasklet, slot, first);
    mram_write(sum, (__mram_ptr void *)(spmm_heap() + at), width * (uint32_t)sizeof(spmm_acc));
}

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
    spmm_acc *other = incoming[tasklet];
    for (uint32_t slot = 0; slot < work->nr_partials; slot++) {
        if (!spmm_starts_chain(tasklet, slot))
            continue;
        const uint32_t row = work->partial_rows[slot];
        for (uint32_t first = 0; first < call.nr_features; first += SPMM_FEATURE_CHUNK) {
            const uint32_t left = call.nr_features - first;
            const uint32_t width = left < SPMM_FEATURE_CHUNK ? left : SPMM_FEATURE_CHUNK;
            const uint32_t bytes = width * (uint32_t)sizeof(spmm_acc);
            mram_read((__mram_ptr void *)(spmm_heap() + spmm_partial_at(tasklet, slot, first)), sum, bytes);
            /* The chain goes on while the next tasklet's first partial is the same row. */
            for (uint32_t next = tasklet + 1; next < NR_TASKLETS; next++) {
                const struct spmm_tasklet_work *after = &matrix.tasklets[next];
                if (after->nr_partials == 0 || after->partial_rows[0] != row)
                    break;
                mram_read((__mram_ptr void *)(spmm_heap() + spmm_partial_at(next, 0, first)), other, bytes);
                for (uint32_t f = 0; f < width; f += SPMM_UNIT) {
#define SPMM_ADD_STEP(i) sum[f + (i)] = SPMM_ADD(sum[f + (i)], other[f + (i)]);
                    SPMM_FOR_UNIT(SPMM_ADD_STEP)
#undef SPMM_ADD_STEP
                }
            }
            const uint32_t at = call.y_offset + (row * call.nr_features + first) * (uint32_t)sizeof(spmm_acc);
            mram_write(sum, (__mram_ptr void *)(spmm_heap() + at), bytes);
        }
    }
}

int main(void) {
    const uint32_t tasklet = me();
    const struct spmm_tasklet_work *work = &matrix.tasklets[tasklet];
    if (work->row_begin < work->row_end) {
        for (uint32_t first = 0; first < call.nr_features; first += SPMM_FEATURE_CHUNK) {
            const uint32_t left = call.nr_features - first;
            spmm_pass(work, tasklet, first, left < SPMM_FEATURE_CHUNK ? left : SPMM_FEATURE_CHUNK);
        }
    }
    barrier_wait(&partials_written);
    spmm_merge(tasklet);
    return 0;
}

#endif /* PIMGNN_SPMM_KERNEL_H */
