/*
 * size.c -- byte counts with k/m/g suffixes (size.h).
 */
#include <ctype.h>
#include <stddef.h>

#include "proto/size.h"

int
size_parse(const char *s, const char **end, uint64_t max, uint64_t *out)
{
    uint64_t v = 0, mul = 1;

    if (!isdigit((unsigned char)*s))
        return -1;
    for (; isdigit((unsigned char)*s); s++) {
        unsigned d = (unsigned)(*s - '0');

        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    switch (tolower((unsigned char)*s)) {
    case 'k':
        mul = 1ull << 10;
        break;
    case 'm':
        mul = 1ull << 20;
        break;
    case 'g':
        mul = 1ull << 30;
        break;
    default:
        break;
    }
    if (mul > 1) {
        s++;
        if (tolower((unsigned char)*s) == 'i')
            s++;
        if (tolower((unsigned char)*s) == 'b')
            s++;
        if (v > UINT64_MAX / mul)
            return -1;
        v *= mul;
    }
    if (v > max || (end == NULL && *s != '\0'))
        return -1;
    if (end != NULL)
        *end = s;
    *out = v;
    return 0;
}
