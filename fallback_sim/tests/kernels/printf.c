/*
 * printf.c: printf, puts and putchar into the DPU log (read on the host with dpu_log_read).
 *
 * Host input:  dpu_id
 * Expected log (cleared at every launch, so identical after each launch): tasklet 0 writes, in this order,
 *     "hello from dpu <dpu_id>\n"
 *     "a line from puts\n"
 *     "x\n"                                         (two putchar calls)
 *     "-42 42 beef str c 1099511627776 3.25\n"
 *     "tasklet 0 of <NR_TASKLETS>\n"
 * and every other tasklet t writes one line "tasklet <t> of <NR_TASKLETS>\n"; lines of different tasklets may
 * come in any order, but each line is whole.
 * Any NR_TASKLETS.
 */
#include <stdint.h>
#include <stdio.h>

#include <defs.h>

#define SIGNED_VALUE (-42)
#define UNSIGNED_VALUE 42u
#define HEX_VALUE 0xbeefu
#define LONG_VALUE (1LL << 40)
#define FLOAT_VALUE 3.25

__host uint32_t dpu_id;

int main(void)
{
    if (me() == 0) {
        printf("hello from dpu %u\n", dpu_id);
        puts("a line from puts");
        putchar('x');
        putchar('\n');
        printf("%d %u %x %s %c %lld %.2f\n", SIGNED_VALUE, UNSIGNED_VALUE, HEX_VALUE, "str", 'c', LONG_VALUE,
               FLOAT_VALUE);
    }
    printf("tasklet %u of %u\n", me(), (unsigned)NR_TASKLETS);
    return 0;
}
