/*
 * dgram.h -- the fixed header of collsd's UDP datagrams.
 *
 * Network byte order, version first; bump DGRAM_VERSION on any change.
 *
 *   off size field
 *    0  1   version      DGRAM_VERSION
 *    1  1   type         DGRAM_DATA, DGRAM_ACK, DGRAM_PROBE, DGRAM_RESET
 *    2  2   flags        DGRAM_F_*
 *    4  2   src_hid      sender's host id (1..4095; 0 while joining)
 *    6  2   dst_hid      receiver's host id as the sender knows it
 *    8  4   src_inc      sender's daemon incarnation
 *   12  4   dst_inc      receiver's incarnation as known to the sender
 *                        (0: unknown); stale ones are dropped
 *   16  4   seq          datagram sequence number (DATA); 0 for pure ACK
 *   20  4   ack          cumulative ack: every seq < ack was received
 *   24  8   sack         bit i set: seq ack+1+i was received
 *   32  4   msg_id       message this fragment belongs to
 *   36  4   msg_len      total length of that message
 *   40  2   frag_idx     index of this fragment
 *   42  2   frag_cnt     number of fragments of the message (>= 1)
 *   44  2   len          bytes of fragment data after the header
 *   46  2   tsval        sender's timestamp, units of 16 us, for RTT
 *   48                   fragment data
 *
 * PROBE uses two fields a PROBE has no other use for (0 = none):
 * msg_id is a challenge nonce to incarnation dst_inc, msg_len the echo of
 * a nonce received in a challenge; a new incarnation is adopted only
 * after it echoed one (daemon/rel.c).  A peer that sends 0 in both never
 * gets a new incarnation adopted by its datagrams alone.
 *
 * Version 2: flag DGRAM_F_AUTH says the datagram is sealed with the
 * cluster key: after the fragment data comes a trailer of salt u64, pn
 * u64 and a 16-byte tag (daemon/auth.h, docs/protocol.md), and len
 * counts only the fragment data.  dgram_get sees datagrams with the
 * trailer already removed.
 */
#ifndef COLLS_PROTO_DGRAM_H
#define COLLS_PROTO_DGRAM_H

#include <stddef.h>
#include <stdint.h>

#define DGRAM_VERSION 2
#define DGRAM_HDR_LEN 48
#define DGRAM_MAX_HID 4095
#define DGRAM_MAX_LEN 65507 /* largest UDP payload over IPv4 */
/* UDP payload of a datagram on a 1500-byte Ethernet MTU (less IPv4's 20
   and UDP's 8): the daemon's default --mtu */
#define DGRAM_MTU_DEFAULT 1472
/* Bytes below a datagram's UDP payload on an Ethernet link: UDP 8, IPv4
   20, the Ethernet header 14 */
#define DGRAM_FRAME_LEN 42

enum {
    DGRAM_DATA = 1,  /* carries a fragment; may piggyback ack/sack */
    DGRAM_ACK = 2,   /* acknowledgement only */
    DGRAM_PROBE = 3, /* keepalive, incarnation challenge; no data, acked */
    DGRAM_RESET = 4, /* "I do not know your incarnation": restart */
    DGRAM_TYPE_MAX
};

enum {
    DGRAM_F_RETRANS = 1u << 0, /* this DATA is a retransmission */
    DGRAM_F_ACKNOW = 1u << 1,  /* please acknowledge immediately */
    DGRAM_F_AUTH = 1u << 2,    /* sealed: a trailer follows (version 2) */
    DGRAM_F_ALL = DGRAM_F_RETRANS | DGRAM_F_ACKNOW | DGRAM_F_AUTH
};

struct dgram_hdr {
    uint8_t version;
    uint8_t type;
    uint16_t flags;
    uint16_t src_hid;
    uint16_t dst_hid;
    uint32_t src_inc;
    uint32_t dst_inc;
    uint32_t seq;
    uint32_t ack;
    uint64_t sack;
    uint32_t msg_id;
    uint32_t msg_len;
    uint16_t frag_idx;
    uint16_t frag_cnt;
    uint16_t len;
    uint16_t tsval;
};

/* Writes h into buf (DGRAM_HDR_LEN bytes). */
void dgram_put(uint8_t *buf, const struct dgram_hdr *h);

/*
 * Reads and validates a header from a datagram of len bytes.  Returns 0, or
 * COLLS_EPROTO if the datagram is shorter than the header or longer than
 * DGRAM_MAX_LEN, the version or type is unknown, unknown flags are set, a
 * hid is over DGRAM_MAX_HID, len does not match the bytes that follow, or
 * (for DATA) frag_cnt is 0, frag_idx >= frag_cnt, or the fragment does not
 * fit msg_len: len > msg_len; len 0 for a non-empty message (fragments are
 * never empty, an empty message is one empty fragment); frag_cnt > msg_len;
 * or msg_len > frag_cnt * (DGRAM_MAX_LEN - DGRAM_HDR_LEN).  h is filled
 * even when the header is rejected (for diagnostics).
 */
int dgram_get(const uint8_t *buf, size_t len, struct dgram_hdr *h);

#endif
