/*
 * fuzz-frame.c -- the stream reader's path on arbitrary bytes: the input
 * is what a task (or a direct-route peer) wrote on its socket.  It is fed
 * to a struct buf and every complete frame is peeked and its envelope
 * unpacked, as the daemon's reader does, twice: all bytes at once with the
 * default limits, then in small chunks with small limits.
 *
 * Checked (abort() on failure, so libFuzzer reports it): frame_peek only
 * answers 0, EAGAIN, EPROTO or EMSGSIZE; what it accepts respects the
 * limits and re-encodes to the same 8 header bytes; an envelope that
 * unpacks can be framed again with its payload, and that frame reads back
 * to the same payload and to an envelope that packs to the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/buf.h"
#include "proto/envelope.h"
#include "proto/frame.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_FRAME_CHUNK 13 /* bytes per read in the chunked pass */

/* Packs e alone into b (reset first); aborts on failure. */
static void
fuzz_frame_pack(struct buf *b, const Envelope *e)
{
    buf_reset(b);
    if (envelope_pack_to(b, e) != 0)
        abort();
}

/*
 * One complete frame at p (fi from frame_peek): unpack the envelope; if it
 * is valid, frame it again with the same payload and read that back.
 */
static void
fuzz_frame_one(const uint8_t *p, const struct frame_info *fi)
{
    static const struct frame_limits any = {UINT32_MAX, UINT64_MAX};
    const uint8_t *payload = p + FRAME_HDR_LEN + fi->env_len;
    struct buf out, b1, b2;
    struct frame_info fi2;
    Envelope *e = NULL, *e2 = NULL;
    int rc;

    rc = envelope_unpack(p + FRAME_HDR_LEN, fi->env_len, &e);
    if (rc != 0) {
        if ((rc != COLLS_EPROTO && rc != COLLS_EVERSION) || e != NULL)
            abort();
        return;
    }
    buf_init(&out);
    buf_init(&b1);
    buf_init(&b2);
    /* Re-packing may grow an envelope (a 5-byte negative int32 becomes 10
       bytes), hence no limits on the second look. */
    if (envelope_frame(&out, e, payload, (size_t)fi->payload_len) != 0)
        abort();
    if (frame_peek(out.data, out.len, &any, &fi2) != 0 ||
        fi2.total_len != out.len || fi2.payload_len != fi->payload_len)
        abort();
    if (fi->payload_len > 0 && memcmp(out.data + FRAME_HDR_LEN + fi2.env_len,
                                      payload, (size_t)fi->payload_len) != 0)
        abort();
    if (envelope_unpack(out.data + FRAME_HDR_LEN, fi2.env_len, &e2) != 0)
        abort();
    fuzz_frame_pack(&b1, e);
    fuzz_frame_pack(&b2, e2);
    if (b1.len != fi2.env_len || b2.len != b1.len ||
        memcmp(b1.data, b2.data, b1.len) != 0 ||
        memcmp(b1.data, out.data + FRAME_HDR_LEN, b1.len) != 0)
        abort();
    envelope_free(e);
    envelope_free(e2);
    buf_free(&out);
    buf_free(&b1);
    buf_free(&b2);
}

/*
 * Reads data as a stream, chunk bytes at a time, handling each complete
 * frame.  Stops at the first bad header (the daemon closes the connection)
 * or when the input is used up.
 */
static void
fuzz_frame_stream(const uint8_t *data, size_t size,
                  const struct frame_limits *lim, size_t chunk)
{
    struct buf in;
    size_t off = 0;

    buf_init(&in);
    while (off < size) {
        size_t n = size - off < chunk ? size - off : chunk;

        if (buf_append(&in, data + off, n) != 0)
            break;
        off += n;
        for (;;) {
            struct frame_info fi;
            uint8_t hdr[FRAME_HDR_LEN];
            int rc;

            rc = frame_peek(buf_head(&in), buf_avail(&in), lim, &fi);
            if (rc == COLLS_EAGAIN) {
                if (buf_avail(&in) >= FRAME_HDR_LEN)
                    abort();
                break;
            }
            if (rc == COLLS_EPROTO || rc == COLLS_EMSGSIZE)
                goto out;
            if (rc != 0)
                abort();
            if (fi.env_len == 0 || fi.env_len > lim->max_env ||
                fi.payload_len > lim->max_payload ||
                fi.total_len != FRAME_HDR_LEN + fi.env_len + fi.payload_len)
                abort();
            if (frame_put_header(hdr, fi.env_len, fi.payload_len) != 0 ||
                memcmp(hdr, buf_head(&in), FRAME_HDR_LEN) != 0)
                abort();
            if (buf_avail(&in) < fi.total_len)
                break;
            fuzz_frame_one(buf_head(&in), &fi);
            buf_consume(&in, (size_t)fi.total_len);
        }
    }
out:
    buf_free(&in);
}

int
fuzz_frame(const uint8_t *data, size_t size)
{
    struct frame_limits lim;
    const struct frame_limits small = {.max_env = 64, .max_payload = 256};

    frame_limits_default(&lim);
    fuzz_frame_stream(data, size, &lim, size > 0 ? size : 1);
    fuzz_frame_stream(data, size, &small, FUZZ_FRAME_CHUNK);
    return 0;
}
