/*
 * stdio.c: printf, vprintf, puts and putchar into the DPU's log. Each call formats its whole message (with the C
 * library's vsnprintf) and hands it to __dpusim_log_write in one piece; the harness keeps the log and raises
 * runtime fault 5 (Printf Overflow) for a message larger than the log's capacity.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dpusim/abi.h>

#define LOCAL_MESSAGE_SIZE 1024

int vprintf(const char *restrict format, va_list args)
{
    char local[LOCAL_MESSAGE_SIZE];
    va_list copy;
    va_copy(copy, args);
    int length = vsnprintf(local, sizeof(local), format, copy);
    va_end(copy);
    if (length < 0) {
        return length;
    }
    if ((size_t)length < sizeof(local)) {
        __dpusim_log_write(local, (size_t)length);
        return length;
    }
    char *message = malloc((size_t)length + 1);
    if (message == NULL) {
        __dpusim_fault(DPUSIM_FAULT_PRINTF_OVERFLOW, 0, (uint64_t)length, "printf: no memory for a %d-byte message",
                       length);
    }
    vsnprintf(message, (size_t)length + 1, format, args);
    __dpusim_log_write(message, (size_t)length);
    free(message);
    return length;
}

int printf(const char *restrict format, ...)
{
    va_list args;
    va_start(args, format);
    int length = vprintf(format, args);
    va_end(args);
    return length;
}

int puts(const char *text)
{
    size_t length = strlen(text);
    char local[LOCAL_MESSAGE_SIZE];
    if (length < sizeof(local)) {
        memcpy(local, text, length);
        local[length] = '\n';
        __dpusim_log_write(local, length + 1);
    } else {
        __dpusim_log_write(text, length);
        __dpusim_log_write("\n", 1);
    }
    return 1;
}

int putchar(int c)
{
    char byte = (char)c;
    __dpusim_log_write(&byte, 1);
    return (unsigned char)byte;
}
