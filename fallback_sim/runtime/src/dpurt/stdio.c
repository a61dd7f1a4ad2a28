/*
 * stdio.c: printf, vprintf, puts and putchar into the DPU's log. Each call formats its whole message (with the C
 * library's vsnprintf) and hands it to __dpusim_log_write in one piece; the harness keeps the log and raises
 * runtime fault 5 (Printf Overflow) for a message larger than the log's capacity.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <dpusim/abi.h>

#define LOCAL_MESSAGE_SIZE 1024

/*
 * A DPU's printf does not format (the host does, when it reads the log), so formatting uses no tasklet stack on
 * hardware: here it runs on the harness's service stack, and the tasklet's measured stack use stays the DPU's.
 */
struct print_request {
    const char *format;
    va_list args;
    int length;
};

static void format_and_log(void *argument)
{
    struct print_request *request = argument;
    char local[LOCAL_MESSAGE_SIZE];
    va_list copy;
    va_copy(copy, request->args);
    int length = vsnprintf(local, sizeof(local), request->format, copy);
    va_end(copy);
    request->length = length;
    if (length < 0) {
        return;
    }
    if ((size_t)length < sizeof(local)) {
        __dpusim_log_write(local, (size_t)length);
        return;
    }
    char *message = malloc((size_t)length + 1);
    if (message == NULL) {
        __dpusim_fault(DPUSIM_FAULT_PRINTF_OVERFLOW, 0, (uint64_t)length, "printf: no memory for a %d-byte message",
                       length);
    }
    vsnprintf(message, (size_t)length + 1, request->format, request->args);
    __dpusim_log_write(message, (size_t)length);
    free(message);
}

int vprintf(const char *restrict format, va_list args)
{
    struct print_request request = {.format = format, .length = 0};
    va_copy(request.args, args);
    __dpusim_on_service_stack(format_and_log, &request);
    va_end(request.args);
    return request.length;
}

int printf(const char *restrict format, ...)
{
    va_list args;
    va_start(args, format);
    int length = vprintf(format, args);
    va_end(args);
    return length;
}

/* The C library's snprintf measures and copies: in this object, strlen and memcpy are the DPU's (string.c), which
 * charge the tasklet. */
static void log_line(void *argument)
{
    const char *text = argument;
    char local[LOCAL_MESSAGE_SIZE];
    int length = snprintf(local, sizeof(local), "%s\n", text);
    if (length < 0) {
        return;
    }
    if ((size_t)length < sizeof(local)) {
        __dpusim_log_write(local, (size_t)length);
    } else {
        __dpusim_log_write(text, (size_t)length - 1);
        __dpusim_log_write("\n", 1);
    }
}

int puts(const char *text)
{
    __dpusim_on_service_stack(log_line, (void *)(uintptr_t)text);
    return 1;
}

int putchar(int c)
{
    char byte = (char)c;
    __dpusim_log_write(&byte, 1);
    return (unsigned char)byte;
}
