/*
 * fuzz-fpc.c -- proto/fpc.c on arbitrary bytes, two ways:
 *  1. As a compressed stream: fpc_count and fpc_decompress must agree,
 *     and whatever decodes must survive recompression (with the stream's
 *     table size and block length) and decompression bit for bit.
 *  2. As raw doubles: compress (table size and block length taken from the
 *     first bytes), stay within fpc_bound, decompress, compare.
 * Any disagreement calls abort() so libFuzzer reports it.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/bytes.h"
#include "proto/fpc.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_FPC_CAP 4096 /* doubles decoded at most */

/* Compresses v[0..n), decompresses, and aborts unless bit-exact. */
static void
fuzz_fpc_roundtrip(const double *v, size_t n, unsigned bits, size_t block)
{
    size_t bound = fpc_bound(n, block), clen = 0, m = 0;
    uint8_t *c = malloc(bound ? bound : 1);
    double *d = malloc(n ? n * sizeof(double) : 1);

    if (c == NULL || d == NULL)
        goto out;
    if (fpc_compress(v, n, bits, block, c, bound, &clen) != 0 || clen > bound)
        abort();
    if (fpc_count(c, clen, &m) != 0 || m != n)
        abort();
    if (fpc_decompress(c, clen, d, n, &m) != 0 || m != n ||
        memcmp(d, v, n * sizeof(double)) != 0)
        abort();
out:
    free(c);
    free(d);
}

int
fuzz_fpc(const uint8_t *data, size_t size)
{
    double *out = malloc(FUZZ_FPC_CAP * sizeof(double)), *raw = NULL;
    size_t n = 0, cn = 0, nraw = size / sizeof(double);
    int rc, crc;

    if (out == NULL)
        return 0;
    /* 1. Arbitrary bytes as a stream. */
    rc = fpc_decompress(data, size, out, FUZZ_FPC_CAP, &n);
    crc = fpc_count(data, size, &cn);
    if (rc != 0 && rc != COLLS_EBADMSG && rc != COLLS_ENOBUFS &&
        rc != COLLS_ENOMEM)
        abort();
    if (crc != 0 && rc != COLLS_EBADMSG) /* bad structure is EBADMSG */
        abort();
    if (rc == 0 && (crc != 0 || cn != n || n > FUZZ_FPC_CAP))
        abort();
    if (rc == COLLS_ENOBUFS && (crc != 0 || cn <= FUZZ_FPC_CAP))
        abort();
    if (rc == 0 && n > 0) /* a valid stream starts with a header */
        fuzz_fpc_roundtrip(out, n, get_u8(data + 3), get_u32(data + 4));

    /* 2. The bytes themselves as doubles. */
    if (nraw > 0 && (raw = malloc(nraw * sizeof(double))) != NULL) {
        unsigned bits = FPC_MIN_TABLE_BITS + data[0] % 9; /* 4..12 */
        size_t block = size > 1 ? data[1] % 40 : 0;       /* 0: default */

        memcpy(raw, data, nraw * sizeof(double));
        fuzz_fpc_roundtrip(raw, nraw, bits, block);
    }
    free(raw);
    free(out);
    return 0;
}
