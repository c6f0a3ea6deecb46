/*
 * test-fpc.c -- proto/fpc.c: bit-exact round trips (compared with memcmp,
 * so NaN payloads and -0.0 count) over many kinds of data, lengths, block
 * sizes and table sizes; the data sets of the FPC broadcast experiments;
 * one stream checked byte for byte against the documented format; block
 * independence; and every error path of the decoder (truncation at every
 * prefix, corrupted header fields, inconsistent payloads, short output).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/bytes.h"
#include "proto/fpc.h"
#include "tests/unit/suites.h"

#define HDR 12 /* block header bytes, see the format in proto/fpc.c */

/* xorshift64* pseudo-random numbers; deterministic per seed. */
static uint64_t
rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static double
from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof(d));
    return d;
}

static double *
xmalloc_dbl(size_t n)
{
    double *p = malloc((n ? n : 1) * sizeof(double));
    ck_assert_ptr_nonnull(p);
    return p;
}

/* The kinds of data the round trips run over. */
enum kind {
    K_RANDOM, /* random 64-bit patterns, NaNs and all */
    K_SMOOTH, /* a slowly varying function */
    K_CONSTANT,
    K_NAN, /* several NaN payloads mixed with numbers */
    K_DENORMAL,
    K_INF, /* +-inf, +-0.0 among ordinary values */
    K_MAX
};

/* Fills v[0..n) with data of kind k. */
static void
fill(double *v, size_t n, enum kind k, uint64_t seed)
{
    static const uint64_t nans[] = {
        0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000001ull,
        0x7ff4000000000000ull, 0x7fffffffffffffffull, 0xffffffffffffffffull,
        0x7ff8dead0000beefull, 0xfff0000000000001ull,
    };
    uint64_t s = seed | 1;
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t r = rnd(&s);
        switch (k) {
        case K_RANDOM:
            v[i] = from_bits(r);
            break;
        case K_SMOOTH:
            v[i] = 1000.0 * sin((double)i * 0.001) + (double)i * 0.25;
            break;
        case K_CONSTANT:
            v[i] = 42.5;
            break;
        case K_NAN:
            v[i] = r % 3 ? from_bits(nans[r % 8]) : (double)(i % 10);
            break;
        case K_DENORMAL:
            /* Subnormals: exponent field 0, random or growing mantissas. */
            v[i] = from_bits(r % 2 ? (r >> 12) : (uint64_t)i * 3 + 1);
            if (r % 5 == 0)
                v[i] = -v[i];
            break;
        case K_INF:
            switch (r % 5) {
            case 0:
                v[i] = INFINITY;
                break;
            case 1:
                v[i] = -INFINITY;
                break;
            case 2:
                v[i] = -0.0;
                break;
            case 3:
                v[i] = 0.0;
                break;
            default:
                v[i] = (double)i * 1.5;
                break;
            }
            break;
        default:
            ck_abort_msg("bad kind");
        }
    }
}

/*
 * Compresses v[0..n) and checks: the size is within fpc_bound, fpc_count
 * reads n back, decompression into exactly n slots is bit-exact, one slot
 * fewer is ENOBUFS, and compressing into exactly the produced size gives
 * the same bytes (the encoder's bounded tail path) while one byte less is
 * ENOBUFS.  Returns the compressed size.
 */
static size_t
roundtrip(const double *v, size_t n, unsigned bits, size_t block)
{
    size_t bound = fpc_bound(n, block), clen = 0, clen2 = 0, m = 0;
    uint8_t *c = malloc(bound + 1), *c2 = malloc(bound + 1);
    double *d = xmalloc_dbl(n);

    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(c2);
    ck_assert_int_eq(fpc_compress(v, n, bits, block, c, bound, &clen), 0);
    ck_assert_uint_le(clen, bound);
    ck_assert_int_eq(fpc_count(c, clen, &m), 0);
    ck_assert_uint_eq(m, n);
    m = n + 1;
    ck_assert_int_eq(fpc_decompress(c, clen, d, n, &m), 0);
    ck_assert_uint_eq(m, n);
    ck_assert(memcmp(d, v, n * sizeof(double)) == 0);
    if (n > 0)
        ck_assert_int_eq(fpc_decompress(c, clen, d, n - 1, &m), COLLS_ENOBUFS);
    ck_assert_int_eq(fpc_compress(v, n, bits, block, c2, clen, &clen2), 0);
    ck_assert_uint_eq(clen2, clen);
    ck_assert(memcmp(c, c2, clen) == 0);
    if (clen > 0)
        ck_assert_int_eq(fpc_compress(v, n, bits, block, c2, clen - 1, &clen2),
                         COLLS_ENOBUFS);
    free(c);
    free(c2);
    free(d);
    return clen;
}

/* Every kind x length x block size x table size, small enough to be fast. */
START_TEST(test_kinds)
{
    static const size_t lens[] = {0, 1, 2, 3, 5, 31, 1000, 4099};
    static const size_t blocks[] = {1, 7, 0, 1000};
    static const unsigned bits[] = {
        FPC_MIN_TABLE_BITS, FPC_MIN_TABLE_BITS + 1, FPC_MIN_TABLE_BITS + 2,
        FPC_MIN_TABLE_BITS + 3, FPC_DEFAULT_TABLE_BITS};
    enum kind k = (enum kind)_i;
    double *v = xmalloc_dbl(4099);
    size_t li, bi, ti;

    for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
        fill(v, lens[li], k, 77 + li);
        for (bi = 0; bi < sizeof(blocks) / sizeof(blocks[0]); bi++)
            for (ti = 0; ti < sizeof(bits) / sizeof(bits[0]); ti++)
                roundtrip(v, lens[li], bits[ti], blocks[bi]);
    }
    free(v);
}
END_TEST

/* The largest table size works, and sizes outside the range are refused. */
START_TEST(test_table_range)
{
    double v[100];
    uint8_t c[2000];
    size_t clen;

    fill(v, 100, K_SMOOTH, 1);
    roundtrip(v, 100, FPC_MAX_TABLE_BITS, 0);
    ck_assert_int_eq(
        fpc_compress(v, 100, FPC_MIN_TABLE_BITS - 1, 0, c, sizeof(c), &clen),
        COLLS_EINVAL);
    ck_assert_int_eq(
        fpc_compress(v, 100, FPC_MAX_TABLE_BITS + 1, 0, c, sizeof(c), &clen),
        COLLS_EINVAL);
}
END_TEST

/* Exact worst case: random bits fill the bound to within a few bytes. */
START_TEST(test_bound)
{
    size_t n = 3 * 1000 + 17, clen;
    double *v = xmalloc_dbl(n);

    ck_assert_uint_eq(fpc_bound(0, 0), 0);
    ck_assert_uint_eq(fpc_bound(1, 0), HDR + 1 + 8);
    ck_assert_uint_eq(fpc_bound(2, 1), 2 * (HDR + 1 + 8));
    ck_assert_uint_eq(fpc_bound(7, 4), 2 * HDR + 2 + 32 + 2 + 24);
    ck_assert_uint_eq(fpc_bound(FPC_DEFAULT_BLOCK + 1, 0),
                      2 * HDR + FPC_DEFAULT_BLOCK / 2 + 1 +
                          (FPC_DEFAULT_BLOCK + 1) * 8);
    /* Sizes no buffer could hold saturate instead of wrapping. */
    ck_assert_uint_eq(fpc_bound(SIZE_MAX / 8, 1), SIZE_MAX);
    ck_assert_uint_lt(fpc_bound(SIZE_MAX / 24, 1), SIZE_MAX);
    fill(v, n, K_RANDOM, 5);
    clen = roundtrip(v, n, FPC_DEFAULT_TABLE_BITS, 1000);
    ck_assert_uint_le(clen, fpc_bound(n, 1000));
    /* Random bits rarely leave a zero top byte: nearly the worst case. */
    ck_assert_uint_ge(clen, fpc_bound(n, 1000) - n / 50);
    free(v);
}
END_TEST

/* Smooth, constant and linear data compress; the ratio is above 1. */
START_TEST(test_compresses)
{
    size_t n = 20000, clen, i;
    double *v = xmalloc_dbl(n);

    fill(v, n, K_CONSTANT, 1);
    clen = roundtrip(v, n, FPC_DEFAULT_TABLE_BITS, 0);
    /* All but the first values are predicted exactly: half a byte each. */
    ck_assert_uint_le(clen, HDR + n / 2 + 16);
    fill(v, n, K_SMOOTH, 1);
    clen = roundtrip(v, n, FPC_DEFAULT_TABLE_BITS, 0);
    ck_assert_uint_lt(clen, n * sizeof(double));
    for (i = 0; i < n; i++)
        v[i] = 0.1 * (double)i;
    clen = roundtrip(v, n, FPC_DEFAULT_TABLE_BITS, 0);
    ck_assert_uint_lt(clen * 3, n * sizeof(double));
    free(v);
}
END_TEST

/*
 * The data sets of the FPC broadcast experiments: f(x) = a*x at 32K, 64K
 * and 128K doubles; exp(-x^2)*exp(-y^2) on [-2,2]^2 and sin(x)*cos(y) on
 * [-6,6]^2 at 256^2, 512^2 and 1024^2 points, row-major and sorted.
 * Loop index: 0..2 linear, 3..14 grids.
 */
static int
cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

START_TEST(test_paper_sets)
{
    static const size_t sides[] = {256, 512, 1024};
    size_t n, i, j, clen;
    double *v;

    if (_i < 3) {
        n = (size_t)32 * 1024 << _i;
        v = xmalloc_dbl(n);
        for (i = 0; i < n; i++)
            v[i] = 0.1 * (double)i;
        clen = roundtrip(v, n, FPC_DEFAULT_TABLE_BITS, 0);
        /* Linear data: most deltas repeat exactly, ratio well above 3. */
        ck_assert_uint_lt(clen * 3, n * sizeof(double));
    } else {
        int g = _i - 3, sine = g / 6, sorted = (g / 3) % 2;
        size_t side = sides[g % 3];
        double r = sine ? 6.0 : 2.0;

        n = side * side;
        v = xmalloc_dbl(n);
        for (i = 0; i < side; i++) {
            double y = -r + 2 * r * (double)i / (double)(side - 1);
            for (j = 0; j < side; j++) {
                double x = -r + 2 * r * (double)j / (double)(side - 1);
                v[i * side + j] =
                    sine ? sin(x) * cos(y) : exp(-x * x) * exp(-y * y);
            }
        }
        if (sorted)
            qsort(v, n, sizeof(double), cmp_dbl);
        clen = roundtrip(v, n, FPC_DEFAULT_TABLE_BITS, 0);
        ck_assert_uint_lt(clen, n * sizeof(double));
        if (sorted) /* sorted smooth data: at least 2x */
            ck_assert_uint_lt(clen * 2, n * sizeof(double));
    }
    free(v);
}
END_TEST

/*
 * The format, byte for byte: {1.0, 1.0, 1.0, 0x3ff00000ab000000} with 16
 * table bits.  Value 0 misses both predictors (code 0, 8 bytes); values 1
 * and 2 are hit exactly by DFCM (delta 0 after the first delta, code 0xf,
 * no bytes); value 3 XOR the FCM guess 1.0 has 4 leading zero bytes,
 * stored as 3 (code 3, 5 bytes), while DFCM guesses 2.0.
 */
START_TEST(test_format)
{
    static const uint8_t want[] = {
        0x46, 0x50, 0x01, 0x10, /* magic, version, bits */
        0x00, 0x00, 0x00, 0x04, /* count */
        0x00, 0x00, 0x00, 0x0f, /* payload size */
        0x0f, 0xf3,             /* codes 0 f f 3 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f, /* 1.0, LSB first */
        0x00, 0x00, 0x00, 0xab, 0x00, /* 0xab000000 in 5 bytes */
    };
    double v[4] = {1.0, 1.0, 1.0, from_bits(0x3ff00000ab000000ull)}, d[4];
    uint8_t c[64];
    size_t clen = 0, m = 0;

    ck_assert_int_eq(fpc_compress(v, 4, 16, 0, c, sizeof(c), &clen), 0);
    ck_assert_uint_eq(clen, sizeof(want));
    ck_assert_mem_eq(c, want, sizeof(want));
    ck_assert_int_eq(fpc_decompress(want, sizeof(want), d, 4, &m), 0);
    ck_assert_uint_eq(m, 4);
    ck_assert_mem_eq(d, v, sizeof(v));
}
END_TEST

/*
 * Each block stands alone: block k decodes from its own bytes, and equals
 * the stream made by compressing the slice by itself.  Loop index: block
 * and table sizes, covering both ways of clearing the tables between
 * blocks (memset for large blocks, replay for small ones).
 */
START_TEST(test_blocks_independent)
{
    static const struct {
        size_t block;
        unsigned bits;
    } cfg[] = {{700, 12}, {7, 16}, {1, 10}, {100, 16}, {300, 4}};
    size_t b = cfg[_i].block, n = 10 * b + b / 3 + 1;
    unsigned bits = cfg[_i].bits;
    size_t bound = fpc_bound(n, b), clen, off = 0, k = 0, m, sub_len;
    uint8_t *c = malloc(bound), *sub = malloc(fpc_bound(b, b));
    double *v = xmalloc_dbl(n), *d = xmalloc_dbl(b);

    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(sub);
    fill(v, n, K_SMOOTH, 3);
    for (m = 0; m < n; m += 5) /* some irregularity */
        v[m] = from_bits(0x7ff8000000000000ull + m);
    ck_assert_int_eq(fpc_compress(v, n, bits, b, c, bound, &clen), 0);
    while (off < clen) {
        size_t cnt = get_u32(c + off + 4), len = HDR + get_u32(c + off + 8);
        size_t want = k * b + b <= n ? b : n - k * b;

        ck_assert_uint_eq(cnt, want);
        ck_assert_uint_le(off + len, clen);
        ck_assert_int_eq(fpc_decompress(c + off, len, d, b, &m), 0);
        ck_assert_uint_eq(m, cnt);
        ck_assert(memcmp(d, v + k * b, cnt * sizeof(double)) == 0);
        ck_assert_int_eq(fpc_compress(v + k * b, cnt, bits, b, sub,
                                      fpc_bound(b, b), &sub_len),
                         0);
        ck_assert_uint_eq(sub_len, len);
        ck_assert(memcmp(sub, c + off, len) == 0);
        off += len;
        k++;
    }
    ck_assert_uint_eq(k, (n + b - 1) / b);
    free(c);
    free(sub);
    free(v);
    free(d);
}
END_TEST

/* Builds a small two-block stream (7 + 6 values) for the error tests. */
static size_t
small_stream(uint8_t *c, size_t cap, double *v)
{
    size_t clen = 0;

    fill(v, 13, K_SMOOTH, 9);
    v[4] = from_bits(0x7ff8000000000123ull);
    v[9] = -0.0;
    ck_assert_int_eq(fpc_compress(v, 13, FPC_MIN_TABLE_BITS, 7, c, cap, &clen),
                     0);
    return clen;
}

/*
 * Every prefix of the stream: a prefix that ends on a block boundary is a
 * valid shorter stream; any other is COLLS_EBADMSG, from both fpc_count
 * and fpc_decompress.
 */
START_TEST(test_truncated)
{
    uint8_t c[256];
    double v[13], d[13];
    size_t clen = small_stream(c, sizeof(c), v), first, len, m;

    first = HDR + get_u32(c + 8);
    ck_assert_uint_lt(first, clen);
    for (len = 0; len <= clen; len++) {
        int rc = fpc_decompress(c, len, d, 13, &m);
        size_t want = len == 0 ? 0 : len == first ? 7 : len == clen ? 13 : 99;

        if (want == 99) {
            ck_assert_int_eq(rc, COLLS_EBADMSG);
            ck_assert_int_eq(fpc_count(c, len, &m), COLLS_EBADMSG);
        } else {
            ck_assert_int_eq(rc, 0);
            ck_assert_uint_eq(m, want);
            ck_assert(memcmp(d, v, want * sizeof(double)) == 0);
            ck_assert_int_eq(fpc_count(c, len, &m), 0);
            ck_assert_uint_eq(m, want);
        }
    }
}
END_TEST

/* Decompresses a corrupted copy and expects rc (also from fpc_count). */
static void
expect_bad(const uint8_t *c, size_t clen, size_t at, uint8_t val, int rc,
           int count_rc)
{
    uint8_t b[256];
    double d[13];
    size_t m;

    ck_assert_uint_le(clen, sizeof(b));
    memcpy(b, c, clen);
    b[at] = val;
    ck_assert_int_eq(fpc_decompress(b, clen, d, 13, &m), rc);
    ck_assert_int_eq(fpc_count(b, clen, &m), count_rc);
}

/* Corrupted header fields in the first and in the second block. */
START_TEST(test_bad_headers)
{
    uint8_t c[256];
    double v[13];
    size_t clen = small_stream(c, sizeof(c), v), blk;
    size_t second = HDR + get_u32(c + 8);
    const int E = COLLS_EBADMSG;

    for (blk = 0; blk < 2; blk++) {
        size_t o = blk ? second : 0;
        uint8_t cnt = c[o + 7], sz = c[o + 11];

        expect_bad(c, clen, o + 0, 0x47, E, E); /* magic */
        expect_bad(c, clen, o + 1, 0x00, E, E);
        expect_bad(c, clen, o + 2, 0x02, E, E); /* version */
        expect_bad(c, clen, o + 2, 0x00, E, E);
        expect_bad(c, clen, o + 3, FPC_MIN_TABLE_BITS - 1, E, E);
        expect_bad(c, clen, o + 3, FPC_MAX_TABLE_BITS + 1, E, E);
        expect_bad(c, clen, o + 3, 0xff, E, E);
        expect_bad(c, clen, o + 7, 0, E, E);    /* count 0 */
        expect_bad(c, clen, o + 4, 0x10, E, E); /* > max block */
        expect_bad(c, clen, o + 4, 0x01, E, E); /* size too small */
        expect_bad(c, clen, o + 11, (uint8_t)(sz + 1), E, E); /* overruns */
        expect_bad(c, clen, o + 8, 0x01, E, E);
        /* Payload shorter than the residuals it codes: only decode sees. */
        expect_bad(c, clen, o + 11, (uint8_t)(sz - 1), E, E);
        /* One value fewer: codes and residuals no longer add up (the
         * header alone is still consistent if size fits 8.5 * count). */
        expect_bad(c, clen, o + 7, (uint8_t)(cnt - 1), E,
                   get_u32(c + o + 8) <= (cnt - 1u) * 8 + cnt / 2u ? 0 : E);
        /* A different (valid) table size decodes, to different values. */
        expect_bad(c, clen, o + 3, FPC_MIN_TABLE_BITS + 1, 0, 0);
    }
    /* Odd block (7 values): the unused low nibble must be zero. */
    expect_bad(c, clen, HDR + 3, (uint8_t)(c[HDR + 3] | 1), E, 0);
    /* An empty block (count 0, size 0) is not a block, alone or after
     * valid ones. */
    {
        static const uint8_t empty[HDR] = {0x46, 0x50, 0x01, 0x10};
        uint8_t b[256];
        double d[13];
        size_t m;

        ck_assert_int_eq(fpc_decompress(empty, HDR, d, 13, &m), E);
        ck_assert_int_eq(fpc_count(empty, HDR, &m), E);
        memcpy(b, c, clen);
        memcpy(b + clen, empty, HDR);
        ck_assert_int_eq(fpc_decompress(b, clen + HDR, d, 13, &m), E);
        ck_assert_int_eq(fpc_count(b, clen + HDR, &m), E);
    }
    /* Trailing junk after the last block. */
    {
        uint8_t b[256];
        double d[13];
        size_t m;

        memcpy(b, c, clen);
        b[clen] = 0x46;
        ck_assert_int_eq(fpc_decompress(b, clen + 1, d, 13, &m), E);
        ck_assert_int_eq(fpc_count(b, clen + 1, &m), E);
    }
}
END_TEST

/*
 * Code nibbles of block 0 (7 values, 4 code bytes): a flipped length bit
 * (bits 0..2 of a nibble) changes that value's residual length, so the
 * residuals no longer fill the payload exactly: COLLS_EBADMSG.  A flipped
 * predictor bit decodes (to other values, unless both predictors agreed).
 * Any bit of the unused last nibble is COLLS_EBADMSG.
 */
START_TEST(test_bad_codes)
{
    uint8_t c[256], b[256];
    double v[13], d[13];
    size_t clen = small_stream(c, sizeof(c), v), i, m;
    unsigned bit;

    for (i = 0; i < 4; i++) {
        for (bit = 0; bit < 8; bit++) {
            int pad = i == 3 && bit < 4, sel = bit % 4 == 3;

            memcpy(b, c, clen);
            b[HDR + i] ^= (uint8_t)(1u << bit);
            ck_assert_int_eq(fpc_decompress(b, clen, d, 13, &m),
                             pad || !sel ? COLLS_EBADMSG : 0);
        }
    }
}
END_TEST

/* The output buffer is checked before anything is written. */
START_TEST(test_cap)
{
    uint8_t c[256];
    double v[13], d[14];
    size_t clen = small_stream(c, sizeof(c), v), m = 1234, cap;

    for (cap = 0; cap < 13; cap++) {
        memset(d, 0x5a, sizeof(d));
        ck_assert_int_eq(fpc_decompress(c, clen, d, cap, &m), COLLS_ENOBUFS);
        ck_assert_uint_eq(m, 1234);
        ck_assert_uint_eq(((uint8_t *)d)[0], 0x5a);
    }
    memset(d, 0x5a, sizeof(d));
    ck_assert_int_eq(fpc_decompress(c, clen, d, 13, &m), 0);
    ck_assert_uint_eq(m, 13);
    ck_assert_uint_eq(((uint8_t *)d)[13 * 8], 0x5a);
    /* Compression into every too-short buffer fails cleanly. */
    for (cap = 0; cap < clen; cap++) {
        uint8_t o[256];
        size_t ol = 77;
        memset(o, 0xa5, sizeof(o));
        ck_assert_int_eq(
            fpc_compress(v, 13, FPC_MIN_TABLE_BITS, 7, o, cap, &ol),
            COLLS_ENOBUFS);
        ck_assert_uint_eq(ol, 77);
        ck_assert_uint_eq(o[cap], 0xa5);
    }
}
END_TEST

Suite *
suite_fpc(void)
{
    Suite *s = suite_create("fpc");
    TCase *tc = tcase_create("roundtrip");
    TCase *big = tcase_create("paper-sets");
    TCase *bad = tcase_create("errors");

    tcase_add_loop_test(tc, test_kinds, 0, K_MAX);
    tcase_add_test(tc, test_table_range);
    tcase_add_test(tc, test_bound);
    tcase_add_test(tc, test_compresses);
    tcase_add_test(tc, test_format);
    tcase_add_loop_test(tc, test_blocks_independent, 0, 5);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(big, test_paper_sets, 0, 15);
    tcase_set_timeout(big, 120);
    tcase_add_test(bad, test_truncated);
    tcase_add_test(bad, test_bad_headers);
    tcase_add_test(bad, test_bad_codes);
    tcase_add_test(bad, test_cap);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, big);
    suite_add_tcase(s, bad);
    return s;
}
