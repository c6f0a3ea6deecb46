/*
 * envelope.h -- envelopes (proto/colls.proto) framed for streams.
 *
 * Bump COLLS_PROTO_VERSION on any incompatible change of colls.proto, the
 * frame layout or the datagram header.
 */
#ifndef COLLS_PROTO_ENVELOPE_H
#define COLLS_PROTO_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/buf.h"
#include "proto/colls.pb-c.h"
#include "proto/frame.h"

/* 4: heartbeats announce their interval (Heartbeat.interval_ms), which
   an idle daemon stretches; a version-3 daemon would declare it down.
   docs/protocol.md lists the versions. */
#define COLLS_PROTO_VERSION 4

/* Envelope flags (Envelope.flags). */
enum {
    ENV_F_FPC = 1u << 0,    /* payload is FPC-compressed */
    ENV_F_NOTIFY = 1u << 1, /* DATA is a notification from a daemon */
    ENV_F_ECHO = 1u << 2,   /* DATA is a daemon's echo of a task message */
};

/* PARAMS_REQ actions (ParamsReq.action; daemon/measure.h). */
enum { PARAMS_GET = 0, PARAMS_MEASURE = 1, PARAMS_COMMIT = 2, PARAMS_LOAD = 3 };

/* Initialises e with the version set and everything else zero. */
void envelope_init(Envelope *e);
/*
 * Initialises r as a reply (or any addressed message without body) of
 * kind from src to dst, repeating req_id, with status.  Every daemon
 * reply is built here.
 */
void envelope_reply(Envelope *r, uint32_t src, uint32_t dst, int kind,
                    uint64_t req_id, int status);

/*
 * Unpacks an envelope of len bytes (len <= lim->max_env is checked by the
 * caller via frame_peek).  Returns 0 and *out (free with envelope_free);
 * COLLS_EPROTO if protobuf decoding fails, a field is out of range
 * (dtype, encoding, byte order) or an unknown field has an illegal number
 * (0, which protobuf-c lets through); COLLS_EVERSION if the version
 * differs (checked first).  Kind is not checked: any int32 is kept, and
 * unknown fields are kept and packed again unchanged.
 */
int envelope_unpack(const uint8_t *buf, size_t len, Envelope **out);
/*
 * The version a packed envelope claims (field 1, which protobuf packers
 * write first), for telling a peer of another version why its envelope
 * was refused; 0 if the bytes do not start with it.
 */
uint32_t envelope_peek_version(const uint8_t *buf, size_t len);
void envelope_free(Envelope *e);

/*
 * A scratch arena for an envelope that lives for one call (a task's frame,
 * a message from a peer): unpacking into it makes no heap allocation while
 * the decoded envelope, its sub-messages and strings fit (an Envelope with
 * a CollReq or CollData body does); what does not fit comes from malloc.
 * Lives on the caller's stack; one envelope at a time.
 */
struct envelope_arena {
    ProtobufCAllocator alloc;
    size_t used;
    _Alignas(max_align_t) uint8_t mem[2048];
};

/* As envelope_unpack, into a (which it initialises). */
int envelope_unpack_in(struct envelope_arena *a, const uint8_t *buf, size_t len,
                       Envelope **out);
/* Frees an envelope of envelope_unpack_in (NULL is fine). */
void envelope_free_in(struct envelope_arena *a, Envelope *e);

/*
 * Appends a whole frame (header, envelope, payload) to b.  plen may be 0
 * (payload may then be NULL); payload must not point into b, which may
 * move.  Returns 0, COLLS_EMSGSIZE, COLLS_ENOMEM, or COLLS_EINVAL for a
 * NULL payload with plen > 0 or an envelope that packs to nothing (no
 * version); b is unchanged on error.
 */
int envelope_frame(struct buf *b, const Envelope *e, const void *payload,
                   size_t plen);

/*
 * As envelope_frame but writes only header + envelope, for a payload the
 * caller sends from its own memory (writev).  The frame length accounts
 * for plen bytes that follow.
 */
int envelope_frame_head(struct buf *b, const Envelope *e, size_t plen);

/* Packs just the envelope (no frame header) into b: datagram messages. */
int envelope_pack_to(struct buf *b, const Envelope *e);

/*
 * The packed size of e, and e packed into out (which has that many
 * bytes; returns the bytes written).  The same bytes as protobuf-c's
 * envelope__get_packed_size / envelope__pack; every packer in the tree
 * goes through these two.
 */
size_t envelope_packed_size(const Envelope *e);
size_t envelope_pack(const Envelope *e, uint8_t *out);

/*
 * The hand-written codec behind the functions above, for the envelope
 * every message between tasks carries: scalar fields 1..15 and the group,
 * no body, no unknown field.  protobuf-c's generic code walks all 43
 * fields of the descriptor on every pack, unpack and free; this does
 * only the fields present.  Exposed for the tests and the fuzzer, which
 * hold both codecs to the same bytes and the same fields.
 *
 * envelope_fast_size: the packed size of e, or 0 if e is not such an
 * envelope (protobuf-c packs it).  envelope_fast_pack writes that many
 * bytes (e must have a non-zero envelope_fast_size).
 * envelope_fast_decode: 1 and *out (allocated with al, NULL: malloc; free
 * as any unpacked envelope) when buf is such an envelope in the canonical
 * form (one-byte tags, wire types as declared, varints of at most 10
 * bytes, a group of printable ASCII with a one-byte length); 0 when it
 * is not, *out untouched: protobuf-c decides.  No range check
 * (envelope_unpack's).
 */
size_t envelope_fast_size(const Envelope *e);
size_t envelope_fast_pack(const Envelope *e, uint8_t *out);
int envelope_fast_decode(ProtobufCAllocator *al, const uint8_t *buf, size_t len,
                         Envelope **out);

#endif
