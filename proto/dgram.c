/*
 * dgram.c -- reading and writing the fixed UDP datagram header.
 *
 * Every field goes through the bytes.h helpers at the offset given in
 * dgram.h; the struct is never copied to or from the wire.  dgram_get is
 * the gate for untrusted datagrams: whatever it accepts has a known version
 * and type, known flags, host ids in range, a length that matches the bytes
 * received, and (for DATA) fragment numbers consistent with the message.
 */
#include <stdint.h>

#include "colls.h"
#include "proto/bytes.h"
#include "proto/dgram.h"

/* Largest fragment a datagram can carry. */
#define DGRAM_MAX_FRAG (DGRAM_MAX_LEN - DGRAM_HDR_LEN)

void
dgram_put(uint8_t *buf, const struct dgram_hdr *h)
{
    put_u8(buf + 0, h->version);
    put_u8(buf + 1, h->type);
    put_u16(buf + 2, h->flags);
    put_u16(buf + 4, h->src_hid);
    put_u16(buf + 6, h->dst_hid);
    put_u32(buf + 8, h->src_inc);
    put_u32(buf + 12, h->dst_inc);
    put_u32(buf + 16, h->seq);
    put_u32(buf + 20, h->ack);
    put_u64(buf + 24, h->sack);
    put_u32(buf + 32, h->msg_id);
    put_u32(buf + 36, h->msg_len);
    put_u16(buf + 40, h->frag_idx);
    put_u16(buf + 42, h->frag_cnt);
    put_u16(buf + 44, h->len);
    put_u16(buf + 46, h->tsval);
}

/*
 * Checks the fragment fields of a DATA header.  Whatever the fragment size
 * the sender chose, a fragment is never longer than its message, only an
 * empty message has an empty fragment (and then exactly one), and frag_cnt
 * datagrams must be able to carry msg_len bytes.
 */
static int
dgram_check_frag(const struct dgram_hdr *h)
{
    if (h->frag_cnt == 0 || h->frag_idx >= h->frag_cnt)
        return COLLS_EPROTO;
    if (h->len > h->msg_len)
        return COLLS_EPROTO;
    if (h->msg_len == 0)
        return h->frag_cnt == 1 ? 0 : COLLS_EPROTO;
    if (h->len == 0 || h->frag_cnt > h->msg_len)
        return COLLS_EPROTO;
    if (h->msg_len > (uint64_t)h->frag_cnt * DGRAM_MAX_FRAG)
        return COLLS_EPROTO;
    return 0;
}

int
dgram_get(const uint8_t *buf, size_t len, struct dgram_hdr *h)
{
    if (len < DGRAM_HDR_LEN || len > DGRAM_MAX_LEN)
        return COLLS_EPROTO;
    h->version = get_u8(buf + 0);
    h->type = get_u8(buf + 1);
    h->flags = get_u16(buf + 2);
    h->src_hid = get_u16(buf + 4);
    h->dst_hid = get_u16(buf + 6);
    h->src_inc = get_u32(buf + 8);
    h->dst_inc = get_u32(buf + 12);
    h->seq = get_u32(buf + 16);
    h->ack = get_u32(buf + 20);
    h->sack = get_u64(buf + 24);
    h->msg_id = get_u32(buf + 32);
    h->msg_len = get_u32(buf + 36);
    h->frag_idx = get_u16(buf + 40);
    h->frag_cnt = get_u16(buf + 42);
    h->len = get_u16(buf + 44);
    h->tsval = get_u16(buf + 46);

    if (h->version != DGRAM_VERSION)
        return COLLS_EPROTO;
    if (h->type == 0 || h->type >= DGRAM_TYPE_MAX)
        return COLLS_EPROTO;
    if ((h->flags & ~(unsigned)DGRAM_F_ALL) != 0)
        return COLLS_EPROTO;
    if (h->src_hid > DGRAM_MAX_HID || h->dst_hid > DGRAM_MAX_HID)
        return COLLS_EPROTO;
    if (h->len != len - DGRAM_HDR_LEN)
        return COLLS_EPROTO;
    if (h->type == DGRAM_DATA)
        return dgram_check_frag(h);
    return 0;
}
