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
 * The hand-written codec (envelope.h).  Field numbers and wire types of
 * colls.proto's Envelope: 1..15 are varints but 6, the group, which is
 * length-delimited.  protobuf-c packs a proto3 field only when it is not
 * zero (a string: not empty), in the order of the field numbers; kind is
 * an int32 enum, so a negative kind takes ten bytes; tag and status are
 * sint32 (zigzag).
 */
enum {
    ENV_F_GROUP = 6,
    ENV_FAST_MAX_FIELD = 15,
    ENV_WT_VARINT = 0,
    ENV_WT_LEN = 2
};

static size_t
env_varint_len(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static uint8_t *
env_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* sint32 on the wire: 0, -1, 1, -2 ... as 0, 1, 2, 3 ... */
static uint32_t
env_zigzag(int32_t v)
{
    uint32_t u = (uint32_t)v;

    return (u << 1) ^ (0u - (u >> 31));
}

static int32_t
env_unzigzag(uint32_t v)
{
    return (int32_t)((v >> 1) ^ (0u - (v & 1)));
}

/* The varint fields of e, by field number (index 0 and 6 unused); an
   int32 (kind) is sign-extended as protobuf packs it. */
static void
env_varints(const Envelope *e, uint64_t v[ENV_FAST_MAX_FIELD + 1])
{
    v[0] = 0;
    v[1] = e->version;
    v[2] = (uint64_t)(int64_t)(int32_t)e->kind;
    v[3] = e->src;
    v[4] = e->dst;
    v[5] = env_zigzag(e->tag);
    v[ENV_F_GROUP] = 0;
    v[7] = e->seq;
    v[8] = e->dtype;
    v[9] = e->count;
    v[10] = e->encoding;
    v[11] = e->byte_order;
    v[12] = e->flags;
    v[13] = e->req_id;
    v[14] = env_zigzag(e->status);
    v[15] = e->route;
}

/* The reverse: e's varint fields from v (by field number), each cut to
   its type as protobuf-c does (the low 32 bits of a 32-bit field). */
static void
env_set_varints(Envelope *e, const uint64_t v[ENV_FAST_MAX_FIELD + 1])
{
    e->version = (uint32_t)v[1];
    e->kind = (Kind)(int32_t)(uint32_t)v[2];
    e->src = (uint32_t)v[3];
    e->dst = (uint32_t)v[4];
    e->tag = env_unzigzag((uint32_t)v[5]);
    e->seq = v[7];
    e->dtype = (uint32_t)v[8];
    e->count = v[9];
    e->encoding = (uint32_t)v[10];
    e->byte_order = (uint32_t)v[11];
    e->flags = (uint32_t)v[12];
    e->req_id = v[13];
    e->status = env_unzigzag((uint32_t)v[14]);
    e->route = (uint32_t)v[15];
}

/* 1 for an envelope of the hand-written codec's kind: no body, no
   unknown field (the test for packing, checking and freeing alike). */
static int
env_fast_ok(const Envelope *e)
{
    return e->body_case == ENVELOPE__BODY__NOT_SET &&
           e->base.n_unknown_fields == 0 && e->base.unknown_fields == NULL;
}

size_t
envelope_fast_size(const Envelope *e)
{
    uint64_t v[ENV_FAST_MAX_FIELD + 1];
    size_t n = 0, glen;
    int f;

    if (!env_fast_ok(e))
        return 0;
    env_varints(e, v);
    for (f = 1; f <= ENV_FAST_MAX_FIELD; f++)
        if (v[f] != 0)
            n += 1 + env_varint_len(v[f]);
    if (e->group != NULL && e->group[0] != '\0') {
        glen = strlen(e->group);
        n += 1 + env_varint_len(glen) + glen;
    }
    return n;
}

size_t
envelope_fast_pack(const Envelope *e, uint8_t *out)
{
    uint64_t v[ENV_FAST_MAX_FIELD + 1];
    uint8_t *p = out;
    size_t glen;
    int f;

    env_varints(e, v);
    for (f = 1; f <= ENV_FAST_MAX_FIELD; f++) {
        if (f == ENV_F_GROUP && e->group != NULL && e->group[0] != '\0') {
            glen = strlen(e->group);
            *p++ = (uint8_t)(ENV_F_GROUP << 3 | ENV_WT_LEN);
            p = env_put_varint(p, glen);
            memcpy(p, e->group, glen);
            p += glen;
        } else if (v[f] != 0) {
            *p++ = (uint8_t)(f << 3 | ENV_WT_VARINT);
            p = env_put_varint(p, v[f]);
        }
    }
    return (size_t)(p - out);
}

/* Reads a varint of at most 10 bytes at *pp (before end), as protobuf-c
   does (bits past the 64th dropped).  0 if there is none. */
static int
env_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t r = 0;
    unsigned i;

    for (i = 0; i < 10 && p < end; i++, p++) {
        r |= (uint64_t)(*p & 0x7f) << (7 * i);
        if ((*p & 0x80) == 0) {
            *v = r;
            *pp = p + 1;
            return 1;
        }
    }
    return 0;
}

static void *
env_alloc(ProtobufCAllocator *al, size_t n)
{
    return al != NULL ? al->alloc(al->allocator_data, n) : malloc(n);
}

static void
env_dealloc(ProtobufCAllocator *al, void *p)
{
    if (al != NULL)
        al->free(al->allocator_data, p);
    else
        free(p);
}

int
envelope_fast_decode(ProtobufCAllocator *al, const uint8_t *buf, size_t len,
                     Envelope **out)
{
    static const Envelope init = ENVELOPE__INIT;
    const uint8_t *p = buf, *end = buf + len, *gp = NULL;
    uint64_t v, glen = 0, val[ENV_FAST_MAX_FIELD + 1] = {0};
    Envelope e = init, *r;
    char *g;
    size_t i;

    while (p < end) {
        unsigned f = *p >> 3, wt = *p & 7;

        if (*p++ & 0x80 || f == 0 || f > ENV_FAST_MAX_FIELD)
            return 0;
        if (f == ENV_F_GROUP) {
            /* a one-byte length: protobuf-c refuses lengths of more
               than five bytes, even of small values */
            if (wt != ENV_WT_LEN || p == end || *p >= 0x80)
                return 0;
            glen = *p++;
            if (glen > (uint64_t)(end - p))
                return 0;
            for (i = 0; i < glen; i++)
                if (p[i] < 0x20 || p[i] > 0x7e)
                    return 0;
            gp = p;
            p += glen;
            continue;
        }
        if (wt != ENV_WT_VARINT || !env_get_varint(&p, end, &v))
            return 0;
        val[f] = v;
    }
    env_set_varints(&e, val);
    r = env_alloc(al, sizeof(*r));
    if (r == NULL)
        return 0;
    if (gp != NULL && glen > 0) {
        g = env_alloc(al, (size_t)glen + 1);
        if (g == NULL) {
            env_dealloc(al, r);
            return 0;
        }
        memcpy(g, gp, (size_t)glen);
        g[glen] = '\0';
        e.group = g;
    }
    *r = e;
    *out = r;
    return 1;
}

/* Frees an unpacked envelope: by hand when it has no body and no unknown
   field (what protobuf-c would free: the group if it is not the default,
   then the struct), else through protobuf-c. */
static void
envelope_release(ProtobufCAllocator *al, Envelope *e)
{
    if (!env_fast_ok(e)) {
        envelope__free_unpacked(e, al);
        return;
    }
    if (e->group != NULL && e->group != protobuf_c_empty_string)
        env_dealloc(al, e->group);
    env_dealloc(al, e);
}

size_t
envelope_packed_size(const Envelope *e)
{
    size_t n = envelope_fast_size(e);

    return n != 0 ? n : envelope__get_packed_size(e);
}

size_t
envelope_pack(const Envelope *e, uint8_t *out)
{
    /* an envelope of no field packs to nothing either way */
    if (env_fast_ok(e))
        return envelope_fast_pack(e, out);
    return envelope__pack(e, out);
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
    if (!env_fast_ok(e) && !envelope_unknown_ok(&e->base))
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
    if (!envelope_fast_decode(al, buf, len, &e)) {
        e = envelope__unpack(al, len, len > 0 ? buf : empty);
        if (e == NULL)
            return COLLS_EPROTO;
    }
    rc = envelope_check(e);
    if (rc != 0) {
        envelope_release(al, e);
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
        envelope_release(NULL, e);
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
        envelope_release(&a->alloc, e);
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

    elen = envelope_packed_size(e);
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
    packed = envelope_pack(e, b->data + b->len + FRAME_HDR_LEN);
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
    size_t elen = envelope_packed_size(e);
    int rc;

    rc = buf_reserve(b, elen);
    if (rc != 0)
        return rc;
    if (elen > 0 && envelope_pack(e, b->data + b->len) != elen)
        return COLLS_EPROTO;
    b->len += elen;
    return 0;
}
