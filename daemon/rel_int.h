/*
 * rel_int.h -- what the three files of the reliable transport share; not
 * included outside them (rel.h is the one public interface).
 *
 *   rel.c      peers, incarnations and challenges, datagram output (fault
 *              injection, zero copy), the public entry points; it owns
 *              struct rel and every struct rel_peer's lifetime.
 *   relsend.c  the sender of a peer: message queue, fragmentation, send
 *              window, acks received, loss detection, RTO and tail loss
 *              probe timers, congestion window, delivery rate and pacing.
 *   relrecv.c  the receiver of a peer: reorder ring, reassembly, in-order
 *              delivery, the ack fields (cumulative + SACK) and pure ACKs.
 *
 * rel.c calls into relsend.c and relrecv.c; relsend.c calls relrecv.c
 * only for the ack fields of a DATA header (relrecv_hdr_fill) and rel.c
 * only for output (rel_out); relrecv.c calls rel.c's rel_out.  None of
 * them re-enters the API: rel_enter / rel_leave (rel.c) bracket every
 * public call.
 *
 * Shared invariants: sequence numbers are 32-bit serial numbers (seq_lt),
 * the first DATA of an incarnation pair is seq 1 and an ack is "next seq
 * expected"; a datagram of seq s lives at index s & r->mask of the
 * transmit ring (sender) and the reorder ring (receiver), both r->ring
 * (a power of two >= cfg.window) slots, allocated on first use.
 */
#ifndef COLLS_DAEMON_REL_INT_H
#define COLLS_DAEMON_REL_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "daemon/rel.h"
#include "proto/siphash.h"
#include "proto/dgram.h"
#include "proto/list.h"

#define REL_NIL          UINT32_MAX
#define REL_MAX_WINDOW   32768u
#define REL_FRAG_CNT_MAX 65535u
#define REL_CWND_INIT    64u
/* Within a receive batch (rel_input_begin), in-order large datagrams
   acked at once only every this many; the rest at the batch's end. */
#define REL_ACK_BATCH      32u
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
#define REL_LOSSY_MIN      8u        /* least losses of an overflow round */
#define REL_MIN_RTT_WIN_US 10000000u /* life of the least RTT sample */
#define REL_CAP_DGRAMS     64u       /* least headroom over 2 BDP, datagrams */

/* UNKNOWN: unacked beyond the SACK bitmap after a timeout; not counted
   in flight, resent only once it is known to be missing. */
enum { SLOT_FREE, SLOT_INFLIGHT, SLOT_SACKED, SLOT_LOST, SLOT_UNKNOWN };

/* An outgoing message; data follows the struct. */
struct rel_msg {
    struct rel_msg *next; /* the peer's queue, or r->dead */
    uint32_t id;
    uint32_t len;
    uint32_t nfrag; /* fragments, >= 1 */
    int refd;       /* some fragment went out by ops->send_ref */
    unsigned flags; /* REL_SEND_* of rel_sendvf */
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

/* A doubly linked list of transmit slots, by ring index (relsend.c). */
struct rel_slots {
    uint32_t head, tail, n;
};

/* One peer host: its address and incarnation, our sender to it and our
   receiver from it. */
struct rel_peer {
    struct list_node link; /* on r->plist, or r->zombies once removed */
    int hid;
    int removed;
    struct sockaddr_storage addr;
    socklen_t alen;
    uint32_t inc;
    uint32_t old_inc[REL_OLD_INCS]; /* ring of past incarnations */
    unsigned old_n;
    uint64_t last_heard;
    uint64_t last_reset_us;
    uint64_t last_chal_us;     /* last challenge sent */
    struct auth_replay replay; /* packet numbers seen (with a key) */
    struct rel_peer_stats st;

    /* sender (relsend.c) */
    struct rel_msg *q_head, *q_tail; /* messages not fully acked */
    struct rel_msg *q_cur;           /* first with unsent fragments */
    uint32_t cur_frag;
    uint32_t next_msg_id;
    struct rel_txslot *tx;
    uint32_t snd_una, snd_nxt;
    struct rel_slots sent, resent, rtx;
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
    /* delivery rate (see the top of relsend.c) */
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
    int overflowed;               /* a round lost > 1/8 (relsend.c) */
    int round_over;               /* this round counted as lossy already */
    int round_probed;             /* a sample of this round was not
                                     app-limited */
    unsigned cycle;               /* round in the gain cycle */
    double pace_rate;             /* bytes/s, 0: not paced */

    /* receiver (relrecv.c) */
    struct rel_rxslot *rx;
    uint8_t *rx_buf;
    uint32_t rcv_nxt;
    uint32_t rx_ooo; /* datagrams in the reorder ring */
    uint16_t echo_ts;
    uint32_t echo_seq, echo_seq2; /* latest two held out of order */
    unsigned rx_unacked;
    uint64_t ack_deadline;
    int ack_now;
    int ack_owed;       /* due at the end of the receive batch */
    uint32_t acked_nxt; /* rcv_nxt as our last ack said it */

    /* reassembly (relrecv.c) */
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
    struct list_node plist;   /* every peer, newest first */
    struct list_node zombies; /* removed, freed by rel_leave */
    struct rel_stats st;
    uint64_t rng;
    uint8_t key[SIPHASH_KEY_LEN]; /* of the challenge nonces */
    int unflushed;        /* ops->send_ref was called since ops->flush */
    struct rel_msg *dead; /* freed messages send_ref may still use */
    uint8_t *seal;        /* a datagram being sealed (mtu bytes; key) */
    uint8_t *plain;       /* a datagram being decrypted (--encrypt) */
    int blocked;
    int batching; /* in a receive batch: see rel_input_begin */
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

static inline double
max_dbl(double a, double b)
{
    return a > b ? a : b;
}

/* Datagrams in flight: sent and neither acked, SACKed nor lost. */
static inline uint32_t
in_flight(const struct rel_peer *p)
{
    return p->sent.n + p->resent.n;
}

/* Our acknowledgement went out (alone or on DATA): the receiver owes
   none.  Inline: every DATA sent calls it. */
static inline void
ack_sent(struct rel_peer *p)
{
    p->rx_unacked = 0;
    p->ack_deadline = 0;
    p->ack_now = 0;
    p->ack_owed = 0;
    p->acked_nxt = p->rcv_nxt;
}

/* ---- rel.c --------------------------------------------------------- */

/* Sends one datagram to p with fault injection; data belongs to m (NULL:
   send a copy).  0 (sent, or dropped on purpose) or -1 (would block). */
int rel_out(struct rel *r, struct rel_peer *p, const uint8_t *hdr,
            const uint8_t *data, size_t dlen, struct rel_msg *m);

/* ---- relsend.c ----------------------------------------------------- */

void relsend_init(struct rel *r, struct rel_peer *p);
void relsend_drop(struct rel *r, struct rel_peer *p);
int relsend_queue(struct rel *r, struct rel_peer *p, const struct iovec *iov,
                  int iovcnt, uint64_t len, unsigned flags);
void relsend_pump(struct rel *r, struct rel_peer *p, uint64_t now);
void relsend_on_ack(struct rel *r, struct rel_peer *p,
                    const struct dgram_hdr *h, int echo, uint64_t now);
void relsend_on_rto(struct rel *r, struct rel_peer *p, uint64_t now);
void relsend_on_pto(struct rel *r, struct rel_peer *p, uint64_t now);

/* ---- relrecv.c ----------------------------------------------------- */

void relrecv_init(struct rel_peer *p);
void relrecv_drop(struct rel *r, struct rel_peer *p);
void relrecv_hdr_fill(struct rel *r, struct rel_peer *p, struct dgram_hdr *h,
                      int type);
void relrecv_send_ack(struct rel *r, struct rel_peer *p);
void relrecv_on_data(struct rel *r, struct rel_peer *p,
                     const struct dgram_hdr *h, const uint8_t *data,
                     uint64_t now);

#endif
