/* fuzz-fpc.c -- (being written) */
#include "tests/fuzz/fuzz.h"

int
fuzz_fpc(const uint8_t *data, size_t size)
{
    (void)data;
    (void)size;
    return 0;
}
