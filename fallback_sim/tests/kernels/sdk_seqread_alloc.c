/*
 * sdk_seqread_alloc.c: seqread<S>_alloc for every cache size S, each after an 8-byte mem_alloc, so that the heap
 * pointer it starts from is rarely S-aligned.
 *
 * Outputs, per size in the order 32, 64, 128, 256, 512, 1024: before[i] = the 8-byte block allocated first,
 * caches[i] = what seqread<S>_alloc returned, after[i] = an 8-byte block allocated next. One tasklet.
 */
#include <stdint.h>

#include <alloc.h>
#include <seqread.h>

#define NR_SIZES 6

__host uint32_t before[NR_SIZES];
__host uint32_t caches[NR_SIZES];
__host uint32_t after[NR_SIZES];

static seqreader_buffer_t (*const allocators[NR_SIZES])(void) = {
    seqread32_alloc, seqread64_alloc, seqread128_alloc, seqread256_alloc, seqread512_alloc, seqread1024_alloc,
};

int main(void)
{
    mem_reset();
    for (uint32_t i = 0; i < NR_SIZES; i++) {
        before[i] = (uint32_t)(uintptr_t)mem_alloc(8);
        caches[i] = (uint32_t)allocators[i]();
        after[i] = (uint32_t)(uintptr_t)mem_alloc(8);
    }
    return 0;
}
