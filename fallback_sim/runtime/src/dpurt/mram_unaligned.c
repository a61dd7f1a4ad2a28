/*
 * mram_unaligned.c: mram_read_unaligned and mram_write_unaligned (mram_unaligned.h), as the SDK 2025.1's
 * compiled runtime does them (librt_v1A.a, mram_unaligned.c.obj, disassembled), including where that differs
 * from what the SDK documents:
 *
 *  - mram_read_unaligned issues one ldma from the MRAM address aligned down to 8, of (nb_of_bytes + skew)
 *    rounded up to 8 bytes (skew = the address mod 8) as a run-time size, and returns buffer + skew. So the
 *    engine's length field wraps: 0 bytes at an aligned address read 2,048 bytes, and more than 2,040 bytes at a
 *    misaligned one read the total modulo 2,048 (8 bytes for 2,048 at skew 1).
 *  - mram_write_unaligned with an 8-aligned MRAM address and a size that is a multiple of 8 is one mram_write of
 *    nb_of_bytes as a run-time size (0 bytes write 2,048), whatever the WRAM address (the engine aligns it down).
 *    Otherwise the WRAM and MRAM addresses must agree mod 8 (else runtime fault 8); the partial 8-byte words at
 *    either end are read, patched and written back under the virtual mutex of their address (see
 *    mram_unaligned.h);
 *    the aligned middle is one mram_write whose size the SDK keeps in a uint8_t: only its low 8 bits count, so
 *    of a middle of 256 bytes or more only (size mod 256) is written.
 * The simulator does what a DPU does in each case; where a DPU moves other bytes than the kernel asked for, it
 * warns, or faults in strict mode.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <dpufault.h>
#include <mram_unaligned.h>

#include "../harness/sdk_costs.h"

#define WORD 8u
#define MIDDLE_SIZE_MASK 0xF8u /* the aligned middle's size, kept in a uint8_t by the SDK */

/* The instructions of each path, from the disassembly (the routine's own, return included). The DMA model charges
 * COST_DMA_ISSUE per transfer and the mutex model COST_MUTEX_LOCK + COST_MUTEX_UNLOCK per lock and unlock of a
 * word (the SDK's virtual mutex: the bit's acquire, test and set, release): what is charged here is the rest. */
#define READ_INSTRUCTIONS 10u          /* mram_read_unaligned: align, skew, size, length field, ldma, return */
#define WRITE_ALIGNED_INSTRUCTIONS 9u  /* the test, then the mram_write and the return */
#define WRITE_PROLOGUE_INSTRUCTIONS 7u /* the test, the alignment check, the test for a head */
/* A partial word: the hash and the vmutex's bit and mutex (13), one acquire of the bit (6), the ldma into the
 * tasklet's buffer (3) and the test of the count (1); after the bytes, the sdma and the release of the bit (16),
 * and in the head, also a flag of what is left and its test (2). */
#define PARTIAL_WORD_LOCK_INSTRUCTIONS (13u + 6u + 3u + 1u)
#define HEAD_RELEASE_INSTRUCTIONS (16u + 2u)
#define TAIL_RELEASE_INSTRUCTIONS 16u
#define HEAD_BYTE_INSTRUCTIONS 11u /* per byte of the head's loop, the last one adjusted below */
#define HEAD_LOOP_ENTRY_INSTRUCTIONS 1u
#define HEAD_EMPTY_INSTRUCTIONS 2u  /* no byte to copy: the loop is skipped */
#define HEAD_LAST_AT_WORD_END 2u    /* fewer, when the loop stops at the word's last byte */
#define HEAD_LAST_OF_COPY 1u        /* more, when it stops because no byte is left */
#define MIDDLE_TEST_INSTRUCTIONS 4u /* round the MRAM address up, mask the size, test it */
#define MIDDLE_INSTRUCTIONS 6u      /* the length field, the sdma, the WRAM pointer, the test for a tail */
#define NO_MIDDLE_INSTRUCTIONS 2u
#define TAIL_LOOP_ENTRY_INSTRUCTIONS 2u
#define TAIL_BYTE_INSTRUCTIONS 5u
#define RETURN_INSTRUCTIONS 2u

/* Charges `instructions` of the SDK's routine of which `transfers` DMA and `locks` vmutex lock/unlock pairs are
 * charged by their models. */
static void charge(uint32_t instructions, uint32_t transfers, uint32_t locks)
{
    __dpusim_charge(instructions - transfers * COST_DMA_ISSUE - locks * (COST_MUTEX_LOCK + COST_MUTEX_UNLOCK));
}

DPUSIM_MESSAGE(READ_UNALIGNED, "mram_read_unaligned");
DPUSIM_MESSAGE(WRITE_UNALIGNED, "mram_write_unaligned");
DPUSIM_MESSAGE(ONE_LDMA, "the SDK's routine reads it with one ldma, whose length field holds 8 to 2048 bytes");
DPUSIM_MESSAGE(ONE_SDMA, "the SDK's routine writes an aligned size with one sdma, whose length field holds 8 to 2048 "
                         "bytes");
DPUSIM_MESSAGE(MIDDLE_IN_8_BITS, "the SDK's routine keeps the size of the aligned middle in 8 bits");
DPUSIM_MESSAGE(MOVED_FAULT, "%s of %u bytes at MRAM address %#lx: %s (strict mode)");
DPUSIM_MESSAGE(MOVED_WARNING, "%s of %u bytes at MRAM address %#lx: %s: a DPU moves %u bytes, and so does the "
                              "simulator");
DPUSIM_MESSAGE(WRONG_ALIGNMENT, "runtime fault %d: mram_write_unaligned from WRAM 0x%08lx to MRAM 0x%08lx: the "
                                "addresses differ modulo 8");

/* Where a DPU moves `moved` bytes for a request of `asked`: said once, or a fault in strict mode. */
static void check_moved(const char *routine, uintptr_t mram, unsigned int asked, uint32_t moved, const char *why)
{
    if (__dpusim_strict()) {
        __dpusim_fault(DPUSIM_FAULT_DMA, mram, asked, MOVED_FAULT, routine, asked, (unsigned long)mram, why);
    }
    __dpusim_warn_once(routine, asked, MOVED_WARNING, routine, asked, (unsigned long)mram, why, moved);
}

void *mram_read_unaligned(const __mram_ptr void *from, void *buffer, unsigned int nb_of_bytes)
{
    uintptr_t mram = (uintptr_t)from;
    uint32_t skew = (uint32_t)(mram & (WORD - 1));
    uint32_t size = (nb_of_bytes + skew + WORD - 1) & ~(WORD - 1);
    uint32_t length = __dpusim_dma_length(size);
    if (length != size) {
        check_moved(READ_UNALIGNED, mram, nb_of_bytes, length, ONE_LDMA);
    }
    charge(READ_INSTRUCTIONS, 1, 0);
    __dpusim_dma(READ_UNALIGNED, 0, (const void *)(mram - skew), buffer, length);
    return (uint8_t *)buffer + skew;
}

/* Writes bytes [first, first + count) of the MRAM word at `word` from `source`, keeping the others, under the
 * word's lock. */
static void patch_word(uintptr_t word, uint32_t first, const uint8_t *source, uint32_t count)
{
    __dma_aligned uint8_t copy[WORD];
    __dpusim_mutex_lock(__dpusim_mram_word_lock(word));
    __dpusim_dma(WRITE_UNALIGNED, 0, (const void *)word, copy, WORD);
    for (uint32_t i = 0; i < count; i++) {
        copy[first + i] = source[i];
    }
    __dpusim_dma(WRITE_UNALIGNED, DPUSIM_DMA_TO_MRAM, (void *)word, copy, WORD);
    __dpusim_mutex_unlock(__dpusim_mram_word_lock(word));
}

/* The head's byte loop: `count` bytes from `first` in the word; it stops at the word's end or the last byte. */
static uint32_t head_loop_instructions(uint32_t first, uint32_t count)
{
    if (count == 0) {
        return HEAD_EMPTY_INSTRUCTIONS;
    }
    uint32_t instructions = HEAD_LOOP_ENTRY_INSTRUCTIONS + count * HEAD_BYTE_INSTRUCTIONS;
    return first + count == WORD ? instructions - HEAD_LAST_AT_WORD_END : instructions + HEAD_LAST_OF_COPY;
}

static void write_aligned(const void *from, uintptr_t mram, unsigned int nb_of_bytes)
{
    uint32_t length = __dpusim_dma_length(nb_of_bytes);
    if (length != nb_of_bytes) {
        check_moved(WRITE_UNALIGNED, mram, nb_of_bytes, length, ONE_SDMA);
    }
    charge(WRITE_ALIGNED_INSTRUCTIONS, 1, 0);
    __dpusim_dma(WRITE_UNALIGNED, DPUSIM_DMA_TO_MRAM, (void *)mram, (void *)from, length);
}

void mram_write_unaligned(const void *from, __mram_ptr void *to, unsigned int nb_of_bytes)
{
    uintptr_t wram = (uintptr_t)from;
    uintptr_t mram = (uintptr_t)to;
    if (((mram | nb_of_bytes) & (WORD - 1)) == 0) {
        write_aligned(from, mram, nb_of_bytes);
        return;
    }
    if ((wram & (WORD - 1)) != (mram & (WORD - 1))) {
        __dpusim_fault(DPUSIM_FAULT_WRONG_ALIGNMENT, mram, wram, WRONG_ALIGNMENT, __FAULT_WRONG_ALIGNMENT__,
                       (unsigned long)wram, (unsigned long)mram);
    }
    charge(WRITE_PROLOGUE_INSTRUCTIONS, 0, 0);
    const uint8_t *source = from;
    uint32_t left = nb_of_bytes;
    uint32_t first = (uint32_t)(mram & (WORD - 1));
    if (first != 0) {
        uint32_t count = WORD - first < left ? WORD - first : left;
        charge(PARTIAL_WORD_LOCK_INSTRUCTIONS + head_loop_instructions(first, count) + HEAD_RELEASE_INSTRUCTIONS, 2, 1);
        patch_word(mram - first, first, source, count);
        source += count;
        left -= count;
        if (left == 0) {
            charge(RETURN_INSTRUCTIONS, 0, 0);
            return;
        }
    }
    uintptr_t middle_at = (mram + WORD - 1) & ~(uintptr_t)(WORD - 1);
    uint32_t middle = left & MIDDLE_SIZE_MASK;
    if (left - (left & 7u) != middle) {
        check_moved(WRITE_UNALIGNED, mram, nb_of_bytes, nb_of_bytes - (left - (left & 7u) - middle), MIDDLE_IN_8_BITS);
    }
    charge(MIDDLE_TEST_INSTRUCTIONS, 0, 0);
    if (middle != 0) {
        charge(MIDDLE_INSTRUCTIONS, 1, 0);
        __dpusim_dma(WRITE_UNALIGNED, DPUSIM_DMA_TO_MRAM, (void *)middle_at, (void *)source, middle);
        source += middle;
    } else {
        charge(NO_MIDDLE_INSTRUCTIONS, 0, 0);
    }
    if (left > middle) {
        uint32_t tail = left & 7u;
        uint32_t loop = tail == 0 ? 0 : TAIL_LOOP_ENTRY_INSTRUCTIONS + tail * TAIL_BYTE_INSTRUCTIONS;
        charge(PARTIAL_WORD_LOCK_INSTRUCTIONS + loop + TAIL_RELEASE_INSTRUCTIONS, 2, 1);
        patch_word(middle_at + middle, 0, source, tail);
    }
    charge(RETURN_INSTRUCTIONS, 0, 0);
}
