/*
 * A kernel for misuse tests: host-visible symbols of known sizes in WRAM and MRAM, a busy loop of `spin`
 * iterations, and a fault chosen by the host: 1 = DMA into WRAM past its end, 2 = halt(), 3 = division by zero,
 * 4 = failed assert.
 */
#include <stdint.h>
#include <assert.h>
#include <defs.h>
#include <mram.h>

__host uint32_t fault_kind;
__host uint32_t spin;
__host uint32_t divisor;
__host uint32_t result;
__host uint32_t w[4];            /* 16 bytes of WRAM */
__mram_noinit uint8_t m[64];     /* 64 bytes of MRAM */
__mram_noinit uint64_t big[256];

int main(void) {
    if (me() != 0) {
        return 0;
    }
    uint32_t acc = 1;
    for (uint32_t k = 0; k < spin; k++) {
        acc = acc * 1664525u + 1013904223u;
    }
    result = acc;
    volatile uint32_t d = divisor;
    switch (fault_kind) {
    case 1:
        mram_read(m, (void *)((uintptr_t)w + (64u << 10)), 8);
        break;
    case 2:
        halt();
    case 3:
        result = 100u / d;
        break;
    case 4:
        assert(d == 12345);
        break;
    default:
        break;
    }
    w[0] = 0xD0D0;
    return 0;
}
