/*
 * stdint.h for DPU kernels: the C library's <stdint.h>, plus what the SDK's DPU libc header brings with it: it
 * includes <limits.h>, so kernels that include only <stdint.h> (or a runtime header that includes it) may use
 * INT_MAX, UINT_MAX, CHAR_BIT and the other <limits.h> names.
 */
#include <limits.h>

#include_next <stdint.h>
