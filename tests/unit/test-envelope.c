/*
 * test-envelope.c -- proto/envelope.c: unpacking hand-written protobuf
 * bytes, packing back to the same bytes, framing (header + envelope +
 * payload) read back through frame_peek, the range checks and version check
 * by error code, truncation at every length, unknown fields and unknown
 * enum values.
 */
#include <stdint.h>
#include <string.h>

#include "colls.h"
#include "proto/buf.h"
#include "proto/envelope.h"
#include "proto/frame.h"
#include "tests/unit/suites.h"

/*
 * A DATA envelope with every scalar field and an attach_req body, written
 * by hand: version 4, kind DATA (200), src 0x100001, dst 0x200002, tag -5,
 * group "g1", seq 7, dtype DOUBLE, count 1000, encoding RAW, byte order
 * BIG, flags FPC, req_id 0x123456789, status -4003, route DIRECT,
 * attach_req {version 1, pid 4242, name "prog", admin true}.
 */
static const uint8_t full_env[] = {
    0x08, 0x04,                         /* 1 version */
    0x10, 0xc8, 0x01,                   /* 2 kind */
    0x18, 0x81, 0x80, 0x40,             /* 3 src */
    0x20, 0x82, 0x80, 0x80, 0x01,       /* 4 dst */
    0x28, 0x09,                         /* 5 tag (zigzag) */
    0x32, 0x02, 0x67, 0x31,             /* 6 group */
    0x38, 0x07,                         /* 7 seq */
    0x40, 0x0a,                         /* 8 dtype */
    0x48, 0xe8, 0x07,                   /* 9 count */
    0x50, 0x01,                         /* 10 encoding */
    0x58, 0x01,                         /* 11 byte_order */
    0x60, 0x01,                         /* 12 flags */
    0x68, 0x89, 0xcf, 0x95, 0x9a, 0x12, /* 13 req_id */
    0x70, 0xc5, 0x3e,                   /* 14 status (zigzag) */
    0x78, 0x01,                         /* 15 route */
    0xa2, 0x01, 0x0d,                   /* 20 attach_req, 13 bytes */
    0x08, 0x01, 0x10, 0x92, 0x21, 0x1a, 0x04,
    0x70, 0x72, 0x6f, 0x67, 0x20, 0x01,
};

/* Offsets in full_env where a field ends. */
static const size_t full_env_bounds[] = {2,  5,  9,  14, 16, 20, 22, 24,
                                         27, 29, 31, 33, 39, 42, 44, 60};

static void
assert_full(const Envelope *e)
{
    ck_assert_uint_eq(e->version, COLLS_PROTO_VERSION);
    ck_assert_int_eq(e->kind, KIND__DATA);
    ck_assert_uint_eq(e->src, 0x100001);
    ck_assert_uint_eq(e->dst, 0x200002);
    ck_assert_int_eq(e->tag, -5);
    ck_assert_str_eq(e->group, "g1");
    ck_assert_uint_eq(e->seq, 7);
    ck_assert_uint_eq(e->dtype, COLLS_DOUBLE);
    ck_assert_uint_eq(e->count, 1000);
    ck_assert_uint_eq(e->encoding, COLLS_ENC_RAW);
    ck_assert_uint_eq(e->byte_order, COLLS_ORDER_BIG);
    ck_assert_uint_eq(e->flags, ENV_F_FPC);
    ck_assert_uint_eq(e->req_id, 0x123456789ull);
    ck_assert_int_eq(e->status, COLLS_EVERSION);
    ck_assert_uint_eq(e->route, COLLS_ROUTE_DIRECT);
    ck_assert_int_eq(e->body_case, ENVELOPE__BODY_ATTACH_REQ);
    ck_assert_ptr_nonnull(e->attach_req);
    ck_assert_uint_eq(e->attach_req->version, 1);
    ck_assert_int_eq(e->attach_req->pid, 4242);
    ck_assert_str_eq(e->attach_req->name, "prog");
    ck_assert(e->attach_req->admin);
}

/* Unpacks n bytes and expects rc; frees whatever came out. */
static int
unpack_rc(const uint8_t *p, size_t n)
{
    Envelope *e = (Envelope *)1;
    int rc = envelope_unpack(p, n, &e);

    if (rc != 0)
        ck_assert_ptr_null(e);
    else
        ck_assert_ptr_nonnull(e);
    envelope_free(e);
    return rc;
}

START_TEST(test_init)
{
    Envelope e;

    memset(&e, 0xa5, sizeof(e));
    envelope_init(&e);
    ck_assert_uint_eq(e.version, COLLS_PROTO_VERSION);
    ck_assert_int_eq(e.kind, KIND__KIND_NONE);
    ck_assert_uint_eq(e.src, 0);
    ck_assert_uint_eq(e.dst, 0);
    ck_assert_int_eq(e.tag, 0);
    ck_assert_str_eq(e.group, "");
    ck_assert_uint_eq(e.count, 0);
    ck_assert_uint_eq(e.req_id, 0);
    ck_assert_int_eq(e.status, 0);
    ck_assert_int_eq(e.body_case, ENVELOPE__BODY__NOT_SET);
    ck_assert_ptr_eq(e.base.descriptor, &envelope__descriptor);
}
END_TEST

START_TEST(test_unpack_bytes)
{
    Envelope *e = NULL;
    struct buf b;

    ck_assert_int_eq(envelope_unpack(full_env, sizeof(full_env), &e), 0);
    assert_full(e);
    /* protobuf-c packs fields in number order: the same bytes come back. */
    buf_init(&b);
    ck_assert_int_eq(envelope_pack_to(&b, e), 0);
    ck_assert_uint_eq(b.len, sizeof(full_env));
    ck_assert_mem_eq(b.data, full_env, sizeof(full_env));
    envelope_free(e);
    buf_free(&b);
}
END_TEST

/* An envelope built in memory survives pack + unpack field for field. */
START_TEST(test_roundtrip)
{
    AttachRep rep = ATTACH_REP__INIT;
    Envelope e, *out = NULL;
    struct buf b;

    envelope_init(&e);
    e.kind = KIND__ATTACH_REP;
    e.src = COLLS_DAEMON_TID(7);
    e.dst = 0x700005;
    e.tag = -2147483647 - 1;
    e.group = "a group name";
    e.seq = UINT64_MAX;
    e.dtype = COLLS_DTYPE_MAX - 1;
    e.count = 1ull << 40;
    e.encoding = COLLS_ENC_INPLACE;
    e.byte_order = COLLS_ORDER_LITTLE;
    e.flags = ENV_F_NOTIFY | ENV_F_ECHO;
    e.req_id = 99;
    e.status = COLLS_EPEERDEAD;
    e.route = COLLS_ROUTE_DEFAULT;
    rep.tid = 0x700005;
    rep.hid = 7;
    rep.incarnation = 0xdeadbeef;
    rep.max_message = 256u << 20;
    rep.direct_addr = "127.0.0.1";
    e.body_case = ENVELOPE__BODY_ATTACH_REP;
    e.attach_rep = &rep;

    buf_init(&b);
    ck_assert_int_eq(envelope_pack_to(&b, &e), 0);
    ck_assert_uint_eq(b.len, envelope__get_packed_size(&e));
    ck_assert_int_eq(envelope_unpack(b.data, b.len, &out), 0);
    ck_assert_int_eq(out->kind, KIND__ATTACH_REP);
    ck_assert_uint_eq(out->src, 7u << 20);
    ck_assert_uint_eq(out->dst, 0x700005);
    ck_assert_int_eq(out->tag, INT32_MIN);
    ck_assert_str_eq(out->group, "a group name");
    ck_assert_uint_eq(out->seq, UINT64_MAX);
    ck_assert_uint_eq(out->dtype, COLLS_DOUBLE);
    ck_assert_uint_eq(out->count, 1ull << 40);
    ck_assert_uint_eq(out->encoding, COLLS_ENC_INPLACE);
    ck_assert_uint_eq(out->byte_order, COLLS_ORDER_LITTLE);
    ck_assert_uint_eq(out->flags, ENV_F_NOTIFY | ENV_F_ECHO);
    ck_assert_uint_eq(out->req_id, 99);
    ck_assert_int_eq(out->status, COLLS_EPEERDEAD);
    ck_assert_int_eq(out->body_case, ENVELOPE__BODY_ATTACH_REP);
    ck_assert_uint_eq(out->attach_rep->incarnation, 0xdeadbeef);
    ck_assert_uint_eq(out->attach_rep->max_message, 256u << 20);
    ck_assert_str_eq(out->attach_rep->direct_addr, "127.0.0.1");
    envelope_free(out);

    /* pack_to appends after what is already there. */
    ck_assert_int_eq(envelope_pack_to(&b, &e), 0);
    ck_assert_uint_eq(b.len, 2 * envelope__get_packed_size(&e));
    ck_assert_mem_eq(b.data, b.data + b.len / 2, b.len / 2);
    buf_free(&b);
}
END_TEST

/* A whole frame: header bytes, the envelope, the payload, read back the
   way a stream reader does. */
START_TEST(test_frame)
{
    static const uint8_t payload[] = "seven b";
    Envelope e, *out = NULL;
    struct frame_info fi;
    struct buf b;
    size_t elen;

    envelope_init(&e);
    e.kind = KIND__DATA;
    e.dst = 0x100002;
    e.tag = 42;
    elen = envelope__get_packed_size(&e);

    buf_init(&b);
    ck_assert_int_eq(buf_append(&b, "xy", 2), 0);
    buf_consume(&b, 1);
    ck_assert_int_eq(envelope_frame(&b, &e, payload, 7), 0);
    ck_assert_uint_eq(buf_avail(&b), 1 + FRAME_HDR_LEN + elen + 7);
    ck_assert_uint_eq(buf_head(&b)[0], 'y');
    buf_consume(&b, 1);

    ck_assert_uint_eq(buf_head(&b)[0], 0);
    ck_assert_uint_eq(buf_head(&b)[3], 4 + elen + 7);
    ck_assert_uint_eq(buf_head(&b)[7], elen);
    ck_assert_int_eq(frame_peek(buf_head(&b), buf_avail(&b), NULL, &fi), 0);
    ck_assert_uint_eq(fi.env_len, elen);
    ck_assert_uint_eq(fi.payload_len, 7);
    ck_assert_uint_eq(fi.total_len, buf_avail(&b));
    ck_assert_int_eq(
        envelope_unpack(buf_head(&b) + FRAME_HDR_LEN, fi.env_len, &out), 0);
    ck_assert_int_eq(out->kind, KIND__DATA);
    ck_assert_uint_eq(out->dst, 0x100002);
    ck_assert_int_eq(out->tag, 42);
    ck_assert_mem_eq(buf_head(&b) + FRAME_HDR_LEN + elen, payload, 7);
    envelope_free(out);
    buf_consume(&b, fi.total_len);
    ck_assert_uint_eq(buf_avail(&b), 0);

    /* No payload. */
    ck_assert_int_eq(envelope_frame(&b, &e, NULL, 0), 0);
    ck_assert_int_eq(frame_peek(buf_head(&b), buf_avail(&b), NULL, &fi), 0);
    ck_assert_uint_eq(fi.payload_len, 0);
    ck_assert_uint_eq(fi.total_len, buf_avail(&b));
    buf_free(&b);
}
END_TEST

START_TEST(test_frame_head)
{
    Envelope e;
    struct frame_info fi;
    struct buf b;
    size_t elen;

    envelope_init(&e);
    e.kind = KIND__DATA;
    elen = envelope__get_packed_size(&e);
    buf_init(&b);
    ck_assert_int_eq(envelope_frame_head(&b, &e, 1000000), 0);
    ck_assert_uint_eq(buf_avail(&b), FRAME_HDR_LEN + elen);
    ck_assert_int_eq(frame_peek(buf_head(&b), buf_avail(&b), NULL, &fi), 0);
    ck_assert_uint_eq(fi.env_len, elen);
    ck_assert_uint_eq(fi.payload_len, 1000000);
    ck_assert_uint_eq(fi.total_len, FRAME_HDR_LEN + elen + 1000000);
    buf_free(&b);
}
END_TEST

START_TEST(test_frame_errors)
{
    static const uint8_t one = 1;
    Envelope e;
    struct buf b;

    envelope_init(&e);
    buf_init(&b);
    ck_assert_int_eq(envelope_frame(&b, &e, NULL, 5), COLLS_EINVAL);
    ck_assert_int_eq(envelope_frame_head(&b, &e, (size_t)UINT32_MAX),
                     COLLS_EMSGSIZE);
    ck_assert_int_eq(envelope_frame(&b, &e, &one, (size_t)UINT32_MAX),
                     COLLS_EMSGSIZE);
    /* An envelope that packs to nothing cannot be framed. */
    e.version = 0;
    ck_assert_int_eq(envelope_frame(&b, &e, &one, 1), COLLS_EINVAL);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_ptr_null(b.data);
    buf_free(&b);
}
END_TEST

START_TEST(test_truncated)
{
    size_t n, k;

    for (n = 0; n < sizeof(full_env); n++) {
        int boundary = 0;

        for (k = 0; k < sizeof(full_env_bounds) / sizeof(size_t); k++)
            if (full_env_bounds[k] == n)
                boundary = 1;
        if (n == 0)
            ck_assert_int_eq(unpack_rc(full_env, n), COLLS_EVERSION);
        else if (boundary)
            ck_assert_int_eq(unpack_rc(full_env, n), 0);
        else
            ck_assert_msg(unpack_rc(full_env, n) == COLLS_EPROTO,
                          "prefix of %zu bytes accepted", n);
    }
    ck_assert_int_eq(unpack_rc(full_env, sizeof(full_env)), 0);
}
END_TEST

START_TEST(test_malformed)
{
    /* Field number 0. */
    static const uint8_t zero_field[] = {0x08, 0x04, 0x00, 0x01};
    /* Wire types 3, 4 (groups), 6 and 7 do not exist in proto3. */
    static const uint8_t group_start[] = {0x08, 0x04, 0x1b};
    static const uint8_t wt7[] = {0x08, 0x04, 0x1f, 0x00};
    /* A varint of 11 bytes. */
    static const uint8_t long_varint[] = {0x08, 0x81, 0x80, 0x80, 0x80, 0x80,
                                          0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    /* A string whose length runs past the end, or is absurd. */
    static const uint8_t long_string[] = {0x08, 0x04, 0x32, 0x05, 'a'};
    static const uint8_t huge_string[] = {0x08, 0x04, 0x32, 0xff, 0xff,
                                          0xff, 0xff, 0x0f, 'a'};
    /* version sent as a length-delimited field. */
    static const uint8_t wrong_type[] = {0x0a, 0x01, 0x01};

    ck_assert_int_eq(unpack_rc(zero_field, sizeof(zero_field)), COLLS_EPROTO);
    ck_assert_int_eq(unpack_rc(group_start, sizeof(group_start)), COLLS_EPROTO);
    ck_assert_int_eq(unpack_rc(wt7, sizeof(wt7)), COLLS_EPROTO);
    ck_assert_int_eq(unpack_rc(long_varint, sizeof(long_varint)), COLLS_EPROTO);
    ck_assert_int_eq(unpack_rc(long_string, sizeof(long_string)), COLLS_EPROTO);
    ck_assert_int_eq(unpack_rc(huge_string, sizeof(huge_string)), COLLS_EPROTO);
    ck_assert_int_eq(unpack_rc(wrong_type, sizeof(wrong_type)), COLLS_EPROTO);
}
END_TEST

START_TEST(test_version)
{
    /* Versions 1, 2 and 3 (older ones) and 5 (a newer one). */
    static const uint8_t v1[] = {0x08, 0x01, 0x10, 0xc8, 0x01};
    static const uint8_t v2[] = {0x08, 0x02, 0x10, 0xc8, 0x01};
    static const uint8_t vold[] = {0x08, 0x03, 0x10, 0xc8, 0x01};
    static const uint8_t v3[] = {0x08, 0x05, 0x10, 0xc8, 0x01};
    static const uint8_t v0[] = {0x10, 0xc8, 0x01};
    static const uint8_t vbig[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0x0f};
    /* Version 5 with a dtype this version does not know: the version
       decides. */
    static const uint8_t v3_dtype[] = {0x08, 0x05, 0x40, 0x63};
    /* A version 1 HEARTBEAT as a version 1 daemon sends it: seq 0x1234
       (its incarnation), heartbeat {table_epoch 5, ntasks 1}. */
    static const uint8_t v1_hb[] = {0x08, 0x01, 0x10, 0xda, 0x04,
                                    0x38, 0xb4, 0x24, 0xfa, 0x01,
                                    0x04, 0x08, 0x05, 0x10, 0x01};

    ck_assert_int_eq(unpack_rc(v1, sizeof(v1)), COLLS_EVERSION);
    ck_assert_int_eq(unpack_rc(v2, sizeof(v2)), COLLS_EVERSION);
    ck_assert_int_eq(unpack_rc(vold, sizeof(vold)), COLLS_EVERSION);
    ck_assert_int_eq(unpack_rc(v3, sizeof(v3)), COLLS_EVERSION);
    ck_assert_int_eq(unpack_rc(v0, sizeof(v0)), COLLS_EVERSION);
    ck_assert_int_eq(unpack_rc(vbig, sizeof(vbig)), COLLS_EVERSION);
    ck_assert_int_eq(unpack_rc(v3_dtype, sizeof(v3_dtype)), COLLS_EVERSION);
    ck_assert_int_eq(unpack_rc(v1_hb, sizeof(v1_hb)), COLLS_EVERSION);
    ck_assert_int_eq(unpack_rc(NULL, 0), COLLS_EVERSION);

    /* What the daemon logs about such a peer. */
    ck_assert_uint_eq(envelope_peek_version(v1_hb, sizeof(v1_hb)), 1);
    ck_assert_uint_eq(envelope_peek_version(v3, sizeof(v3)), 5);
    ck_assert_uint_eq(envelope_peek_version(full_env, sizeof(full_env)),
                      COLLS_PROTO_VERSION);
    ck_assert_uint_eq(envelope_peek_version(vbig, sizeof(vbig)), 0xffffffffu);
    ck_assert_uint_eq(envelope_peek_version(v0, sizeof(v0)), 0);
    ck_assert_uint_eq(envelope_peek_version(v1, 1), 0);
    ck_assert_uint_eq(envelope_peek_version(NULL, 0), 0);
}
END_TEST

START_TEST(test_ranges)
{
    /* version 4, then one field whose value is patched. */
    uint8_t p[] = {0x08, 0x04, 0x00, 0x00};

    p[2] = 0x40; /* dtype */
    p[3] = COLLS_DTYPE_MAX - 1;
    ck_assert_int_eq(unpack_rc(p, sizeof(p)), 0);
    p[3] = COLLS_DTYPE_MAX;
    ck_assert_int_eq(unpack_rc(p, sizeof(p)), COLLS_EPROTO);
    p[3] = 0x7f;
    ck_assert_int_eq(unpack_rc(p, sizeof(p)), COLLS_EPROTO);

    p[2] = 0x50; /* encoding */
    p[3] = COLLS_ENC_INPLACE;
    ck_assert_int_eq(unpack_rc(p, sizeof(p)), 0);
    p[3] = COLLS_ENC_INPLACE + 1;
    ck_assert_int_eq(unpack_rc(p, sizeof(p)), COLLS_EPROTO);

    p[2] = 0x58; /* byte_order */
    p[3] = COLLS_ORDER_BIG;
    ck_assert_int_eq(unpack_rc(p, sizeof(p)), 0);
    p[3] = 2;
    ck_assert_int_eq(unpack_rc(p, sizeof(p)), COLLS_EPROTO);
}
END_TEST

/* Unknown field numbers are skipped, and kept for re-packing. */
START_TEST(test_unknown_fields)
{
    /* version 4, field 99 varint 7, field 99 bytes "xyz", field 99 fixed64,
       field 99 fixed32, kind DATA. */
    static const uint8_t p[] = {
        0x08, 0x04, 0x98, 0x06, 0x07, 0x9a, 0x06, 0x03, 'x',  'y',
        'z',  0x99, 0x06, 1,    2,    3,    4,    5,    6,    7,
        8,    0x9d, 0x06, 1,    2,    3,    4,    0x10, 0xc8, 0x01,
    };
    /* field 99 varint only, then tag 9 (zigzag). */
    static const uint8_t q[] = {0x08, 0x04, 0x98, 0x06, 0x07, 0x28, 0x09};
    Envelope *e = NULL;
    struct buf b;

    ck_assert_int_eq(envelope_unpack(p, sizeof(p), &e), 0);
    ck_assert_uint_eq(e->version, COLLS_PROTO_VERSION);
    ck_assert_int_eq(e->kind, KIND__DATA);
    ck_assert_uint_eq(e->base.n_unknown_fields, 4);
    buf_init(&b);
    ck_assert_int_eq(envelope_pack_to(&b, e), 0);
    ck_assert_uint_eq(b.len, sizeof(p));
    envelope_free(e);
    /* The re-packed bytes unpack to the same thing. */
    ck_assert_int_eq(envelope_unpack(b.data, b.len, &e), 0);
    ck_assert_int_eq(e->kind, KIND__DATA);
    ck_assert_uint_eq(e->base.n_unknown_fields, 4);
    envelope_free(e);

    ck_assert_int_eq(envelope_unpack(q, sizeof(q), &e), 0);
    ck_assert_int_eq(e->tag, -5);
    envelope_free(e);
    buf_free(&b);
}
END_TEST

/*
 * protobuf-c takes field number 0 written in two bytes ("80 00") as an
 * unknown field and would pack it as a single 0 byte that nobody decodes;
 * such envelopes are rejected, at the top level and in nested messages.
 */
START_TEST(test_field_zero)
{
    static const uint8_t top[] = {0x08, 0x04, 0x80, 0x00, 0x07};
    static const uint8_t top_len[] = {0x08, 0x04, 0x82, 0x00, 0x01, 'a'};
    /* heartbeat {table_epoch 5, field 0 varint 7} */
    static const uint8_t nested[] = {0x08, 0x04, 0xfa, 0x01, 0x05,
                                     0x08, 0x05, 0x80, 0x00, 0x07};
    /* host_table {hosts [{hid 1, field 0 varint 7}]} */
    static const uint8_t deep[] = {0x08, 0x04, 0xc2, 0x01, 0x07, 0x12,
                                   0x05, 0x08, 0x01, 0x80, 0x00, 0x07};
    /* The same three with field 99 instead: accepted. */
    static const uint8_t deep99[] = {0x08, 0x04, 0xc2, 0x01, 0x07, 0x12,
                                     0x05, 0x08, 0x01, 0x98, 0x06, 0x07};
    Envelope *e = NULL;

    ck_assert_int_eq(unpack_rc(top, sizeof(top)), COLLS_EPROTO);
    ck_assert_int_eq(unpack_rc(top_len, sizeof(top_len)), COLLS_EPROTO);
    ck_assert_int_eq(unpack_rc(nested, sizeof(nested)), COLLS_EPROTO);
    ck_assert_int_eq(unpack_rc(deep, sizeof(deep)), COLLS_EPROTO);
    ck_assert_int_eq(envelope_unpack(deep99, sizeof(deep99), &e), 0);
    ck_assert_int_eq(e->body_case, ENVELOPE__BODY_HOST_TABLE);
    ck_assert_uint_eq(e->host_table->n_hosts, 1);
    ck_assert_uint_eq(e->host_table->hosts[0]->hid, 1);
    ck_assert_uint_eq(e->host_table->hosts[0]->base.n_unknown_fields, 1);
    envelope_free(e);
}
END_TEST

/*
 * Kind is a proto3 open enum: protobuf-c stores any int32 found on the wire
 * and packs it back unchanged.  The daemon answers unknown kinds; decoding
 * them must simply work.
 */
START_TEST(test_unknown_kind)
{
    static const uint8_t k12345[] = {0x08, 0x04, 0x10, 0xb9, 0x60};
    static const uint8_t kneg[] = {0x08, 0x04, 0x10, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    Envelope *e = NULL;
    struct buf b;

    buf_init(&b);
    ck_assert_int_eq(envelope_unpack(k12345, sizeof(k12345), &e), 0);
    ck_assert_int_eq((int)e->kind, 12345);
    ck_assert_int_eq(envelope_pack_to(&b, e), 0);
    ck_assert_uint_eq(b.len, sizeof(k12345));
    ck_assert_mem_eq(b.data, k12345, sizeof(k12345));
    envelope_free(e);

    buf_reset(&b);
    ck_assert_int_eq(envelope_unpack(kneg, sizeof(kneg), &e), 0);
    ck_assert_int_eq((int)e->kind, -1);
    ck_assert_int_eq(envelope_pack_to(&b, e), 0);
    ck_assert_uint_eq(b.len, sizeof(kneg));
    ck_assert_mem_eq(b.data, kneg, sizeof(kneg));
    envelope_free(e);
    buf_free(&b);
}
END_TEST

START_TEST(test_free_null)
{
    struct envelope_arena a;

    envelope_free(NULL);
    envelope_free_in(&a, NULL);
}
END_TEST

/* envelope_unpack_in decodes what envelope_unpack decodes: a small
   envelope inside the arena, one that does not fit (a CollReq with 4096
   counts) partly from malloc (LeakSanitizer checks that both free). */
START_TEST(test_arena)
{
    static uint64_t counts[4096];
    struct envelope_arena a;
    CollReq q = COLL_REQ__INIT;
    Envelope e, *out = NULL;
    struct buf b;
    size_t i;

    ck_assert_int_eq(envelope_unpack_in(&a, full_env, sizeof(full_env), &out),
                     0);
    assert_full(out);
    ck_assert_uint_gt(a.used, 0);
    ck_assert_uint_le(a.used, sizeof(a.mem));
    envelope_free_in(&a, out);

    for (i = 0; i < 4096; i++)
        counts[i] = i * 7;
    envelope_init(&e);
    e.kind = KIND__COLL_REQ;
    e.group = "arena";
    q.counts = counts;
    q.n_counts = 4096;
    e.body_case = ENVELOPE__BODY_COLL_REQ;
    e.coll_req = &q;
    buf_init(&b);
    ck_assert_int_eq(envelope_pack_to(&b, &e), 0);
    ck_assert_int_eq(envelope_unpack_in(&a, b.data, b.len, &out), 0);
    ck_assert_str_eq(out->group, "arena");
    ck_assert_uint_eq(out->coll_req->n_counts, 4096);
    for (i = 0; i < 4096; i++)
        ck_assert_uint_eq(out->coll_req->counts[i], i * 7);
    envelope_free_in(&a, out);
    /* A malformed one fails the same way as with envelope_unpack. */
    ck_assert_int_eq(envelope_unpack_in(&a, b.data, b.len / 2, &out),
                     COLLS_EPROTO);
    ck_assert_ptr_null(out);
    buf_free(&b);
}
END_TEST

/* Envelopes without body, as tasks and daemons exchange them: extreme
   values of every field, negative enums and zigzag fields, groups. */
static void
fast_cases(Envelope *v, size_t *n)
{
    size_t k = 0;

    envelope_init(&v[k++]); /* version only */
    envelope_init(&v[k]);
    v[k].kind = KIND__DATA;
    v[k].src = 0x100001;
    v[k].dst = 0x200002;
    v[k].tag = -5;
    v[k].encoding = COLLS_ENC_RAW;
    v[k++].route = COLLS_ROUTE_DIRECT;
    envelope_init(&v[k]);
    v[k].kind = (Kind)-7; /* an int32 enum: ten bytes on the wire */
    v[k].src = UINT32_MAX;
    v[k].dst = UINT32_MAX;
    v[k].tag = INT32_MIN;
    v[k].group = "group-with.chars_0123456789~";
    v[k].seq = UINT64_MAX;
    v[k].dtype = COLLS_DOUBLE;
    v[k].count = UINT64_MAX - 1;
    v[k].byte_order = COLLS_ORDER_BIG;
    v[k].flags = UINT32_MAX;
    v[k].req_id = UINT64_C(1) << 63;
    v[k].status = INT32_MAX;
    v[k++].route = 127;
    envelope_init(&v[k]);
    v[k].kind = KIND__DATA;
    v[k].tag = INT32_MAX;
    v[k].status = INT32_MIN;
    v[k].seq = 128;
    v[k++].group = "g";
    *n = k;
}

/* The hand-written packer writes protobuf-c's bytes, and the decoder
   reads back protobuf-c's fields. */
START_TEST(test_fast_codec)
{
    Envelope v[8], *a, *b;
    uint8_t mine[256], theirs[256];
    size_t n, i, len;

    fast_cases(v, &n);
    for (i = 0; i < n; i++) {
        len = envelope__get_packed_size(&v[i]);
        ck_assert_uint_le(len, sizeof(theirs));
        ck_assert_uint_eq(envelope_fast_size(&v[i]), len);
        ck_assert_uint_eq(envelope_packed_size(&v[i]), len);
        ck_assert_uint_eq(envelope__pack(&v[i], theirs), len);
        ck_assert_uint_eq(envelope_fast_pack(&v[i], mine), len);
        ck_assert_mem_eq(mine, theirs, len);
        memset(mine, 0, sizeof(mine));
        ck_assert_uint_eq(envelope_pack(&v[i], mine), len);
        ck_assert_mem_eq(mine, theirs, len);

        a = envelope__unpack(NULL, len, theirs);
        ck_assert_ptr_nonnull(a);
        b = NULL;
        ck_assert_int_eq(envelope_fast_decode(NULL, theirs, len, &b), 1);
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(b->kind, a->kind);
        ck_assert_uint_eq(b->src, a->src);
        ck_assert_uint_eq(b->dst, a->dst);
        ck_assert_int_eq(b->tag, a->tag);
        ck_assert_str_eq(b->group, a->group);
        ck_assert_str_eq(b->group, v[i].group);
        ck_assert_uint_eq(b->seq, a->seq);
        ck_assert_uint_eq(b->dtype, a->dtype);
        ck_assert_uint_eq(b->count, a->count);
        ck_assert_uint_eq(b->encoding, a->encoding);
        ck_assert_uint_eq(b->byte_order, a->byte_order);
        ck_assert_uint_eq(b->flags, a->flags);
        ck_assert_uint_eq(b->req_id, a->req_id);
        ck_assert_int_eq(b->status, a->status);
        ck_assert_uint_eq(b->route, a->route);
        ck_assert_int_eq(b->body_case, ENVELOPE__BODY__NOT_SET);
        ck_assert_uint_eq(b->base.n_unknown_fields, 0);
        envelope__free_unpacked(a, NULL);
        envelope_free(b);
    }
    /* What has a body or an unknown field is protobuf-c's to pack. */
    ck_assert_uint_eq(envelope_fast_size(&(Envelope)ENVELOPE__INIT), 0);
    a = envelope__unpack(NULL, sizeof(full_env), full_env);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(envelope_fast_size(a), 0);
    ck_assert_uint_eq(envelope_packed_size(a), sizeof(full_env));
    ck_assert_uint_eq(envelope_pack(a, theirs), sizeof(full_env));
    ck_assert_mem_eq(theirs, full_env, sizeof(full_env));
    envelope__free_unpacked(a, NULL);
}
END_TEST

/* What the decoder leaves to protobuf-c (returns 0, *out untouched), and
   envelope_unpack's answer for it, which protobuf-c gives. */
START_TEST(test_fast_declines)
{
    static const struct {
        uint8_t b[16];
        size_t n;
        int rc; /* envelope_unpack's */
    } cases[] = {
        /* a body (attach_req, empty) */
        {{0x08, 0x04, 0xa2, 0x01, 0x00}, 5, 0},
        /* an unknown field 16 (two-byte tag) */
        {{0x08, 0x04, 0x80, 0x01, 0x05}, 5, 0},
        /* field 3 in a two-byte tag */
        {{0x08, 0x04, 0x98, 0x00, 0x05}, 5, 0},
        /* a group that is not printable ASCII (protobuf-c takes it) */
        {{0x08, 0x04, 0x32, 0x02, 0xc3, 0xa9}, 6, 0},
        /* the group as a varint: wrong wire type */
        {{0x08, 0x04, 0x30, 0x01}, 4, COLLS_EPROTO},
        /* src as a fixed32: wrong wire type */
        {{0x08, 0x04, 0x1d, 1, 2, 3, 4}, 7, COLLS_EPROTO},
        /* a varint of 11 bytes */
        {{0x08, 0x04, 0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
          0x80, 0x80, 0x01},
         14,
         COLLS_EPROTO},
        /* a varint cut short */
        {{0x08, 0x04, 0x18, 0x80}, 4, COLLS_EPROTO},
        /* an empty group whose length takes nine bytes (protobuf-c
           refuses lengths of more than five) */
        {{0x08, 0x04, 0x32, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
          0x00},
         12,
         COLLS_EPROTO},
        /* a group longer than what is left */
        {{0x08, 0x04, 0x32, 0x05, 0x61}, 5, COLLS_EPROTO},
        /* field number 0 */
        {{0x08, 0x04, 0x00, 0x01}, 4, COLLS_EPROTO},
    };
    Envelope *e, *sentinel = (Envelope *)&cases;
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        e = sentinel;
        ck_assert_msg(envelope_fast_decode(NULL, cases[i].b, cases[i].n, &e) ==
                          0,
                      "case %zu", i);
        ck_assert_ptr_eq(e, sentinel);
        ck_assert_msg(unpack_rc(cases[i].b, cases[i].n) == cases[i].rc,
                      "case %zu: %d", i, unpack_rc(cases[i].b, cases[i].n));
    }
}
END_TEST

/* Fast-decoded envelopes, with and without a group, free cleanly from
   the heap and from an arena, and the range checks still apply
   (LeakSanitizer and ASan check the frees). */
START_TEST(test_fast_free)
{
    static const uint8_t with_group[] = {0x08, 0x04, 0x10, 0xc8, 0x01,
                                         0x32, 0x03, 0x61, 0x62, 0x63};
    static const uint8_t bad_dtype[] = {0x08, 0x04, 0x40, 0x7f};
    static const uint8_t old_version[] = {0x08, 0x01, 0x32, 0x01, 0x61};
    struct envelope_arena a;
    Envelope *e = NULL;

    ck_assert_int_eq(envelope_unpack(with_group, sizeof(with_group), &e), 0);
    ck_assert_str_eq(e->group, "abc");
    ck_assert_int_eq(e->kind, KIND__DATA);
    envelope_free(e);
    ck_assert_int_eq(envelope_unpack_in(&a, with_group, sizeof(with_group), &e),
                     0);
    ck_assert_str_eq(e->group, "abc");
    envelope_free_in(&a, e);
    ck_assert_int_eq(unpack_rc(bad_dtype, sizeof(bad_dtype)), COLLS_EPROTO);
    ck_assert_int_eq(unpack_rc(old_version, sizeof(old_version)),
                     COLLS_EVERSION);
    ck_assert_int_eq(
        envelope_unpack_in(&a, old_version, sizeof(old_version), &e),
        COLLS_EVERSION);
    ck_assert_ptr_null(e);
}
END_TEST

Suite *
suite_envelope(void)
{
    Suite *s = suite_create("envelope");
    TCase *tc = tcase_create("envelope");

    tcase_add_test(tc, test_init);
    tcase_add_test(tc, test_unpack_bytes);
    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_frame);
    tcase_add_test(tc, test_frame_head);
    tcase_add_test(tc, test_frame_errors);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_ranges);
    tcase_add_test(tc, test_unknown_fields);
    tcase_add_test(tc, test_unknown_kind);
    tcase_add_test(tc, test_field_zero);
    tcase_add_test(tc, test_free_null);
    tcase_add_test(tc, test_arena);
    tcase_add_test(tc, test_fast_codec);
    tcase_add_test(tc, test_fast_declines);
    tcase_add_test(tc, test_fast_free);
    suite_add_tcase(s, tc);
    return s;
}
