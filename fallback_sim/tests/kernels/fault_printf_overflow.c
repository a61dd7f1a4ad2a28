/*
 * fault_printf_overflow.c: a printf message larger than the stdout buffer (runtime fault 5, Printf Overflow),
 * with STDOUT_BUFFER_INIT(STDOUT_BYTES = 64); tasklet 0 only.
 *
 *  mode 0: printf("short\n")                          -> no fault; log = "short\n"
 *  mode 1: one LONG_MESSAGE_BYTES (200) 'x' line      -> DPUSIM_FAULT_PRINTF_OVERFLOW
 *  mode 2: NR_LINES (20) lines "line 00\n".."line 19\n" (8 bytes each, 160 in all, each fitting)
 *                                                     -> no fault; the log keeps the last 64 bytes:
 *                                                        "line 12\n" .. "line 19\n" (log_length 160)
 * Any NR_TASKLETS.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <defs.h>

#define STDOUT_BYTES 64
#define LONG_MESSAGE_BYTES 200
#define NR_LINES 20

STDOUT_BUFFER_INIT(STDOUT_BYTES);

__host uint32_t mode;

char long_message[LONG_MESSAGE_BYTES + 1];

int main(void)
{
    if (me() != 0) {
        return 0;
    }
    switch (mode) {
    case 0:
        printf("short\n");
        break;
    case 1:
        memset(long_message, 'x', LONG_MESSAGE_BYTES);
        printf("%s\n", long_message);
        break;
    case 2:
        for (uint32_t i = 0; i < NR_LINES; i++) {
            printf("line %02u\n", i);
        }
        break;
    default:
        break;
    }
    return 0;
}
