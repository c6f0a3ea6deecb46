/*
 * test-dgram.c -- proto/dgram.c: the datagram header against hand-written
 * bytes (every field at its documented offset, big-endian), round trips,
 * truncation at every length, and each rejection rule of dgram_get.
 */
#include <stdint.h>
#include <string.h>

#include "colls.h"
#include "proto/dgram.h"
#include "tests/unit/suites.h"

/* A DATA header whose fields all have distinct byte values. */
static const uint8_t sample_bytes[DGRAM_HDR_LEN] = {
    0x02,                                           /* version */
    0x01,                                           /* type DATA */
    0x00, 0x03,                                     /* flags */
    0x0a, 0xbc,                                     /* src_hid 0xabc */
    0x01, 0x23,                                     /* dst_hid 0x123 */
    0x11, 0x22, 0x33, 0x44,                         /* src_inc */
    0x55, 0x66, 0x77, 0x88,                         /* dst_inc */
    0x99, 0xaa, 0xbb, 0xcc,                         /* seq */
    0xdd, 0xee, 0xff, 0x01,                         /* ack */
    0x80, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09, /* sack */
    0xfe, 0xdc, 0xba, 0x98,                         /* msg_id */
    0x00, 0x01, 0x00, 0x00,                         /* msg_len 65536 */
    0x00, 0x01,                                     /* frag_idx */
    0x00, 0x03,                                     /* frag_cnt */
    0x00, 0x10,                                     /* len 16 */
    0xbe, 0xef,                                     /* tsval */
};

static void
sample_hdr(struct dgram_hdr *h)
{
    memset(h, 0, sizeof(*h));
    h->version = DGRAM_VERSION;
    h->type = DGRAM_DATA;
    h->flags = DGRAM_F_RETRANS | DGRAM_F_ACKNOW;
    h->src_hid = 0xabc;
    h->dst_hid = 0x123;
    h->src_inc = 0x11223344;
    h->dst_inc = 0x55667788;
    h->seq = 0x99aabbcc;
    h->ack = 0xddeeff01;
    h->sack = 0x8002030405060709ull;
    h->msg_id = 0xfedcba98;
    h->msg_len = 65536;
    h->frag_idx = 1;
    h->frag_cnt = 3;
    h->len = 16;
    h->tsval = 0xbeef;
}

static void
assert_hdr_eq(const struct dgram_hdr *a, const struct dgram_hdr *b)
{
    ck_assert_uint_eq(a->version, b->version);
    ck_assert_uint_eq(a->type, b->type);
    ck_assert_uint_eq(a->flags, b->flags);
    ck_assert_uint_eq(a->src_hid, b->src_hid);
    ck_assert_uint_eq(a->dst_hid, b->dst_hid);
    ck_assert_uint_eq(a->src_inc, b->src_inc);
    ck_assert_uint_eq(a->dst_inc, b->dst_inc);
    ck_assert_uint_eq(a->seq, b->seq);
    ck_assert_uint_eq(a->ack, b->ack);
    ck_assert_uint_eq(a->sack, b->sack);
    ck_assert_uint_eq(a->msg_id, b->msg_id);
    ck_assert_uint_eq(a->msg_len, b->msg_len);
    ck_assert_uint_eq(a->frag_idx, b->frag_idx);
    ck_assert_uint_eq(a->frag_cnt, b->frag_cnt);
    ck_assert_uint_eq(a->len, b->len);
    ck_assert_uint_eq(a->tsval, b->tsval);
}

/* Writes h plus h->len bytes of data into buf; returns the datagram size. */
static size_t
build(uint8_t *buf, const struct dgram_hdr *h)
{
    dgram_put(buf, h);
    memset(buf + DGRAM_HDR_LEN, 0x5a, h->len);
    return DGRAM_HDR_LEN + (size_t)h->len;
}

/* dgram_get on h (with matching data length) gives rc. */
static int
get_of(const struct dgram_hdr *h)
{
    static uint8_t buf[DGRAM_HDR_LEN + 65536];
    struct dgram_hdr out;
    size_t n = build(buf, h);

    return dgram_get(buf, n, &out);
}

START_TEST(test_put_bytes)
{
    uint8_t buf[DGRAM_HDR_LEN + 4];
    struct dgram_hdr h;

    memset(buf, 0xee, sizeof(buf));
    sample_hdr(&h);
    dgram_put(buf, &h);
    ck_assert_mem_eq(buf, sample_bytes, DGRAM_HDR_LEN);
    /* Nothing past the header is written. */
    ck_assert_uint_eq(buf[DGRAM_HDR_LEN], 0xee);
}
END_TEST

START_TEST(test_get_bytes)
{
    uint8_t buf[DGRAM_HDR_LEN + 16];
    struct dgram_hdr h, want;

    memcpy(buf, sample_bytes, DGRAM_HDR_LEN);
    memset(buf + DGRAM_HDR_LEN, 0, 16);
    sample_hdr(&want);
    ck_assert_int_eq(dgram_get(buf, sizeof(buf), &h), 0);
    assert_hdr_eq(&h, &want);
}
END_TEST

START_TEST(test_roundtrip_types)
{
    uint8_t buf[DGRAM_HDR_LEN + 16], again[DGRAM_HDR_LEN];
    struct dgram_hdr h, out;
    int t;

    for (t = DGRAM_DATA; t < DGRAM_TYPE_MAX; t++) {
        sample_hdr(&h);
        h.type = (uint8_t)t;
        h.flags = (uint16_t)(t & DGRAM_F_ALL);
        build(buf, &h);
        ck_assert_int_eq(dgram_get(buf, sizeof(buf), &out), 0);
        assert_hdr_eq(&out, &h);
        dgram_put(again, &out);
        ck_assert_mem_eq(again, buf, DGRAM_HDR_LEN);
    }
}
END_TEST

START_TEST(test_truncated)
{
    uint8_t buf[DGRAM_HDR_LEN + 16];
    struct dgram_hdr h;
    size_t n;

    memcpy(buf, sample_bytes, DGRAM_HDR_LEN);
    memset(buf + DGRAM_HDR_LEN, 0, 16);
    /* Shorter than the header, or shorter than len says. */
    for (n = 0; n < sizeof(buf); n++)
        ck_assert_int_eq(dgram_get(buf, n, &h), COLLS_EPROTO);
    ck_assert_int_eq(dgram_get(buf, sizeof(buf), &h), 0);
}
END_TEST

START_TEST(test_len_mismatch)
{
    static uint8_t buf[DGRAM_MAX_LEN + 2];
    struct dgram_hdr h, out;

    sample_hdr(&h);
    build(buf, &h);
    ck_assert_int_eq(dgram_get(buf, DGRAM_HDR_LEN + 15, &out), COLLS_EPROTO);
    ck_assert_int_eq(dgram_get(buf, DGRAM_HDR_LEN + 17, &out), COLLS_EPROTO);
    /* An ACK with no data. */
    h.type = DGRAM_ACK;
    h.len = 0;
    build(buf, &h);
    ck_assert_int_eq(dgram_get(buf, DGRAM_HDR_LEN, &out), 0);
    ck_assert_int_eq(dgram_get(buf, DGRAM_HDR_LEN + 1, &out), COLLS_EPROTO);
    /* The largest datagram is accepted, one byte more is not. */
    h.type = DGRAM_DATA;
    h.msg_len = 10u * 1024 * 1024;
    h.frag_cnt = 1000;
    h.len = DGRAM_MAX_LEN - DGRAM_HDR_LEN;
    build(buf, &h);
    ck_assert_int_eq(dgram_get(buf, DGRAM_MAX_LEN, &out), 0);
    h.len++;
    build(buf, &h);
    ck_assert_int_eq(dgram_get(buf, DGRAM_MAX_LEN + 1, &out), COLLS_EPROTO);
}
END_TEST

START_TEST(test_version_type)
{
    struct dgram_hdr h;

    sample_hdr(&h);
    ck_assert_int_eq(get_of(&h), 0);
    h.version = 0;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.version = DGRAM_VERSION + 1;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.version = 0xff;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    sample_hdr(&h);
    h.type = 0;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.type = DGRAM_TYPE_MAX;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.type = 0xff;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
}
END_TEST

START_TEST(test_flags)
{
    struct dgram_hdr h;
    unsigned bit;

    sample_hdr(&h);
    h.flags = 0;
    ck_assert_int_eq(get_of(&h), 0);
    h.flags = DGRAM_F_RETRANS;
    ck_assert_int_eq(get_of(&h), 0);
    h.flags = DGRAM_F_ACKNOW;
    ck_assert_int_eq(get_of(&h), 0);
    h.flags = DGRAM_F_AUTH;
    ck_assert_int_eq(get_of(&h), 0);
    for (bit = 3; bit < 16; bit++) {
        h.flags = (uint16_t)(1u << bit);
        ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
        h.flags = (uint16_t)(DGRAM_F_ALL | 1u << bit);
        ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    }
}
END_TEST

START_TEST(test_hids)
{
    struct dgram_hdr h;

    sample_hdr(&h);
    h.src_hid = 0;
    h.dst_hid = DGRAM_MAX_HID;
    ck_assert_int_eq(get_of(&h), 0);
    h.src_hid = DGRAM_MAX_HID;
    h.dst_hid = 0;
    ck_assert_int_eq(get_of(&h), 0);
    h.src_hid = DGRAM_MAX_HID + 1;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.src_hid = 1;
    h.dst_hid = DGRAM_MAX_HID + 1;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.dst_hid = 0xffff;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
}
END_TEST

START_TEST(test_fragments)
{
    const uint32_t max_frag = DGRAM_MAX_LEN - DGRAM_HDR_LEN;
    struct dgram_hdr h;

    sample_hdr(&h);
    h.frag_cnt = 0;
    h.frag_idx = 0;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.frag_cnt = 3;
    h.frag_idx = 3;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.frag_idx = 2;
    ck_assert_int_eq(get_of(&h), 0);
    h.frag_idx = 0xffff;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);

    /* A fragment longer than its message. */
    sample_hdr(&h);
    h.frag_cnt = 1;
    h.frag_idx = 0;
    h.msg_len = 15;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.msg_len = 16;
    ck_assert_int_eq(get_of(&h), 0);

    /* An empty message is exactly one empty fragment. */
    h.msg_len = 0;
    h.len = 0;
    ck_assert_int_eq(get_of(&h), 0);
    h.frag_cnt = 2;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);

    /* An empty fragment of a non-empty message. */
    h.frag_cnt = 2;
    h.msg_len = 10;
    h.len = 0;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);

    /* More fragments than bytes. */
    h.len = 1;
    h.msg_len = 4;
    h.frag_cnt = 5;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.frag_cnt = 4;
    ck_assert_int_eq(get_of(&h), 0);

    /* More bytes than frag_cnt full datagrams can carry. */
    h.len = 100;
    h.frag_cnt = 2;
    h.msg_len = 2 * max_frag;
    ck_assert_int_eq(get_of(&h), 0);
    h.msg_len = 2 * max_frag + 1;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
    h.frag_cnt = 0xffff;
    h.msg_len = 0xffff * max_frag;
    ck_assert_int_eq(get_of(&h), 0);
    /* 65535 fragments cannot carry 4 GiB. */
    h.msg_len = UINT32_MAX;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);

    /* Fragment fields mean nothing outside DATA. */
    sample_hdr(&h);
    h.type = DGRAM_ACK;
    h.frag_cnt = 0;
    h.frag_idx = 7;
    h.msg_len = 0;
    ck_assert_int_eq(get_of(&h), 0);
    h.type = DGRAM_DATA;
    ck_assert_int_eq(get_of(&h), COLLS_EPROTO);
}
END_TEST

/* Every single-byte corruption of a valid header is either rejected or
   reads back to exactly the bytes that were given. */
START_TEST(test_byte_flips)
{
    uint8_t buf[DGRAM_HDR_LEN + 16], again[DGRAM_HDR_LEN];
    struct dgram_hdr h;
    size_t i;
    unsigned v;

    for (i = 0; i < DGRAM_HDR_LEN; i++) {
        for (v = 0; v < 256; v += 17) {
            memcpy(buf, sample_bytes, DGRAM_HDR_LEN);
            memset(buf + DGRAM_HDR_LEN, 0, 16);
            buf[i] = (uint8_t)v;
            if (dgram_get(buf, sizeof(buf), &h) != 0)
                continue;
            dgram_put(again, &h);
            ck_assert_mem_eq(again, buf, DGRAM_HDR_LEN);
        }
    }
}
END_TEST

Suite *
suite_dgram(void)
{
    Suite *s = suite_create("dgram");
    TCase *tc = tcase_create("dgram");

    tcase_add_test(tc, test_put_bytes);
    tcase_add_test(tc, test_get_bytes);
    tcase_add_test(tc, test_roundtrip_types);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_len_mismatch);
    tcase_add_test(tc, test_version_type);
    tcase_add_test(tc, test_flags);
    tcase_add_test(tc, test_hids);
    tcase_add_test(tc, test_fragments);
    tcase_add_test(tc, test_byte_flips);
    suite_add_tcase(s, tc);
    return s;
}
