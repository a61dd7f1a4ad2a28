#include <stdint.h>
#include <defs.h>
#include <mram.h>

#include "common.h"

__host uint32_t rank_tag;
__host uint32_t launches;

int main(void) {
    if (me() != 0) {
        return 0;
    }
    __dma_aligned uint32_t cache[N];
    mram_read(DPU_MRAM_HEAP_POINTER, cache, sizeof(cache));
    for (unsigned e = 0; e < N; e++) {
        cache[e] = expected_output(cache[e], rank_tag);
    }
    mram_write(cache, DPU_MRAM_HEAP_POINTER + sizeof(cache), sizeof(cache));
    launches++;
    return 0;
}
