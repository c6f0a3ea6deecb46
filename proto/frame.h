/*
 * frame.h -- stream framing for the Unix socket and direct TCP routes.
 *
 * A frame is   u32 frame_len | u32 env_len | envelope | payload
 * with both lengths big-endian.  frame_len counts everything after itself
 * (4 + env_len + payload length).  Both lengths are checked against limits
 * before anything is allocated.
 */
#ifndef COLLS_PROTO_FRAME_H
#define COLLS_PROTO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_HDR_LEN             8
#define FRAME_DEFAULT_MAX_ENV     (64u * 1024)         /* envelope bytes */
#define FRAME_DEFAULT_MAX_PAYLOAD (256u * 1024 * 1024) /* payload bytes */

struct frame_limits {
    uint32_t max_env;     /* largest accepted envelope */
    uint64_t max_payload; /* largest accepted payload */
};

/* A decoded frame header: where the envelope and payload are. */
struct frame_info {
    uint32_t env_len;
    uint64_t payload_len;
    uint64_t total_len; /* FRAME_HDR_LEN + env_len + payload_len */
};

/* Default limits. */
void frame_limits_default(struct frame_limits *lim);

/*
 * Writes the 8-byte header for an envelope of env_len and a payload of
 * payload_len bytes into hdr.  Returns 0, COLLS_EINVAL if env_len is 0
 * (frame_peek would reject it), or COLLS_EMSGSIZE if the total does not
 * fit the u32 frame length.
 */
int frame_put_header(uint8_t hdr[FRAME_HDR_LEN], uint32_t env_len,
                     uint64_t payload_len);

/*
 * Looks at the first len bytes of a stream buffer.  Returns 0 with *fi
 * filled when at least the header is there (the whole frame may not be);
 * COLLS_EAGAIN when fewer than FRAME_HDR_LEN bytes are available;
 * COLLS_EPROTO when frame_len < 4, env_len is 0 or env_len > frame_len - 4;
 * COLLS_EMSGSIZE when a length is over the limits (lim NULL: defaults).
 * The caller waits until fi->total_len bytes are buffered.
 */
int frame_peek(const uint8_t *buf, size_t len, const struct frame_limits *lim,
               struct frame_info *fi);

#endif
