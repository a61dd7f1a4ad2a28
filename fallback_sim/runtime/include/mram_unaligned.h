/*
 * mram_unaligned.h: DMA at MRAM addresses that are not 8-byte aligned.
 *
 * mram_read_unaligned reads the 8-byte-aligned MRAM range covering [from, from + nb_of_bytes) into buffer (which
 * must be 8-byte aligned and hold at least nb_of_bytes + 16 bytes) and returns the pointer into buffer at the
 * byte `from` names.
 * mram_write_unaligned writes nb_of_bytes from WRAM to MRAM without touching the surrounding bytes; the WRAM and
 * MRAM addresses must be equal modulo 8, else runtime fault 8 (Wrong Alignment).
 * nb_of_bytes is at most 2048 for both.
 */
#ifndef DPUSIM_MRAM_UNALIGNED_H
#define DPUSIM_MRAM_UNALIGNED_H

#include <mram.h>

void *mram_read_unaligned(const __mram_ptr void *from, void *buffer, unsigned int nb_of_bytes);
void mram_write_unaligned(const void *from, __mram_ptr void *to, unsigned int nb_of_bytes);

#endif /* DPUSIM_MRAM_UNALIGNED_H */
