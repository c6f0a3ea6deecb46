/*
 * targets.c -- the table of fuzz targets, or, built with
 * -DCOLLS_FUZZ_ONE=fuzz_x, the libFuzzer entry point for one of them.
 */
#include "tests/fuzz/fuzz.h"

#ifdef COLLS_FUZZ_ONE
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    COLLS_FUZZ_ONE(data, size);
    return 0;
}
#else
const struct fuzz_target fuzz_targets[] = {
    {"frame", fuzz_frame},
    {"dgram", fuzz_dgram},
    {"envelope", fuzz_envelope},
    {"xdr", fuzz_xdr},
    {"fpc", fuzz_fpc},
    {"rel", fuzz_rel},
    {"auth", fuzz_auth},
    {"join", fuzz_join},
    {"plogp", fuzz_plogp},
    {"libmsg", fuzz_libmsg},
    {0, 0},
};
#endif
