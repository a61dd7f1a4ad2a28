/*
 * sdk_libc_strings.c: where the DPU libc's string and number functions differ from the C standard or the host's
 * C library, and its errno. Tasklet 0 computes results[] from text, which the host writes (NUL-terminated,
 * TEXT_BYTES at most); every tasklet then sets errno to 100 + me(), waits at a barrier and reads it back.
 *
 * results[] (the host knows the expected values):
 *   0  memchr(text, 0xFF, n) == NULL (the SDK compares signed chars with the int as it is)
 *   1  memchr(text, -1, n) - text
 *   2  strchr(text, -1) == NULL
 *   3  strchr(text, 'a' + 256) == NULL
 *   4  strrchr(text, 'a') - text
 *   5  memcmp(text, text + 1, 1): the difference of the bytes as unsigned chars
 *   6  atoi(NULL)
 *   7  atoi(text + number_offset): the decimal number there, modulo 2^32
 *   8, 9  atol(text + number_offset), low and high words, modulo 2^64
 *   10 strcmp(strerror(EINVAL), "Invalid argument") == 0
 *   11 errno after strerror(1000) (the DPU's EINVAL, 28)
 *   12 EINVAL, 13 ENOMEM as the kernel's <errno.h> has them
 * errnos[t] = errno of tasklet t after the barrier (100 + t: one errno per tasklet)
 * Any NR_TASKLETS.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <barrier.h>
#include <defs.h>

#define TEXT_BYTES 64
#define RESULTS 14

__host char text[TEXT_BYTES];
__host uint32_t text_length;
__host uint32_t number_offset;
__host int32_t results[RESULTS];
__host int32_t errnos[NR_TASKLETS];

BARRIER_INIT(errno_barrier, NR_TASKLETS);

/* Through a pointer the compiler cannot see, so that atoi(NULL) is a call. */
__host const char *volatile no_text;

static void string_results(void)
{
    results[0] = memchr(text, 0xFF, text_length) == NULL;
    results[1] = (int32_t)((const char *)memchr(text, -1, text_length) - text);
    results[2] = strchr(text, -1) == NULL;
    results[3] = strchr(text, 'a' + 256) == NULL;
    results[4] = (int32_t)(strrchr(text, 'a') - text);
    results[5] = memcmp(text, text + 1, 1);
    results[6] = atoi(no_text);
    results[7] = atoi(text + number_offset);
    long number = atol(text + number_offset);
    results[8] = (int32_t)(uint32_t)((uint64_t)number);
    results[9] = (int32_t)(uint32_t)((uint64_t)number >> 32);
    results[10] = strcmp(strerror(EINVAL), "Invalid argument") == 0;
    errno = 0;
    (void)strerror(1000);
    results[11] = errno;
    results[12] = EINVAL;
    results[13] = ENOMEM;
}

int main(void)
{
    if (me() == 0) {
        string_results();
    }
    errno = 100 + (int)me();
    barrier_wait(&errno_barrier);
    errnos[me()] = errno;
    return 0;
}
