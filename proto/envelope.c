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
    return 0;
}

int
envelope_unpack(const uint8_t *buf, size_t len, Envelope **out)
{
    static const uint8_t empty[1];
    Envelope *e;
    int rc;

    *out = NULL;
    /* protobuf-c cannot tell malformed input from a failed malloc; both
       are reported as a protocol error. */
    e = envelope__unpack(NULL, len, len > 0 ? buf : empty);
    if (e == NULL)
        return COLLS_EPROTO;
    rc = envelope_check(e);
    if (rc != 0) {
        envelope__free_unpacked(e, NULL);
        return rc;
    }
    *out = e;
    return 0;
}

void
envelope_free(Envelope *e)
{
    if (e != NULL)
        envelope__free_unpacked(e, NULL);
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
