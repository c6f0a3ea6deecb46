/*
 * test-frame.c -- proto/frame.c: the stream frame header written and read
 * against hand-written bytes, every rejection by its error code, truncation
 * at every length, limits at and one past their bounds, configurable
 * limits, and lengths near the top of the u32 range.
 */
#include <stdint.h>
#include <string.h>

#include "colls.h"
#include "proto/frame.h"
#include "tests/unit/suites.h"

/* Writes a raw header with arbitrary (possibly invalid) lengths. */
static void
raw_header(uint8_t *p, uint32_t frame_len, uint32_t env_len)
{
    p[0] = (uint8_t)(frame_len >> 24);
    p[1] = (uint8_t)(frame_len >> 16);
    p[2] = (uint8_t)(frame_len >> 8);
    p[3] = (uint8_t)frame_len;
    p[4] = (uint8_t)(env_len >> 24);
    p[5] = (uint8_t)(env_len >> 16);
    p[6] = (uint8_t)(env_len >> 8);
    p[7] = (uint8_t)env_len;
}

static int
peek_raw(uint32_t frame_len, uint32_t env_len, const struct frame_limits *lim,
         struct frame_info *fi)
{
    uint8_t h[FRAME_HDR_LEN];

    raw_header(h, frame_len, env_len);
    return frame_peek(h, sizeof(h), lim, fi);
}

START_TEST(test_limits_default)
{
    struct frame_limits lim;

    memset(&lim, 0, sizeof(lim));
    frame_limits_default(&lim);
    ck_assert_uint_eq(lim.max_env, 64u * 1024);
    ck_assert_uint_eq(lim.max_payload, 256u * 1024 * 1024);
}
END_TEST

START_TEST(test_put_header_bytes)
{
    static const uint8_t want1[] = {0, 0, 0, 0x0c, 0, 0, 0, 0x05};
    static const uint8_t want2[] = {0x01, 0x02, 0x03, 0x08, 0, 0, 0x01, 0x00};
    uint8_t h[FRAME_HDR_LEN];

    ck_assert_int_eq(frame_put_header(h, 5, 3), 0);
    ck_assert_mem_eq(h, want1, sizeof(want1));
    /* 0x01020308 = 4 + 0x100 + 0x01020204 */
    ck_assert_int_eq(frame_put_header(h, 0x100, 0x01020204), 0);
    ck_assert_mem_eq(h, want2, sizeof(want2));
}
END_TEST

START_TEST(test_put_header_errors)
{
    static const uint8_t maxed[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0x01};
    uint8_t h[FRAME_HDR_LEN];

    ck_assert_int_eq(frame_put_header(h, 0, 10), COLLS_EINVAL);
    ck_assert_int_eq(frame_put_header(h, 1, (uint64_t)UINT32_MAX + 1),
                     COLLS_EMSGSIZE);
    ck_assert_int_eq(frame_put_header(h, 1, UINT64_MAX), COLLS_EMSGSIZE);
    ck_assert_int_eq(frame_put_header(h, UINT32_MAX, 0), COLLS_EMSGSIZE);
    ck_assert_int_eq(frame_put_header(h, UINT32_MAX - 3, 0), COLLS_EMSGSIZE);
    ck_assert_int_eq(frame_put_header(h, 1, UINT32_MAX - 4), COLLS_EMSGSIZE);
    /* Exactly UINT32_MAX fits. */
    ck_assert_int_eq(frame_put_header(h, 1, UINT32_MAX - 5), 0);
    ck_assert_mem_eq(h, maxed, sizeof(maxed));
}
END_TEST

START_TEST(test_peek_bytes)
{
    /* frame_len 12, env_len 5: 5 envelope bytes and 3 payload bytes. */
    static const uint8_t hdr[] = {0, 0, 0, 0x0c, 0, 0, 0, 0x05};
    uint8_t frame[16];
    struct frame_limits lim;
    struct frame_info fi;

    memcpy(frame, hdr, sizeof(hdr));
    memset(frame + sizeof(hdr), 0x77, sizeof(frame) - sizeof(hdr));
    frame_limits_default(&lim);
    ck_assert_int_eq(frame_peek(frame, sizeof(frame), &lim, &fi), 0);
    ck_assert_uint_eq(fi.env_len, 5);
    ck_assert_uint_eq(fi.payload_len, 3);
    ck_assert_uint_eq(fi.total_len, 16);
    /* Only the header needs to be there. */
    memset(&fi, 0, sizeof(fi));
    ck_assert_int_eq(frame_peek(frame, FRAME_HDR_LEN, &lim, &fi), 0);
    ck_assert_uint_eq(fi.total_len, 16);
    /* NULL limits are the defaults. */
    ck_assert_int_eq(frame_peek(frame, sizeof(frame), NULL, &fi), 0);
    ck_assert_uint_eq(fi.env_len, 5);
}
END_TEST

START_TEST(test_peek_truncated)
{
    uint8_t h[FRAME_HDR_LEN];
    struct frame_info fi;
    size_t n;

    ck_assert_int_eq(frame_put_header(h, 5, 3), 0);
    for (n = 0; n < FRAME_HDR_LEN; n++)
        ck_assert_int_eq(frame_peek(h, n, NULL, &fi), COLLS_EAGAIN);
    /* Even an invalid header is not judged before it is complete. */
    raw_header(h, 0, 0);
    for (n = 0; n < FRAME_HDR_LEN; n++)
        ck_assert_int_eq(frame_peek(h, n, NULL, &fi), COLLS_EAGAIN);
    ck_assert_int_eq(frame_peek(h, FRAME_HDR_LEN, NULL, &fi), COLLS_EPROTO);
}
END_TEST

START_TEST(test_peek_eproto)
{
    struct frame_info fi;
    uint32_t fl;

    for (fl = 0; fl < 4; fl++) {
        ck_assert_int_eq(peek_raw(fl, 0, NULL, &fi), COLLS_EPROTO);
        ck_assert_int_eq(peek_raw(fl, 1, NULL, &fi), COLLS_EPROTO);
    }
    ck_assert_int_eq(peek_raw(4, 0, NULL, &fi), COLLS_EPROTO);
    ck_assert_int_eq(peek_raw(4, 1, NULL, &fi), COLLS_EPROTO);
    ck_assert_int_eq(peek_raw(100, 0, NULL, &fi), COLLS_EPROTO);
    ck_assert_int_eq(peek_raw(100, 97, NULL, &fi), COLLS_EPROTO);
    ck_assert_int_eq(peek_raw(100, UINT32_MAX, NULL, &fi), COLLS_EPROTO);
    /* Inconsistent lengths are a protocol error even when env_len is also
       over the limit. */
    ck_assert_int_eq(peek_raw(100, FRAME_DEFAULT_MAX_ENV + 1, NULL, &fi),
                     COLLS_EPROTO);
    /* The smallest valid frame: one envelope byte, no payload. */
    ck_assert_int_eq(peek_raw(5, 1, NULL, &fi), 0);
    ck_assert_uint_eq(fi.env_len, 1);
    ck_assert_uint_eq(fi.payload_len, 0);
    ck_assert_uint_eq(fi.total_len, 9);
    ck_assert_int_eq(peek_raw(100, 96, NULL, &fi), 0);
    ck_assert_uint_eq(fi.payload_len, 0);
}
END_TEST

START_TEST(test_peek_default_limits)
{
    const uint32_t me = FRAME_DEFAULT_MAX_ENV;
    const uint32_t mp = FRAME_DEFAULT_MAX_PAYLOAD;
    struct frame_info fi;

    ck_assert_int_eq(peek_raw(4 + me, me, NULL, &fi), 0);
    ck_assert_uint_eq(fi.env_len, me);
    ck_assert_int_eq(peek_raw(4 + me + 1, me + 1, NULL, &fi), COLLS_EMSGSIZE);
    ck_assert_int_eq(peek_raw(4 + 1 + mp, 1, NULL, &fi), 0);
    ck_assert_uint_eq(fi.payload_len, mp);
    ck_assert_uint_eq(fi.total_len, 8 + 1 + (uint64_t)mp);
    ck_assert_int_eq(peek_raw(4 + 1 + mp + 1, 1, NULL, &fi), COLLS_EMSGSIZE);
    ck_assert_int_eq(peek_raw(4 + me + mp, me, NULL, &fi), 0);
    ck_assert_int_eq(peek_raw(4 + me + mp + 1, me, NULL, &fi), COLLS_EMSGSIZE);
    ck_assert_int_eq(peek_raw(UINT32_MAX, 1, NULL, &fi), COLLS_EMSGSIZE);
}
END_TEST

START_TEST(test_peek_custom_limits)
{
    struct frame_limits lim = {.max_env = 16, .max_payload = 100};
    struct frame_info fi;

    ck_assert_int_eq(peek_raw(4 + 16 + 100, 16, &lim, &fi), 0);
    ck_assert_int_eq(peek_raw(4 + 17, 17, &lim, &fi), COLLS_EMSGSIZE);
    ck_assert_int_eq(peek_raw(4 + 16 + 101, 16, &lim, &fi), COLLS_EMSGSIZE);
    /* Within the defaults but over these limits. */
    ck_assert_int_eq(peek_raw(4 + 1000, 1000, &lim, &fi), COLLS_EMSGSIZE);
    ck_assert_int_eq(peek_raw(4 + 1 + 1000, 1, NULL, &fi), 0);
    ck_assert_int_eq(peek_raw(4 + 1 + 1000, 1, &lim, &fi), COLLS_EMSGSIZE);
    /* Zero limits accept nothing. */
    lim.max_env = 0;
    lim.max_payload = 0;
    ck_assert_int_eq(peek_raw(5, 1, &lim, &fi), COLLS_EMSGSIZE);
}
END_TEST

/* The largest frame_len: all arithmetic stays exact in 64 bits. */
START_TEST(test_peek_u32_max)
{
    struct frame_limits lim = {.max_env = UINT32_MAX,
                               .max_payload = UINT64_MAX};
    struct frame_info fi;

    ck_assert_int_eq(peek_raw(UINT32_MAX, 1, &lim, &fi), 0);
    ck_assert_uint_eq(fi.env_len, 1);
    ck_assert_uint_eq(fi.payload_len, (uint64_t)UINT32_MAX - 5);
    ck_assert_uint_eq(fi.total_len, (uint64_t)UINT32_MAX + 4);
    ck_assert_int_eq(peek_raw(UINT32_MAX, UINT32_MAX - 4, &lim, &fi), 0);
    ck_assert_uint_eq(fi.env_len, UINT32_MAX - 4);
    ck_assert_uint_eq(fi.payload_len, 0);
    ck_assert_int_eq(peek_raw(UINT32_MAX, UINT32_MAX - 3, &lim, &fi),
                     COLLS_EPROTO);
    ck_assert_int_eq(peek_raw(UINT32_MAX, UINT32_MAX, &lim, &fi), COLLS_EPROTO);
}
END_TEST

START_TEST(test_roundtrip)
{
    static const struct {
        uint32_t env;
        uint64_t payload;
    } cases[] = {{1, 0},       {1, 1},     {7, 0},
                 {300, 70000}, {65536, 0}, {65536, 256u * 1024 * 1024},
                 {2, 12345678}};
    struct frame_info fi;
    uint8_t h[FRAME_HDR_LEN];
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_int_eq(frame_put_header(h, cases[i].env, cases[i].payload),
                         0);
        ck_assert_int_eq(frame_peek(h, sizeof(h), NULL, &fi), 0);
        ck_assert_uint_eq(fi.env_len, cases[i].env);
        ck_assert_uint_eq(fi.payload_len, cases[i].payload);
        ck_assert_uint_eq(fi.total_len,
                          FRAME_HDR_LEN + cases[i].env + cases[i].payload);
    }
}
END_TEST

Suite *
suite_frame(void)
{
    Suite *s = suite_create("frame");
    TCase *tc = tcase_create("frame");

    tcase_add_test(tc, test_limits_default);
    tcase_add_test(tc, test_put_header_bytes);
    tcase_add_test(tc, test_put_header_errors);
    tcase_add_test(tc, test_peek_bytes);
    tcase_add_test(tc, test_peek_truncated);
    tcase_add_test(tc, test_peek_eproto);
    tcase_add_test(tc, test_peek_default_limits);
    tcase_add_test(tc, test_peek_custom_limits);
    tcase_add_test(tc, test_peek_u32_max);
    tcase_add_test(tc, test_roundtrip);
    suite_add_tcase(s, tc);
    return s;
}
