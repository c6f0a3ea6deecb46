/*
 * collfpc.c -- the FPC protocol; see collfpc.h.
 *
 * A bcast of COLLS_DOUBLE data whose members asked for COLLS_COMPRESS_ON
 * or _AUTO runs the protocol when it is hierarchical over more than one
 * host and carries at least one item (every daemon knows all four facts,
 * so all agree on it; other operations, datatypes, flat mode and one-host
 * groups ignore the setting).  The leader schedule is then two bcasts
 * among the leaders, one after the other in the same phase (messages
 * between a pair of daemons arrive in order, so the k-th message still
 * matches the k-th receive):
 *   1. a COLLFPC_HDR (12) byte header from the root's daemon: 4 bytes
 *      "FPC" + kind (0 raw, 1 FPC stream), then the payload length as a
 *      big-endian u64.  It is 12 bytes, not a multiple of 8, so a daemon
 *      that runs the plain bcast (its members did not ask for compression)
 *      can never take it for data: the length check of the executor fails
 *      the operation with COLLS_EINVAL and aborts it instead of a hang;
 *   2. the payload, with the algorithm the tuner (or the forced spec)
 *      picks for its length: the root's doubles compressed once by
 *      fpc_compress at the root's daemon and forwarded as they are, or,
 *      when AUTO decided against it (or the stream would exceed
 *      max_message), the raw doubles.
 * Receivers check the header (length against max_message and fpc_bound)
 * before anything is allocated, decompress once when the payload is
 * complete, require exactly count doubles (else COLLS_EBADMSG, which
 * fails and aborts the operation), and hand the doubles to their local
 * members as usual.  FPC streams travel as COLLS_BYTE (the format is
 * byte-order independent); raw payloads as the datatype, so a peer of
 * the other byte order swaps them as for any bcast.  AUTO compresses a
 * sample (COLLFPC_SAMPLE doubles) at the root's daemon, and compresses
 * the whole only if the predicted time n*8/rate (compress) + n*8/(ratio *
 * link) + n*8/rate (decompress, assumed as fast) is below n*8/link; link
 * is the daemon's --link-mbit (default 1000), the operator's word for it.
 *
 * Owns struct collfpc per instance and the counters' output.  May call:
 * proto/fpc.h, proto/bytes.h, daemon/platform.h, daemon/stats.h.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/collfpc.h"
#include "daemon/platform.h"
#include "daemon/stats.h"
#include "proto/bytes.h"
#include "proto/fpc.h"

#define COLLFPC_SAMPLE 4096 /* doubles AUTO compresses to decide */

int
collfpc_applies(int op, int dtype, int compress, int hier, int nhosts,
                size_t count)
{
    return hier && op == COLLS_COLL_BCAST && dtype == COLLS_DOUBLE &&
           compress != COLLS_COMPRESS_OFF && nhosts > 1 && count > 0;
}

/*
 * AUTO: 1 if compressing the count doubles at in should pay.  The first
 * COLLFPC_SAMPLE of them are compressed and timed, which gives the ratio
 * and the rate (table set-up included, so the rate errs low); the model
 * is the one at the top of the file.
 */
static int
collfpc_worth(int64_t link_mbit, const uint8_t *in, size_t count)
{
    size_t ns = count < COLLFPC_SAMPLE ? count : COLLFPC_SAMPLE;
    size_t cap = fpc_bound(ns, 0), clen = 0;
    uint8_t *tmp = malloc(cap);
    double link = (double)link_mbit / 8.0, raw, rate, ratio, n;
    uint64_t t0, dt;
    int rc;

    if (tmp == NULL)
        return 0;
    t0 = platform_now_us();
    rc = fpc_compress((const double *)(const void *)in, ns,
                      FPC_DEFAULT_TABLE_BITS, 0, tmp, cap, &clen);
    dt = platform_now_us() - t0;
    free(tmp);
    if (rc != 0 || clen == 0)
        return 0;
    raw = (double)ns * 8;
    rate = raw / (double)(dt > 0 ? dt : 1);
    ratio = raw / (double)clen;
    n = (double)count * 8;
    return 2 * n / rate + n / (ratio * link) < n / link;
}

int
collfpc_encode(struct collfpc *f, struct collfpc_counters *c, const uint8_t *in,
               size_t count, int compress, size_t max_message,
               int64_t link_mbit, uint8_t *hdr)
{
    size_t cap, clen = 0;
    uint64_t t0;
    int kind = COLLFPC_STREAM, rc;

    if (compress == COLLS_COMPRESS_AUTO) {
        if (collfpc_worth(link_mbit, in, count)) {
            c->fpc_auto_compressed++;
        } else {
            c->fpc_auto_raw++;
            kind = COLLFPC_RAW;
        }
    }
    if (kind == COLLFPC_STREAM) {
        cap = fpc_bound(count, 0);
        f->data = malloc(cap);
        if (f->data == NULL)
            return COLLS_ENOMEM;
        t0 = platform_now_us();
        rc = fpc_compress((const double *)(const void *)in, count,
                          FPC_DEFAULT_TABLE_BITS, 0, f->data, cap, &clen);
        c->fpc_compress_us += platform_now_us() - t0;
        if (rc != 0)
            return rc;
        if (clen > max_message) {
            c->fpc_too_large++;
            free(f->data);
            f->data = NULL;
            kind = COLLFPC_RAW;
        }
    }
    memcpy(hdr, "FPC", 3);
    hdr[3] = (uint8_t)kind;
    put_u64(hdr + 4, kind == COLLFPC_STREAM ? clen : count * sizeof(double));
    return 0;
}

int
collfpc_header(struct collfpc *f, const uint8_t *hdr, size_t count,
               size_t max_message)
{
    uint64_t len = get_u64(hdr + 4);

    if (memcmp(hdr, "FPC", 3) != 0 || hdr[3] > COLLFPC_STREAM)
        return COLLS_EBADMSG;
    if (hdr[3] == COLLFPC_RAW
            ? len != count * sizeof(double)
            : len == 0 || len > max_message || len > fpc_bound(count, 0))
        return COLLS_EBADMSG;
    f->kind = hdr[3];
    f->len = (size_t)len;
    return 0;
}

int
collfpc_decode(struct collfpc *f, struct collfpc_counters *c,
               const uint8_t *payload, size_t count, const uint8_t *root_in)
{
    size_t got = 0, n = count * sizeof(double);
    uint64_t t0;
    int rc;

    if (f->done)
        return 0;
    f->done = 1;
    if (root_in != NULL) {
        f->out = root_in;
    } else if (f->kind == COLLFPC_RAW) {
        f->out = payload;
    } else {
        f->raw = malloc(n);
        if (f->raw == NULL)
            return COLLS_ENOMEM;
        t0 = platform_now_us();
        rc = fpc_decompress(payload, f->len, (double *)(void *)f->raw, count,
                            &got);
        c->fpc_decompress_us += platform_now_us() - t0;
        if (rc == COLLS_ENOMEM)
            return rc;
        if (rc != 0 || got != count) {
            c->fpc_bad_streams++;
            return COLLS_EBADMSG;
        }
        f->out = f->raw;
    }
    if (f->kind == COLLFPC_STREAM) {
        c->fpc_ops++;
        c->fpc_raw_bytes += n;
        c->fpc_comp_bytes += f->len;
    }
    return 0;
}

void
collfpc_release(struct collfpc *f)
{
    free(f->data);
    free(f->raw);
    f->data = f->raw = NULL;
    f->out = NULL;
}

void
collfpc_stats_json(const struct collfpc_counters *c, struct stats_json *j)
{
#define X(n, help) stats_json_u64(j, #n, c->n);
    COLLFPC_COUNTERS(X)
#undef X
    stats_json_double(j, "fpc_ratio",
                      c->fpc_comp_bytes > 0
                          ? (double)c->fpc_raw_bytes / (double)c->fpc_comp_bytes
                          : 0.0);
}

void
collfpc_stats_prometheus(const struct collfpc_counters *c, struct buf *b,
                         int *err)
{
#define X(n, help)                                                             \
    stats_prom_counter(b, err, "collsd_coll_", #n, help,                       \
                       (unsigned long long)c->n);
    COLLFPC_COUNTERS(X)
#undef X
}
