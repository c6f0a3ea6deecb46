/*
 * rel.c -- the reliable datagram transport between daemons (see rel.h):
 * its peers, their incarnations and challenges, datagram output, and the
 * public entry points.  rel_int.h says how the work divides among rel.c,
 * relsend.c (the sender of each peer) and relrecv.c (its receiver).
 *
 * Owns: struct rel and the lifetime of every struct rel_peer (created by
 * rel_peer_set, put on r->zombies by rel_peer_remove and freed when the
 * outermost API call returns), the fault injection and zero-copy batching
 * of output (rel_out), and the checks every received datagram passes
 * before the sender or receiver sees it.  May call: relsend_* and
 * relrecv_*, the ops callbacks, dgram.h and siphash.h; nothing above the
 * transport.
 *
 * Per peer there is a sender and a receiver, both indexed by 32-bit
 * datagram sequence numbers (serial arithmetic; the first DATA of an
 * incarnation pair is seq 1, ack = "next seq expected").
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
 * Authentication (rel.h): raw_send seals every datagram that leaves
 * (the header gets DGRAM_F_AUTH, the trailer follows the payload; the
 * nonce prefix is the header's src_hid, dst_hid and src_inc) and
 * rel_input opens every datagram first (auth_check), so the challenge
 * above is authenticated too.  The replay window of a peer follows its
 * adopted incarnation; datagrams of other incarnations never reach a
 * stream, so they need none.
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
#include "daemon/rel_int.h"
#include "proto/siphash.h"
#include "proto/bytes.h"
#include "proto/dgram.h"
#include "proto/list.h"

/* Visits every peer p of r, newest first; the body must not remove p. */
#define REL_FOREACH_PEER(p, r)                                                 \
    for ((p) = list_entry((r)->plist.next, struct rel_peer, link);             \
         &(p)->link != &(r)->plist;                                            \
         (p) = list_entry((p)->link.next, struct rel_peer, link))

void
rel_config_default(struct rel_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mtu = DGRAM_MTU_DEFAULT;
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

/* The streams of a (re)started peer: nothing sent, nothing received. */
static void
peer_init_streams(struct rel *r, struct rel_peer *p)
{
    relsend_init(r, p);
    relrecv_init(p);
}

/*
 * Drops everything a peer's streams hold: queued messages, the partial
 * message, window and reorder state (the rings stay allocated).
 */
static void
peer_drop_streams(struct rel *r, struct rel_peer *p)
{
    relsend_drop(r, p);
    relrecv_drop(r, p);
}

/* Frees what a peer holds, rings included (not the peer itself). */
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

/* ---- output -------------------------------------------------------- */

/*
 * Seals one datagram where ops->send_buf puts it in the send queue, or
 * into r->seal and hands it to ops->send (a copy: the tag covers header
 * and payload, which must then lie together).
 */
static int
raw_send_sealed(struct rel *r, const struct sockaddr_storage *addr,
                socklen_t alen, const uint8_t *hdr, const uint8_t *data,
                size_t dlen)
{
    struct iovec iov;
    uint8_t *b = r->seal;

    if (r->ops.send_buf != NULL &&
        (b = r->ops.send_buf(r->ctx, (const struct sockaddr *)addr, alen,
                             DGRAM_HDR_LEN + dlen + AUTH_TRAILER_LEN)) == NULL)
        return -1;
    memcpy(b, hdr, DGRAM_HDR_LEN);
    put_u16(b + 2, get_u16(b + 2) | DGRAM_F_AUTH);
    if (dlen > 0)
        memcpy(b + DGRAM_HDR_LEN, data, dlen);
    iov.iov_len =
        auth_seal(r->cfg.auth, b + 4, b, DGRAM_HDR_LEN, DGRAM_HDR_LEN + dlen);
    if (r->ops.send_buf != NULL)
        return 0; /* sealed where it is sent from */
    iov.iov_base = b;
    return r->ops.send(r->ctx, (const struct sockaddr *)addr, alen, &iov, 1);
}

/* Hands one datagram to ops (by reference if m, see rel_ops), sealed
   when there is a key. */
static int
raw_send(struct rel *r, const struct sockaddr_storage *addr, socklen_t alen,
         const uint8_t *hdr, const uint8_t *data, size_t dlen,
         struct rel_msg *m)
{
    struct iovec iov[2];

    if (r->cfg.auth != NULL)
        return raw_send_sealed(r, addr, alen, hdr, data, dlen);
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
int
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

/* ---- entry and exit ----------------------------------------------- */

/* Marks entry into the API (callbacks may re-enter it). */
static void
rel_enter(struct rel *r)
{
    r->depth++;
}

/* Frees the dead messages (no batch may point into them any more) and
   the removed peers. */
static void
rel_reap(struct rel *r)
{
    struct list_node *n, *tmp;

    while (r->dead != NULL) {
        struct rel_msg *m = r->dead;
        r->dead = m->next;
        free(m);
    }
    LIST_FOREACH_SAFE (n, tmp, &r->zombies) {
        list_del(n);
        free(list_entry(n, struct rel_peer, link));
    }
}

/*
 * Marks exit from the API.  The outermost exit sends the datagram held
 * back by reorder injection, flushes a zero-copy batch and frees the
 * messages it may have pointed into, and frees removed peers.
 */
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
    }
    rel_reap(r);
}

/* ---- incarnations -------------------------------------------------- */

/* Tells p (which used a wrong dst_inc) our incarnation. */
static void
send_reset(struct rel *r, struct rel_peer *p, uint64_t now)
{
    struct dgram_hdr h;
    uint8_t buf[DGRAM_HDR_LEN];

    if (r->blocked ||
        (p->last_reset_us != 0 && now - p->last_reset_us < REL_RESET_GAP_US))
        return;
    relrecv_hdr_fill(r, p, &h, DGRAM_RESET);
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
    relrecv_hdr_fill(r, p, &h, DGRAM_PROBE);
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

/* ---- input --------------------------------------------------------- */

/* A datagram from `from' failed authentication: counted (for its peer
   too when the address is the peer's) and reported. */
static void
auth_failed(struct rel *r, const struct sockaddr *from, socklen_t alen,
            const uint8_t *dgram, size_t len)
{
    struct rel_peer *p = NULL;
    unsigned hid;

    r->st.auth_failures++;
    if (len >= 6 && (hid = get_u16(dgram + 4)) >= 1 && hid <= DGRAM_MAX_HID)
        p = r->peers[hid];
    if (p != NULL && addr_equal(&p->addr, p->alen, from, alen))
        p->st.auth_failures++;
    if (r->ops.auth_fail != NULL)
        r->ops.auth_fail(r->ctx, from, alen);
}

/*
 * The first check of a received datagram: with a key it must carry
 * DGRAM_F_AUTH and a trailer whose tag verifies (then *dgram and *len
 * become the datagram without its trailer, decrypted into r->plain with
 * --encrypt, and *salt, *pn its packet number); without a key it must
 * carry no DGRAM_F_AUTH.  0, or -1 (counted and reported).
 */
static int
auth_check(struct rel *r, const struct sockaddr *from, socklen_t alen,
           const uint8_t **dgram, size_t *len, uint64_t *salt, uint64_t *pn)
{
    const uint8_t *b = *dgram;
    int sealed;
    long n;

    if (*len < DGRAM_HDR_LEN || *len > DGRAM_MAX_LEN || b[0] != DGRAM_VERSION)
        return 0; /* dgram_get refuses it as malformed */
    sealed = (get_u16(b + 2) & DGRAM_F_AUTH) != 0;
    if (r->cfg.auth == NULL) {
        if (!sealed)
            return 0;
        auth_failed(r, from, alen, b, *len);
        return -1;
    }
    n = -1;
    if (sealed)
        n = auth_open(r->cfg.auth, b + 4, b, DGRAM_HDR_LEN, *len,
                      r->plain != NULL ? r->plain + DGRAM_HDR_LEN : NULL, salt,
                      pn);
    if (n < 0) {
        auth_failed(r, from, alen, b, *len);
        return -1;
    }
    if (r->plain != NULL) {
        memcpy(r->plain, b, DGRAM_HDR_LEN);
        *dgram = r->plain;
    }
    *len = (size_t)n;
    return 0;
}

/*
 * One datagram from the socket: the header, the source's address, its
 * incarnations (challenging a new one) and our hid are checked here, then
 * the ack fields go to the sender and DATA to the receiver.
 */
void
rel_input(struct rel *r, const struct sockaddr *from, socklen_t alen,
          const uint8_t *dgram, size_t len, uint64_t now_us)
{
    struct dgram_hdr h;
    struct rel_peer *p;
    uint64_t salt = 0, pn = 0;

    rel_enter(r);
    r->st.dgrams_in++;
    if (auth_check(r, from, alen, &dgram, &len, &salt, &pn) != 0)
        goto out;
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
    if (r->cfg.auth != NULL &&
        auth_replay_check(&p->replay, h.src_inc, salt, pn) != 0) {
        r->st.replays++;
        p->st.replays++;
        goto out;
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
        relsend_on_ack(r, p, &h, 0, now_us);
        relrecv_on_data(r, p, &h, dgram + DGRAM_HDR_LEN, now_us);
        break;
    case DGRAM_ACK:
        p->st.acks_recv++;
        relsend_on_ack(r, p, &h, 1, now_us);
        break;
    case DGRAM_PROBE:
        relsend_on_ack(r, p, &h, 0, now_us);
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
    relsend_pump(r, p, now_us);
    if (p->ack_now && !p->removed)
        relrecv_send_ack(r, p);
out:
    rel_leave(r);
}

void
rel_input_begin(struct rel *r)
{
    r->batching = 1;
}

void
rel_input_end(struct rel *r)
{
    struct rel_peer *p;

    r->batching = 0;
    rel_enter(r);
    REL_FOREACH_PEER (p, r)
        if (p->ack_owed && !p->removed)
            relrecv_send_ack(r, p);
    rel_leave(r);
}

/* ---- the API ------------------------------------------------------- */

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
    if (cfg->auth != NULL) {
        if (cfg->mtu < DGRAM_HDR_LEN + AUTH_TRAILER_LEN + 64)
            goto fail; /* no room for fragments after the trailer */
        r->fragmax -= AUTH_TRAILER_LEN;
    }
    while (ring < cfg->window)
        ring *= 2;
    r->ring = ring;
    r->mask = ring - 1;
    r->cwnd_min = cfg->window < REL_CWND_MIN ? cfg->window : REL_CWND_MIN;
    r->rng = cfg->seed;
    list_init(&r->plist);
    list_init(&r->zombies);
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
    if (cfg->reorder > 0 && (r->hold = malloc(cfg->mtu)) == NULL)
        goto fail;
    if (cfg->auth != NULL && ops->send_buf == NULL &&
        (r->seal = malloc(cfg->mtu)) == NULL)
        goto fail;
    if (cfg->auth != NULL && cfg->auth->encrypt &&
        (r->plain = malloc(DGRAM_MAX_LEN)) == NULL)
        goto fail;
    return r;
fail:
    free(r->hold);
    free(r->seal);
    free(r->plain);
    free(r);
    return NULL;
}

void
rel_free(struct rel *r)
{
    struct list_node *n, *tmp;

    if (r == NULL)
        return;
    if (r->unflushed)
        r->ops.flush(r->ctx); /* no batch may point into what we free */
    r->unflushed = 0;
    LIST_FOREACH_SAFE (n, tmp, &r->plist) {
        struct rel_peer *p = list_entry(n, struct rel_peer, link);

        peer_free_mem(r, p);
        free(p);
    }
    rel_reap(r);
    free(r->hold);
    free(r->seal);
    free(r->plain);
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
        list_add_head(&r->plist, &p->link);
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
    struct rel_peer *p;

    if (hid < 1 || hid > DGRAM_MAX_HID || (p = r->peers[hid]) == NULL)
        return;
    rel_enter(r);
    /* First the ack it is owed for what was delivered: a peer removed
       from inside deliver (a daemon that leaves says so in its last
       message) would otherwise wait for it until it gives up. */
    if (p->inc != 0 &&
        (p->ack_now || p->ack_deadline != 0 || p->acked_nxt != p->rcv_nxt))
        relrecv_send_ack(r, p);
    r->peers[hid] = NULL;
    list_del(&p->link);
    peer_free_mem(r, p);
    p->removed = 1;
    list_add_head(&r->zombies, &p->link);
    if (r->ops.reset != NULL)
        r->ops.reset(r->ctx, hid, 0);
    rel_leave(r);
}

int
rel_sendv(struct rel *r, int hid, const struct iovec *iov, int iovcnt,
          uint64_t now_us)
{
    return rel_sendvf(r, hid, iov, iovcnt, 0, now_us);
}

int
rel_sendvf(struct rel *r, int hid, const struct iovec *iov, int iovcnt,
           unsigned flags, uint64_t now_us)
{
    struct rel_peer *p;
    uint64_t len = 0;
    int i, err;

    if (hid < 1 || hid > DGRAM_MAX_HID || (p = r->peers[hid]) == NULL)
        return COLLS_ENOENT;
    if (iovcnt < 0 || (iovcnt > 0 && iov == NULL))
        return COLLS_EINVAL;
    for (i = 0; i < iovcnt; i++) {
        len += iov[i].iov_len;
        if (len > r->cfg.max_message)
            return COLLS_EMSGSIZE;
    }
    err = relsend_queue(r, p, iov, iovcnt, len, flags);
    if (err != 0)
        return err;
    rel_enter(r);
    relsend_pump(r, p, now_us);
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
    REL_FOREACH_PEER (p, r) {
        if (was_blocked)
            relsend_pump(r, p, now_us);
        if (p->rto_deadline != 0 && now_us >= p->rto_deadline)
            relsend_on_rto(r, p, now_us);
        else if (p->pto_deadline != 0 && now_us >= p->pto_deadline)
            relsend_on_pto(r, p, now_us);
        if (p->pace_deadline != 0 && now_us >= p->pace_deadline) {
            p->pace_deadline = 0;
            relsend_pump(r, p, now_us);
        }
        if (p->ack_now || (p->ack_deadline != 0 && now_us >= p->ack_deadline))
            relrecv_send_ack(r, p);
    }
    rel_leave(r);
}

/* The earliest deadline of r's peers: of every kind, or (pace_only) of
   paced sends only; UINT64_MAX: none. */
static uint64_t
next_deadline(const struct rel *r, int pace_only)
{
    const struct rel_peer *p;
    uint64_t t = UINT64_MAX;

    REL_FOREACH_PEER (p, r) {
        if (p->pace_deadline != 0)
            t = min_u64(t, p->pace_deadline);
        if (pace_only)
            continue;
        if (p->rto_deadline != 0)
            t = min_u64(t, p->rto_deadline);
        if (p->pto_deadline != 0)
            t = min_u64(t, p->pto_deadline);
        if (p->ack_deadline != 0)
            t = min_u64(t, p->ack_deadline);
    }
    return t;
}

uint64_t
rel_next_timeout(const struct rel *r)
{
    return next_deadline(r, 0);
}

uint64_t
rel_next_pace(const struct rel *r)
{
    return next_deadline(r, 1);
}

void
rel_writable(struct rel *r, uint64_t now_us)
{
    struct rel_peer *p;

    rel_enter(r);
    r->blocked = 0;
    REL_FOREACH_PEER (p, r) {
        if (r->blocked)
            break;
        relsend_pump(r, p, now_us);
        if (p->ack_now)
            relrecv_send_ack(r, p);
    }
    rel_leave(r);
}

int
rel_blocked(const struct rel *r)
{
    return r->blocked;
}

void
rel_auth_failed(struct rel *r, const struct sockaddr *from, socklen_t alen)
{
    auth_failed(r, from, alen, NULL, 0);
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
    REL_FOREACH_PEER (p, r) {
        peer_drop_streams(r, p);
        peer_init_streams(r, p);
    }
    rel_leave(r);
}
