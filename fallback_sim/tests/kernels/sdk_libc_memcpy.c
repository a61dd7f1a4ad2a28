/*
 * sdk_libc_memcpy.c: the DPU libc's memcpy, memmove and memset on WRAM, with overlapping ranges, and what they
 * charge. Tasklet 0 works on buffer, which the host fills; the other tasklets return.
 *
 * Host inputs: mode, destination and source (offsets in buffer), length, value.
 *   mode 0: memcpy(buffer + destination, buffer + source, length)    (length from the host: a call)
 *   mode 1: memcpy(buffer + destination, buffer, 21)                  (a constant length and a distance from the
 *                                                                      host, as an LZ decoder copies a 21-byte
 *                                                                      back-reference)
 *   mode 2: memmove(buffer + destination, buffer + source, length)
 *   mode 3: memset(buffer + destination, value, length)
 * DPU outputs: buffer after the call. The test reads the launch's instructions from the simulator's statistics
 * (the performance counter reads multiples of 16, as a DPU's `time` does, too coarse for a routine's loops).
 * NR_TASKLETS = 1.
 */
#include <stdint.h>
#include <string.h>

#include <defs.h>

#define BUFFER_BYTES 256

__host uint32_t mode;
__host uint32_t destination;
__host uint32_t source;
__host uint32_t length;
__host uint32_t value;
__host uint8_t buffer[BUFFER_BYTES];

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    switch (mode) {
    case 0:
        memcpy(buffer + destination, buffer + source, length);
        break;
    case 1:
        memcpy(buffer + destination, buffer, 21);
        break;
    case 2:
        memmove(buffer + destination, buffer + source, length);
        break;
    default:
        memset(buffer + destination, (int)value, length);
        break;
    }
    return 0;
}
