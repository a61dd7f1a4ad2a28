/*
 * string.c: the string functions of the SDK's DPU libc that the host's C library lacks (strlwr, strupr, strrev).
 * The others come from the host's C library under the same names and prototypes.
 */
#include <ctype.h>
#include <string.h>

char *strlwr(char *string);
char *strupr(char *string);
char *strrev(char *string);

char *strlwr(char *string)
{
    for (char *c = string; *c != '\0'; c++) {
        *c = (char)tolower((unsigned char)*c);
    }
    return string;
}

char *strupr(char *string)
{
    for (char *c = string; *c != '\0'; c++) {
        *c = (char)toupper((unsigned char)*c);
    }
    return string;
}

char *strrev(char *string)
{
    size_t length = strlen(string);
    for (size_t i = 0; i < length / 2; i++) {
        char swapped = string[i];
        string[i] = string[length - 1 - i];
        string[length - 1 - i] = swapped;
    }
    return string;
}
