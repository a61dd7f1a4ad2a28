/* Every tasklet runs `work` steps of a linear congruential generator; tasklet 0 publishes its last value. The
 * modelled cycles depend only on `work`, the same on every DPU. */
#include <defs.h>
#include <stdint.h>

__host uint32_t work;
__host uint32_t result;

int main(void) {
    uint32_t acc = me();
    for (uint32_t k = 0; k < work; k++) {
        acc = acc * 1103515245u + 12345u;
    }
    if (me() == 0) {
        result = acc;
    }
    return 0;
}
