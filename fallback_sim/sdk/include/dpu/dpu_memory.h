/*
 * dpu_memory.h: copies to and from one DPU's memories (low-level API; upmem-sim's libdpu-compatible headers).
 *
 * SDK 2025 signatures (the 2020 SDK's dpu_copy_to_mram took a 5th argument). Only the functions upmem-sim
 * implements are declared (not the *_for_rank / *_for_matrix variants). MRAM is addressed by byte offset from
 * the start of MRAM (not by the 0x08000000 window address); WRAM by 32-bit word offset, in words.
 */
#ifndef UPMEM_SIM_DPU_MEMORY_H
#define UPMEM_SIM_DPU_MEMORY_H

#include <stdint.h>

#include <dpu_error.h>
#include <dpu_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copies `nb_of_bytes` bytes from `source` to the DPU's MRAM at `mram_byte_offset`. */
dpu_error_t dpu_copy_to_mram(struct dpu_t *dpu, mram_addr_t mram_byte_offset, const uint8_t *source,
                             mram_size_t nb_of_bytes);

/* Copies `nb_of_bytes` bytes from the DPU's MRAM at `mram_byte_offset` to `destination`. */
dpu_error_t dpu_copy_from_mram(struct dpu_t *dpu, uint8_t *destination, mram_addr_t mram_byte_offset,
                               mram_size_t nb_of_bytes);

/* Copies `nb_of_words` 32-bit words from `source` to the DPU's WRAM at word `wram_word_offset`. */
dpu_error_t dpu_copy_to_wram_for_dpu(struct dpu_t *dpu, wram_addr_t wram_word_offset, const dpuword_t *source,
                                     wram_size_t nb_of_words);

/* Copies `nb_of_words` 32-bit words from the DPU's WRAM at word `wram_word_offset` to `destination`. */
dpu_error_t dpu_copy_from_wram_for_dpu(struct dpu_t *dpu, dpuword_t *destination, wram_addr_t wram_word_offset,
                                       wram_size_t nb_of_words);

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_MEMORY_H */
