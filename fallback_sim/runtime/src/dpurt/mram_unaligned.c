/*
 * mram_unaligned.c: mram_read_unaligned and mram_write_unaligned (mram_unaligned.h) over aligned DMA.
 *
 * Reads cover the 8-byte-aligned range around the requested bytes. Writes copy the 8-byte-aligned middle
 * directly and read-modify-write the partial 8-byte words at either edge through a scratch word on the calling
 * tasklet's stack, so the bytes around the range are left as they were.
 */
#include <stdint.h>
#include <string.h>

#include <dpusim/abi.h>

#include <dpufault.h>
#include <mram.h>
#include <mram_unaligned.h>

#define DMA_ALIGNMENT 8u
#define DMA_MAX DPUSIM_DMA_MAX

static uintptr_t align_down(uintptr_t address)
{
    return address & ~(uintptr_t)(DMA_ALIGNMENT - 1);
}

static void check_size(const char *function, unsigned int nb_of_bytes)
{
    if (nb_of_bytes > DMA_MAX) {
        __dpusim_fault(DPUSIM_FAULT_DMA, 0, nb_of_bytes, "%s: %u bytes is more than the DMA maximum of %u", function,
                       nb_of_bytes, DMA_MAX);
    }
}

void *mram_read_unaligned(const __mram_ptr void *from, void *buffer, unsigned int nb_of_bytes)
{
    check_size("mram_read_unaligned", nb_of_bytes);
    uintptr_t start = align_down((uintptr_t)from);
    uint8_t *result = (uint8_t *)buffer + ((uintptr_t)from - start);
    if (nb_of_bytes == 0) {
        return result;
    }
    uintptr_t end = align_down((uintptr_t)from + nb_of_bytes + DMA_ALIGNMENT - 1);
    for (uintptr_t at = start; at < end;) {
        uint32_t chunk = end - at > DMA_MAX ? DMA_MAX : (uint32_t)(end - at);
        mram_read((const __mram_ptr void *)at, (uint8_t *)buffer + (at - start), chunk);
        at += chunk;
    }
    return result;
}

/* Writes count bytes of src at mram, all within one aligned 8-byte MRAM word, keeping the word's other bytes. */
static void write_partial_word(const uint8_t *src, uintptr_t mram, unsigned int count)
{
    uint64_t word;
    uintptr_t aligned = align_down(mram);
    mram_read((const __mram_ptr void *)aligned, &word, DMA_ALIGNMENT);
    memcpy((uint8_t *)&word + (mram - aligned), src, count);
    mram_write(&word, (__mram_ptr void *)aligned, DMA_ALIGNMENT);
}

void mram_write_unaligned(const void *from, __mram_ptr void *to, unsigned int nb_of_bytes)
{
    uintptr_t wram = (uintptr_t)from;
    uintptr_t mram = (uintptr_t)to;
    if ((wram & (DMA_ALIGNMENT - 1)) != (mram & (DMA_ALIGNMENT - 1))) {
        __dpusim_fault(DPUSIM_FAULT_WRONG_ALIGNMENT, mram, wram,
                       "runtime fault %d: mram_write_unaligned from WRAM 0x%08lx to MRAM 0x%08lx: the addresses "
                       "differ modulo 8",
                       __FAULT_WRONG_ALIGNMENT__, (unsigned long)wram, (unsigned long)mram);
    }
    check_size("mram_write_unaligned", nb_of_bytes);
    const uint8_t *src = from;
    unsigned int left = nb_of_bytes;
    unsigned int head = (unsigned int)(mram & (DMA_ALIGNMENT - 1));
    if (head != 0 && left > 0) {
        unsigned int count = DMA_ALIGNMENT - head < left ? DMA_ALIGNMENT - head : left;
        write_partial_word(src, mram, count);
        src += count;
        mram += count;
        left -= count;
    }
    while (left >= DMA_ALIGNMENT) {
        unsigned int chunk = left & ~(DMA_ALIGNMENT - 1);
        if (chunk > DMA_MAX) {
            chunk = DMA_MAX;
        }
        mram_write(src, (__mram_ptr void *)mram, chunk);
        src += chunk;
        mram += chunk;
        left -= chunk;
    }
    if (left > 0) {
        write_partial_word(src, mram, left);
    }
}
