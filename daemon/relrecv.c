/*
 * relrecv.c -- the receiver of the reliable transport, one per peer (see
 * rel.h for the transport, rel_int.h for how the files divide it).
 *
 * Owns: the peer's reorder ring, the message being reassembled, in-order
 * delivery (ops->deliver) and our acknowledgements: the ack fields every
 * datagram to the peer carries (relrecv_hdr_fill) and pure ACKs.  May
 * call: rel_out (rel.c) to send an ACK and ops->deliver; never the
 * sender (relsend.c) nor the public API.
 *
 * DATA with seq == rcv_nxt is consumed at once; later ones (up to the
 * window) wait in a reorder ring allocated on the first gap.  Acks are
 * cumulative + 64-bit SACK, sent after every 2nd datagram of at least
 * half the fragment size (small ones wait for the delay), at once on a
 * gap, a duplicate, a filled hole or DGRAM_F_ACKNOW, else after
 * ack_delay_us; DATA to the peer piggybacks them.  Inside a receive batch
 * (rel_input_begin/end: one recvmmsg of the daemon) the every-2nd and
 * asked-for acks wait for the batch's end, one ACK for all of it, or go
 * once REL_ACK_BATCH are owed; gaps and duplicates are acked at once as
 * before.
 *
 * Pure ACKs carry more than dgram.h's minimum, in fields an ACK does not
 * otherwise use: tsval echoes the tsval of the latest DATA received, seq
 * is the seq of the latest DATA held out of order and msg_id the one
 * before it (each 0 once the cumulative ack covers it).  A receiver acks
 * every out-of-order arrival at once, so the sender learns of every
 * datagram that arrived, even beyond the 64-bit SACK bitmap; two seqs per
 * ACK survive the loss of every other ACK.  A peer that sends 0 there
 * still works, slower.
 *
 * Reassembly happens in sequence order, so the fragment offset is the sum
 * of the earlier fragments.  frag_cnt is min(fragments, 65535) and
 * frag_idx the fragment number modulo frag_cnt: messages of more than
 * 65535 fragments (256 MiB at a 1472-byte MTU) fit the 16-bit header
 * fields.  msg_len is checked against max_message before the buffer is
 * allocated, and must be the same in every fragment.
 *
 * Memory per peer: one reorder ring of window datagrams (allocated on
 * the first gap) and one message being reassembled.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/rel_int.h"
#include "proto/dgram.h"

/* ---- the peer's receiver ------------------------------------------- */

/* The receiver of a (re)started peer: expects seq 1, owes no ack. */
void
relrecv_init(struct rel_peer *p)
{
    p->rcv_nxt = 1;
    p->acked_nxt = 1;
    p->rx_ooo = 0;
    p->echo_ts = 0;
    p->rx_unacked = 0;
    p->ack_deadline = 0;
    p->ack_now = 0;
    p->asm_buf = NULL;
    p->asm_discard = 0;
}

/* Drops the reorder ring's datagrams (the ring stays allocated) and the
   message being reassembled. */
void
relrecv_drop(struct rel *r, struct rel_peer *p)
{
    if (p->rx != NULL)
        memset(p->rx, 0, sizeof *p->rx * r->ring);
    free(p->asm_buf);
    p->asm_buf = NULL;
}

/* ---- acknowledgements sent ----------------------------------------- */

/* The SACK bitmap for our receive state: bit i = seq rcv_nxt + 1 + i. */
static uint64_t
rx_sack(const struct rel *r, const struct rel_peer *p)
{
    uint64_t sack = 0;
    uint32_t i, lim = r->ring < 65 ? r->ring - 1 : 64;

    if (p->rx_ooo == 0)
        return 0;
    for (i = 0; i < lim; i++) {
        const struct rel_rxslot *s = &p->rx[(p->rcv_nxt + 1 + i) & r->mask];
        if (s->present && s->h.seq == p->rcv_nxt + 1 + i)
            sack |= 1ull << i;
    }
    return sack;
}

/* Fills h for a datagram of type to p with our ack fields. */
void
relrecv_hdr_fill(struct rel *r, struct rel_peer *p, struct dgram_hdr *h,
                 int type)
{
    memset(h, 0, sizeof *h);
    h->version = DGRAM_VERSION;
    h->type = (uint8_t)type;
    h->src_hid = (uint16_t)r->my_hid;
    h->dst_hid = (uint16_t)p->hid;
    h->src_inc = r->my_inc;
    h->dst_inc = p->inc;
    h->ack = p->rcv_nxt;
    h->sack = rx_sack(r, p);
}

/* Sends a pure ACK echoing the latest DATA's tsval. */
void
relrecv_send_ack(struct rel *r, struct rel_peer *p)
{
    struct dgram_hdr h;
    uint8_t buf[DGRAM_HDR_LEN];

    if (r->blocked) {
        p->ack_now = 1;
        return;
    }
    relrecv_hdr_fill(r, p, &h, DGRAM_ACK);
    h.tsval = p->echo_ts;
    /* the latest two DATA, if the cumulative ack does not cover them
       (see the top of the file) */
    if (!seq_lt(p->echo_seq, p->rcv_nxt))
        h.seq = p->echo_seq;
    if (!seq_lt(p->echo_seq2, p->rcv_nxt))
        h.msg_id = p->echo_seq2;
    dgram_put(buf, &h);
    if (rel_out(r, p, buf, NULL, 0, NULL) != 0) {
        r->blocked = 1;
        p->ack_now = 1;
        return;
    }
    p->st.acks_sent++;
    ack_sent(p);
}

/* ---- data received ------------------------------------------------ */

/* Abandons the message being reassembled (protocol error by the peer). */
static void
asm_bad(struct rel *r, struct rel_peer *p, uint32_t msg_id)
{
    free(p->asm_buf);
    p->asm_buf = NULL;
    p->asm_discard = 1;
    p->discard_id = msg_id;
    r->st.bad_dgrams++;
}

/*
 * Adds the in-order fragment (h, data) to the message being reassembled.
 * Returns the finished message (and *len), or NULL.
 */
static uint8_t *
asm_add(struct rel *r, struct rel_peer *p, const struct dgram_hdr *h,
        const uint8_t *data, uint32_t *len)
{
    uint8_t *msg;

    if (p->asm_discard && h->msg_id == p->discard_id)
        return NULL;
    p->asm_discard = 0;
    if (p->asm_buf == NULL) {
        if (h->frag_idx != 0 || h->msg_len > r->cfg.max_message) {
            asm_bad(r, p, h->msg_id);
            return NULL;
        }
        p->asm_buf = malloc(h->msg_len > 0 ? h->msg_len : 1);
        if (p->asm_buf == NULL) {
            asm_bad(r, p, h->msg_id);
            return NULL;
        }
        p->asm_id = h->msg_id;
        p->asm_len = h->msg_len;
        p->asm_cnt = h->frag_cnt;
        p->asm_off = 0;
        p->asm_k = 0;
    } else if (h->msg_id != p->asm_id || h->msg_len != p->asm_len ||
               h->frag_cnt != p->asm_cnt ||
               h->frag_idx != p->asm_k % p->asm_cnt) {
        asm_bad(r, p, h->msg_id);
        return NULL;
    }
    if ((uint64_t)p->asm_off + h->len > p->asm_len) {
        asm_bad(r, p, h->msg_id);
        return NULL;
    }
    if (h->len > 0)
        memcpy(p->asm_buf + p->asm_off, data, h->len);
    p->asm_off += h->len;
    p->asm_k++;
    if (p->asm_off < p->asm_len) {
        if (p->asm_cnt < REL_FRAG_CNT_MAX && p->asm_k == p->asm_cnt)
            asm_bad(r, p, h->msg_id);
        return NULL;
    }
    if (p->asm_cnt < REL_FRAG_CNT_MAX ? p->asm_k != p->asm_cnt
                                      : p->asm_k < p->asm_cnt) {
        asm_bad(r, p, h->msg_id);
        return NULL;
    }
    msg = p->asm_buf;
    *len = p->asm_len;
    p->asm_buf = NULL;
    return msg;
}

/* Consumes the in-order DATA at rcv_nxt; delivers a finished message. */
static void
consume(struct rel *r, struct rel_peer *p, const struct dgram_hdr *h,
        const uint8_t *data)
{
    uint32_t len = 0;
    uint8_t *msg;

    p->rcv_nxt++;
    msg = asm_add(r, p, h, data, &len);
    if (msg == NULL)
        return;
    p->st.msgs_recv++;
    p->st.bytes_recv += len;
    r->ops.deliver(r->ctx, p->hid, msg, len);
}

/* Allocates the reorder ring on the first gap.  0 or COLLS_ENOMEM. */
static int
rx_ring(struct rel *r, struct rel_peer *p)
{
    if (p->rx == NULL) {
        p->rx = calloc(r->ring, sizeof *p->rx);
        p->rx_buf = malloc(r->ring * r->fragmax);
        if (p->rx == NULL || p->rx_buf == NULL) {
            free(p->rx);
            free(p->rx_buf);
            p->rx = NULL;
            p->rx_buf = NULL;
            return COLLS_ENOMEM;
        }
    }
    return 0;
}

/* A DATA datagram from p. */
void
relrecv_on_data(struct rel *r, struct rel_peer *p, const struct dgram_hdr *h,
                const uint8_t *data, uint64_t now)
{
    uint32_t s = h->seq, off = s - p->rcv_nxt;

    p->echo_ts = h->tsval;
    if (seq_lt(s, p->rcv_nxt)) {
        p->st.dups_recv++;
        p->ack_now = 1;
        return;
    }
    if (off >= r->ring || off >= r->cfg.window) {
        p->ack_now = 1; /* beyond the window: dropped, sender resends */
        return;
    }
    if (off > 0) {
        struct rel_rxslot *x;

        if (rx_ring(r, p) != 0)
            return;
        /* held (now or before): the ACK may report it */
        p->echo_seq2 = p->echo_seq;
        p->echo_seq = s;
        x = &p->rx[s & r->mask];
        if (x->present) {
            p->st.dups_recv++;
        } else {
            x->h = *h;
            x->present = 1;
            if (h->len > 0)
                memcpy(p->rx_buf + (size_t)(s & r->mask) * r->fragmax, data,
                       h->len);
            p->rx_ooo++;
        }
        p->ack_now = 1;
        return;
    }
    /* Only large datagrams count towards the every-2nd ACK (as TCP
       counts full-sized segments): a stream of small messages, such as
       the barriers and small collectives between daemons, is acked by
       the delayed ACK or by the reply, not once per two messages. */
    if (h->len >= r->fragmax / 2)
        p->rx_unacked++;
    consume(r, p, h, data);
    while (!p->removed && p->rx_ooo > 0 &&
           p->rx[p->rcv_nxt & r->mask].present) {
        uint32_t k = p->rcv_nxt & r->mask;
        struct dgram_hdr hh = p->rx[k].h;

        p->rx[k].present = 0;
        p->rx_ooo--;
        p->rx_unacked++;
        p->ack_now = 1;
        consume(r, p, &hh, p->rx_buf + (size_t)k * r->fragmax);
    }
    if (p->removed)
        return;
    /* at once while a gap is open (RFC 5681), else every 2nd large
       datagram or when asked, or after ack_delay_us; inside a receive
       batch those wait for its end (one ACK for what came together),
       unless REL_ACK_BATCH are owed */
    if (p->rx_ooo > 0 || p->rx_unacked >= REL_ACK_BATCH)
        p->ack_now = 1;
    else if ((h->flags & DGRAM_F_ACKNOW) || p->rx_unacked >= 2) {
        if (r->batching)
            p->ack_owed = 1;
        else
            p->ack_now = 1;
    } else if (p->ack_deadline == 0)
        p->ack_deadline = now + r->cfg.ack_delay_us;
}
