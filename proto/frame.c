/*
 * frame.c -- stream framing: u32 frame_len | u32 env_len | envelope |
 * payload, big-endian.
 *
 * frame_peek is the only reader of untrusted frame headers: it checks both
 * lengths for consistency and against the limits before a caller allocates
 * anything, and does its arithmetic in 64 bits so no sum can wrap.
 */
#include <stdint.h>

#include "colls.h"
#include "proto/bytes.h"
#include "proto/frame.h"

void
frame_limits_default(struct frame_limits *lim)
{
    lim->max_env = FRAME_DEFAULT_MAX_ENV;
    lim->max_payload = FRAME_DEFAULT_MAX_PAYLOAD;
}

/*
 * Writes the header of a frame holding env_len envelope bytes and
 * payload_len payload bytes.  The frame length (4 + env_len + payload_len)
 * must fit in a u32, and env_len must not be 0 (frame_peek rejects it).
 */
int
frame_put_header(uint8_t hdr[FRAME_HDR_LEN], uint32_t env_len,
                 uint64_t payload_len)
{
    uint64_t frame_len;

    if (env_len == 0)
        return COLLS_EINVAL;
    if (payload_len > UINT32_MAX)
        return COLLS_EMSGSIZE;
    frame_len = 4 + (uint64_t)env_len + payload_len;
    if (frame_len > UINT32_MAX)
        return COLLS_EMSGSIZE;
    put_u32(hdr, (uint32_t)frame_len);
    put_u32(hdr + 4, env_len);
    return 0;
}

/*
 * Decodes the header at the front of a stream buffer.  Checks, in order:
 * enough bytes for the header; frame_len >= 4; 0 < env_len <= frame_len - 4;
 * env_len <= max_env; payload <= max_payload.  lim NULL means the defaults.
 */
int
frame_peek(const uint8_t *buf, size_t len, const struct frame_limits *lim,
           struct frame_info *fi)
{
    struct frame_limits def;
    uint32_t frame_len, env_len;
    uint64_t payload_len;

    if (lim == NULL) {
        frame_limits_default(&def);
        lim = &def;
    }
    if (len < FRAME_HDR_LEN)
        return COLLS_EAGAIN;
    frame_len = get_u32(buf);
    env_len = get_u32(buf + 4);
    if (frame_len < 4)
        return COLLS_EPROTO;
    if (env_len == 0 || env_len > frame_len - 4)
        return COLLS_EPROTO;
    if (env_len > lim->max_env)
        return COLLS_EMSGSIZE;
    payload_len = (uint64_t)frame_len - 4 - env_len;
    if (payload_len > lim->max_payload)
        return COLLS_EMSGSIZE;
    fi->env_len = env_len;
    fi->payload_len = payload_len;
    fi->total_len = FRAME_HDR_LEN + (uint64_t)env_len + payload_len;
    return 0;
}
