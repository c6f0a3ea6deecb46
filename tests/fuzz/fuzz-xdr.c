/* fuzz-xdr.c -- (being written) */
#include "tests/fuzz/fuzz.h"

int
fuzz_xdr(const uint8_t *data, size_t size)
{
    (void)data;
    (void)size;
    return 0;
}
