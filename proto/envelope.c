/*
 * envelope.c -- envelopes (proto/colls.proto) packed with protobuf-c, and
 * framed for streams (proto/frame.h).
 *
 * envelope_unpack is the gate for untrusted envelopes: protobuf-c decodes
 * them (its allocations are bounded by the input length, which the caller
 * has checked against the frame limits), then the fields other code uses as
 * indices or switch values are range-checked here.  Kind is a proto3 open
 * enum: protobuf-c stores any int32 it finds on the wire, unknown or
 * negative, without complaint, and packs it back unchanged; the daemon
 * answers a kind it does not know with an ERROR reply, so it is not checked
 * here.  Unknown field numbers are kept by protobuf-c (as unknown fields)
 * and packed again unchanged, so a daemon forwarding an envelope from a
 * newer peer does not lose them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/envelope.h"

void
envelope_init(Envelope *e)
{
    static const Envelope init = ENVELOPE__INIT;

    *e = init;
    e->version = COLLS_PROTO_VERSION;
}

void
envelope_reply(Envelope *r, uint32_t src, uint32_t dst, int kind,
               uint64_t req_id, int status)
{
    envelope_init(r);
    r->kind = (Kind)kind;
    r->src = src;
    r->dst = dst;
    r->req_id = req_id;
    r->status = status;
}

/* Largest field number protobuf allows (2^29 - 1). */
#define ENVELOPE_MAX_FIELD 0x1fffffffu

/*
 * 1 if every unknown field in m and in the messages it holds has a legal
 * field number.  protobuf-c 1.4 accepts field number 0 when its tag is
 * written in more than one byte ("80 00") and keeps it as an unknown field,
 * which it then packs as a bare 0 byte that no decoder accepts: an
 * envelope re-packed for forwarding would be poison to the next hop.  The
 * schema has no recursive messages, so the recursion is at most three deep.
 */
static int
envelope_unknown_ok(const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    unsigned i;
    size_t j;

    for (i = 0; i < m->n_unknown_fields; i++)
        if (m->unknown_fields[i].tag == 0 ||
            m->unknown_fields[i].tag > ENVELOPE_MAX_FIELD)
            return 0;
    for (i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];

        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            ProtobufCMessage *const *v =
                *(ProtobufCMessage *const *const *)(base + f->offset);

            for (j = 0; j < n; j++)
                if (!envelope_unknown_ok(v[j]))
                    return 0;
        } else {
            const ProtobufCMessage *sub;

            if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0 &&
                *(const uint32_t *)(base + f->quantifier_offset) != f->id)
                continue;
            sub = *(ProtobufCMessage *const *)(base + f->offset);
            if (sub != NULL && !envelope_unknown_ok(sub))
                return 0;
        }
    }
    return 1;
}

/*
 * Range checks on a decoded envelope.  The version comes first: a peer of
 * another version may legitimately use values this one does not know.
 */
static int
envelope_check(const Envelope *e)
{
    if (e->version != COLLS_PROTO_VERSION)
        return COLLS_EVERSION;
    if (e->dtype >= COLLS_DTYPE_MAX)
        return COLLS_EPROTO;
    if (e->encoding > COLLS_ENC_INPLACE)
        return COLLS_EPROTO;
    if (e->byte_order > COLLS_ORDER_BIG)
        return COLLS_EPROTO;
    if (!envelope_unknown_ok(&e->base))
        return COLLS_EPROTO;
    return 0;
}

/* Decodes and checks an envelope with allocator al (NULL: malloc). */
static int
envelope_decode(ProtobufCAllocator *al, const uint8_t *buf, size_t len,
                Envelope **out)
{
    static const uint8_t empty[1];
    Envelope *e;
    int rc;

    *out = NULL;
    /* protobuf-c cannot tell malformed input from a failed malloc; both
       are reported as a protocol error. */
    e = envelope__unpack(al, len, len > 0 ? buf : empty);
    if (e == NULL)
        return COLLS_EPROTO;
    rc = envelope_check(e);
    if (rc != 0) {
        envelope__free_unpacked(e, al);
        return rc;
    }
    *out = e;
    return 0;
}

int
envelope_unpack(const uint8_t *buf, size_t len, Envelope **out)
{
    return envelope_decode(NULL, buf, len, out);
}

uint32_t
envelope_peek_version(const uint8_t *buf, size_t len)
{
    uint64_t v = 0;
    size_t i;

    if (len < 2 || buf[0] != 0x08) /* field 1, varint */
        return 0;
    for (i = 1; i < len && i < 11; i++) {
        v |= (uint64_t)(buf[i] & 0x7f) << (7 * (i - 1));
        if ((buf[i] & 0x80) == 0)
            return v <= UINT32_MAX ? (uint32_t)v : 0;
    }
    return 0;
}

void
envelope_free(Envelope *e)
{
    if (e != NULL)
        envelope__free_unpacked(e, NULL);
}

/* The arena's allocator: bump allocation in mem, malloc past its end. */
static void *
envelope_arena_alloc(void *ctx, size_t size)
{
    struct envelope_arena *a = ctx;
    size_t align = _Alignof(max_align_t);
    size_t at = (a->used + align - 1) & ~(align - 1);

    if (at <= sizeof(a->mem) && size <= sizeof(a->mem) - at) {
        a->used = at + size;
        return a->mem + at;
    }
    return malloc(size);
}

static void
envelope_arena_free(void *ctx, void *p)
{
    struct envelope_arena *a = ctx;
    uintptr_t q = (uintptr_t)p, lo = (uintptr_t)a->mem;

    if (q < lo || q - lo >= sizeof(a->mem))
        free(p);
}

int
envelope_unpack_in(struct envelope_arena *a, const uint8_t *buf, size_t len,
                   Envelope **out)
{
    a->alloc.alloc = envelope_arena_alloc;
    a->alloc.free = envelope_arena_free;
    a->alloc.allocator_data = a;
    a->used = 0;
    return envelope_decode(&a->alloc, buf, len, out);
}

void
envelope_free_in(struct envelope_arena *a, Envelope *e)
{
    if (e != NULL)
        envelope__free_unpacked(e, &a->alloc);
}

/*
 * Appends header + envelope (+ the payload if payload is not NULL) to b,
 * with a frame length that counts plen payload bytes either way.  On error
 * b is unchanged.  payload must not point into b (b may move).
 */
static int
envelope_frame_common(struct buf *b, const Envelope *e, const void *payload,
                      size_t plen)
{
    uint8_t hdr[FRAME_HDR_LEN];
    size_t elen, need, packed;
    int rc;

    elen = envelope__get_packed_size(e);
    if (elen > UINT32_MAX)
        return COLLS_EMSGSIZE;
    rc = frame_put_header(hdr, (uint32_t)elen, (uint64_t)plen);
    if (rc != 0)
        return rc;
    /* frame_put_header bounded 4 + elen + plen by UINT32_MAX; the check
       below matters only where size_t is 32 bits. */
    need = FRAME_HDR_LEN + elen;
    if (payload != NULL) {
        if (plen > SIZE_MAX - need)
            return COLLS_EMSGSIZE;
        need += plen;
    }
    rc = buf_reserve(b, need);
    if (rc != 0)
        return rc;
    memcpy(b->data + b->len, hdr, FRAME_HDR_LEN);
    packed = envelope__pack(e, b->data + b->len + FRAME_HDR_LEN);
    if (packed != elen)
        return COLLS_EPROTO;
    if (payload != NULL && plen > 0)
        memcpy(b->data + b->len + FRAME_HDR_LEN + elen, payload, plen);
    b->len += need;
    return 0;
}

int
envelope_frame(struct buf *b, const Envelope *e, const void *payload,
               size_t plen)
{
    static const uint8_t none[1];

    if (plen > 0 && payload == NULL)
        return COLLS_EINVAL;
    return envelope_frame_common(b, e, payload != NULL ? payload : none, plen);
}

int
envelope_frame_head(struct buf *b, const Envelope *e, size_t plen)
{
    return envelope_frame_common(b, e, NULL, plen);
}

int
envelope_pack_to(struct buf *b, const Envelope *e)
{
    size_t elen = envelope__get_packed_size(e);
    int rc;

    rc = buf_reserve(b, elen);
    if (rc != 0)
        return rc;
    if (elen > 0 && envelope__pack(e, b->data + b->len) != elen)
        return COLLS_EPROTO;
    b->len += elen;
    return 0;
}
