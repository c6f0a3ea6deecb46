/*
 * test-msg.c -- libcolls packed messages (libclient/msg.c) without a
 * daemon: a message is packed, flattened to the payload bytes the library
 * would write (colls__msg_bufs), turned into a received message as the
 * receiving side would (colls__msg_from_rmsg), and unpacked.
 *
 * Covered: every datatype in every encoding, several pack calls in one
 * message, exact XDR bytes for a small message, RAW from a sender of the
 * other byte order (receiver makes right), INPLACE sending the caller's
 * own memory, unpacking past the end (COLLS_ETRUNC, nothing consumed),
 * invalid XDR (COLLS_EPROTO), and argument errors.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libclient/internal.h"
#include "tests/unit/suites.h"

/* The bytes a send of m would write, and the received message made of
   them with the given byte order. */
static colls_msg_t *
roundtrip(colls_msg_t *m, int order, uint8_t **wire, size_t *wlen)
{
    uv_buf_t *bufs;
    unsigned nbufs, i;
    size_t len, off = 0;
    struct colls__rmsg *rm = calloc(1, sizeof(*rm));

    ck_assert_ptr_nonnull(rm);
    ck_assert_int_eq(colls__msg_bufs(m, &bufs, &nbufs, &len), 0);
    rm->data = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(rm->data);
    for (i = 0; i < nbufs; i++) {
        memcpy(rm->data + off, bufs[i].base, bufs[i].len);
        off += bufs[i].len;
    }
    ck_assert_uint_eq(off, len);
    free(bufs);
    rm->len = len;
    rm->src = 0x200007;
    rm->tag = 42;
    rm->encoding = colls__msg_encoding(m);
    rm->byte_order = order;
    rm->route = COLLS_ROUTE_DIRECT;
    if (wire != NULL) {
        *wire = malloc(len ? len : 1);
        memcpy(*wire, rm->data, len);
        *wlen = len;
    }
    return colls__msg_from_rmsg(rm);
}

/* Fills n bytes of item data for dtype with values valid for XDR. */
static void
fill(int dtype, void *p, size_t count, unsigned seed)
{
    size_t i;

    for (i = 0; i < count; i++) {
        unsigned v = seed * 2654435761u + (unsigned)i * 40503u;
        switch (dtype) {
        case COLLS_BYTE:
        case COLLS_UINT8:
            ((uint8_t *)p)[i] = (uint8_t)v;
            break;
        case COLLS_INT8:
            ((int8_t *)p)[i] = (int8_t)(v & 0x7f) - 64;
            break;
        case COLLS_INT16:
            ((int16_t *)p)[i] = (int16_t)((int)(v & 0x7fff) - 16000);
            break;
        case COLLS_UINT16:
            ((uint16_t *)p)[i] = (uint16_t)v;
            break;
        case COLLS_INT32:
            ((int32_t *)p)[i] = (int32_t)v - 7;
            break;
        case COLLS_UINT32:
            ((uint32_t *)p)[i] = v;
            break;
        case COLLS_INT64:
            ((int64_t *)p)[i] = -(int64_t)v * 1000003;
            break;
        case COLLS_UINT64:
            ((uint64_t *)p)[i] = (uint64_t)v << 29 | v;
            break;
        case COLLS_FLOAT:
            ((float *)p)[i] = (float)v / 3.0f - 1e6f;
            break;
        default:
            ((double *)p)[i] = (double)v / 7.0 - 1e9;
            break;
        }
    }
}

/* Every dtype in one message, per encoding, counts 1 and 13. */
START_TEST(test_all_types)
{
    static const size_t counts[] = {1, 13};
    int enc = _i;
    uint8_t src[COLLS_DTYPE_MAX][2][13 * 8], dst[13 * 8];
    colls_msg_t *m = colls_msg_new(enc), *r;
    colls_status_t st;
    int t, k;

    ck_assert_ptr_nonnull(m);
    for (t = 0; t < COLLS_DTYPE_MAX; t++)
        for (k = 0; k < 2; k++) {
            fill(t, src[t][k], counts[k], (unsigned)(t * 10 + k));
            ck_assert_int_eq(colls_pack(m, t, src[t][k], counts[k]), 0);
        }
    r = roundtrip(m, dtype_native_order(), NULL, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(colls_msg_info(r, &st), 0);
    ck_assert_uint_eq(st.source, 0x200007);
    ck_assert_int_eq(st.tag, 42);
    ck_assert_int_eq(colls__msg_route(r), COLLS_ROUTE_DIRECT);
    for (t = 0; t < COLLS_DTYPE_MAX; t++)
        for (k = 0; k < 2; k++) {
            memset(dst, 0xee, sizeof(dst));
            ck_assert_int_eq(colls_unpack(r, t, dst, counts[k]), 0);
            ck_assert_mem_eq(dst, src[t][k], counts[k] * dtype_size(t));
        }
    /* everything consumed: one more item is past the end */
    ck_assert_int_eq(colls_unpack(r, COLLS_BYTE, dst, 1), COLLS_ETRUNC);
    colls_msg_free(r);
    colls_msg_free(m);
}
END_TEST

/* The XDR bytes of a small message, written out by hand (RFC 4506). */
START_TEST(test_xdr_bytes)
{
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x01,                         /* int32 1 */
        0xff, 0xff, 0xff, 0xfe,                         /* int16 -2 */
        0x61, 0x62, 0x63, 0x00,                         /* "abc" + pad */
        0x3f, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* double 1.0 */
    };
    int32_t one = 1;
    int16_t mtwo = -2;
    double d = 1.0;
    colls_msg_t *m = colls_msg_new(COLLS_ENC_DEFAULT), *r;
    uint8_t *wire;
    size_t wlen;

    ck_assert_int_eq(colls_pack(m, COLLS_INT32, &one, 1), 0);
    ck_assert_int_eq(colls_pack(m, COLLS_INT16, &mtwo, 1), 0);
    ck_assert_int_eq(colls_pack(m, COLLS_BYTE, "abc", 3), 0);
    ck_assert_int_eq(colls_pack(m, COLLS_DOUBLE, &d, 1), 0);
    r = roundtrip(m, dtype_native_order(), &wire, &wlen);
    ck_assert_uint_eq(wlen, sizeof(want));
    ck_assert_mem_eq(wire, want, sizeof(want));
    free(wire);
    colls_msg_free(r);
    colls_msg_free(m);
}
END_TEST

/* RAW from a sender of the other byte order: unpack converts. */
START_TEST(test_raw_other_order)
{
    uint32_t u[5] = {1, 0x01020304u, 0xdeadbeefu, 0, 0xffffffffu};
    double d[3] = {1.5, -2.25, 1e300};
    uint16_t h[3] = {0x0102, 0xa0b0, 7};
    uint32_t u2[5];
    double d2[3];
    uint16_t h2[3];
    colls_msg_t *m = colls_msg_new(COLLS_ENC_RAW), *r;
    uint32_t us[5];
    double ds[3];
    uint16_t hs[3];
    int other = dtype_native_order() == COLLS_ORDER_LITTLE ? COLLS_ORDER_BIG
                                                           : COLLS_ORDER_LITTLE;

    /* what a sender of the other order would have packed */
    memcpy(us, u, sizeof(u));
    memcpy(ds, d, sizeof(d));
    memcpy(hs, h, sizeof(h));
    dtype_swap(COLLS_UINT32, us, 5);
    dtype_swap(COLLS_DOUBLE, ds, 3);
    dtype_swap(COLLS_UINT16, hs, 3);
    ck_assert_int_eq(colls_pack(m, COLLS_UINT32, us, 5), 0);
    ck_assert_int_eq(colls_pack(m, COLLS_DOUBLE, ds, 3), 0);
    ck_assert_int_eq(colls_pack(m, COLLS_UINT16, hs, 3), 0);
    r = roundtrip(m, other, NULL, NULL);
    ck_assert_int_eq(colls_unpack(r, COLLS_UINT32, u2, 5), 0);
    ck_assert_int_eq(colls_unpack(r, COLLS_DOUBLE, d2, 3), 0);
    ck_assert_int_eq(colls_unpack(r, COLLS_UINT16, h2, 3), 0);
    ck_assert_mem_eq(u2, u, sizeof(u));
    ck_assert_mem_eq(d2, d, sizeof(d));
    ck_assert_mem_eq(h2, h, sizeof(h));
    colls_msg_free(r);
    colls_msg_free(m);
}
END_TEST

/* INPLACE: the payload buffers are the caller's memory, not copies. */
START_TEST(test_inplace_refs)
{
    double a[4] = {1, 2, 3, 4};
    int32_t b[2] = {-1, 5};
    colls_msg_t *m = colls_msg_new(COLLS_ENC_INPLACE), *r;
    uv_buf_t *bufs;
    unsigned nbufs;
    size_t len;
    colls_status_t st;
    double a2[4];
    int32_t b2[2];

    ck_assert_int_eq(colls_pack(m, COLLS_DOUBLE, a, 4), 0);
    ck_assert_int_eq(colls_pack(m, COLLS_INT32, b, 2), 0);
    ck_assert_int_eq(colls__msg_bufs(m, &bufs, &nbufs, &len), 0);
    ck_assert_uint_eq(nbufs, 2);
    ck_assert_ptr_eq(bufs[0].base, (char *)a);
    ck_assert_ptr_eq(bufs[1].base, (char *)b);
    ck_assert_uint_eq(len, sizeof(a) + sizeof(b));
    free(bufs);
    ck_assert_int_eq(colls_msg_info(m, &st), 0);
    ck_assert_uint_eq(st.length, sizeof(a) + sizeof(b));
    /* a message being built from references cannot be unpacked */
    ck_assert_int_eq(colls_unpack(m, COLLS_DOUBLE, a2, 1), COLLS_EINVAL);
    r = roundtrip(m, dtype_native_order(), NULL, NULL);
    ck_assert_int_eq(colls_unpack(r, COLLS_DOUBLE, a2, 4), 0);
    ck_assert_int_eq(colls_unpack(r, COLLS_INT32, b2, 2), 0);
    ck_assert_mem_eq(a2, a, sizeof(a));
    ck_assert_mem_eq(b2, b, sizeof(b));
    colls_msg_free(r);
    colls_msg_free(m);
}
END_TEST

/* Past the end: COLLS_ETRUNC and nothing consumed. */
START_TEST(test_past_end)
{
    int enc = _i;
    int32_t v[3] = {10, 20, 30}, out[4] = {0, 0, 0, 0};
    colls_msg_t *m = colls_msg_new(enc), *r;

    ck_assert_int_eq(colls_pack(m, COLLS_INT32, v, 3), 0);
    r = roundtrip(m, dtype_native_order(), NULL, NULL);
    ck_assert_int_eq(colls_unpack(r, COLLS_INT32, out, 4), COLLS_ETRUNC);
    ck_assert_int_eq(colls_unpack(r, COLLS_INT64, out, 2), COLLS_ETRUNC);
    ck_assert_int_eq(colls_unpack(r, COLLS_INT32, out, 3), 0);
    ck_assert_mem_eq(out, v, sizeof(v));
    ck_assert_int_eq(colls_unpack(r, COLLS_INT8, out, 1), COLLS_ETRUNC);
    colls_msg_free(r);
    colls_msg_free(m);
}
END_TEST

/* XDR that does not fit the requested type is COLLS_EPROTO. */
START_TEST(test_xdr_invalid)
{
    int32_t big = 100000;
    int16_t s;
    uint8_t bytes[1];
    colls_msg_t *m = colls_msg_new(COLLS_ENC_DEFAULT), *r;
    struct colls__rmsg *rm;

    ck_assert_int_eq(colls_pack(m, COLLS_INT32, &big, 1), 0);
    r = roundtrip(m, dtype_native_order(), NULL, NULL);
    /* 100000 does not fit an int16 */
    ck_assert_int_eq(colls_unpack(r, COLLS_INT16, &s, 1), COLLS_EPROTO);
    colls_msg_free(r);
    colls_msg_free(m);

    /* one byte with non-zero padding */
    rm = calloc(1, sizeof(*rm));
    rm->data = malloc(4);
    memcpy(rm->data, "\x41\x00\x07\x00", 4);
    rm->len = 4;
    rm->encoding = COLLS_ENC_DEFAULT;
    r = colls__msg_from_rmsg(rm);
    ck_assert_int_eq(colls_unpack(r, COLLS_BYTE, bytes, 1), COLLS_EPROTO);
    colls_msg_free(r);
}
END_TEST

/* Argument checks. */
START_TEST(test_args)
{
    colls_msg_t *m = colls_msg_new(COLLS_ENC_RAW), *r;
    int x = 1;

    ck_assert_ptr_null(colls_msg_new(3));
    ck_assert_ptr_null(colls_msg_new(-1));
    ck_assert_int_eq(colls_pack(m, COLLS_DTYPE_MAX, &x, 1), COLLS_EDTYPE);
    ck_assert_int_eq(colls_pack(m, -1, &x, 1), COLLS_EDTYPE);
    ck_assert_int_eq(colls_pack(m, COLLS_INT32, NULL, 1), COLLS_EINVAL);
    ck_assert_int_eq(colls_pack(NULL, COLLS_INT32, &x, 1), COLLS_EINVAL);
    ck_assert_int_eq(colls_pack(m, COLLS_INT64, &x, SIZE_MAX / 4),
                     COLLS_EMSGSIZE);
    ck_assert_int_eq(colls_pack(m, COLLS_INT32, &x, 0), 0);
    ck_assert_int_eq(colls_msg_set_route(m, 5), COLLS_EINVAL);
    ck_assert_int_eq(colls_msg_set_route(m, COLLS_ROUTE_DIRECT), 0);
    ck_assert_int_eq(colls_pack(m, COLLS_INT32, &x, 1), 0);
    r = roundtrip(m, dtype_native_order(), NULL, NULL);
    /* a received message cannot be packed into */
    ck_assert_int_eq(colls_pack(r, COLLS_INT32, &x, 1), COLLS_EINVAL);
    ck_assert_int_eq(colls_unpack(r, COLLS_DTYPE_MAX, &x, 1), COLLS_EDTYPE);
    colls_msg_free(r);
    colls_msg_free(m);
    colls_msg_free(NULL);
}
END_TEST

/* Error table: names, texts, unknown codes. */
START_TEST(test_strerror)
{
    ck_assert_str_eq(colls_strerror(0), "success");
    ck_assert_str_eq(colls_strerror(COLLS_ETRUNC),
                     "message truncated: receive buffer too small");
    ck_assert_str_eq(colls_strerror(COLLS_ENOMEM), "out of memory");
    ck_assert_str_eq(colls_strerror(-4900), "unknown error");
    ck_assert_str_eq(colls_strerror(12345), "unknown error");
    ck_assert_str_eq(colls_err_name(COLLS_EPEERDEAD), "EPEERDEAD");
    ck_assert_str_eq(colls_err_name(COLLS_EINVAL), "EINVAL");
    ck_assert_str_eq(colls_err_name(-4900), "unknown error");
}
END_TEST

Suite *
suite_msg(void)
{
    Suite *s = suite_create("msg");
    TCase *tc = tcase_create("msg");

    tcase_add_loop_test(tc, test_all_types, COLLS_ENC_DEFAULT,
                        COLLS_ENC_INPLACE + 1);
    tcase_add_test(tc, test_xdr_bytes);
    tcase_add_test(tc, test_raw_other_order);
    tcase_add_test(tc, test_inplace_refs);
    tcase_add_loop_test(tc, test_past_end, COLLS_ENC_DEFAULT,
                        COLLS_ENC_INPLACE + 1);
    tcase_add_test(tc, test_xdr_invalid);
    tcase_add_test(tc, test_args);
    tcase_add_test(tc, test_strerror);
    suite_add_tcase(s, tc);
    return s;
}
