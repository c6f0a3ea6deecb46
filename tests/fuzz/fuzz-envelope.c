/* fuzz-envelope.c -- (being written) */
#include "tests/fuzz/fuzz.h"

int
fuzz_envelope(const uint8_t *data, size_t size)
{
    (void)data;
    (void)size;
    return 0;
}
