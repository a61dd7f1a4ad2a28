/*
 * string.h for DPU kernels: what the SDK's DPU libc declares (dpu-rt/src/stdlib/string.h) and nothing else, so
 * that a kernel may define names the host's <string.h> would claim (`strdup`, `memmem`, `bzero`, ...).
 * strlwr, strupr and strrev, which the host's C library lacks, are defined by the simulator's runtime.
 */
#ifndef DPUSIM_LIBC_STRING_H
#define DPUSIM_LIBC_STRING_H

#include <stddef.h>

size_t strlen(const char *string);
size_t strnlen(const char *string, size_t max_len);
int memcmp(const void *area1, const void *area2, size_t size);
int strcmp(const char *string1, const char *string2);
int strncmp(const char *string1, const char *string2, size_t size);
void *memset(void *area, int value, size_t size);
void *memchr(const void *area, int character, size_t size);
char *strcat(char *destination, const char *source);
char *strncat(char *destination, const char *source, size_t size);
char *strchr(const char *string, int character);
char *strrchr(const char *string, int character);
void *memcpy(void *destination, const void *source, size_t size);
void *memmove(void *destination, const void *source, size_t size);
char *strcpy(char *destination, const char *source);
char *strncpy(char *destination, const char *source, size_t size);
#define strxfrm strncpy
#define strcoll strcmp
char *stpcpy(char *destination, const char *source);
char *stpncpy(char *destination, const char *source, size_t size);
char *strlwr(char *string);
char *strupr(char *string);
char *strrev(char *string);
char *strerror(int errnum);
size_t strspn(const char *string, const char *accept);
size_t strcspn(const char *string, const char *reject);
char *strpbrk(const char *string, const char *accept);
char *strstr(const char *haystack, const char *needle);
char *strtok_r(char *str, const char *delim, char **saveptr);
char *strsep(char **stringp, const char *delim);

#endif /* DPUSIM_LIBC_STRING_H */
