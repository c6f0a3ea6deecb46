/*
 * fuzz-envelope.c -- envelope_unpack on arbitrary bytes (an envelope from
 * a task or a peer daemon), then pack, unpack again and compare.
 *
 * Checked (abort() on failure): envelope_unpack answers 0, COLLS_EPROTO or
 * COLLS_EVERSION and sets *out exactly on success; an accepted envelope
 * obeys the range checks, packs to envelope__get_packed_size bytes, and
 * those bytes unpack to an envelope with the same key fields that packs to
 * the same bytes again; framing it (head only) gives a header frame_peek
 * reads back.  Wherever the hand-written decoder takes the bytes
 * (envelope_fast_decode), protobuf-c takes them too and reads the same
 * fields, and the hand-written packer writes protobuf-c's bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/buf.h"
#include "proto/envelope.h"
#include "proto/frame.h"
#include "tests/fuzz/fuzz.h"

/* Aborts unless the fields other code relies on are equal. */
static void
fuzz_envelope_same(const Envelope *a, const Envelope *b)
{
    if (a->version != b->version || a->kind != b->kind || a->src != b->src ||
        a->dst != b->dst || a->tag != b->tag ||
        strcmp(a->group, b->group) != 0 || a->seq != b->seq ||
        a->dtype != b->dtype || a->count != b->count ||
        a->encoding != b->encoding || a->byte_order != b->byte_order ||
        a->flags != b->flags || a->req_id != b->req_id ||
        a->status != b->status || a->route != b->route ||
        a->body_case != b->body_case ||
        a->base.n_unknown_fields != b->base.n_unknown_fields)
        abort();
}

/* Aborts unless e passed the checks envelope_unpack documents. */
static void
fuzz_envelope_valid(const Envelope *e)
{
    if (e->version != COLLS_PROTO_VERSION || e->dtype >= COLLS_DTYPE_MAX ||
        e->encoding > COLLS_ENC_INPLACE || e->byte_order > COLLS_ORDER_BIG ||
        e->group == NULL)
        abort();
}

/* Aborts unless both codecs agree on data (see the header). */
static void
fuzz_envelope_codecs(const uint8_t *data, size_t size)
{
    static const uint8_t empty[1];
    Envelope *f = NULL, *p;
    uint8_t *b1, *b2;
    size_t n;

    if (!envelope_fast_decode(NULL, data, size, &f))
        return;
    p = envelope__unpack(NULL, size, size > 0 ? data : empty);
    if (f == NULL || p == NULL)
        abort();
    fuzz_envelope_same(f, p);
    n = envelope__get_packed_size(p);
    if (envelope_fast_size(f) != n)
        abort();
    b1 = malloc(n + 1);
    b2 = malloc(n + 1);
    if (b1 == NULL || b2 == NULL)
        abort();
    if (n > 0 && (envelope_fast_pack(f, b1) != n ||
                  envelope__pack(p, b2) != n || memcmp(b1, b2, n) != 0))
        abort();
    free(b1);
    free(b2);
    envelope_free(f);
    envelope__free_unpacked(p, NULL);
}

int
fuzz_envelope(const uint8_t *data, size_t size)
{
    static Envelope sentinel;
    Envelope *e = &sentinel, *e2 = NULL;
    struct buf b1, b2, fb;
    struct frame_info fi;
    int rc;

    fuzz_envelope_codecs(data, size);
    rc = envelope_unpack(data, size, &e);
    if (rc != 0) {
        if ((rc != COLLS_EPROTO && rc != COLLS_EVERSION) || e != NULL)
            abort();
        return 0;
    }
    if (e == NULL)
        abort();
    fuzz_envelope_valid(e);
    buf_init(&b1);
    buf_init(&b2);
    buf_init(&fb);

    if (envelope_pack_to(&b1, e) != 0 ||
        b1.len != envelope__get_packed_size(e) || b1.len == 0)
        abort();
    if (envelope_unpack(b1.data, b1.len, &e2) != 0)
        abort();
    fuzz_envelope_same(e, e2);
    if (envelope_pack_to(&b2, e2) != 0 || b2.len != b1.len ||
        memcmp(b1.data, b2.data, b1.len) != 0)
        abort();

    /* The frame head for this envelope and a payload as long as the input
       (which fits any u32 frame). */
    if (envelope_frame_head(&fb, e, size) != 0 ||
        fb.len != FRAME_HDR_LEN + b1.len ||
        memcmp(fb.data + FRAME_HDR_LEN, b1.data, b1.len) != 0)
        abort();
    rc = frame_peek(fb.data, fb.len, NULL, &fi);
    if (rc == 0 && (fi.env_len != b1.len || fi.payload_len != size))
        abort();
    if (rc != 0 && (rc != COLLS_EMSGSIZE || b1.len <= FRAME_DEFAULT_MAX_ENV))
        abort();

    envelope_free(e);
    envelope_free(e2);
    buf_free(&b1);
    buf_free(&b2);
    buf_free(&fb);
    return 0;
}
