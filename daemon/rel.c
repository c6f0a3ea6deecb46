/*
 * rel.c -- the reliable datagram transport between daemons (see rel.h).
 *
 * Per peer there is a sender and a receiver, both indexed by 32-bit
 * datagram sequence numbers (serial arithmetic; the first DATA of an
 * incarnation pair is seq 1, ack = "next seq expected").
 *
 * Sender.  rel_sendv copies a message once into a struct rel_msg; the
 * fragments of queued messages get consecutive sequence numbers as the
 * window opens, and a transmit slot (ring indexed by seq & mask) remembers
 * (message, fragment, state, last send time).  A slot is FREE, INFLIGHT
 * (on the `sent' list if sent once, else on `resent'; both in order of
 * transmission), SACKED, LOST (on the `rtx' list, waiting to be sent
 * again) or UNKNOWN (see timeout).  A message is freed when the
 * cumulative ack passes its last fragment.  With ops->send_ref (zero
 * copy), fragments of messages of REL_REF_MIN bytes or more go out by
 * reference to the message: the kernel reads them from there.  Such a
 * message is freed only after ops->flush (messages that become free
 * while references may be batched wait on r->dead until the outermost
 * API call returns, which flushes once and frees them all).
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
 * Loss detection, all O(1) per datagram or amortised:
 *  - SACK: a hole with at least 3 SACKed datagrams above it, one of which
 *    was sent after the hole's last transmission, is lost (fast
 *    retransmit; the "sent after" test stops repeated retransmissions);
 *  - time (RACK, RFC 8985): every INFLIGHT datagram sent more than a
 *    reordering window (srtt / 4, at least 64 us) before the echoed time
 *    is lost (it was not reported although a later one was).  This finds
 *    holes anywhere in the window and lost retransmissions;
 *  - probe (RFC 8985 TLP): 2 SRTT without ack progress resend the newest
 *    datagram, whose ack then lets the rules above find the losses;
 *  - timeout: RFC 6298 RTO (SRTT, RTTVAR, Karn's rule: retransmitted
 *    datagrams give no RTT sample; clamped to [rto_min, rto_max]; doubled
 *    on each timeout), after which every unacked datagram within the
 *    bitmap's reach is resent; the others become UNKNOWN (not counted in
 *    flight, resent once a SACK shows them missing or at the next
 *    timeout).  If the first ack after it echoes a time
 *    before the timeout, the timeout was spurious and is undone (Eifel,
 *    RFC 3522).
 * tsval is the sender's clock in 16 us units (wraps after ~1 s): in DATA
 * it is the send time, in ACK the echo described above.
 *
 * Congestion response: a window `cwnd' (datagrams, <= cfg.window) starts
 * at 64, doubles per round trip below ssthresh and grows by 1/8 above it.
 * A round in which more than 1/8 of the datagrams were lost halves it; a
 * timeout drops it to 8.  Random loss of a few per cent therefore costs
 * little throughput.  A bottleneck queue that overflows by less than 1/8
 * is found by the delivery rate instead (BBR-like, simplified): each
 * datagram remembers, when sent, the bytes delivered (acked or SACKed) so
 * far and when that count last grew; its ack gives a rate sample
 * (delivered since / time since).  The largest sample of the last two
 * windows (each max(8 SRTT, 20 ms)) estimates the bottleneck rate.  While
 * the estimate still grows by 1/4 per round (startup) DATA is not paced;
 * after 3 rounds without, DATA is paced at the estimate times a gain that
 * cycles over 8 rounds: 1.25 (probe for more), 0.75 (drain the queue the
 * probe built), then 1.  Samples of datagrams sent with nothing more
 * queued (app-limited) only raise the estimate; a send after idleness
 * starts over with startup.  With rate_bps, that rate is used instead.
 * Pacing is a token bucket 2 ms deep.
 *
 * Receiver.  DATA with seq == rcv_nxt is consumed at once; later ones (up
 * to the window) wait in a reorder ring allocated on the first gap.  Acks
 * are cumulative + 64-bit SACK, sent after every 2nd datagram of at least
 * half the fragment size (small ones wait for the delay), at once on
 * a gap, a duplicate, a filled hole or DGRAM_F_ACKNOW, else after
 * ack_delay_us; DATA to the peer piggybacks them.
 *
 * Reassembly happens in sequence order, so the fragment offset is the sum
 * of the earlier fragments.  frag_cnt is min(fragments, 65535) and
 * frag_idx the fragment number modulo frag_cnt: messages of more than
 * 65535 fragments (256 MiB at a 1472-byte MTU) fit the 16-bit header
 * fields.  msg_len is checked against max_message before the buffer is
 * allocated, and must be the same in every fragment.
 *
 * Memory per peer: the queued messages, one transmit ring and one reorder
 * ring of window datagrams each, and one message being reassembled.
 *
 * Incarnations are not ordered (the daemon draws them at random,
 * platform_incarnation): a src_inc that differs from the peer's known one
 * is a new incarnation unless it is one of the last REL_OLD_INCS the peer
 * had, which are stale.  A datagram whose dst_inc is not ours is answered
 * with DGRAM_RESET (at most every 10 ms per peer), whose new src_inc makes
 * the peer reset its state for us.
 *
 * A new incarnation of a known peer is adopted only once it has proven
 * that it receives at the peer's address (challenge/response): a datagram
 * of an unadopted incarnation S is dropped (stale_inc) and answered with
 * a challenge, a PROBE to the peer's address with dst_inc S and msg_id a
 * nonce; S is adopted when a PROBE of S echoes the nonce in msg_len.  The
 * nonce is SipHash of (hid, S) under a per-rel secret key, so no state is
 * kept per challenge and spoofed incarnations cannot displace the genuine
 * one's challenge.  Meanwhile the current incarnation's datagrams are
 * accepted as before: a blind spoofer (who cannot read what we send to
 * the peer's address) cannot split us from the peer.  Challenges go out
 * at most every 10 ms per peer unless they also answer one (two peers
 * that restarted together challenge each other; the answer rides on the
 * challenge).  A peer whose incarnation we do not know yet (0) is
 * adopted at once: there is nothing to protect, and if a spoofer got
 * there first the genuine incarnation wins its challenge.
 *
 * Callbacks (ops->deliver, ops->reset) may call rel_sendv and
 * rel_peer_remove, but not rel_free; removed peers are freed when the
 * outermost API call returns.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/random.h>

#include "colls.h"
#include "daemon/rel.h"
#include "daemon/siphash.h"
#include "proto/bytes.h"
#include "proto/dgram.h"

#define REL_NIL            UINT32_MAX
#define REL_MAX_WINDOW     32768u
#define REL_FRAG_CNT_MAX   65535u
#define REL_CWND_INIT      64u
#define REL_CWND_MIN       8u
#define REL_CLOCK_G_US     1000u     /* timer granularity of the event loop */
#define REL_REO_MIN_US     64u       /* least reordering window */
#define REL_RESET_GAP_US   10000u    /* least time between two RESETs */
#define REL_PACE_US        2000u     /* token bucket depth, in time at rate */
#define REL_TS_UNIT_US     16u       /* tsval unit */
#define REL_OLD_INCS       4         /* past incarnations remembered per peer */
#define REL_PROBES         2         /* tail loss probes before the RTO */
#define REL_PTO_MIN_US     100u      /* least probe timeout */
#define REL_REF_MIN        65536u    /* least message sent by reference */
#define REL_BW_WIN_US      20000u    /* least delivery rate window */
#define REL_GAIN_CYCLE     8u        /* rounds in the pacing gain cycle */
#define REL_MIN_RTT_WIN_US 10000000u /* life of the least RTT sample */
#define REL_CAP_DGRAMS     64u       /* least headroom over 2 BDP, datagrams */

/* UNKNOWN: unacked beyond the SACK bitmap after a timeout; not counted
   in flight, resent only once it is known to be missing. */
enum { SLOT_FREE, SLOT_INFLIGHT, SLOT_SACKED, SLOT_LOST, SLOT_UNKNOWN };

/* An outgoing message; data follows the struct. */
struct rel_msg {
    struct rel_msg *next;
    uint32_t id;
    uint32_t len;
    uint32_t nfrag; /* fragments, >= 1 */
    int refd;       /* some fragment went out by ops->send_ref */
    uint8_t data[];
};

/* One datagram of the send window. */
struct rel_txslot {
    struct rel_msg *msg;
    uint64_t sent_us;    /* last transmission */
    uint32_t frag;       /* fragment index within msg */
    uint32_t prev, next; /* links in the sent, resent or rtx list */
    uint16_t len;
    uint8_t state;
    uint8_t retrans;   /* transmitted more than once */
    uint8_t fast;      /* LOST found by acks, not by timeout */
    uint8_t applim;    /* sent with nothing more queued */
    uint64_t del;      /* p->delivered when sent */
    uint64_t del_us;   /* p->delivered_us when sent */
    uint64_t first_us; /* p->first_sent_us when sent */
};

/* One datagram waiting in the reorder ring; data in rx_buf. */
struct rel_rxslot {
    struct dgram_hdr h;
    uint8_t present;
};

/* A doubly linked list of transmit slots, by ring index. */
struct rel_list {
    uint32_t head, tail, n;
};

/* One peer host: its address and incarnation, our sender to it and our
   receiver from it (see the top of the file). */
struct rel_peer {
    struct rel_peer *next; /* all peers, or the zombie list */
    int hid;
    int removed;
    struct sockaddr_storage addr;
    socklen_t alen;
    uint32_t inc;
    uint32_t old_inc[REL_OLD_INCS]; /* ring of past incarnations */
    unsigned old_n;
    uint64_t last_heard;
    uint64_t last_reset_us;
    uint64_t last_chal_us; /* last challenge sent */
    struct rel_peer_stats st;

    /* sender */
    struct rel_msg *q_head, *q_tail; /* messages not fully acked */
    struct rel_msg *q_cur;           /* first with unsent fragments */
    uint32_t cur_frag;
    uint32_t next_msg_id;
    struct rel_txslot *tx;
    uint32_t snd_una, snd_nxt;
    struct rel_list sent, resent, rtx;
    uint32_t cwnd, ssthresh;
    uint32_t round_end, round_acked, round_lost;
    uint64_t srtt, rttvar, rto;
    int have_rtt;
    uint64_t rto_deadline; /* 0: not armed */
    uint64_t pto_deadline; /* tail loss probe; 0: not armed */
    uint64_t rto_at;       /* last timeout, while its undo is possible */
    uint64_t undo_rto;
    uint32_t undo_cwnd, undo_ssthresh;
    unsigned probes; /* probes since the last ack progress */
    double tokens;
    uint64_t tok_us;
    int tok_init;
    uint64_t pace_deadline;
    /* delivery rate (see the top of the file) */
    uint64_t delivered;           /* bytes acked or SACKed */
    uint64_t delivered_us;        /* when delivered last grew */
    uint64_t first_sent_us;       /* send time of the newest delivered */
    uint64_t min_rtt, min_rtt_us; /* least RTT sample (10 s), its time */
    double bw_cur, bw_prev;       /* largest rate, this and the last window */
    uint64_t bw_win_us;           /* start of the current window */
    double full_bw;               /* estimate at the last 1/4 growth */
    double bw_round;              /* estimate at the end of the last round */
    unsigned full_cnt;            /* rounds since */
    int filled;                   /* startup over: pace */
    unsigned cycle;               /* round in the gain cycle */
    double pace_rate;             /* bytes/s, 0: not paced */

    /* receiver */
    struct rel_rxslot *rx;
    uint8_t *rx_buf;
    uint32_t rcv_nxt;
    uint32_t rx_ooo; /* datagrams in the reorder ring */
    uint16_t echo_ts;
    uint32_t echo_seq, echo_seq2; /* latest two held out of order */
    unsigned rx_unacked;
    uint64_t ack_deadline;
    int ack_now;

    /* reassembly */
    uint8_t *asm_buf;
    uint32_t asm_id, asm_len, asm_off, asm_cnt, asm_k;
    int asm_discard;
    uint32_t discard_id;
};

struct rel {
    struct rel_config cfg;
    struct rel_ops ops;
    void *ctx;
    int my_hid;
    uint32_t my_inc;
    size_t fragmax;
    uint32_t ring, mask;
    uint32_t cwnd_min;
    struct rel_peer *peers[DGRAM_MAX_HID + 1];
    struct rel_peer *plist;
    struct rel_peer *zombies;
    struct rel_stats st;
    uint64_t rng;
    uint8_t key[SIPHASH_KEY_LEN]; /* of the challenge nonces */
    int unflushed;        /* ops->send_ref was called since ops->flush */
    struct rel_msg *dead; /* freed messages send_ref may still use */
    int blocked;
    int depth;
    /* a datagram held back by reorder injection */
    uint8_t *hold;
    size_t hold_len;
    int hold_full;
    struct sockaddr_storage hold_addr;
    socklen_t hold_alen;
};

static inline int
seq_lt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

static inline int
seq_le(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) <= 0;
}

static inline uint64_t
max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static inline uint64_t
min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

void
rel_config_default(struct rel_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mtu = 1472;
    cfg->max_message = 256u << 20;
    cfg->window = 1024;
    cfg->rto_min_us = 5000;
    cfg->rto_max_us = 60000000;
    cfg->rto_init_us = 200000;
    cfg->ack_delay_us = 200;
    cfg->rate_bps = 0;
    cfg->seed = 1;
}

/* The splitmix64 finaliser: a bijective 64-bit mix. */
static inline uint64_t
mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* splitmix64: the fault-injection random numbers, in [0, 1). */
static double
rel_random(struct rel *r)
{
    uint64_t z = mix64(r->rng += 0x9e3779b97f4a7c15ull);

    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * The challenge nonce for incarnation inc of peer hid: SipHash of both
 * under a key that never leaves this process, never 0.
 */
static uint32_t
inc_nonce(const struct rel *r, int hid, uint32_t inc)
{
    uint8_t m[8];
    uint64_t z;
    uint32_t v;

    put_u32(m, (uint32_t)hid);
    put_u32(m + 4, inc);
    z = siphash24(r->key, m, sizeof(m));
    v = (uint32_t)(z ^ (z >> 32));
    return v != 0 ? v : 1;
}

/* ---- slot lists --------------------------------------------------- */

static void
list_init(struct rel_list *l)
{
    l->head = l->tail = REL_NIL;
    l->n = 0;
}

static void
list_append(struct rel_peer *p, struct rel_list *l, uint32_t i)
{
    p->tx[i].prev = l->tail;
    p->tx[i].next = REL_NIL;
    if (l->tail != REL_NIL)
        p->tx[l->tail].next = i;
    else
        l->head = i;
    l->tail = i;
    l->n++;
}

static void
list_del(struct rel_peer *p, struct rel_list *l, uint32_t i)
{
    struct rel_txslot *s = &p->tx[i];

    if (s->prev != REL_NIL)
        p->tx[s->prev].next = s->next;
    else
        l->head = s->next;
    if (s->next != REL_NIL)
        p->tx[s->next].prev = s->prev;
    else
        l->tail = s->prev;
    s->prev = s->next = REL_NIL;
    l->n--;
}

/* Datagrams in flight: sent and neither acked, SACKed nor lost. */
static inline uint32_t
in_flight(const struct rel_peer *p)
{
    return p->sent.n + p->resent.n;
}

/* Takes slot i off whichever list its state puts it on. */
static void
slot_unlink(struct rel_peer *p, uint32_t i)
{
    if (p->tx[i].state == SLOT_INFLIGHT)
        list_del(p, p->tx[i].retrans ? &p->resent : &p->sent, i);
    else if (p->tx[i].state == SLOT_LOST)
        list_del(p, &p->rtx, i);
}

/* ---- peers --------------------------------------------------------- */

static int
addr_equal(const struct sockaddr_storage *a, socklen_t alen,
           const struct sockaddr *b, socklen_t blen)
{
    if (b == NULL || a->ss_family != b->sa_family)
        return 0;
    if (b->sa_family == AF_INET && blen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *x = (const struct sockaddr_in *)a;
        const struct sockaddr_in *y = (const struct sockaddr_in *)b;
        return x->sin_port == y->sin_port &&
               x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    if (b->sa_family == AF_INET6 && blen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)a;
        const struct sockaddr_in6 *y = (const struct sockaddr_in6 *)b;
        return x->sin6_port == y->sin6_port &&
               memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
    }
    return alen == blen && memcmp(a, b, alen) == 0;
}

/* Initial RTO and congestion state of a (re)started peer. */
static void
peer_init_streams(struct rel *r, struct rel_peer *p)
{
    p->snd_una = p->snd_nxt = 1;
    p->rcv_nxt = 1;
    p->next_msg_id = 1;
    list_init(&p->sent);
    list_init(&p->resent);
    list_init(&p->rtx);
    p->cwnd = r->cfg.window < REL_CWND_INIT ? r->cfg.window : REL_CWND_INIT;
    p->ssthresh = r->cfg.window;
    p->round_end = 1;
    p->round_acked = p->round_lost = 0;
    p->srtt = p->rttvar = 0;
    p->have_rtt = 0;
    p->rto = r->cfg.rto_init_us;
    p->rto_deadline = 0;
    p->pto_deadline = 0;
    p->probes = 0;
    p->rto_at = 0;
    p->tokens = 0;
    p->tok_us = 0;
    p->tok_init = 0;
    p->pace_deadline = 0;
    p->delivered = 0;
    p->delivered_us = 0;
    p->first_sent_us = 0;
    p->min_rtt = p->min_rtt_us = 0;
    p->bw_cur = p->bw_prev = 0;
    p->bw_win_us = 0;
    p->full_bw = 0;
    p->full_cnt = 0;
    p->bw_round = 0;
    p->filled = 0;
    p->cycle = 0;
    p->pace_rate = 0;
    p->rx_ooo = 0;
    p->echo_ts = 0;
    p->rx_unacked = 0;
    p->ack_deadline = 0;
    p->ack_now = 0;
    p->asm_buf = NULL;
    p->asm_discard = 0;
    p->st.queued_bytes = 0;
    p->st.inflight = 0;
}

/*
 * Frees a message, or, if a batch of ops->send_ref may still point into
 * it, puts it on the dead list that rel_leave frees after ops->flush.
 */
static void
msg_free(struct rel *r, struct rel_msg *m)
{
    if (m->refd && r->unflushed) {
        m->next = r->dead;
        r->dead = m;
    } else {
        free(m);
    }
}

/*
 * Drops everything a peer's streams hold: queued messages, the partial
 * message, window and reorder state (the rings stay allocated).
 */
static void
peer_drop_streams(struct rel *r, struct rel_peer *p)
{
    struct rel_msg *m, *n;

    for (m = p->q_head; m != NULL; m = n) {
        n = m->next;
        msg_free(r, m);
    }
    p->q_head = p->q_tail = p->q_cur = NULL;
    p->cur_frag = 0;
    if (p->tx != NULL)
        memset(p->tx, 0, sizeof *p->tx * r->ring);
    if (p->rx != NULL)
        memset(p->rx, 0, sizeof *p->rx * r->ring);
    free(p->asm_buf);
    p->asm_buf = NULL;
}

static void
peer_free_mem(struct rel *r, struct rel_peer *p)
{
    peer_drop_streams(r, p);
    free(p->tx);
    free(p->rx);
    free(p->rx_buf);
    p->tx = NULL;
    p->rx = NULL;
    p->rx_buf = NULL;
}

/* 1 if inc is one of p's past incarnations. */
static int
peer_old_inc(const struct rel_peer *p, uint32_t inc)
{
    unsigned i;

    for (i = 0; i < REL_OLD_INCS && i < p->old_n; i++)
        if (p->old_inc[i] == inc)
            return 1;
    return 0;
}

/*
 * The peer has a new incarnation: forget both streams and tell the daemon.
 * The callback may remove the peer (check p->removed afterwards).
 */
static void
peer_reset(struct rel *r, struct rel_peer *p, uint32_t new_inc)
{
    if (p->inc != 0)
        p->old_inc[p->old_n++ % REL_OLD_INCS] = p->inc;
    peer_drop_streams(r, p);
    peer_init_streams(r, p);
    p->inc = new_inc;
    if (r->ops.reset != NULL)
        r->ops.reset(r->ctx, p->hid, new_inc);
}

/* Marks entry into / exit from the API; exit frees removed peers. */
static void rel_leave(struct rel *r);

static void
rel_enter(struct rel *r)
{
    r->depth++;
}

/* ---- output -------------------------------------------------------- */

/* Hands one datagram to ops (by reference if m, see rel_ops). */
static int
raw_send(struct rel *r, const struct sockaddr_storage *addr, socklen_t alen,
         const uint8_t *hdr, const uint8_t *data, size_t dlen,
         struct rel_msg *m)
{
    struct iovec iov[2];

    iov[0].iov_base = (void *)hdr;
    iov[0].iov_len = DGRAM_HDR_LEN;
    iov[1].iov_base = (void *)data;
    iov[1].iov_len = dlen;
    if (m != NULL && dlen > 0) {
        if (r->ops.send_ref(r->ctx, (const struct sockaddr *)addr, alen, iov,
                            2) != 0)
            return -1;
        m->refd = 1;
        r->unflushed = 1;
        return 0;
    }
    return r->ops.send(r->ctx, (const struct sockaddr *)addr, alen, iov,
                       dlen > 0 ? 2 : 1);
}

/* Sends the datagram held back by reorder injection, if any. */
static void
hold_flush(struct rel *r)
{
    if (!r->hold_full)
        return;
    r->hold_full = 0;
    raw_send(r, &r->hold_addr, r->hold_alen, r->hold, r->hold + DGRAM_HDR_LEN,
             r->hold_len - DGRAM_HDR_LEN, NULL);
}

/*
 * Sends one datagram to p, applying fault injection; data belongs to
 * message m (NULL: send a copy).  Returns 0 (sent, or dropped on
 * purpose), or -1 when the socket would block.
 */
static int
rel_out(struct rel *r, struct rel_peer *p, const uint8_t *hdr,
        const uint8_t *data, size_t dlen, struct rel_msg *m)
{
    if (r->cfg.drop > 0 && rel_random(r) < r->cfg.drop) {
        r->st.injected_drops++;
        goto sent;
    }
    if (r->cfg.reorder > 0 && !r->hold_full && rel_random(r) < r->cfg.reorder) {
        memcpy(r->hold, hdr, DGRAM_HDR_LEN);
        if (dlen > 0)
            memcpy(r->hold + DGRAM_HDR_LEN, data, dlen);
        r->hold_len = DGRAM_HDR_LEN + dlen;
        r->hold_addr = p->addr;
        r->hold_alen = p->alen;
        r->hold_full = 1;
        r->st.injected_reorders++;
        goto sent;
    }
    if (raw_send(r, &p->addr, p->alen, hdr, data, dlen, m) != 0)
        return -1;
    if (r->cfg.dup > 0 && rel_random(r) < r->cfg.dup) {
        if (raw_send(r, &p->addr, p->alen, hdr, data, dlen, m) == 0)
            r->st.injected_dups++;
    }
    hold_flush(r);
sent:
    r->st.dgrams_out++;
    p->st.dgrams_sent++;
    return 0;
}

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

static void
hdr_fill(struct rel *r, struct rel_peer *p, struct dgram_hdr *h, int type)
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

/* Our acknowledgement went out (alone or on DATA). */
static void
ack_sent(struct rel_peer *p)
{
    p->rx_unacked = 0;
    p->ack_deadline = 0;
    p->ack_now = 0;
}

/* Sends a pure ACK echoing the latest DATA's tsval. */
static void
send_ack(struct rel *r, struct rel_peer *p)
{
    struct dgram_hdr h;
    uint8_t buf[DGRAM_HDR_LEN];

    if (r->blocked) {
        p->ack_now = 1;
        return;
    }
    hdr_fill(r, p, &h, DGRAM_ACK);
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

/* Tells p (which used a wrong dst_inc) our incarnation. */
static void
send_reset(struct rel *r, struct rel_peer *p, uint64_t now)
{
    struct dgram_hdr h;
    uint8_t buf[DGRAM_HDR_LEN];

    if (r->blocked ||
        (p->last_reset_us != 0 && now - p->last_reset_us < REL_RESET_GAP_US))
        return;
    hdr_fill(r, p, &h, DGRAM_RESET);
    h.dst_inc = 0;
    h.ack = 0;
    h.sack = 0;
    dgram_put(buf, &h);
    if (rel_out(r, p, buf, NULL, 0, NULL) == 0)
        p->last_reset_us = now ? now : 1;
}

/*
 * A PROBE to p's address: to incarnation dst_inc, with a challenge nonce
 * (msg_id, 0: none) and the echo of one of theirs (msg_len, 0: none).
 * The ack fields stay 0: they would mean nothing to an incarnation we
 * have not adopted.
 */
static int
send_probe(struct rel *r, struct rel_peer *p, uint32_t dst_inc, uint32_t nonce,
           uint32_t echo)
{
    struct dgram_hdr h;
    uint8_t buf[DGRAM_HDR_LEN];

    if (r->blocked)
        return -1;
    hdr_fill(r, p, &h, DGRAM_PROBE);
    h.dst_inc = dst_inc;
    h.ack = 0;
    h.sack = 0;
    h.msg_id = nonce;
    h.msg_len = echo;
    dgram_put(buf, &h);
    return rel_out(r, p, buf, NULL, 0, NULL);
}

/*
 * A datagram h of p's unadopted incarnation h->src_inc arrived (and was
 * dropped): challenge that incarnation, answering its own challenge to
 * us if h carries one (see the top of the file).
 */
static void
challenge(struct rel *r, struct rel_peer *p, const struct dgram_hdr *h,
          uint64_t now)
{
    uint32_t echo = 0;

    if (h->type == DGRAM_PROBE && h->msg_id != 0 && h->dst_inc == r->my_inc)
        echo = h->msg_id;
    if (echo == 0 && p->last_chal_us != 0 &&
        now - p->last_chal_us < REL_RESET_GAP_US)
        return;
    if (send_probe(r, p, h->src_inc, inc_nonce(r, p->hid, h->src_inc), echo) ==
        0) {
        p->last_chal_us = now ? now : 1;
        r->st.challenges++;
    }
}

/* 1 if h proves its incarnation: a PROBE echoing our challenge to it. */
static int
inc_proven(const struct rel *r, const struct rel_peer *p,
           const struct dgram_hdr *h)
{
    return h->type == DGRAM_PROBE && h->msg_len != 0 &&
           h->msg_len == inc_nonce(r, p->hid, h->src_inc);
}

/* Pacing: 1 if bytes may leave now; else sets p->pace_deadline. */
static int
pace_ok(struct rel *r, struct rel_peer *p, size_t bytes, uint64_t now)
{
    double rate = r->cfg.rate_bps != 0 ? (double)r->cfg.rate_bps : p->pace_rate,
           depth;

    if (rate <= 0) {
        p->tok_init = 0;
        return 1;
    }
    depth = rate * REL_PACE_US / 1e6;
    if (depth < 8.0 * (double)r->cfg.mtu)
        depth = 8.0 * (double)r->cfg.mtu;
    if (!p->tok_init) {
        p->tokens = depth;
        p->tok_us = now;
        p->tok_init = 1;
    } else if (now > p->tok_us) {
        p->tokens += (double)(now - p->tok_us) * rate / 1e6;
        if (p->tokens > depth)
            p->tokens = depth;
        p->tok_us = now;
    }
    if (p->tokens >= (double)bytes)
        return 1;
    p->pace_deadline =
        now + 1 + (uint64_t)(((double)bytes - p->tokens) * 1e6 / rate);
    return 0;
}

/* Allocates the transmit ring on first use.  0 or COLLS_ENOMEM. */
static int
tx_ring(struct rel *r, struct rel_peer *p)
{
    if (p->tx == NULL) {
        p->tx = calloc(r->ring, sizeof *p->tx);
        if (p->tx == NULL)
            return COLLS_ENOMEM;
    }
    return 0;
}

/* Sends slot i's fragment (already filled in).  0 or -1 (would block). */
static int
send_slot(struct rel *r, struct rel_peer *p, uint32_t seq, uint16_t flags,
          uint64_t now)
{
    struct rel_txslot *s = &p->tx[seq & r->mask];
    struct rel_msg *m = s->msg;
    struct dgram_hdr h;
    uint8_t buf[DGRAM_HDR_LEN];
    uint32_t cnt = m->nfrag < REL_FRAG_CNT_MAX ? m->nfrag : REL_FRAG_CNT_MAX;

    hdr_fill(r, p, &h, DGRAM_DATA);
    h.flags = flags;
    h.seq = seq;
    h.msg_id = m->id;
    h.msg_len = m->len;
    h.frag_cnt = (uint16_t)cnt;
    h.frag_idx = (uint16_t)(s->frag % cnt);
    h.len = s->len;
    h.tsval = (uint16_t)(now / REL_TS_UNIT_US);
    dgram_put(buf, &h);
    return rel_out(r, p, buf, m->data + (size_t)s->frag * r->fragmax, s->len,
                   r->ops.send_ref != NULL && m->len >= REL_REF_MIN ? m : NULL);
}

/*
 * Remembers in slot s, being sent, what the delivery rate sample of its
 * ack starts from.  With nothing in flight the clock starts now (an idle
 * gap is not delivery time).
 */
static void
rate_stamp(struct rel_peer *p, struct rel_txslot *s, uint64_t now)
{
    if (in_flight(p) == 0)
        p->delivered_us = p->first_sent_us = now;
    s->del = p->delivered;
    s->del_us = p->delivered_us;
    s->first_us = p->first_sent_us;
    s->applim = p->q_cur == NULL && p->rtx.head == REL_NIL;
}

/*
 * Arms the tail loss probe: 2 SRTT (+ the peer's ack delay) after the
 * last send or ack progress, at most REL_PROBES times without progress,
 * and only if it comes before the RTO.
 */
static void
arm_pto(struct rel *r, struct rel_peer *p, uint64_t now)
{
    uint64_t pto;

    p->pto_deadline = 0;
    if (!p->have_rtt || p->probes >= REL_PROBES || p->snd_una == p->snd_nxt)
        return;
    pto = max_u64(2 * p->srtt + r->cfg.ack_delay_us, REL_PTO_MIN_US);
    if (p->rto_deadline == 0 || now + pto < p->rto_deadline)
        p->pto_deadline = now + pto;
}

/*
 * The window in force: cwnd, and once paced from the delivery rate bw
 * also at most 2 bw * min_rtt (twice the path's capacity) plus headroom
 * for acks that come late by the event loop's granularity, at least
 * REL_CAP_DGRAMS datagrams.  That bounds the queue the pacing gain's
 * probes build at the bottleneck.
 */
static uint32_t
cwnd_cap(const struct rel *r, const struct rel_peer *p)
{
    double bw = p->bw_cur > p->bw_prev ? p->bw_cur : p->bw_prev, cap;

    if (!p->filled || bw <= 0 || p->min_rtt == 0 || r->cfg.rate_bps != 0)
        return p->cwnd;
    cap = 2.0 * bw * (double)p->min_rtt / 1e6;
    cap += bw * REL_CLOCK_G_US / 1e6 > REL_CAP_DGRAMS * (double)r->cfg.mtu
               ? bw * REL_CLOCK_G_US / 1e6
               : REL_CAP_DGRAMS * (double)r->cfg.mtu;
    cap /= (double)r->cfg.mtu;
    return cap < (double)p->cwnd ? (uint32_t)cap : p->cwnd;
}

/*
 * Sends what the windows, the pacer and the socket allow: retransmissions
 * first, then new fragments.  Every DATA carries our ack.
 */
static void
pump(struct rel *r, struct rel_peer *p, uint64_t now)
{
    uint32_t cwnd = cwnd_cap(r, p);

    while (!r->blocked && !p->removed && in_flight(p) < cwnd) {
        uint32_t seq, i;
        uint16_t flags;
        struct rel_txslot *s;
        int rtx;

        if (p->rtx.head != REL_NIL) {
            i = p->rtx.head;
            s = &p->tx[i];
            seq = p->snd_una + ((i - p->snd_una) & r->mask);
            rtx = 1;
            flags = DGRAM_F_RETRANS | DGRAM_F_ACKNOW;
        } else if (p->q_cur != NULL &&
                   p->snd_nxt - p->snd_una < r->cfg.window) {
            struct rel_msg *m = p->q_cur;
            size_t off = (size_t)p->cur_frag * r->fragmax;

            seq = p->snd_nxt;
            i = seq & r->mask;
            s = &p->tx[i];
            s->msg = m;
            s->frag = p->cur_frag;
            s->len = (uint16_t)min_u64(r->fragmax, m->len - off);
            s->retrans = 0;
            s->fast = 0;
            s->prev = s->next = REL_NIL;
            rtx = 0;
            flags = 0;
            /* last one we can send for now: ask for a quick ack.  A
             * single-fragment message does not: its reply usually
             * carries the ack, else the delayed ack or a tail-loss
             * probe does (an immediate pure ACK costs both sides a
             * datagram per small request) */
            if ((p->cur_frag + 1 == m->nfrag && m->nfrag > 1 &&
                 m->next == NULL) ||
                in_flight(p) + 1 >= cwnd ||
                p->snd_nxt + 1 - p->snd_una >= r->cfg.window)
                flags = DGRAM_F_ACKNOW;
        } else {
            break;
        }
        if (!pace_ok(r, p, DGRAM_HDR_LEN + s->len, now))
            break;
        if (send_slot(r, p, seq, flags, now) != 0) {
            r->blocked = 1;
            break;
        }
        if (r->cfg.rate_bps != 0 || p->pace_rate > 0)
            p->tokens -= (double)(DGRAM_HDR_LEN + s->len);
        if (rtx) {
            list_del(p, &p->rtx, i);
            s->retrans = 1;
            p->st.retransmits++;
            if (s->fast)
                p->st.fast_retransmits++;
        } else {
            if (++p->cur_frag == p->q_cur->nfrag) {
                p->q_cur = p->q_cur->next;
                p->cur_frag = 0;
            }
            p->snd_nxt++;
        }
        s->state = SLOT_INFLIGHT;
        s->sent_us = now;
        rate_stamp(p, s, now);
        list_append(p, rtx ? &p->resent : &p->sent, i);
        if (p->rto_deadline == 0)
            p->rto_deadline = now + p->rto;
        arm_pto(r, p, now);
        ack_sent(p);
    }
    p->st.inflight = p->snd_nxt - p->snd_una;
}

/* ---- acknowledgements received ------------------------------------ */

/* RFC 6298 update with one sample (us). */
static void
rtt_sample(struct rel *r, struct rel_peer *p, uint64_t rtt, uint64_t now)
{
    uint64_t rto;

    stats_hist_add(&p->st.rtt_us, rtt);
    if (!p->have_rtt) {
        p->srtt = rtt;
        p->rttvar = rtt / 2;
        p->have_rtt = 1;
    } else {
        uint64_t d = p->srtt > rtt ? p->srtt - rtt : rtt - p->srtt;
        p->rttvar = (3 * p->rttvar + d) / 4;
        p->srtt = (7 * p->srtt + rtt) / 8;
    }
    if (p->min_rtt == 0 || rtt <= p->min_rtt ||
        now - p->min_rtt_us > REL_MIN_RTT_WIN_US) {
        p->min_rtt = rtt > 0 ? rtt : 1;
        p->min_rtt_us = now;
    }
    rto = p->srtt + max_u64(REL_CLOCK_G_US, 4 * p->rttvar);
    p->rto = min_u64(max_u64(rto, r->cfg.rto_min_us), r->cfg.rto_max_us);
}

static void
mark_lost(struct rel_peer *p, uint32_t i, int fast)
{
    struct rel_txslot *s = &p->tx[i];

    slot_unlink(p, i);
    s->state = SLOT_LOST;
    s->fast = (uint8_t)fast;
    list_append(p, &p->rtx, i);
    p->round_lost++;
}

static inline double
max_dbl(double a, double b)
{
    return a > b ? a : b;
}

/* The pacing rate from the estimate and the phase (top of the file). */
static void
pace_update(struct rel_peer *p)
{
    double bw = max_dbl(p->bw_cur, p->bw_prev);
    double gain = p->cycle == 0 ? 1.25 : p->cycle == 1 ? 0.75 : 1.0;

    p->pace_rate = p->filled && bw > 0 ? gain * bw : 0;
}

/*
 * One delivery rate sample: del bytes were delivered in us microseconds
 * (app-limited: the sender had nothing more to send).
 */
static void
rate_sample(struct rel *r, struct rel_peer *p, uint64_t del, uint64_t us,
            int applim, uint64_t now)
{
    double rate, win;

    if (us == 0 || del == 0 || us < p->min_rtt)
        return; /* shorter than a round trip: not a delivery interval */
    rate = (double)del * 1e6 / (double)us;
    if (applim && rate <= max_dbl(p->bw_cur, p->bw_prev))
        return;
    /* once paced, the rate can only grow as fast as the probes push it
       (1.25 per cycle): a larger sample counts deliveries that happened
       earlier (a hole filled late, acks held up), not a faster path */
    if (p->filled && rate > 1.5 * p->bw_round)
        rate = 1.5 * p->bw_round;
    win = max_dbl(8.0 * (double)p->srtt, REL_BW_WIN_US);
    if (p->bw_win_us == 0 || (double)(now - p->bw_win_us) > win) {
        p->bw_prev = p->bw_cur;
        p->bw_cur = rate;
        p->bw_win_us = now;
    } else if (rate > p->bw_cur) {
        p->bw_cur = rate;
    }
    pace_update(p);
    (void)r;
}

/* End of a round trip: adjust cwnd from the round's loss fraction. */
static void
round_end(struct rel *r, struct rel_peer *p)
{
    uint32_t total = p->round_acked + p->round_lost;

    if (total > 0 && p->round_lost * 8 > total) {
        p->ssthresh = p->cwnd / 2 > r->cwnd_min ? p->cwnd / 2 : r->cwnd_min;
        p->cwnd = p->ssthresh;
    } else if (p->round_acked > 0) {
        uint32_t c =
            p->cwnd < p->ssthresh ? p->cwnd * 2 : p->cwnd + (p->cwnd + 7) / 8;
        p->cwnd = c < r->cfg.window ? c : (uint32_t)r->cfg.window;
    }
    p->round_acked = p->round_lost = 0;
    p->round_end = p->snd_nxt;
    /* the delivery rate's phases */
    if (!p->filled) {
        double bw = max_dbl(p->bw_cur, p->bw_prev);
        if (bw >= p->full_bw * 1.25) {
            p->full_bw = bw;
            p->full_cnt = 0;
        } else if (++p->full_cnt >= 3) {
            p->filled = 1;
            p->cycle = 1; /* drain what startup queued */
        }
    } else {
        p->cycle = (p->cycle + 1) % REL_GAIN_CYCLE;
    }
    p->bw_round = max_dbl(p->bw_cur, p->bw_prev);
    pace_update(p);
}

/* Frees the slot at snd_una (cumulatively acked) and its message if done. */
static void
release_una(struct rel *r, struct rel_peer *p)
{
    uint32_t i = p->snd_una & r->mask;
    struct rel_txslot *s = &p->tx[i];
    struct rel_msg *m = s->msg;

    slot_unlink(p, i);
    p->st.queued_bytes -= s->len;
    if (s->frag + 1 == m->nfrag) {
        /* fragments are numbered in queue order: m is the head */
        p->q_head = m->next;
        if (p->q_head == NULL)
            p->q_tail = NULL;
        msg_free(r, m);
    }
    memset(s, 0, sizeof *s);
    p->snd_una++;
}

/*
 * Marks lost the datagrams of list l (sent or resent, both in order of
 * transmission) sent before `before'.  Every datagram that arrived out of
 * order was reported by its own ack (the ACK's seq), so one still in
 * flight here is missing, unless that ack was lost too.
 */
static void
rack(struct rel_peer *p, struct rel_list *l, uint64_t before)
{
    while (l->head != REL_NIL && p->tx[l->head].sent_us < before)
        mark_lost(p, l->head, 1);
}

/* The newest datagram an ack delivered: its rate sample's start. */
struct rate_pick {
    int have, applim;
    int unknown; /* delivered slots of unknown fate: no sample */
    int retrans; /* the newest was retransmitted: which copy arrived? */
    uint64_t sent_us, del, del_us, first_us;
};

/* Slot s was delivered (acked or SACKed for the first time). */
static void
delivered(struct rel_peer *p, const struct rel_txslot *s, struct rate_pick *k)
{
    p->delivered += s->len;
    if (s->state == SLOT_UNKNOWN)
        k->unknown = 1; /* arrived some time since the timeout */
    if (!k->have || s->sent_us >= k->sent_us) {
        k->have = 1;
        k->sent_us = s->sent_us;
        k->del = s->del;
        k->del_us = s->del_us;
        k->first_us = s->first_us;
        k->applim = s->applim;
        k->retrans = s->retrans;
    }
}

/*
 * Processes the ack fields of a datagram from p.  echo: the header's tsval
 * is an echo (pure ACK).
 */
static void
on_ack(struct rel *r, struct rel_peer *p, const struct dgram_hdr *h, int echo,
       uint64_t now)
{
    uint64_t newest = 0, techo = 0, d0 = p->delivered;
    int sample = 0, advanced = 0;
    uint32_t ack = h->ack, i, una0 = p->snd_una;
    struct rate_pick k = {0, 0, 0, 0, 0, 0, 0, 0};

    if (p->tx == NULL || seq_lt(ack, p->snd_una) || seq_lt(p->snd_nxt, ack))
        return;
    if (echo) {
        /* the echoed send time, rebuilt from 16 bits */
        uint64_t t16 = now / REL_TS_UNIT_US;
        uint64_t d = (uint16_t)((uint16_t)t16 - h->tsval);
        techo = t16 >= d ? (t16 - d) * REL_TS_UNIT_US : 0;
    }
    while (p->snd_una != ack) {
        struct rel_txslot *s = &p->tx[p->snd_una & r->mask];
        if (s->state != SLOT_SACKED) {
            p->round_acked++;
            delivered(p, s, &k);
        }
        if (s->state == SLOT_INFLIGHT && !s->retrans &&
            (!sample || s->sent_us > newest)) {
            newest = s->sent_us;
            sample = 1;
        }
        release_una(r, p);
        advanced = 1;
    }
    for (i = 0; echo && i < 2; i++) {
        /* the datagram whose arrival sent this ack, and the one before */
        uint32_t q = i == 0 ? h->seq : h->msg_id, j = q & r->mask;
        struct rel_txslot *s = &p->tx[j];

        if (q == 0 || !seq_lt(q, p->snd_nxt) || seq_lt(q, p->snd_una) ||
            s->state == SLOT_SACKED)
            continue;
        if (i == 0 && s->state == SLOT_INFLIGHT && !s->retrans &&
            (!sample || s->sent_us > newest)) {
            newest = s->sent_us;
            sample = 1;
        }
        delivered(p, s, &k);
        slot_unlink(p, j);
        s->state = SLOT_SACKED;
        p->round_acked++;
    }
    if (h->sack != 0) {
        uint64_t maxsent = 0;
        unsigned cnt = 0;
        int b;

        for (i = 0; i < 64 && seq_lt(ack + 1 + i, p->snd_nxt); i++) {
            uint32_t j = (ack + 1 + i) & r->mask;
            struct rel_txslot *s = &p->tx[j];
            if (!(h->sack >> i & 1) || s->state == SLOT_SACKED)
                continue;
            if (s->state == SLOT_INFLIGHT && !s->retrans &&
                (!sample || s->sent_us > newest)) {
                newest = s->sent_us;
                sample = 1;
            }
            delivered(p, s, &k);
            slot_unlink(p, j);
            s->state = SLOT_SACKED;
            p->round_acked++;
        }
        /* holes with >= 3 SACKed above, one sent after the hole */
        for (b = 63; b >= -1; b--) {
            uint32_t seq = ack + 1 + (uint32_t)b;
            struct rel_txslot *s;
            if (!seq_lt(seq, p->snd_nxt))
                continue;
            s = &p->tx[seq & r->mask];
            if (s->state == SLOT_SACKED) {
                cnt++;
                if (s->sent_us > maxsent)
                    maxsent = s->sent_us;
            } else if (cnt >= 3 &&
                       ((s->state == SLOT_INFLIGHT && maxsent > s->sent_us) ||
                        s->state == SLOT_UNKNOWN)) {
                /* UNKNOWN: sent before the timeout, so long gone */
                mark_lost(p, seq & r->mask, 1);
            }
        }
    }
    if (p->delivered != d0) {
        /* the longer of the send and the ack intervals: acks that
           arrive bunched do not inflate the rate */
        if (k.have && !k.unknown && !k.retrans && now >= k.del_us &&
            k.sent_us >= k.first_us)
            rate_sample(r, p, p->delivered - k.del,
                        max_u64(now - k.del_us, k.sent_us - k.first_us),
                        k.applim, now);
        p->delivered_us = now;
        p->first_sent_us = k.sent_us;
    }
    /*
     * Sample only the datagram whose arrival sent this ack: one acked
     * late, when a hole before it was filled, would inflate SRTT.  With
     * an echo that is the one sent at the echoed time; without, an ack
     * that moved by at most 2 datagrams and reports no gap.
     */
    if (sample && now >= newest &&
        (echo ? newest + 2 * REL_TS_UNIT_US >= techo &&
                    techo + 2 * REL_TS_UNIT_US >= newest
              : ack - una0 <= 2 && h->sack == 0))
        rtt_sample(r, p, now - newest, now);
    if (echo && in_flight(p) > 0) {
        uint64_t reo = max_u64(p->srtt / 4, REL_REO_MIN_US);

        rack(p, &p->sent, techo - min_u64(techo, reo));
        rack(p, &p->resent, techo - min_u64(techo, reo));
    }
    if (advanced && p->rto_at != 0 && echo) {
        /* Eifel: an ack of a datagram sent before the timeout proves
           the timeout spurious (a slow peer, not a loss): undo it */
        if (techo + REL_TS_UNIT_US < p->rto_at) {
            p->rto = p->undo_rto;
            p->cwnd = p->undo_cwnd;
            p->ssthresh = p->undo_ssthresh;
        }
        p->rto_at = 0;
    }
    if (advanced) {
        p->rto_deadline = p->snd_una != p->snd_nxt ? now + p->rto : 0;
        p->probes = 0;
        arm_pto(r, p, now);
        if (!seq_lt(p->snd_una, p->round_end))
            round_end(r, p);
    }
    p->st.inflight = p->snd_nxt - p->snd_una;
}

/*
 * Retransmission timeout: back off, resend every unacked datagram within
 * the SACK bitmap's reach.  The ones beyond may well have arrived (a
 * 64-bit bitmap cannot say): they become UNKNOWN, out of the in-flight
 * count, until the acks reach them.
 */
static void
on_rto(struct rel *r, struct rel_peer *p, uint64_t now)
{
    uint32_t seq;

    p->st.timeouts++;
    if (p->rto_at == 0) {
        p->undo_rto = p->rto;
        p->undo_cwnd = p->cwnd;
        p->undo_ssthresh = p->ssthresh;
    }
    p->rto_at = now ? now : 1;
    p->rto = min_u64(p->rto * 2, r->cfg.rto_max_us);
    p->ssthresh = p->cwnd / 2 > r->cwnd_min ? p->cwnd / 2 : r->cwnd_min;
    p->cwnd = r->cwnd_min;
    p->round_acked = p->round_lost = 0;
    p->round_end = p->snd_nxt;
    /* the rtx list in sequence order, oldest first */
    for (seq = p->snd_una; seq != p->snd_nxt; seq++) {
        uint32_t i = seq & r->mask;
        uint8_t st = p->tx[i].state;
        /* SACK is advisory: the ack did not pass snd_una in an RTO, so
           its datagram goes again even if SACKed (a reneging peer) */
        if (st == SLOT_FREE || (st == SLOT_SACKED && seq != p->snd_una))
            continue;
        if (seq - p->snd_una <= 64 || st == SLOT_LOST) {
            slot_unlink(p, i);
            p->tx[i].state = SLOT_LOST;
            p->tx[i].fast = 0;
            list_append(p, &p->rtx, i);
        } else {
            slot_unlink(p, i);
            p->tx[i].state = SLOT_UNKNOWN;
        }
    }
    p->rto_deadline = p->snd_una != p->snd_nxt ? now + p->rto : 0;
    p->probes = REL_PROBES; /* no probes until acks come back */
    p->pto_deadline = 0;
    pump(r, p, now);
}

/*
 * Tail loss probe: nothing was acked for a while.  Resends the most
 * recently sent datagram so that its ack (SACK bits, echoed time) shows
 * what was lost: a lost retransmission at the window's base, or the
 * tail of a burst, without waiting for the RTO.
 */
static void
on_pto(struct rel *r, struct rel_peer *p, uint64_t now)
{
    uint32_t i = p->sent.tail, j = p->resent.tail, seq;

    p->pto_deadline = 0;
    if (i == REL_NIL || (j != REL_NIL && p->tx[j].sent_us > p->tx[i].sent_us))
        i = j;
    if (i == REL_NIL || r->blocked)
        return;
    seq = p->snd_una + ((i - p->snd_una) & r->mask);
    if (send_slot(r, p, seq, DGRAM_F_RETRANS | DGRAM_F_ACKNOW, now) != 0) {
        r->blocked = 1;
        return;
    }
    slot_unlink(p, i);
    p->tx[i].retrans = 1;
    list_append(p, &p->resent, i);
    p->tx[i].sent_us = now;
    rate_stamp(p, &p->tx[i], now);
    p->st.retransmits++;
    p->probes++;
    arm_pto(r, p, now);
}

/* ---- data received ------------------------------------------------- */

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
static void
on_data(struct rel *r, struct rel_peer *p, const struct dgram_hdr *h,
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
       datagram, or after ack_delay_us */
    if ((h->flags & DGRAM_F_ACKNOW) || p->rx_unacked >= 2 || p->rx_ooo > 0)
        p->ack_now = 1;
    else if (p->ack_deadline == 0)
        p->ack_deadline = now + r->cfg.ack_delay_us;
}

void
rel_input(struct rel *r, const struct sockaddr *from, socklen_t alen,
          const uint8_t *dgram, size_t len, uint64_t now_us)
{
    struct dgram_hdr h;
    struct rel_peer *p;

    rel_enter(r);
    r->st.dgrams_in++;
    if (dgram_get(dgram, len, &h) != 0) {
        r->st.bad_dgrams++;
        goto out;
    }
    p = h.src_hid != 0 ? r->peers[h.src_hid] : NULL;
    if (p == NULL || !addr_equal(&p->addr, p->alen, from, alen)) {
        r->st.unknown_src++;
        goto out;
    }
    if (h.dst_hid != 0 && r->my_hid != 0 && h.dst_hid != r->my_hid) {
        r->st.bad_dgrams++;
        goto out;
    }
    if (p->inc != 0 && h.src_inc != p->inc) {
        if (h.src_inc == 0 || peer_old_inc(p, h.src_inc)) {
            r->st.stale_inc++;
            goto out;
        }
        if (!inc_proven(r, p, &h)) {
            r->st.stale_inc++;
            challenge(r, p, &h, now_us);
            goto out;
        }
        peer_reset(r, p, h.src_inc);
        if (p->removed)
            goto out;
    } else if (p->inc == 0) {
        p->inc = h.src_inc;
    }
    if (h.dst_inc != 0 && h.dst_inc != r->my_inc) {
        r->st.stale_inc++;
        send_reset(r, p, now_us);
        goto out;
    }
    p->last_heard = now_us;
    p->st.dgrams_recv++;
    switch (h.type) {
    case DGRAM_DATA:
        if (h.len > r->fragmax) {
            /* a peer with a larger MTU: would not fit the reorder ring */
            r->st.bad_dgrams++;
            goto out;
        }
        on_ack(r, p, &h, 0, now_us);
        on_data(r, p, &h, dgram + DGRAM_HDR_LEN, now_us);
        break;
    case DGRAM_ACK:
        p->st.acks_recv++;
        on_ack(r, p, &h, 1, now_us);
        break;
    case DGRAM_PROBE:
        on_ack(r, p, &h, 0, now_us);
        /* a challenge to this incarnation of ours: answer it */
        if (h.msg_id != 0 && h.dst_inc == r->my_inc)
            send_probe(r, p, p->inc, 0, h.msg_id);
        p->ack_now = 1;
        break;
    default: /* DGRAM_RESET: the incarnation check above did it */
        break;
    }
    if (p->removed)
        goto out;
    pump(r, p, now_us);
    if (p->ack_now && !p->removed)
        send_ack(r, p);
out:
    rel_leave(r);
}

/* ---- the API ------------------------------------------------------- */

static void
rel_leave(struct rel *r)
{
    if (--r->depth > 0)
        return;
    hold_flush(r);
    if (r->dead != NULL) {
        /* nothing may point into them once flush returns */
        r->ops.flush(r->ctx);
        r->unflushed = 0;
        while (r->dead != NULL) {
            struct rel_msg *m = r->dead;
            r->dead = m->next;
            free(m);
        }
    }
    while (r->zombies != NULL) {
        struct rel_peer *p = r->zombies;
        r->zombies = p->next;
        free(p);
    }
}

struct rel *
rel_new(const struct rel_config *cfg, const struct rel_ops *ops, void *ctx,
        int my_hid, uint32_t my_inc)
{
    struct rel *r;
    uint32_t ring = 64;
    size_t i;

    if (cfg == NULL || ops == NULL || ops->send == NULL ||
        ops->deliver == NULL ||
        (ops->send_ref == NULL) != (ops->flush == NULL) ||
        cfg->mtu <= DGRAM_HDR_LEN || cfg->mtu > DGRAM_MAX_LEN ||
        cfg->window < 1 || cfg->window > REL_MAX_WINDOW ||
        cfg->rto_min_us == 0 || cfg->rto_min_us > cfg->rto_max_us ||
        my_hid < 0 || my_hid > DGRAM_MAX_HID ||
        !(cfg->drop >= 0 && cfg->drop <= 1) ||
        !(cfg->dup >= 0 && cfg->dup <= 1) ||
        !(cfg->reorder >= 0 && cfg->reorder <= 1))
        return NULL;
    r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->cfg = *cfg;
    if (r->cfg.max_message > UINT32_MAX)
        r->cfg.max_message = UINT32_MAX;
    r->cfg.rto_init_us =
        min_u64(max_u64(cfg->rto_init_us, cfg->rto_min_us), cfg->rto_max_us);
    r->ops = *ops;
    r->ctx = ctx;
    r->my_hid = my_hid;
    r->my_inc = my_inc;
    r->fragmax = cfg->mtu - DGRAM_HDR_LEN;
    while (ring < cfg->window)
        ring *= 2;
    r->ring = ring;
    r->mask = ring - 1;
    r->cwnd_min = cfg->window < REL_CWND_MIN ? cfg->window : REL_CWND_MIN;
    r->rng = cfg->seed;
    /* the key: random, or spelled out from cfg->secret (reproducible,
       for tests) or, without getrandom, from the time and the address */
    if (cfg->secret != 0 ||
        getrandom(r->key, sizeof(r->key), 0) != (ssize_t)sizeof(r->key)) {
        uint64_t k = cfg->secret != 0
                         ? cfg->secret
                         : (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)r ^
                               (uint64_t)my_inc << 32;

        for (i = 0; i < SIPHASH_KEY_LEN; i++, k = mix64(k))
            r->key[i] = (uint8_t)k;
    }
    if (cfg->reorder > 0) {
        r->hold = malloc(cfg->mtu);
        if (r->hold == NULL) {
            free(r);
            return NULL;
        }
    }
    return r;
}

void
rel_free(struct rel *r)
{
    struct rel_peer *p, *n;

    if (r == NULL)
        return;
    if (r->unflushed)
        r->ops.flush(r->ctx); /* no batch may point into what we free */
    r->unflushed = 0;
    for (p = r->plist; p != NULL; p = n) {
        n = p->next;
        peer_free_mem(r, p);
        free(p);
    }
    for (p = r->zombies; p != NULL; p = n) {
        n = p->next;
        free(p);
    }
    while (r->dead != NULL) {
        struct rel_msg *m = r->dead;
        r->dead = m->next;
        free(m);
    }
    free(r->hold);
    free(r);
}

void
rel_set_hid(struct rel *r, int my_hid)
{
    if (my_hid >= 0 && my_hid <= DGRAM_MAX_HID)
        r->my_hid = my_hid;
}

int
rel_peer_set(struct rel *r, int hid, const struct sockaddr *addr,
             socklen_t alen, uint32_t inc)
{
    struct rel_peer *p;

    if (hid < 1 || hid > DGRAM_MAX_HID || addr == NULL || alen == 0 ||
        alen > sizeof(struct sockaddr_storage))
        return COLLS_EINVAL;
    p = r->peers[hid];
    if (p == NULL) {
        p = calloc(1, sizeof *p);
        if (p == NULL)
            return COLLS_ENOMEM;
        p->hid = hid;
        p->inc = inc;
        peer_init_streams(r, p);
        p->next = r->plist;
        r->plist = p;
        r->peers[hid] = p;
    }
    memset(&p->addr, 0, sizeof p->addr);
    memcpy(&p->addr, addr, alen);
    p->alen = alen;
    if (inc != 0 && p->inc != 0 && inc != p->inc && !peer_old_inc(p, inc)) {
        rel_enter(r);
        peer_reset(r, p, inc);
        rel_leave(r);
    } else if (p->inc == 0) {
        p->inc = inc;
    }
    return 0;
}

void
rel_peer_remove(struct rel *r, int hid)
{
    struct rel_peer *p, **pp;

    if (hid < 1 || hid > DGRAM_MAX_HID || (p = r->peers[hid]) == NULL)
        return;
    rel_enter(r);
    r->peers[hid] = NULL;
    for (pp = &r->plist; *pp != p; pp = &(*pp)->next)
        ;
    *pp = p->next;
    peer_free_mem(r, p);
    p->removed = 1;
    p->next = r->zombies;
    r->zombies = p;
    if (r->ops.reset != NULL)
        r->ops.reset(r->ctx, hid, 0);
    rel_leave(r);
}

int
rel_sendv(struct rel *r, int hid, const struct iovec *iov, int iovcnt,
          uint64_t now_us)
{
    struct rel_peer *p;
    struct rel_msg *m;
    uint64_t len = 0;
    size_t off = 0;
    int i;

    if (hid < 1 || hid > DGRAM_MAX_HID || (p = r->peers[hid]) == NULL)
        return COLLS_ENOENT;
    if (iovcnt < 0 || (iovcnt > 0 && iov == NULL))
        return COLLS_EINVAL;
    for (i = 0; i < iovcnt; i++) {
        len += iov[i].iov_len;
        if (len > r->cfg.max_message)
            return COLLS_EMSGSIZE;
    }
    if (tx_ring(r, p) != 0)
        return COLLS_ENOMEM;
    m = malloc(sizeof *m + len);
    if (m == NULL)
        return COLLS_ENOMEM;
    for (i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len > 0)
            memcpy(m->data + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    m->next = NULL;
    m->refd = 0;
    m->id = p->next_msg_id++;
    m->len = (uint32_t)len;
    m->nfrag = len == 0 ? 1 : (uint32_t)((len + r->fragmax - 1) / r->fragmax);
    if (p->q_tail != NULL)
        p->q_tail->next = m;
    else
        p->q_head = m;
    p->q_tail = m;
    if (p->q_cur == NULL) {
        if (p->snd_una == p->snd_nxt) {
            /* from idle: the estimate may be stale, start over */
            p->filled = 0;
            p->full_bw = 0;
            p->full_cnt = 0;
            pace_update(p);
        }
        p->q_cur = m;
        p->cur_frag = 0;
    }
    p->st.queued_bytes += len;
    p->st.msgs_sent++;
    p->st.bytes_sent += len;
    rel_enter(r);
    pump(r, p, now_us);
    rel_leave(r);
    return 0;
}

uint64_t
rel_queued(const struct rel *r, int hid)
{
    if (hid < 1 || hid > DGRAM_MAX_HID || r->peers[hid] == NULL)
        return 0;
    return r->peers[hid]->st.queued_bytes;
}

void
rel_timer(struct rel *r, uint64_t now_us)
{
    struct rel_peer *p;
    int was_blocked = r->blocked;

    rel_enter(r);
    r->blocked = 0;
    for (p = r->plist; p != NULL; p = p->next) {
        if (was_blocked)
            pump(r, p, now_us);
        if (p->rto_deadline != 0 && now_us >= p->rto_deadline)
            on_rto(r, p, now_us);
        else if (p->pto_deadline != 0 && now_us >= p->pto_deadline)
            on_pto(r, p, now_us);
        if (p->pace_deadline != 0 && now_us >= p->pace_deadline) {
            p->pace_deadline = 0;
            pump(r, p, now_us);
        }
        if (p->ack_now || (p->ack_deadline != 0 && now_us >= p->ack_deadline))
            send_ack(r, p);
    }
    rel_leave(r);
}

uint64_t
rel_next_timeout(const struct rel *r)
{
    const struct rel_peer *p;
    uint64_t t = UINT64_MAX;

    for (p = r->plist; p != NULL; p = p->next) {
        if (p->rto_deadline != 0)
            t = min_u64(t, p->rto_deadline);
        if (p->pto_deadline != 0)
            t = min_u64(t, p->pto_deadline);
        if (p->ack_deadline != 0)
            t = min_u64(t, p->ack_deadline);
        if (p->pace_deadline != 0)
            t = min_u64(t, p->pace_deadline);
    }
    return t;
}

void
rel_writable(struct rel *r, uint64_t now_us)
{
    struct rel_peer *p;

    rel_enter(r);
    r->blocked = 0;
    for (p = r->plist; p != NULL && !r->blocked; p = p->next) {
        pump(r, p, now_us);
        if (p->ack_now)
            send_ack(r, p);
    }
    rel_leave(r);
}

uint64_t
rel_last_heard(const struct rel *r, int hid)
{
    if (hid < 1 || hid > DGRAM_MAX_HID || r->peers[hid] == NULL)
        return 0;
    return r->peers[hid]->last_heard;
}

int
rel_peer_stats(const struct rel *r, int hid, struct rel_peer_stats *st)
{
    const struct rel_peer *p;

    if (hid < 1 || hid > DGRAM_MAX_HID || (p = r->peers[hid]) == NULL)
        return COLLS_ENOENT;
    *st = p->st;
    st->srtt_us = p->srtt;
    st->rttvar_us = p->rttvar;
    st->rto_us = p->rto;
    st->inflight = p->snd_nxt - p->snd_una;
    st->bw_bps = (uint64_t)max_dbl(p->bw_cur, p->bw_prev);
    st->pacing_bps =
        r->cfg.rate_bps != 0 ? r->cfg.rate_bps : (uint64_t)p->pace_rate;
    st->min_rtt_us = p->min_rtt;
    return 0;
}

void
rel_stats(const struct rel *r, struct rel_stats *st)
{
    *st = r->st;
}

/*
 * Our own incarnation changes (the daemon was declared down while alive
 * and comes back as a new one): every peer's streams start over, empty,
 * and datagrams carry my_inc from now on.  Peers keep their incarnation;
 * they challenge the new one as for a restart.
 */
void
rel_set_inc(struct rel *r, uint32_t my_inc)
{
    struct rel_peer *p;

    rel_enter(r);
    r->my_inc = my_inc;
    for (p = r->plist; p != NULL; p = p->next) {
        peer_drop_streams(r, p);
        peer_init_streams(r, p);
    }
    rel_leave(r);
}
