/*
 * relsend.c -- the sender of the reliable transport, one per peer (see
 * rel.h for the transport, rel_int.h for how the files divide it).
 *
 * Owns: the peer's message queue, its transmit ring and slot lists, the
 * acks it receives (cumulative, SACK, echoes), loss detection, the RTO
 * and tail loss probe timers, the congestion window, the delivery rate
 * estimate and pacing.  May call: rel_out (rel.c) to send a datagram,
 * relrecv_hdr_fill (relrecv.c) for the ack fields every DATA carries,
 * stats_hist_add; never an ops callback but through rel_out, and never
 * the public API.
 *
 * relsend_queue copies a message once into a struct rel_msg; the
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
 * Loss detection, all O(1) per datagram or amortised (the pure ACKs it
 * reads are described at the top of relrecv.c):
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
 *    RFC 3522), and the RTO is raised to cover the delay that ack took
 *    (RFC 4015's response; spurious_rto).
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
 * probe built), then 1; a sample then counts at most the pacing rate, so
 * the estimate grows only in the probe's rounds (by at most 1.5 a round,
 * rate_sample).  Samples of datagrams sent
 * with nothing more queued (app-limited) only raise the estimate, and only a
 * round with a sample that was not app-limited counts towards the 3 (as in
 * BBR): the estimate of app-limited rounds is the application's rate, and
 * pacing a bulk transfer at it once held a flood to its heartbeats' rate (307
 * B/s; test-rel applim_stream).  A round that loses at least 8 datagrams
 * and more than 1/8 also ends startup (as in BBRv2): a queue on the path
 * is shallower than what an unpaced burst puts into it; one or two lost
 * of a short round are random loss (test-rel few_losses).  It does so as
 * soon as at least 8 losses are more than 1/8 of what the round has
 * resolved, not at its end: the end waits for the cumulative ack, so for
 * the lost datagrams, and their unpaced retransmissions overran the
 * queue again (test-rel overflow_fresh: 47,096 retransmissions of 50,052
 * datagrams, 1,092 of 4,048 with pacing from the eighth loss).  A send after
 * idleness starts over with startup, unless a round of this peer ever
 * lost that much (`overflowed'); then it stays paced at the estimate,
 * as BBR restarts from idle.  On 2 emulated hosts at 10 Mbit/s behind tbf
 * (a 20 ms queue), restarting every train of collsctl tune unpaced made
 * half of the datagrams retransmissions and doubled the measured gap of
 * 1 KiB messages; a path that never overflowed loses nothing by an
 * unpaced burst, and its estimate may date from a time its CPUs were
 * busy.  (Random loss of 8 or more above 1/8 counts as overflow too:
 * pacing then costs little, as the window is small anyway.)  With
 * rate_bps, that rate is used instead.  Pacing is a token bucket 2 ms
 * deep.
 *
 * Memory per peer: the queued messages and one transmit ring of window
 * datagrams, allocated by the first relsend_queue.
 */
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/rel_int.h"
#include "daemon/stats.h"
#include "proto/dgram.h"

/* ---- slot lists --------------------------------------------------- */

/*
 * The sent, resent and rtx lists link transmit slots by ring index, not
 * by pointer (proto/list.h): 8 bytes a slot instead of 16, in a ring
 * allocated once.  Append and removal are O(1) as with list.h.
 */
static void
slots_init(struct rel_slots *l)
{
    l->head = l->tail = REL_NIL;
    l->n = 0;
}

static void
slots_append(struct rel_peer *p, struct rel_slots *l, uint32_t i)
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
slots_del(struct rel_peer *p, struct rel_slots *l, uint32_t i)
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

/* Takes slot i off whichever list its state puts it on. */
static void
slot_unlink(struct rel_peer *p, uint32_t i)
{
    if (p->tx[i].state == SLOT_INFLIGHT)
        slots_del(p, p->tx[i].retrans ? &p->resent : &p->sent, i);
    else if (p->tx[i].state == SLOT_LOST)
        slots_del(p, &p->rtx, i);
}

/* ---- the peer's sender --------------------------------------------- */

/* The sender of a (re)started peer: nothing sent, initial RTO and
   congestion state. */
void
relsend_init(struct rel *r, struct rel_peer *p)
{
    p->snd_una = p->snd_nxt = 1;
    p->next_msg_id = 1;
    slots_init(&p->sent);
    slots_init(&p->resent);
    slots_init(&p->rtx);
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
    p->overflowed = 0;
    p->round_over = 0;
    p->round_probed = 0;
    p->cycle = 0;
    p->pace_rate = 0;
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

/* Drops the queued messages and the window (the ring stays allocated). */
void
relsend_drop(struct rel *r, struct rel_peer *p)
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

static void pace_update(struct rel_peer *p);

/* RFC 6298: the RTO from SRTT and RTTVAR, within [rto_min, rto_max]. */
static void
rto_update(struct rel *r, struct rel_peer *p)
{
    uint64_t rto = p->srtt + max_u64(REL_CLOCK_G_US, 4 * p->rttvar);

    p->rto = min_u64(max_u64(rto, r->cfg.rto_min_us), r->cfg.rto_max_us);
}

/*
 * A timeout proved spurious by the ack of a datagram sent before it,
 * late us after it was sent: the path's delay outgrew the RTO.  As RFC
 * 4015's response: SRTT and RTTVAR at least what that delay says (late,
 * late / 2), RTO from them, no lower than before the timeout.  Undoing
 * to the old RTO alone left it under the delay: on 8 emulated hosts at
 * 10 Mbit/s behind tbf (a 20 ms queue) the datagrams of one ring step
 * waited behind the step of another flow, RTO (srtt of unqueued 1 KiB
 * messages, ~1 ms, and the 5 ms floor) fired again and again, and every
 * timeout resent a window into the same queue: a ring allreduce of
 * 64 KiB took 360-440 ms, 103 with a 40 ms floor.
 */
static void
spurious_rto(struct rel *r, struct rel_peer *p, uint64_t late)
{
    if (late > p->srtt)
        p->srtt = late;
    if (late / 2 > p->rttvar)
        p->rttvar = late / 2;
    rto_update(r, p);
    p->rto = max_u64(p->rto, p->undo_rto);
}

/*
 * Queues a message of len bytes (len <= max_message, checked by
 * rel_sendv), copied once from iov, behind p's queue; the caller pumps.
 * 0 or COLLS_ENOMEM.
 */
int
relsend_queue(struct rel *r, struct rel_peer *p, const struct iovec *iov,
              int iovcnt, uint64_t len, unsigned flags)
{
    struct rel_msg *m;
    size_t off = 0;
    int i;

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
    m->flags = flags;
    m->id = p->next_msg_id++;
    m->len = (uint32_t)len;
    m->nfrag = len == 0 ? 1 : (uint32_t)((len + r->fragmax - 1) / r->fragmax);
    if (p->q_tail != NULL)
        p->q_tail->next = m;
    else
        p->q_head = m;
    p->q_tail = m;
    if (p->q_cur == NULL) {
        if (p->snd_una == p->snd_nxt && !p->overflowed) {
            /* from idle, on a path whose queue never overflowed: send
               at once (startup); one that did keeps pacing at its
               estimate (top of the file) */
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
    return 0;
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

    relrecv_hdr_fill(r, p, &h, DGRAM_DATA);
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
void
relsend_pump(struct rel *r, struct rel_peer *p, uint64_t now)
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
             * datagram per small request).  One that will have no
             * reply (REL_SEND_ACKNOW, a heartbeat) does: its receiver
             * acks in the wake-up that brought it, not in another one
             * ack_delay_us later */
            if ((p->cur_frag + 1 == m->nfrag &&
                 ((m->nfrag > 1 && m->next == NULL) ||
                  (m->flags & REL_SEND_ACKNOW))) ||
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
            slots_del(p, &p->rtx, i);
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
        slots_append(p, rtx ? &p->resent : &p->sent, i);
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
    rto_update(r, p);
}

static void pace_update(struct rel_peer *p);

/* 1 if lost of lost + acked datagrams of a round say that a queue on the
   path overflowed: at least REL_LOSSY_MIN and more than 1/8.  An
   overflowing queue loses a run of datagrams; one or two lost of a short
   round are random loss, and ending startup on them paced a fresh peer at
   the rate of its few small messages (test-rel few_losses). */
static int
round_lossy(uint32_t lost, uint32_t acked)
{
    return lost >= REL_LOSSY_MIN && lost * 8 > acked + lost;
}

/* The round overflowed a queue (round_lossy).  Counted once per round,
   here or at its end; from the first, the peer stays paced after
   idleness (top of the file). */
static void
round_overflowed(struct rel_peer *p)
{
    if (p->round_over)
        return;
    p->round_over = 1;
    p->overflowed = 1;
    p->st.overflow_rounds++;
}

static void
mark_lost(struct rel_peer *p, uint32_t i, int fast)
{
    struct rel_txslot *s = &p->tx[i];

    slot_unlink(p, i);
    s->state = SLOT_LOST;
    s->fast = (uint8_t)fast;
    slots_append(p, &p->rtx, i);
    p->round_lost++;
    if (!round_lossy(p->round_lost, p->round_acked))
        return;
    round_overflowed(p);
    /* startup overran a queue: pace from now on, not from the round's
       end.  Its end waits for the cumulative ack, which waits for the
       lost; unpaced, each retransmission of a burst went into the full
       queue again (a 200 us queue at 100 MB/s: 47,000 retransmissions
       for 3,000 datagrams, test-rel overflow_fresh) */
    if (!p->filled && max_dbl(p->bw_cur, p->bw_prev) > 0) {
        p->filled = 1;
        p->cycle = 1;
        pace_update(p);
    }
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
    if (!applim)
        p->round_probed = 1;
    /* once paced, the rate can only grow as fast as the probes push it
       (1.25 per cycle): a larger sample counts deliveries that happened
       earlier (a hole filled late, acks held up), not a faster path */
    if (p->filled && rate > 1.5 * p->bw_round)
        rate = 1.5 * p->bw_round;
    /* nor can a paced sender's deliveries outrun its pacing, but over an
       interval too short to tell: behind a shaper whose bucket holds a
       few datagrams, those that find it full pass at once, and after
       each silence samples over a round trip of 100 us counted them
       (28-57 MB/s on a 1.25 MB/s link).  Capped at 1.5 times the last
       round's estimate only, such samples raised the estimate round
       after round (rounds of one or two datagrams: 1.2, 1.8, 2.7 MB/s)
       and the pacing overran the shaper's queue (test-rel bucket: 1,526
       of 5,948 datagrams resent; 365 of 4,787 with this cap) */
    if (p->filled && p->pace_rate > 0 && rate > p->pace_rate)
        rate = p->pace_rate;
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
    int over = round_lossy(p->round_lost, p->round_acked);

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
    if (over)
        round_overflowed(p);
    p->round_over = 0;
    if (!p->filled) {
        double bw = max_dbl(p->bw_cur, p->bw_prev);
        if (over && bw > 0) {
            /* a queue overflowed: startup is over (as in BBRv2) */
            p->filled = 1;
            p->cycle = 1;
        } else if (!p->round_probed) {
            /* an app-limited round's estimate is the application's
               rate, not the path's: it says nothing about a full pipe
               (BBR skips such rounds too), and pacing at it held a
               flood to its heartbeats' rate */
        } else if (bw >= p->full_bw * 1.25) {
            p->full_bw = bw;
            p->full_cnt = 0;
        } else if (++p->full_cnt >= 3) {
            p->filled = 1;
            p->cycle = 1; /* drain what startup queued */
        }
    } else if (p->filled) {
        p->cycle = (p->cycle + 1) % REL_GAIN_CYCLE;
    }
    p->round_probed = 0;
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
rack(struct rel_peer *p, struct rel_slots *l, uint64_t before)
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
 * Slot s is acked by the ack being processed: it is the candidate for the
 * RTT sample if it is the newest first transmission so far (Karn's rule).
 */
static inline void
rtt_pick(const struct rel_txslot *s, uint64_t *newest, int *sample)
{
    if (s->state == SLOT_INFLIGHT && !s->retrans &&
        (!*sample || s->sent_us > *newest)) {
        *newest = s->sent_us;
        *sample = 1;
    }
}

/* Slot j, above the cumulative ack, was reported received (an ACK's echo
   or a SACK bit): it is delivered and SACKED. */
static inline void
sack_slot(struct rel_peer *p, uint32_t j, struct rate_pick *k)
{
    struct rel_txslot *s = &p->tx[j];

    delivered(p, s, k);
    slot_unlink(p, j);
    s->state = SLOT_SACKED;
    p->round_acked++;
}

/*
 * Processes the ack fields of a datagram from p.  echo: the header's tsval
 * is an echo (pure ACK).
 */
void
relsend_on_ack(struct rel *r, struct rel_peer *p, const struct dgram_hdr *h,
               int echo, uint64_t now)
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
        rtt_pick(s, &newest, &sample);
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
        if (i == 0)
            rtt_pick(s, &newest, &sample);
        sack_slot(p, j, &k);
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
            rtt_pick(s, &newest, &sample);
            sack_slot(p, j, &k);
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
            p->cwnd = p->undo_cwnd;
            p->ssthresh = p->undo_ssthresh;
            spurious_rto(r, p, now - min_u64(now, techo));
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
void
relsend_on_rto(struct rel *r, struct rel_peer *p, uint64_t now)
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
    p->round_over = 0;
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
            slots_append(p, &p->rtx, i);
        } else {
            slot_unlink(p, i);
            p->tx[i].state = SLOT_UNKNOWN;
        }
    }
    p->rto_deadline = p->snd_una != p->snd_nxt ? now + p->rto : 0;
    p->probes = REL_PROBES; /* no probes until acks come back */
    p->pto_deadline = 0;
    relsend_pump(r, p, now);
}

/*
 * Tail loss probe: nothing was acked for a while.  Resends the most
 * recently sent datagram so that its ack (SACK bits, echoed time) shows
 * what was lost: a lost retransmission at the window's base, or the
 * tail of a burst, without waiting for the RTO.
 */
void
relsend_on_pto(struct rel *r, struct rel_peer *p, uint64_t now)
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
    slots_append(p, &p->resent, i);
    p->tx[i].sent_us = now;
    rate_stamp(p, &p->tx[i], now);
    p->st.retransmits++;
    p->probes++;
    arm_pto(r, p, now);
}
