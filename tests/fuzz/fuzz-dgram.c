/*
 * fuzz-dgram.c -- dgram_get on arbitrary datagrams, and dgram_put on
 * arbitrary header values.
 *
 * Checked (abort() on failure): dgram_get answers 0 or COLLS_EPROTO; what
 * it accepts obeys every documented rule and dgram_put writes back exactly
 * the 48 header bytes that were read; a header with field values taken
 * from the input, written by dgram_put, is read back by dgram_get either
 * unchanged or not at all.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/bytes.h"
#include "proto/dgram.h"
#include "tests/fuzz/fuzz.h"

/* Aborts unless h obeys the rules of dgram.h for a datagram of size. */
static void
fuzz_dgram_valid(const struct dgram_hdr *h, size_t size)
{
    if (h->version != DGRAM_VERSION || h->type == 0 ||
        h->type >= DGRAM_TYPE_MAX || (h->flags & ~DGRAM_F_ALL) != 0 ||
        h->src_hid > DGRAM_MAX_HID || h->dst_hid > DGRAM_MAX_HID ||
        size > DGRAM_MAX_LEN || (size_t)h->len + DGRAM_HDR_LEN != size)
        abort();
    if (h->type != DGRAM_DATA)
        return;
    if (h->frag_cnt == 0 || h->frag_idx >= h->frag_cnt || h->len > h->msg_len ||
        (h->len == 0 && h->msg_len != 0) ||
        (h->msg_len == 0 && h->frag_cnt != 1) ||
        (h->msg_len > 0 && h->frag_cnt > h->msg_len) ||
        h->msg_len > (uint64_t)h->frag_cnt * (DGRAM_MAX_LEN - DGRAM_HDR_LEN))
        abort();
}

/* Reads header fields from the 48 input bytes at p in a shuffled order
   (so put/get are not simply inverse byte copies of the same layout). */
static void
fuzz_dgram_fields(const uint8_t *p, struct dgram_hdr *h)
{
    h->sack = get_u64(p);
    h->msg_len = get_u32(p + 8);
    h->msg_id = get_u32(p + 12);
    h->ack = get_u32(p + 16);
    h->seq = get_u32(p + 20);
    h->dst_inc = get_u32(p + 24);
    h->src_inc = get_u32(p + 28);
    h->tsval = get_u16(p + 32);
    h->len = get_u16(p + 34);
    h->frag_cnt = get_u16(p + 36);
    h->frag_idx = get_u16(p + 38);
    h->dst_hid = get_u16(p + 40);
    h->src_hid = get_u16(p + 42);
    h->flags = get_u16(p + 44);
    h->type = get_u8(p + 46);
    h->version = get_u8(p + 47);
}

int
fuzz_dgram(const uint8_t *data, size_t size)
{
    static uint8_t buf[DGRAM_HDR_LEN + 65536];
    uint8_t again[DGRAM_HDR_LEN];
    struct dgram_hdr h, g;
    int rc;

    /* 1. The input as a received datagram. */
    rc = dgram_get(data, size, &h);
    if (rc == 0) {
        fuzz_dgram_valid(&h, size);
        dgram_put(again, &h);
        if (memcmp(again, data, DGRAM_HDR_LEN) != 0)
            abort();
    } else if (rc != COLLS_EPROTO) {
        abort();
    }

    /* 2. The input as header values to send. */
    if (size < DGRAM_HDR_LEN)
        return 0;
    fuzz_dgram_fields(data, &h);
    dgram_put(buf, &h);
    memset(buf + DGRAM_HDR_LEN, 0, h.len);
    rc = dgram_get(buf, DGRAM_HDR_LEN + (size_t)h.len, &g);
    if (rc == 0) {
        fuzz_dgram_valid(&g, DGRAM_HDR_LEN + (size_t)h.len);
        if (g.version != h.version || g.type != h.type || g.flags != h.flags ||
            g.src_hid != h.src_hid || g.dst_hid != h.dst_hid ||
            g.src_inc != h.src_inc || g.dst_inc != h.dst_inc ||
            g.seq != h.seq || g.ack != h.ack || g.sack != h.sack ||
            g.msg_id != h.msg_id || g.msg_len != h.msg_len ||
            g.frag_idx != h.frag_idx || g.frag_cnt != h.frag_cnt ||
            g.len != h.len || g.tsval != h.tsval)
            abort();
    } else if (rc != COLLS_EPROTO) {
        abort();
    }
    return 0;
}
