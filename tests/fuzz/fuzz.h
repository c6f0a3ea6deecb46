/*
 * fuzz.h -- the fuzz targets.  Each decoder has one function that takes
 * arbitrary bytes and must neither crash, leak nor read out of bounds.
 * targets.c turns one of them into a libFuzzer entry point (make fuzz), or
 * lists them all for replay.c, which runs the committed corpora in
 * make check with the ordinary compiler.
 */
#ifndef COLLS_TESTS_FUZZ_H
#define COLLS_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int fuzz_frame(const uint8_t *data, size_t size);
int fuzz_dgram(const uint8_t *data, size_t size);
int fuzz_envelope(const uint8_t *data, size_t size);
int fuzz_xdr(const uint8_t *data, size_t size);
int fuzz_fpc(const uint8_t *data, size_t size);
int fuzz_rel(const uint8_t *data, size_t size);
int fuzz_auth(const uint8_t *data, size_t size);
int fuzz_join(const uint8_t *data, size_t size);
int fuzz_plogp(const uint8_t *data, size_t size);
int fuzz_libmsg(const uint8_t *data, size_t size);

struct fuzz_target {
    const char *name;
    int (*fn)(const uint8_t *data, size_t size);
};

extern const struct fuzz_target fuzz_targets[];

#endif
