/* Another program with a symbol of the same name as the first one's. */
#include <stdint.h>
#include <defs.h>

__host uint32_t w[4];
__host uint32_t other_only;

int main(void) {
    if (me() == 0) {
        w[0] = 0x07E5;
    }
    return 0;
}
