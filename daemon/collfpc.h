/*
 * collfpc.h -- the FPC protocol of hierarchical bcasts of doubles
 * (docs/collectives.md, "Compression"): the header, the root's daemon's
 * choice and compression, the receivers' checks and decompression, and
 * the compression counters of one daemon.
 *
 * Owns: a struct collfpc per instance running the protocol (the stream
 * the root's daemon made, the decompressed doubles) and nothing else;
 * the counters live in the caller's state (struct coll_state, one per
 * daemon).  Neither sends nor receives: daemon/coll.c runs the two
 * bcasts and hands the bytes here.
 *
 * May call: proto/fpc.h, proto/bytes.h, daemon/platform.h (the clock, to
 * time compression), daemon/stats.h (its counters' output).
 */
#ifndef COLLS_DAEMON_COLLFPC_H
#define COLLS_DAEMON_COLLFPC_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct stats_json;

#define COLLFPC_HDR    12 /* header bytes; not a multiple of 8 */
#define COLLFPC_RAW    0  /* header kinds */
#define COLLFPC_STREAM 1

/* clang-format off: the compression counters, shared by the JSON and
   Prometheus writers. */
#define COLLFPC_COUNTERS(X)                                                    \
    X(fpc_ops, "Bcasts completed here whose payload was an FPC stream.")       \
    X(fpc_raw_bytes, "Raw bytes of the FPC-compressed bcasts.")                \
    X(fpc_comp_bytes, "Compressed bytes of the FPC-compressed bcasts.")        \
    X(fpc_auto_compressed, "Compression AUTO decisions to compress.")          \
    X(fpc_auto_raw, "Compression AUTO decisions to send raw.")                 \
    X(fpc_too_large, "Streams sent raw, larger than --max-message.")           \
    X(fpc_bad_streams, "Payloads that failed to decompress.")                  \
    X(fpc_compress_us, "Time spent compressing.")                              \
    X(fpc_decompress_us, "Time spent decompressing.")
/* clang-format on */

/* fpc_ops: bcasts completed here whose payload was an FPC stream, with
   their raw and compressed bytes; fpc_auto_*: AUTO decisions made here
   (as the root's daemon); fpc_too_large: streams sent raw because they
   exceeded max_message; fpc_bad_streams: payloads that failed to
   decompress; fpc_*_us: time spent compressing and decompressing. */
struct collfpc_counters {
#define X(n, help) uint64_t n;
    COLLFPC_COUNTERS(X)
#undef X
};

/* The protocol's state in one instance. */
struct collfpc {
    int kind;           /* COLLFPC_RAW / _STREAM, from the header */
    int done;           /* payload received and decoded */
    uint8_t *data;      /* root's daemon: the stream (NULL: raw input) */
    size_t len;         /* payload bytes */
    uint8_t *raw;       /* receivers: decompressed doubles */
    const uint8_t *out; /* the count doubles every local member gets */
};

/* Does a bcast of count items of dtype, asked with compress (COLLS_
   COMPRESS_*), run the protocol?  hier: hierarchical mode over nhosts. */
int collfpc_applies(int op, int dtype, int compress, int hier, int nhosts,
                    size_t count);
/*
 * The root's daemon: decides (AUTO) and makes the payload of the count
 * doubles at in (f->data when it is a stream) and writes the header into
 * hdr (COLLFPC_HDR bytes).  link_mbit: the link AUTO assumes.  0 or a
 * COLLS_E* code.
 */
int collfpc_encode(struct collfpc *f, struct collfpc_counters *c,
                   const uint8_t *in, size_t count, int compress,
                   size_t max_message, int64_t link_mbit, uint8_t *hdr);
/* Checks a header for count doubles before anything is allocated for the
   payload; sets f->kind and f->len.  0 or COLLS_EBADMSG. */
int collfpc_header(struct collfpc *f, const uint8_t *hdr, size_t count,
                   size_t max_message);
/*
 * The payload is in: sets f->out to the count doubles the local members
 * get (root_in on the root's daemon, else the payload or its
 * decompression; once).  0, COLLS_EBADMSG for a stream that does not
 * decode to exactly count doubles, or COLLS_ENOMEM.
 */
int collfpc_decode(struct collfpc *f, struct collfpc_counters *c,
                   const uint8_t *payload, size_t count,
                   const uint8_t *root_in);
/* Frees what f allocated. */
void collfpc_release(struct collfpc *f);

/* The counters as JSON members (and "fpc_ratio") / Prometheus lines. */
void collfpc_stats_json(const struct collfpc_counters *c, struct stats_json *j);
void collfpc_stats_prometheus(const struct collfpc_counters *c, struct buf *b,
                              int *err);

#endif
