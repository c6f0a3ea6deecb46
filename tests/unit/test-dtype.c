/*
 * test-dtype.c -- datatypes, byte swapping, XDR and RAW encodings.
 *
 * Round trips run for every encoding (XDR, RAW in native order, RAW in the
 * other order made with dtype_swap) x every datatype x counts 0, 1, 7, 13
 * and 100003, from deliberately misaligned buffers.  Every XDR encoding is
 * also compared with a reference encoder written here item by item with
 * shifts, and fixed byte vectors written by hand from RFC 4506 pin the
 * format down independently of both.  The error tests cover short input,
 * bad padding, widened values out of range, bad datatypes and orders,
 * short output buffers and size overflow.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/dtype.h"
#include "tests/unit/suites.h"

static const size_t counts[] = {0, 1, 7, 13, 100003};
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

/* Deterministic pseudo-random bytes (xorshift64). */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t
rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void
fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rng_next() >> 32);
}

/* Writes the low nbytes of v big-endian. */
static void
put_be(uint8_t *out, uint64_t v, int nbytes)
{
    for (int k = 0; k < nbytes; k++)
        out[k] = (uint8_t)(v >> (8 * (nbytes - 1 - k)));
}

/*
 * Reference XDR encoding of one item (not BYTE), written independently of
 * dtype.c: returns the number of bytes written to out.
 */
static int
ref_xdr_item(int dtype, const uint8_t *item, uint8_t *out)
{
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;

    switch (dtype) {
    case COLLS_INT8:
        memcpy(&i8, item, 1);
        put_be(out, (uint64_t)(int64_t)i8, 4);
        return 4;
    case COLLS_INT16:
        memcpy(&i16, item, 2);
        put_be(out, (uint64_t)(int64_t)i16, 4);
        return 4;
    case COLLS_INT32:
        memcpy(&i32, item, 4);
        put_be(out, (uint64_t)(int64_t)i32, 4);
        return 4;
    case COLLS_INT64:
        memcpy(&i64, item, 8);
        put_be(out, (uint64_t)i64, 8);
        return 8;
    case COLLS_UINT8:
        memcpy(&u8, item, 1);
        put_be(out, u8, 4);
        return 4;
    case COLLS_UINT16:
        memcpy(&u16, item, 2);
        put_be(out, u16, 4);
        return 4;
    case COLLS_UINT32:
    case COLLS_FLOAT:
        memcpy(&u32, item, 4);
        put_be(out, u32, 4);
        return 4;
    case COLLS_UINT64:
    case COLLS_DOUBLE:
        memcpy(&u64, item, 8);
        put_be(out, u64, 8);
        return 8;
    }
    ck_abort_msg("ref_xdr_item: dtype %d", dtype);
    return 0;
}

/* Allocates n bytes (at least 1) plus one, returning a misaligned pointer
   into the block in *p; free *base. */
static uint8_t *
alloc_odd(size_t n, uint8_t **base)
{
    *base = malloc(n + 2);
    ck_assert_ptr_nonnull(*base);
    return *base + 1;
}

START_TEST(test_table)
{
    static const struct {
        int dtype;
        size_t size;
        const char *name;
    } want[] = {
        {COLLS_BYTE, 1, "byte"},     {COLLS_INT8, 1, "int8"},
        {COLLS_INT16, 2, "int16"},   {COLLS_INT32, 4, "int32"},
        {COLLS_INT64, 8, "int64"},   {COLLS_UINT8, 1, "uint8"},
        {COLLS_UINT16, 2, "uint16"}, {COLLS_UINT32, 4, "uint32"},
        {COLLS_UINT64, 8, "uint64"}, {COLLS_FLOAT, 4, "float"},
        {COLLS_DOUBLE, 8, "double"},
    };
    union {
        uint16_t u;
        uint8_t b[2];
    } probe = {.u = 0x0102};

    ck_assert_int_eq(sizeof(want) / sizeof(want[0]), COLLS_DTYPE_MAX);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        ck_assert(dtype_valid(want[i].dtype));
        ck_assert_uint_eq(dtype_size(want[i].dtype), want[i].size);
        ck_assert_str_eq(dtype_name(want[i].dtype), want[i].name);
    }
    ck_assert(!dtype_valid(-1));
    ck_assert(!dtype_valid(COLLS_DTYPE_MAX));
    ck_assert_uint_eq(dtype_size(-1), 0);
    ck_assert_uint_eq(dtype_size(COLLS_DTYPE_MAX), 0);
    ck_assert_str_eq(dtype_name(COLLS_DTYPE_MAX), "?");
    ck_assert_str_eq(dtype_name(-7), "?");
    ck_assert_int_eq(dtype_native_order(),
                     probe.b[0] == 0x02 ? COLLS_ORDER_LITTLE : COLLS_ORDER_BIG);
}
END_TEST

/* XDR round trip of every datatype (loop index) at every count. */
START_TEST(test_xdr_roundtrip)
{
    int dtype = _i;
    size_t size = dtype_size(dtype);

    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t n = counts[c], need, written = 1234, consumed = 4321;
        uint8_t *sb, *eb, *db, *ref;
        uint8_t *src = alloc_odd(n * size, &sb);
        uint8_t *dst = alloc_odd(n * size, &db);

        fill_random(src, n * size);
        ck_assert_int_eq(xdr_size(dtype, n, &need), 0);
        if (dtype == COLLS_BYTE)
            ck_assert_uint_eq(need, (n + 3) / 4 * 4);
        else
            ck_assert_uint_eq(need, n * (size == 8 ? 8 : 4));
        uint8_t *enc = alloc_odd(need, &eb);
        ck_assert_int_eq(xdr_encode(dtype, src, n, enc, need, &written), 0);
        ck_assert_uint_eq(written, need);

        /* Compare with the reference encoding. */
        ref = malloc(need + 1);
        ck_assert_ptr_nonnull(ref);
        if (dtype == COLLS_BYTE) {
            if (n > 0)
                memcpy(ref, src, n);
            memset(ref + n, 0, need - n);
        } else {
            size_t off = 0;
            for (size_t i = 0; i < n; i++)
                off += (size_t)ref_xdr_item(dtype, src + i * size, ref + off);
            ck_assert_uint_eq(off, need);
        }
        ck_assert_mem_eq(enc, ref, need);

        memset(dst, 0xa5, n * size);
        ck_assert_int_eq(xdr_decode(dtype, enc, need, dst, n, &consumed), 0);
        ck_assert_uint_eq(consumed, need);
        ck_assert_mem_eq(dst, src, n * size);
        free(ref);
        free(sb);
        free(eb);
        free(db);
    }
}
END_TEST

/* RAW in native order: a plain copy; in the other order: dtype_swap on the
   sender side, converted back by raw_decode. */
START_TEST(test_raw_roundtrip)
{
    int dtype = _i;
    size_t size = dtype_size(dtype);
    int native = dtype_native_order();
    int other =
        native == COLLS_ORDER_LITTLE ? COLLS_ORDER_BIG : COLLS_ORDER_LITTLE;

    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t n = counts[c], len = n * size;
        uint8_t *sb, *wb, *db;
        uint8_t *src = alloc_odd(len, &sb);
        uint8_t *wire = alloc_odd(len, &wb);
        uint8_t *dst = alloc_odd(len, &db);

        fill_random(src, len);
        memset(dst, 0x5a, len);
        ck_assert_int_eq(raw_decode(dtype, native, src, len, dst, n), 0);
        ck_assert_mem_eq(dst, src, len);

        if (len > 0)
            memcpy(wire, src, len);
        dtype_swap(dtype, wire, n);
        size_t mismatches = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < size; k++)
                mismatches +=
                    wire[i * size + k] != src[i * size + size - 1 - k];
        ck_assert_uint_eq(mismatches, 0);
        memset(dst, 0x5a, len);
        ck_assert_int_eq(raw_decode(dtype, other, wire, len, dst, n), 0);
        ck_assert_mem_eq(dst, src, len);

        /* Swapping twice is the identity. */
        dtype_swap(dtype, wire, n);
        ck_assert_mem_eq(wire, src, len);
        free(sb);
        free(wb);
        free(db);
    }
}
END_TEST

/* Explicit byte vectors in both orders, independent of the host's. */
START_TEST(test_raw_orders)
{
    static const uint8_t be32[] = {0x01, 0x02, 0x03, 0x04};
    static const uint8_t le32[] = {0x04, 0x03, 0x02, 0x01};
    static const uint8_t be16[] = {0xfe, 0xdc, 0x00, 0x01};
    static const uint8_t le64[] = {0x00, 0x00, 0x00, 0x00,
                                   0x00, 0x00, 0x04, 0xc0}; /* -2.5 */
    uint32_t u32 = 0;
    uint16_t u16[2] = {0, 0};
    double d = 0;

    ck_assert_int_eq(
        raw_decode(COLLS_UINT32, COLLS_ORDER_BIG, be32, 4, &u32, 1), 0);
    ck_assert_uint_eq(u32, 0x01020304u);
    u32 = 0;
    ck_assert_int_eq(
        raw_decode(COLLS_UINT32, COLLS_ORDER_LITTLE, le32, 4, &u32, 1), 0);
    ck_assert_uint_eq(u32, 0x01020304u);
    ck_assert_int_eq(raw_decode(COLLS_UINT16, COLLS_ORDER_BIG, be16, 4, u16, 2),
                     0);
    ck_assert_uint_eq(u16[0], 0xfedc);
    ck_assert_uint_eq(u16[1], 0x0001);
    ck_assert_int_eq(
        raw_decode(COLLS_DOUBLE, COLLS_ORDER_LITTLE, le64, 8, &d, 1), 0);
    ck_assert(d == -2.5);
    /* Single bytes never change. */
    uint8_t b[3] = {0, 0, 0};
    ck_assert_int_eq(raw_decode(COLLS_INT8, COLLS_ORDER_BIG, be32, 3, b, 3), 0);
    ck_assert_mem_eq(b, be32, 3);
}
END_TEST

/* Encodes one value and compares with bytes written out from RFC 4506. */
static void
check_vector(int dtype, const void *value, size_t count, const uint8_t *want,
             size_t want_len)
{
    uint8_t enc[16], back[16];
    size_t written = 0, consumed = 0, size = dtype_size(dtype);

    memset(enc, 0xee, sizeof(enc));
    ck_assert_int_eq(
        xdr_encode(dtype, value, count, enc, sizeof(enc), &written), 0);
    ck_assert_uint_eq(written, want_len);
    ck_assert_mem_eq(enc, want, want_len);
    ck_assert_uint_eq(enc[want_len], 0xee); /* nothing past the end */
    ck_assert_int_eq(xdr_decode(dtype, want, want_len, back, count, &consumed),
                     0);
    ck_assert_uint_eq(consumed, want_len);
    ck_assert_mem_eq(back, value, count * size);
}

START_TEST(test_xdr_vectors)
{
    int32_t i32 = -2;
    int8_t i8 = -1, i8min = -128, i8max = 127;
    uint8_t u8 = 200;
    int16_t i16 = -32768;
    uint16_t u16 = 0x1234;
    int64_t i64 = 1, i64n = -2;
    uint64_t u64 = 0x0102030405060708u;
    uint32_t u32 = 0xdeadbeefu;
    float f = 1.0f;
    double d = -2.5;
    uint8_t op3[3] = {0x01, 0x02, 0x03};
    uint8_t op4[4] = {0xa1, 0xa2, 0xa3, 0xa4};
    uint8_t op5[5] = {0xb1, 0xb2, 0xb3, 0xb4, 0xb5};

    check_vector(COLLS_INT32, &i32, 1,
                 (const uint8_t[]){0xff, 0xff, 0xff, 0xfe}, 4);
    check_vector(COLLS_INT8, &i8, 1, (const uint8_t[]){0xff, 0xff, 0xff, 0xff},
                 4);
    check_vector(COLLS_INT8, &i8min, 1,
                 (const uint8_t[]){0xff, 0xff, 0xff, 0x80}, 4);
    check_vector(COLLS_INT8, &i8max, 1,
                 (const uint8_t[]){0x00, 0x00, 0x00, 0x7f}, 4);
    check_vector(COLLS_UINT8, &u8, 1, (const uint8_t[]){0x00, 0x00, 0x00, 0xc8},
                 4);
    check_vector(COLLS_INT16, &i16, 1,
                 (const uint8_t[]){0xff, 0xff, 0x80, 0x00}, 4);
    check_vector(COLLS_UINT16, &u16, 1,
                 (const uint8_t[]){0x00, 0x00, 0x12, 0x34}, 4);
    check_vector(COLLS_UINT32, &u32, 1,
                 (const uint8_t[]){0xde, 0xad, 0xbe, 0xef}, 4);
    check_vector(COLLS_INT64, &i64, 1,
                 (const uint8_t[]){0, 0, 0, 0, 0, 0, 0, 0x01}, 8);
    check_vector(
        COLLS_INT64, &i64n, 1,
        (const uint8_t[]){0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, 8);
    check_vector(COLLS_UINT64, &u64, 1,
                 (const uint8_t[]){1, 2, 3, 4, 5, 6, 7, 8}, 8);
    check_vector(COLLS_FLOAT, &f, 1, (const uint8_t[]){0x3f, 0x80, 0x00, 0x00},
                 4);
    check_vector(COLLS_DOUBLE, &d, 1,
                 (const uint8_t[]){0xc0, 0x04, 0, 0, 0, 0, 0, 0}, 8);
    check_vector(COLLS_BYTE, op3, 3, (const uint8_t[]){0x01, 0x02, 0x03, 0x00},
                 4);
    check_vector(COLLS_BYTE, op4, 4, (const uint8_t[]){0xa1, 0xa2, 0xa3, 0xa4},
                 4);
    check_vector(COLLS_BYTE, op5, 5,
                 (const uint8_t[]){0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0, 0, 0}, 8);

    /* Two items back to back: each its own 4-byte unit. */
    int16_t two[2] = {-1, 2};
    check_vector(COLLS_INT16, two, 2,
                 (const uint8_t[]){0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2}, 8);
}
END_TEST

/* Every datatype: input one byte short of count items is rejected. */
START_TEST(test_short_input)
{
    int dtype = _i;
    uint8_t in[64] = {0}, out[64];
    size_t need, consumed = 99;

    ck_assert_int_eq(xdr_size(dtype, 3, &need), 0);
    ck_assert_int_eq(xdr_decode(dtype, in, need - 1, out, 3, &consumed),
                     COLLS_EPROTO);
    ck_assert_uint_eq(consumed, 99);
    ck_assert_int_eq(xdr_decode(dtype, in, 0, out, 1, &consumed), COLLS_EPROTO);
    ck_assert_int_eq(xdr_decode(dtype, in, need, out, 3, &consumed), 0);
    ck_assert_uint_eq(consumed, need);
    /* More input than needed is fine: only need bytes are consumed. */
    ck_assert_int_eq(xdr_decode(dtype, in, need + 4, out, 3, &consumed), 0);
    ck_assert_uint_eq(consumed, need);

    ck_assert_int_eq(raw_decode(dtype, COLLS_ORDER_BIG, in,
                                3 * dtype_size(dtype) - 1, out, 3),
                     COLLS_EPROTO);
    ck_assert_int_eq(raw_decode(dtype, COLLS_ORDER_LITTLE, in,
                                3 * dtype_size(dtype), out, 3),
                     0);
}
END_TEST

START_TEST(test_bad_padding)
{
    uint8_t out[8];
    size_t consumed = 0;

    for (int pos = 1; pos < 4; pos++) {
        uint8_t in[4] = {0x61, 0, 0, 0};
        in[pos] = 0x01;
        ck_assert_int_eq(xdr_decode(COLLS_BYTE, in, 4, out, 1, &consumed),
                         COLLS_EPROTO);
    }
    /* Non-zero bytes within the data are data, not padding. */
    uint8_t ok[8] = {1, 2, 3, 4, 5, 0, 0, 0};
    ck_assert_int_eq(xdr_decode(COLLS_BYTE, ok, 8, out, 5, &consumed), 0);
    ck_assert_uint_eq(consumed, 8);
    ck_assert_mem_eq(out, ok, 5);
    /* Missing padding is short input. */
    ck_assert_int_eq(xdr_decode(COLLS_BYTE, ok, 7, out, 5, &consumed),
                     COLLS_EPROTO);
}
END_TEST

/* Decodes one big-endian word as dtype; returns the result code. */
static int
decode_word(int dtype, uint32_t word, void *out)
{
    uint8_t in[4];
    size_t consumed;

    put_be(in, word, 4);
    return xdr_decode(dtype, in, 4, out, 1, &consumed);
}

START_TEST(test_widened_range)
{
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;

    ck_assert_int_eq(decode_word(COLLS_INT8, 0x0000007f, &i8), 0);
    ck_assert_int_eq(i8, 127);
    ck_assert_int_eq(decode_word(COLLS_INT8, 0xffffff80, &i8), 0);
    ck_assert_int_eq(i8, -128);
    ck_assert_int_eq(decode_word(COLLS_INT8, 0x00000080, &i8), COLLS_EPROTO);
    ck_assert_int_eq(decode_word(COLLS_INT8, 0xffffff7f, &i8), COLLS_EPROTO);
    ck_assert_int_eq(decode_word(COLLS_INT8, 0x000000ff, &i8), COLLS_EPROTO);
    ck_assert_int_eq(decode_word(COLLS_INT8, 0x80000000, &i8), COLLS_EPROTO);

    ck_assert_int_eq(decode_word(COLLS_UINT8, 0x000000ff, &u8), 0);
    ck_assert_uint_eq(u8, 255);
    ck_assert_int_eq(decode_word(COLLS_UINT8, 0x00000100, &u8), COLLS_EPROTO);
    ck_assert_int_eq(decode_word(COLLS_UINT8, 0xffffffff, &u8), COLLS_EPROTO);

    ck_assert_int_eq(decode_word(COLLS_INT16, 0x00007fff, &i16), 0);
    ck_assert_int_eq(i16, 32767);
    ck_assert_int_eq(decode_word(COLLS_INT16, 0xffff8000, &i16), 0);
    ck_assert_int_eq(i16, -32768);
    ck_assert_int_eq(decode_word(COLLS_INT16, 0x00008000, &i16), COLLS_EPROTO);
    ck_assert_int_eq(decode_word(COLLS_INT16, 0xffff7fff, &i16), COLLS_EPROTO);

    ck_assert_int_eq(decode_word(COLLS_UINT16, 0x0000ffff, &u16), 0);
    ck_assert_uint_eq(u16, 65535);
    ck_assert_int_eq(decode_word(COLLS_UINT16, 0x00010000, &u16), COLLS_EPROTO);
    ck_assert_int_eq(decode_word(COLLS_UINT16, 0xffffffff, &u16), COLLS_EPROTO);

    /* One bad word in the middle of a long, otherwise valid vector. */
    enum { N = 1001 };
    uint8_t *in = calloc(N, 4);
    int16_t *out = malloc(N * sizeof(*out));
    size_t consumed = 0;
    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(xdr_decode(COLLS_INT16, in, 4 * N, out, N, &consumed), 0);
    put_be(in + 4 * 517, 0x00012345, 4);
    ck_assert_int_eq(xdr_decode(COLLS_INT16, in, 4 * N, out, N, &consumed),
                     COLLS_EPROTO);
    free(in);
    free(out);
}
END_TEST

START_TEST(test_bad_args)
{
    uint8_t buf[16] = {0}, out[16];
    size_t sz = 77, done = 77;
    static const int bad[] = {-1, COLLS_DTYPE_MAX, 1000};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(xdr_size(bad[i], 1, &sz), COLLS_EDTYPE);
        ck_assert_int_eq(xdr_encode(bad[i], buf, 1, out, sizeof(out), &done),
                         COLLS_EDTYPE);
        ck_assert_int_eq(xdr_decode(bad[i], buf, sizeof(buf), out, 1, &done),
                         COLLS_EDTYPE);
        ck_assert_int_eq(
            raw_decode(bad[i], COLLS_ORDER_BIG, buf, sizeof(buf), out, 1),
            COLLS_EDTYPE);
        /* An invalid dtype leaves the buffer alone. */
        uint8_t keep[4] = {1, 2, 3, 4};
        dtype_swap(bad[i], keep, 1);
        ck_assert_mem_eq(keep, ((const uint8_t[]){1, 2, 3, 4}), 4);
    }
    ck_assert_uint_eq(sz, 77);
    ck_assert_uint_eq(done, 77);
    ck_assert_int_eq(raw_decode(COLLS_INT32, 2, buf, sizeof(buf), out, 1),
                     COLLS_EINVAL);
    ck_assert_int_eq(raw_decode(COLLS_INT32, -1, buf, sizeof(buf), out, 1),
                     COLLS_EINVAL);
}
END_TEST

/* Output one byte too small: COLLS_ENOBUFS, nothing written. */
START_TEST(test_short_output)
{
    int dtype = _i;
    uint8_t src[40], dst[48];
    size_t need, written = 5;

    fill_random(src, sizeof(src));
    ck_assert_int_eq(xdr_size(dtype, 5, &need), 0);
    memset(dst, 0xcc, sizeof(dst));
    ck_assert_int_eq(xdr_encode(dtype, src, 5, dst, need - 1, &written),
                     COLLS_ENOBUFS);
    ck_assert_uint_eq(written, 5);
    for (size_t i = 0; i < sizeof(dst); i++)
        ck_assert_uint_eq(dst[i], 0xcc);
    ck_assert_int_eq(xdr_encode(dtype, src, 5, dst, need, &written), 0);
    ck_assert_uint_eq(written, need);
    /* Zero items fit anywhere, even with no buffer. */
    ck_assert_int_eq(xdr_encode(dtype, NULL, 0, NULL, 0, &written), 0);
    ck_assert_uint_eq(written, 0);
}
END_TEST

START_TEST(test_overflow)
{
    size_t sz = 0, done = 0;
    uint8_t buf[16] = {0}, out[16];

    ck_assert_int_eq(xdr_size(COLLS_DOUBLE, SIZE_MAX / 8, &sz), 0);
    ck_assert_uint_eq(sz, SIZE_MAX / 8 * 8);
    ck_assert_int_eq(xdr_size(COLLS_DOUBLE, SIZE_MAX / 8 + 1, &sz),
                     COLLS_EMSGSIZE);
    ck_assert_int_eq(xdr_size(COLLS_INT8, SIZE_MAX / 4 + 1, &sz),
                     COLLS_EMSGSIZE);
    ck_assert_int_eq(xdr_size(COLLS_FLOAT, SIZE_MAX, &sz), COLLS_EMSGSIZE);
    ck_assert_int_eq(xdr_size(COLLS_BYTE, SIZE_MAX - 3, &sz), 0);
    ck_assert_uint_eq(sz, SIZE_MAX - 3);
    ck_assert_int_eq(xdr_size(COLLS_BYTE, SIZE_MAX - 2, &sz), COLLS_EMSGSIZE);
    ck_assert_int_eq(xdr_size(COLLS_BYTE, SIZE_MAX, &sz), COLLS_EMSGSIZE);

    ck_assert_int_eq(
        xdr_encode(COLLS_INT64, buf, SIZE_MAX / 4, out, sizeof(out), &done),
        COLLS_EMSGSIZE);
    /* A count no input can hold is short input, whatever len says. */
    ck_assert_int_eq(
        xdr_decode(COLLS_INT64, buf, SIZE_MAX, out, SIZE_MAX / 4, &done),
        COLLS_EPROTO);
    ck_assert_int_eq(
        xdr_decode(COLLS_BYTE, buf, SIZE_MAX, out, SIZE_MAX, &done),
        COLLS_EPROTO);
    ck_assert_int_eq(raw_decode(COLLS_DOUBLE, COLLS_ORDER_BIG, buf, SIZE_MAX,
                                out, SIZE_MAX / 8 + 1),
                     COLLS_EPROTO);
    ck_assert_int_eq(raw_decode(COLLS_INT16, COLLS_ORDER_LITTLE, buf, SIZE_MAX,
                                out, SIZE_MAX / 2 + 1),
                     COLLS_EPROTO);
    ck_assert_uint_eq(done, 0);
}
END_TEST

Suite *
suite_dtype(void)
{
    Suite *s = suite_create("dtype");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_table);
    tcase_add_loop_test(tc, test_xdr_roundtrip, 0, COLLS_DTYPE_MAX);
    tcase_add_loop_test(tc, test_raw_roundtrip, 0, COLLS_DTYPE_MAX);
    tcase_add_test(tc, test_raw_orders);
    tcase_add_test(tc, test_xdr_vectors);
    tcase_add_loop_test(tc, test_short_input, 0, COLLS_DTYPE_MAX);
    tcase_add_test(tc, test_bad_padding);
    tcase_add_test(tc, test_widened_range);
    tcase_add_test(tc, test_bad_args);
    tcase_add_loop_test(tc, test_short_output, 0, COLLS_DTYPE_MAX);
    tcase_add_test(tc, test_overflow);
    suite_add_tcase(s, tc);
    return s;
}
