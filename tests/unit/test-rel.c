/*
 * test-rel.c -- the reliable transport over a simulated network.
 *
 * 2..4 struct rel instances live in one process.  Their ops->send puts
 * datagrams into a priority queue ordered by a virtual clock (fixed
 * latency; deterministic loss, duplication and extra delay for reordering
 * from a seeded PRNG).  The loop advances the clock to the next datagram
 * or to the earliest rel_next_timeout and calls rel_input / rel_timer, so
 * every run is deterministic and takes no real time.
 *
 * Every message carries pseudo-random bytes from a per-message seed; the
 * receiver checks length and bytes against the sender's list, in order,
 * which proves delivery exactly once, intact and in order.
 *
 * Keyed runs (sim_key): every node seals with its own struct auth (same
 * cluster key, its own salt), and the forged-datagram tests inject what
 * an attacker without the key could send, beside a live stream.
 */
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/auth.h"
#include "daemon/rel.h"
#include "proto/siphash.h"
#include "daemon/udp.h"
#include "proto/bytes.h"
#include "proto/dgram.h"
#include "tests/unit/suites.h"

#define SIM_NODES   4
#define SIM_MAXMSG  64
#define SIM_LATENCY 50  /* us, one way */
#define SIM_JITTER  300 /* us of extra delay for reordered datagrams */
#define SIM_PORT    7000
#define SIM_REFS    4096 /* batch of a zero-copy node */

/* ck_assert writes to a file on every call: too slow per datagram. */
#define HOT_ASSERT(c)                                                          \
    do {                                                                       \
        if (!(c))                                                              \
            ck_abort_msg("assertion failed: %s", #c);                          \
    } while (0)

struct pkt {
    uint64_t time, order;
    int from, to;
    size_t len;
    uint8_t *data;
};

struct expect {
    size_t len[SIM_MAXMSG];
    uint64_t seed[SIM_MAXMSG];
    int sent, got;
};

struct sim;

struct node {
    struct sim *sim;
    int idx;
    struct rel *r;
    struct sockaddr_in addr;
    uint32_t inc;
    int resets;
    uint32_t reset_inc;
    struct auth auth; /* this node's seal (keyed runs) */
};

struct sim {
    struct node n[SIM_NODES];
    int nn;
    uint64_t now, order, rng;
    double loss, dup, reorder;
    int cut;    /* drop everything */
    int eagain; /* every eagain-th send fails with -1 */
    unsigned long sends;
    int writable; /* a send failed: call rel_writable */
    struct pkt *heap;
    size_t hn, hcap;
    struct expect ex[SIM_NODES][SIM_NODES]; /* [from][to] */
    int errors;                             /* deliveries that did not match */
    unsigned long delivered_bytes;
    int zc;                    /* nodes use send_ref/flush (zero copy) */
    double bn_rate;            /* bytes/us of a bottleneck on node 0's output */
    uint64_t bn_free, bn_qmax; /* link busy until; longest queue, us */
    double bn_burst; /* bytes a token bucket lets through at once (tbf) */
    unsigned long bn_drops;
    uint64_t queue_us; /* a standing queue: extra delay of every datagram */
    struct ref *refs;  /* datagrams sent by reference, not yet flushed */
    size_t nrefs;
};

/* A datagram queued by sim_send_ref: its data stays rel's until flush. */
struct ref {
    int from;
    struct sockaddr_in to;
    uint8_t hdr[DGRAM_HDR_LEN];
    const uint8_t *data;
    size_t len;
    uint64_t sum; /* of data when queued: rel must not change or free it */
    uint8_t *own; /* sim_send_buf: the whole datagram, the sim's to free */
};

/* ---- deterministic data --------------------------------------------- */

static uint64_t
sim_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double
sim_unit(struct sim *s)
{
    return (double)(sim_rand(&s->rng) >> 11) * (1.0 / 9007199254740992.0);
}

static void
fill(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 2654435761u + 1;
    size_t i;

    for (i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (uint8_t)(x >> 56);
    }
}

static int
check_fill(const uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 2654435761u + 1;
    size_t i;

    for (i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        if (p[i] != (uint8_t)(x >> 56))
            return 0;
    }
    return 1;
}

/* ---- the datagram queue (binary heap on time, then order) ----------- */

static int
pkt_before(const struct pkt *a, const struct pkt *b)
{
    return a->time < b->time || (a->time == b->time && a->order < b->order);
}

static void
heap_push(struct sim *s, struct pkt p)
{
    size_t i;

    if (s->hn == s->hcap) {
        s->hcap = s->hcap ? s->hcap * 2 : 1024;
        s->heap = realloc(s->heap, s->hcap * sizeof *s->heap);
        HOT_ASSERT(s->heap != NULL);
    }
    i = s->hn++;
    while (i > 0 && pkt_before(&p, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = p;
}

static struct pkt
heap_pop(struct sim *s)
{
    struct pkt top = s->heap[0], last = s->heap[--s->hn];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->hn)
            break;
        if (c + 1 < s->hn && pkt_before(&s->heap[c + 1], &s->heap[c]))
            c++;
        if (!pkt_before(&s->heap[c], &last))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->hn > 0)
        s->heap[i] = last;
    return top;
}

/* ---- rel callbacks -------------------------------------------------- */

static void
sim_enqueue(struct sim *s, int from, int to, const uint8_t *data, size_t len,
            uint64_t delay)
{
    struct pkt p;

    p.time = s->now + delay;
    p.order = s->order++;
    p.from = from;
    p.to = to;
    p.len = len;
    p.data = malloc(len);
    HOT_ASSERT(p.data != NULL);
    memcpy(p.data, data, len);
    heap_push(s, p);
}

/* 1 (and the loop calls rel_writable) if this send is to fail. */
static int
sim_eagain(struct sim *s)
{
    s->sends++;
    if (s->eagain && s->sends % (unsigned long)s->eagain == 0) {
        s->writable = 1;
        return 1;
    }
    return 0;
}

/* Puts one datagram on the network (subject to loss, dup, reorder). */
static void
sim_wire(struct node *nd, const struct sockaddr *addr, socklen_t alen,
         const struct iovec *iov, int iovcnt)
{
    struct sim *s = nd->sim;
    const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;
    uint8_t buf[DGRAM_MAX_LEN];
    size_t len = 0;
    int i, to;
    uint64_t delay = SIM_LATENCY + s->queue_us;

    HOT_ASSERT(alen == sizeof(struct sockaddr_in));
    for (i = 0; i < iovcnt; i++) {
        HOT_ASSERT(len + iov[i].iov_len <= sizeof buf);
        memcpy(buf + len, iov[i].iov_base, iov[i].iov_len);
        len += iov[i].iov_len;
    }
    to = ntohs(sin->sin_port) - SIM_PORT;
    if (to < 0 || to >= s->nn || s->cut)
        return;
    if (s->loss > 0 && sim_unit(s) < s->loss)
        return;
    if (s->bn_rate > 0 && nd->idx == 0) {
        /* a FIFO drained at bn_rate, dropping at the tail when full.
           With a bucket of bn_burst bytes (tbf) a datagram leaves when
           the tokens cover it: the link's schedule may run that many
           bytes' time behind now, bn_free the time its last byte is
           covered */
        uint64_t lead = (uint64_t)(s->bn_burst / s->bn_rate);
        uint64_t full = s->now > lead ? s->now - lead : 0;
        uint64_t base = s->bn_free > full ? s->bn_free : full;
        uint64_t end = base + (uint64_t)((double)len / s->bn_rate) + 1;

        if (base > s->now && base - s->now > s->bn_qmax) {
            s->bn_drops++;
            return;
        }
        s->bn_free = end;
        delay += end > s->now ? end - s->now : 0;
    }
    if (s->reorder > 0 && sim_unit(s) < s->reorder)
        delay += 1 + sim_rand(&s->rng) % SIM_JITTER;
    sim_enqueue(s, nd->idx, to, buf, len, delay);
    if (s->dup > 0 && sim_unit(s) < s->dup)
        sim_enqueue(s, nd->idx, to, buf, len, delay + 7);
}

static int
sim_send(void *ctx, const struct sockaddr *addr, socklen_t alen,
         const struct iovec *iov, int iovcnt)
{
    struct node *nd = ctx;

    if (sim_eagain(nd->sim))
        return -1;
    sim_wire(nd, addr, alen, iov, iovcnt);
    return 0;
}

/* FNV-1a over n bytes. */
static uint64_t
sim_sum(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/*
 * ops->flush: the node's referenced datagrams go on the wire; their data
 * must be as it was when queued (a message freed or reused too early
 * shows up here, or as a use-after-free under the sanitizers).
 */
static int
sim_flush(void *ctx)
{
    struct node *nd = ctx;
    struct sim *s = nd->sim;
    size_t i, k = 0;

    for (i = 0; i < s->nrefs; i++) {
        struct ref *f = &s->refs[i];
        struct iovec iov[2];

        if (f->from != nd->idx) {
            s->refs[k++] = *f;
            continue;
        }
        if (f->own != NULL) {
            iov[0].iov_base = f->own;
            iov[0].iov_len = f->len;
            sim_wire(nd, (struct sockaddr *)&f->to, sizeof f->to, iov, 1);
            free(f->own);
            continue;
        }
        if (sim_sum(f->data, f->len) != f->sum)
            s->errors++;
        iov[0].iov_base = f->hdr;
        iov[0].iov_len = DGRAM_HDR_LEN;
        iov[1].iov_base = (void *)f->data;
        iov[1].iov_len = f->len;
        sim_wire(nd, (struct sockaddr *)&f->to, sizeof f->to, iov, 2);
    }
    s->nrefs = k;
    return 0;
}

/* ops->send_ref: header copied, data referenced until sim_flush. */
static int
sim_send_ref(void *ctx, const struct sockaddr *addr, socklen_t alen,
             const struct iovec *iov, int iovcnt)
{
    struct node *nd = ctx;
    struct sim *s = nd->sim;
    struct ref *f;

    HOT_ASSERT(iovcnt == 2 && iov[0].iov_len == DGRAM_HDR_LEN);
    HOT_ASSERT(alen == sizeof f->to);
    if (sim_eagain(s))
        return -1;
    if (s->nrefs == SIM_REFS)
        sim_flush(nd);
    f = &s->refs[s->nrefs++];
    f->from = nd->idx;
    memcpy(&f->to, addr, sizeof f->to);
    memcpy(f->hdr, iov[0].iov_base, DGRAM_HDR_LEN);
    f->data = iov[1].iov_base;
    f->len = iov[1].iov_len;
    f->sum = sim_sum(f->data, f->len);
    f->own = NULL;
    return 0;
}

/* ops->send_buf: a buffer of the sim's, written by rel (sealed in
   place), put on the wire at the next flush. */
static uint8_t *
sim_send_buf(void *ctx, const struct sockaddr *addr, socklen_t alen, size_t len)
{
    struct node *nd = ctx;
    struct sim *s = nd->sim;
    struct ref *f;

    HOT_ASSERT(alen == sizeof f->to && len <= DGRAM_MAX_LEN);
    if (sim_eagain(s))
        return NULL;
    if (s->nrefs == SIM_REFS)
        sim_flush(nd);
    f = &s->refs[s->nrefs++];
    memset(f, 0, sizeof *f);
    f->from = nd->idx;
    memcpy(&f->to, addr, sizeof f->to);
    f->len = len;
    f->own = malloc(len);
    HOT_ASSERT(f->own != NULL);
    return f->own;
}

static int
hid_idx(int hid)
{
    return hid - 1;
}

static void
sim_deliver(void *ctx, int hid, uint8_t *msg, size_t len)
{
    struct node *nd = ctx;
    struct sim *s = nd->sim;
    struct expect *e = &s->ex[hid_idx(hid)][nd->idx];

    if (e->got >= e->sent || e->len[e->got] != len ||
        !check_fill(msg, len, e->seed[e->got]))
        s->errors++;
    e->got++;
    s->delivered_bytes += len;
    free(msg);
}

static void
sim_reset(void *ctx, int hid, uint32_t new_inc)
{
    struct node *nd = ctx;

    nd->resets++;
    nd->reset_inc = new_inc;
    (void)hid;
}

static const struct rel_ops sim_ops = {
    .send = sim_send, .deliver = sim_deliver, .reset = sim_reset};
static const struct rel_ops sim_ops_zc = {.send = sim_send,
                                          .deliver = sim_deliver,
                                          .reset = sim_reset,
                                          .send_ref = sim_send_ref,
                                          .flush = sim_flush,
                                          .send_buf = sim_send_buf};

/* ---- set-up and the event loop -------------------------------------- */

static void
node_addr(struct sockaddr_in *a, int idx)
{
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)(SIM_PORT + idx));
    a->sin_addr.s_addr = htonl(0x0a000001u + (uint32_t)idx);
}

/* (Re)creates node i's rel with incarnation inc and registers all peers.
   With cfg->auth, the node gets its own copy of the key and a new salt. */
static void
node_start(struct sim *s, int i, const struct rel_config *cfg_in, uint32_t inc)
{
    struct node *nd = &s->n[i];
    struct rel_config c = *cfg_in, *cfg = &c;
    int j;

    rel_free(nd->r);
    nd->r = NULL;
    if (cfg_in->auth != NULL) {
        nd->auth = *cfg_in->auth;
        nd->auth.salt = sim_rand(&s->rng);
        nd->auth.pn = 0;
        c.auth = &nd->auth;
    }
    nd->sim = s;
    nd->idx = i;
    nd->inc = inc;
    node_addr(&nd->addr, i);
    nd->r = rel_new(cfg, s->zc ? &sim_ops_zc : &sim_ops, nd, i + 1, inc);
    ck_assert_ptr_nonnull(nd->r);
    for (j = 0; j < s->nn; j++) {
        struct sockaddr_in a;
        if (j == i)
            continue;
        node_addr(&a, j);
        ck_assert_int_eq(
            rel_peer_set(nd->r, j + 1, (struct sockaddr *)&a, sizeof a, 0), 0);
    }
}

static struct sim *
sim_new_zc(int nn, const struct rel_config *cfg, int zc)
{
    struct sim *s = calloc(1, sizeof *s);
    int i;

    ck_assert_ptr_nonnull(s);
    s->zc = zc;
    s->refs = malloc(SIM_REFS * sizeof *s->refs);
    ck_assert_ptr_nonnull(s->refs);
    s->nn = nn;
    s->now = 1000000;
    s->rng = 42;
    for (i = 0; i < nn; i++)
        node_start(s, i, cfg, 100 + (uint32_t)i);
    return s;
}

static struct sim *
sim_new(int nn, const struct rel_config *cfg)
{
    return sim_new_zc(nn, cfg, 0);
}

static void
sim_free(struct sim *s)
{
    int i;

    for (i = 0; i < s->nn; i++)
        rel_free(s->n[i].r);
    ck_assert_uint_eq(s->nrefs, 0); /* rel_free flushed */
    free(s->refs);
    while (s->hn > 0)
        free(heap_pop(s).data);
    free(s->heap);
    free(s);
}

/* Queues a message of len bytes from node a to node b. */
static void
sim_msg(struct sim *s, int a, int b, size_t len)
{
    struct expect *e = &s->ex[a][b];
    uint8_t *buf = malloc(len ? len : 1);
    struct iovec iov[2];
    size_t half = len / 3;

    ck_assert_ptr_nonnull(buf);
    ck_assert_int_lt(e->sent, SIM_MAXMSG);
    e->len[e->sent] = len;
    e->seed[e->sent] = sim_rand(&s->rng);
    fill(buf, len, e->seed[e->sent]);
    iov[0].iov_base = buf;
    iov[0].iov_len = half;
    iov[1].iov_base = buf + half;
    iov[1].iov_len = len - half;
    ck_assert_int_eq(rel_sendv(s->n[a].r, b + 1, iov, 2, s->now), 0);
    e->sent++;
    free(buf);
}

static int
sim_all_done(struct sim *s)
{
    int i, j;

    for (i = 0; i < s->nn; i++)
        for (j = 0; j < s->nn; j++) {
            if (s->ex[i][j].got != s->ex[i][j].sent)
                return 0;
            if (i != j) {
                struct rel_peer_stats ps;
                rel_peer_stats(s->n[i].r, j + 1, &ps);
                if (ps.queued_bytes != 0 || ps.inflight != 0)
                    return 0;
            }
        }
    return 1;
}

/* Datagrams due at the same virtual time reach each node as one receive
   batch (rel_input_begin/end), as a recvmmsg brings them to the daemon. */
static int sim_batching;

/*
 * Runs the network until done(s) or virtual time passes until_us.
 * Returns 1 if done, 0 on timeout or when nothing is left to happen.
 */
static int
sim_run(struct sim *s, int (*done)(struct sim *), uint64_t until_us)
{
    while (done == NULL || !done(s)) {
        uint64_t t = s->hn > 0 ? s->heap[0].time : UINT64_MAX;
        int i;

        for (i = 0; i < s->nn; i++) {
            uint64_t u = rel_next_timeout(s->n[i].r);
            if (u < t)
                t = u;
        }
        if (s->writable)
            t = s->now;
        if (t == UINT64_MAX || t > until_us)
            return done == NULL;
        if (t > s->now)
            s->now = t;
        for (i = 0; sim_batching && i < s->nn; i++)
            rel_input_begin(s->n[i].r);
        while (s->hn > 0 && s->heap[0].time <= s->now) {
            struct pkt p = heap_pop(s);
            struct node *from = &s->n[p.from];
            rel_input(s->n[p.to].r, (struct sockaddr *)&from->addr,
                      sizeof from->addr, p.data, p.len, s->now);
            free(p.data);
        }
        for (i = 0; sim_batching && i < s->nn; i++)
            rel_input_end(s->n[i].r);
        for (i = 0; i < s->nn; i++)
            if (rel_next_timeout(s->n[i].r) <= s->now)
                rel_timer(s->n[i].r, s->now);
        if (s->writable) {
            s->writable = 0;
            for (i = 0; i < s->nn; i++)
                rel_writable(s->n[i].r, s->now);
        }
        /* the end of a loop turn, as in the daemon */
        for (i = 0; s->zc && i < s->nn; i++)
            sim_flush(&s->n[i]);
    }
    return 1;
}

/* The cluster key of keyed runs (NULL: unkeyed); small_config uses it. */
static struct auth *sim_key;

static void
small_config(struct rel_config *cfg)
{
    rel_config_default(cfg);
    cfg->rto_min_us = 2000;
    cfg->rto_init_us = 20000;
    cfg->rto_max_us = 2000000;
    cfg->auth = sim_key;
}

/* Sets sim_key to a fixed key, encrypting or not, or to NULL. */
static void
sim_use_key(int on, int encrypt)
{
    static struct auth a;
    uint8_t key[AUTH_KEY_LEN];

    sim_key = NULL;
    if (!on)
        return;
    memset(key, 0x5c, sizeof key);
    ck_assert_int_eq(auth_init(&a, key, encrypt, AUTH_CIPHER_AUTO), 0);
    sim_key = &a;
}

/* ---- tests ---------------------------------------------------------- */

/* All pairs exchange every interesting size under the given faults. */
static void
run_sizes_zc(int nn, double loss, double dup, double reorder, int eagain,
             int zc)
{
    struct rel_config cfg;
    struct sim *s;
    size_t frag;
    int i, j, k;

    small_config(&cfg);
    frag = cfg.mtu - DGRAM_HDR_LEN - (cfg.auth != NULL ? AUTH_TRAILER_LEN : 0);
    s = sim_new_zc(nn, &cfg, zc);
    s->loss = loss;
    s->dup = dup;
    s->reorder = reorder;
    s->eagain = eagain;
    {
        const size_t sizes[] = {0,        1,           frag - 1, frag,
                                frag + 1, cfg.mtu - 1, cfg.mtu,  cfg.mtu + 1,
                                100000,   3u << 20,    7,        0};
        for (k = 0; k < (int)(sizeof sizes / sizeof sizes[0]); k++)
            for (i = 0; i < nn; i++)
                for (j = 0; j < nn; j++)
                    if (i != j)
                        sim_msg(s, i, j, sizes[k]);
    }
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 600000000ull), 1);
    ck_assert_int_eq(s->errors, 0);
    for (i = 0; i < nn; i++)
        for (j = 0; j < nn; j++)
            if (i != j) {
                struct rel_peer_stats ps;
                ck_assert_int_eq(rel_peer_stats(s->n[i].r, j + 1, &ps), 0);
                ck_assert_uint_eq(ps.msgs_sent, 12);
                ck_assert_uint_eq(ps.queued_bytes, 0);
                ck_assert_uint_eq(ps.inflight, 0);
                if (loss > 0)
                    ck_assert_uint_gt(ps.retransmits, 0);
                ck_assert_uint_gt(ps.srtt_us, 0);
                {
                    /* the RTT histogram counts every sample once; the
                       sum lies between count * min and count * max */
                    const struct stats_hist *h = &ps.rtt_us;
                    uint64_t tot = 0;
                    size_t b;

                    for (b = 0; b < STATS_HIST_BUCKETS; b++)
                        tot += h->bucket[b];
                    ck_assert_uint_gt(h->count, 0);
                    ck_assert_uint_eq(tot, h->count);
                    ck_assert_uint_le(h->min, h->max);
                    ck_assert_uint_ge(h->sum, h->count * h->min);
                    ck_assert_uint_le(h->sum, h->count * h->max);
                }
                ck_assert_int_eq(rel_peer_stats(s->n[j].r, i + 1, &ps), 0);
                ck_assert_uint_eq(ps.msgs_recv, 12);
                if (dup > 0)
                    ck_assert_uint_gt(ps.dups_recv, 0);
            }
    sim_free(s);
}

static void
run_sizes(int nn, double loss, double dup, double reorder, int eagain)
{
    run_sizes_zc(nn, loss, dup, reorder, eagain, 0);
}

/* The same with zero copy: every size, under loss, dup, reorder and
   EAGAIN; messages of REL_REF_MIN and more go by reference. */
START_TEST(test_rel_zero_copy)
{
    run_sizes_zc(3, 0.05, 0.02, 0.1, 0, 1);
    run_sizes_zc(2, 0, 0, 0, 7, 1);
}
END_TEST

/*
 * Zero copy: removing a peer (and a restart) frees messages whose
 * datagrams are still referenced in the batch: rel flushes first.
 */
START_TEST(test_rel_zero_copy_free)
{
    struct rel_config cfg;
    struct sim *s;

    small_config(&cfg);
    s = sim_new_zc(3, &cfg, 1);
    /* node 0 learns the others' incarnations */
    sim_msg(s, 1, 0, 10);
    sim_msg(s, 2, 0, 10);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    /* node 2 restarts (the daemon says so) while node 0's data to it is
       referenced in the batch */
    sim_msg(s, 0, 2, 1u << 20);
    ck_assert_uint_gt(s->nrefs, 0);
    ck_assert_int_eq(rel_peer_set(s->n[0].r, 3,
                                  (struct sockaddr *)&s->n[2].addr,
                                  sizeof s->n[2].addr, 999),
                     0);
    ck_assert_int_eq(s->n[0].resets, 1);
    ck_assert_uint_eq(s->nrefs, 0);
    ck_assert_uint_eq(rel_queued(s->n[0].r, 3), 0);
    /* node 1 is removed likewise */
    sim_msg(s, 0, 1, 1u << 20);
    ck_assert_uint_gt(s->nrefs, 0);
    rel_peer_remove(s->n[0].r, 2);
    ck_assert_uint_eq(s->nrefs, 0);
    ck_assert_uint_eq(rel_queued(s->n[0].r, 2), 0);
    ck_assert_int_eq(s->errors, 0);
    sim_free(s);
}
END_TEST

START_TEST(test_rel_lossless)
{
    run_sizes(2, 0, 0, 0, 0);
}
END_TEST

START_TEST(test_rel_loss5)
{
    run_sizes(3, 0.05, 0, 0, 0);
}
END_TEST

START_TEST(test_rel_loss20)
{
    run_sizes(2, 0.20, 0, 0, 0);
}
END_TEST

START_TEST(test_rel_dup_reorder)
{
    run_sizes(4, 0.02, 0.05, 0.10, 0);
}
END_TEST

START_TEST(test_rel_eagain)
{
    run_sizes(2, 0.01, 0, 0, 7);
}
END_TEST

/* A refused send blocks the transport (rel_blocked) until rel_writable:
   the daemon must watch for writability while it is (net.c). */
START_TEST(test_rel_blocked)
{
    struct rel_config cfg;
    struct sim *s;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    ck_assert_int_eq(rel_blocked(s->n[0].r), 0);
    s->eagain = 1; /* every send fails */
    sim_msg(s, 0, 1, 3000);
    ck_assert_int_eq(rel_blocked(s->n[0].r), 1);
    s->eagain = 0;
    s->writable = 0;
    sim_msg(s, 0, 1, 100); /* queued behind the block: nothing leaves */
    ck_assert_int_eq(rel_blocked(s->n[0].r), 1);
    ck_assert_uint_eq(s->hn, 0);
    rel_writable(s->n[0].r, s->now);
    ck_assert_int_eq(rel_blocked(s->n[0].r), 0);
    ck_assert_uint_gt(s->hn, 0);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 10000000), 1);
    ck_assert_int_eq(s->errors, 0);
    sim_free(s);
}
END_TEST

/* Receive batches (rel_input_begin/end): every size under loss,
   duplication and reordering as above; and a lossless 3 MiB message acked
   by at most a tenth of the ACKs it takes without batches. */
static unsigned long
acks_for_3mb(int batching)
{
    struct rel_config cfg;
    struct rel_peer_stats ps;
    struct sim *s;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    sim_batching = batching;
    sim_msg(s, 0, 1, 3u << 20);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 600000000ull), 1);
    sim_batching = 0;
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(rel_peer_stats(s->n[1].r, 1, &ps), 0);
    sim_free(s);
    return (unsigned long)ps.acks_sent;
}

START_TEST(test_rel_batched)
{
    unsigned long one, batched;

    sim_batching = 1;
    run_sizes(3, 0.05, 0, 0, 0);
    sim_batching = 1;
    run_sizes(4, 0.02, 0.05, 0.10, 0);
    sim_batching = 1;
    run_sizes(2, 0.20, 0, 0, 0);
    sim_batching = 0;
    one = acks_for_3mb(0);
    batched = acks_for_3mb(1);
    ck_assert_uint_gt(batched, 0);
    ck_assert_uint_le(batched * 10, one);
}
END_TEST

/* One 32 MiB message at 5 % loss. */
START_TEST(test_rel_32mb)
{
    struct rel_config cfg;
    struct sim *s;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    s->loss = 0.05;
    sim_msg(s, 0, 1, 32u << 20);
    sim_msg(s, 0, 1, 5);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 600000000ull), 1);
    ck_assert_int_eq(s->errors, 0);
    ck_assert_uint_eq(s->delivered_bytes, (32u << 20) + 5);
    sim_free(s);
}
END_TEST

/* More than 65535 fragments: frag_idx/frag_cnt wrap as documented. */
START_TEST(test_rel_many_fragments)
{
    struct rel_config cfg;
    struct sim *s;

    small_config(&cfg);
    cfg.mtu = DGRAM_HDR_LEN + 64;
    s = sim_new(2, &cfg);
    s->loss = 0.02;
    sim_msg(s, 0, 1, 65535 * 64 + 1);
    sim_msg(s, 0, 1, 65535 * 64);
    sim_msg(s, 0, 1, 70000 * 64 + 17);
    sim_msg(s, 1, 0, 65534 * 64 + 63);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 600000000ull), 1);
    ck_assert_int_eq(s->errors, 0);
    sim_free(s);
}
END_TEST

/* The transport's own fault injection: counted, and still reliable. */
START_TEST(test_rel_injection)
{
    struct rel_config cfg;
    struct rel_stats st;
    struct sim *s;
    int k;

    small_config(&cfg);
    cfg.drop = 0.05;
    cfg.dup = 0.05;
    cfg.reorder = 0.05;
    cfg.seed = 7;
    s = sim_new(2, &cfg);
    for (k = 0; k < 20; k++) {
        sim_msg(s, 0, 1, (size_t)k * 10007);
        sim_msg(s, 1, 0, (size_t)k * 3001 + 1);
    }
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 600000000ull), 1);
    ck_assert_int_eq(s->errors, 0);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_gt(st.injected_drops, 0);
    ck_assert_uint_gt(st.injected_dups, 0);
    ck_assert_uint_gt(st.injected_reorders, 0);
    ck_assert_uint_ge(st.dgrams_out, st.injected_drops);
    sim_free(s);
}
END_TEST

/* Pacing: virtual time for 4 MB at 10 MB/s is at least 0.4 s minus burst. */
START_TEST(test_rel_pacing)
{
    struct rel_config cfg;
    struct sim *s;
    uint64_t t0;

    small_config(&cfg);
    cfg.rate_bps = 10000000;
    s = sim_new(2, &cfg);
    t0 = s->now;
    sim_msg(s, 0, 1, 4000000);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 600000000ull), 1);
    ck_assert_int_eq(s->errors, 0);
    /* bytes incl. headers / rate, less the 2 ms bucket */
    ck_assert_uint_ge(s->now - t0, 400000 - 2000);
    ck_assert_uint_le(s->now - t0, 600000);
    sim_free(s);
}
END_TEST

static int
got_first(struct sim *s)
{
    return s->ex[0][1].got >= 1;
}

/* Runs node 0's timers one by one until it has seen n timeouts. */
static void
until_timeouts(struct sim *s, uint64_t n, struct rel_peer_stats *ps)
{
    int k;

    for (k = 0; k < 100; k++) {
        sim_run(s, NULL, rel_next_timeout(s->n[0].r));
        ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, ps), 0);
        if (ps->timeouts >= n)
            return;
    }
    ck_abort_msg("no timeout");
}

/* A cut link: timeouts back the RTO off exponentially; healing recovers. */
START_TEST(test_rel_rto_backoff)
{
    struct rel_config cfg;
    struct rel_peer_stats ps;
    struct sim *s;
    uint64_t rto1, rto2;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    sim_msg(s, 0, 1, 10);
    ck_assert_int_eq(sim_run(s, got_first, s->now + 1000000), 1);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    s->cut = 1;
    sim_msg(s, 0, 1, 20000);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    ck_assert_uint_eq(ps.timeouts, 0);
    ck_assert_uint_gt(ps.queued_bytes, 0);
    ck_assert_uint_gt(ps.inflight, 0);
    /* first timeout (tail loss probes may come first) */
    until_timeouts(s, 1, &ps);
    ck_assert_uint_eq(ps.timeouts, 1);
    rto1 = ps.rto_us;
    until_timeouts(s, 2, &ps);
    ck_assert_uint_eq(ps.timeouts, 2);
    rto2 = ps.rto_us;
    ck_assert_uint_eq(rto2, 2 * rto1);
    /* many more: capped at rto_max */
    sim_run(s, NULL, s->now + 20000000);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    ck_assert_uint_eq(ps.rto_us, cfg.rto_max_us);
    ck_assert_uint_gt(ps.retransmits, ps.timeouts);
    s->cut = 0;
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 10000000), 1);
    ck_assert_int_eq(s->errors, 0);
    /* Karn: the backoff stays until a datagram sent once is acked */
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    ck_assert_uint_eq(ps.rto_us, cfg.rto_max_us);
    sim_msg(s, 0, 1, 100);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 10000000), 1);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    ck_assert_uint_lt(ps.rto_us, cfg.rto_max_us);
    sim_free(s);
}
END_TEST

/*
 * The path's delay jumps above the RTO (a queue of another flow at a slow
 * link): the first timeout is spurious, and Eifel's ack of the original
 * proves it.  The RTO then covers the delay (RFC 4015's response), so
 * the next messages go without timeouts; undoing to the old RTO alone
 * timed out on every one of them.
 */
START_TEST(test_rel_spurious_rto)
{
    struct rel_config cfg;
    struct rel_peer_stats ps;
    struct sim *s;
    uint64_t t0;
    int k;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    for (k = 0; k < 20; k++) {
        sim_msg(s, 0, 1, 10);
        ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    }
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    ck_assert_uint_eq(ps.timeouts, 0);
    ck_assert_uint_lt(ps.rto_us, 10000);
    s->queue_us = 30000; /* 30 ms each way, above the RTO */
    sim_msg(s, 0, 1, 10);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 5000000), 1);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    ck_assert_uint_ge(ps.timeouts, 1);
    ck_assert_uint_gt(ps.rto_us, 60000); /* the 60 ms round trip */
    t0 = ps.timeouts;
    for (k = 0; k < 5; k++) {
        sim_msg(s, 0, 1, 10);
        ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 5000000), 1);
    }
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    ck_assert_uint_eq(ps.timeouts, t0);
    ck_assert_int_eq(s->errors, 0);
    sim_free(s);
}
END_TEST

/*
 * Node 1 restarts with a newer incarnation while its old datagrams are
 * still in the network: node 0 resets its state (ops->reset), drops the
 * stale datagrams, and both directions work again.
 */
START_TEST(test_rel_incarnation)
{
    struct rel_config cfg;
    struct rel_stats st;
    struct sim *s;
    int k;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    sim_msg(s, 0, 1, 5000);
    sim_msg(s, 1, 0, 5000);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    /* node 1 sends more, then dies before anything arrives */
    for (k = 0; k < 5; k++)
        rel_sendv(s->n[1].r, 1, NULL, 0, s->now);
    ck_assert_uint_gt(s->hn, 0);
    /* they are slow; meanwhile node 1 restarts and talks */
    for (k = 0; k < (int)s->hn; k++)
        s->heap[k].time += 5000;
    node_start(s, 1, &cfg, 50); /* incarnations are not ordered */
    memset(&s->ex, 0, sizeof s->ex);
    s->n[0].resets = 0;
    sim_msg(s, 1, 0, 3000);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    ck_assert_int_eq(s->n[0].resets, 1);
    ck_assert_uint_eq(s->n[0].reset_inc, 50);
    /* the old incarnation's datagrams arrive: dropped as stale */
    sim_run(s, NULL, s->now + 10000);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_ge(st.stale_inc, 5);
    ck_assert_int_eq(s->ex[1][0].got, 1);
    /* both directions work */
    sim_msg(s, 0, 1, 4000);
    sim_msg(s, 1, 0, 5);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(s->n[0].resets, 1);
    sim_free(s);
}
END_TEST

/*
 * Node 0 sends to node 1's old incarnation (it has not heard the new one):
 * node 1 drops it, answers RESET, node 0 resets and then delivers.
 */
START_TEST(test_rel_reset_reply)
{
    struct rel_config cfg;
    struct rel_stats st;
    struct sim *s;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    sim_msg(s, 1, 0, 100);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    node_start(s, 1, &cfg, 300);
    memset(&s->ex, 0, sizeof s->ex);
    s->n[0].resets = 0;
    sim_msg(s, 0, 1, 100);
    /* DATA, RESET, challenge, answer */
    sim_run(s, NULL, s->now + 4 * SIM_LATENCY + 1);
    rel_stats(s->n[1].r, &st);
    ck_assert_uint_ge(st.stale_inc, 1);
    ck_assert_int_eq(s->n[0].resets, 1);
    ck_assert_uint_eq(s->n[0].reset_inc, 300);
    /* the message queued before the reset was dropped (reset said so) */
    ck_assert_uint_eq(rel_queued(s->n[0].r, 2), 0);
    s->ex[0][1].sent = 0;
    sim_msg(s, 0, 1, 1000);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    ck_assert_int_eq(s->errors, 0);
    sim_free(s);
}
END_TEST

/* Feeds node `to' one PROBE claiming to come from node `from'. */
static void
forge_probe(struct sim *s, int from, int to, uint32_t src_inc, uint32_t dst_inc,
            uint32_t nonce, uint32_t echo)
{
    struct dgram_hdr h;
    uint8_t buf[DGRAM_HDR_LEN];

    memset(&h, 0, sizeof h);
    h.version = DGRAM_VERSION;
    h.type = DGRAM_PROBE;
    h.src_hid = (uint16_t)(from + 1);
    h.dst_hid = (uint16_t)(to + 1);
    h.src_inc = src_inc;
    h.dst_inc = dst_inc;
    h.msg_id = nonce;
    h.msg_len = echo;
    dgram_put(buf, &h);
    rel_input(s->n[to].r, (struct sockaddr *)&s->n[from].addr,
              sizeof s->n[from].addr, buf, sizeof buf, s->now);
}

/* Pops the newest datagram node `from' queued and decodes its header. */
static void last_sent(struct sim *s, int from, struct dgram_hdr *h);

/*
 * A blind spoofer sends datagrams from node 1's address with a new
 * incarnation (and guessed echoes): node 0 challenges it but keeps node
 * 1's real incarnation, which the challenge does not disturb; traffic
 * goes on both ways without a reset.  Only a datagram that echoes the
 * challenge's nonce (which the spoofer never sees) switches.
 */
START_TEST(test_rel_spoofed_incarnation)
{
    struct rel_config cfg;
    struct rel_stats st;
    struct dgram_hdr h;
    struct sim *s;
    uint32_t k, nonce;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    sim_msg(s, 0, 1, 3000);
    sim_msg(s, 1, 0, 3000);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    /* the report's attack: PROBE with node 1's incarnation + 1 */
    forge_probe(s, 1, 0, 102, 100, 0, 0);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.stale_inc, 1);
    ck_assert_uint_eq(st.challenges, 1);
    ck_assert_int_eq(s->n[0].resets, 0);
    /* the challenge went to node 1's address, to the claimed one */
    last_sent(s, 0, &h);
    ck_assert_int_eq(h.type, DGRAM_PROBE);
    ck_assert_uint_eq(h.dst_inc, 102);
    ck_assert_uint_ne(h.msg_id, 0);
    nonce = h.msg_id;
    /* guessed echoes, other incarnations, other types: all refused */
    for (k = 1; k <= 200; k++)
        forge_probe(s, 1, 0, 102 + k % 3, k % 2 ? 100 : 0, k, nonce + k);
    ck_assert_int_eq(s->n[0].resets, 0);
    /* the real node 1 answers the challenge with RESET of 101: no
       change; messages flow both ways */
    sim_msg(s, 0, 1, 5000);
    sim_msg(s, 1, 0, 5000);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(s->n[0].resets, 0);
    ck_assert_int_eq(s->n[1].resets, 0);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_ge(st.stale_inc, 201);
    /* the echo of the real nonce from that incarnation does switch */
    forge_probe(s, 1, 0, 102, 100, 0, nonce);
    ck_assert_int_eq(s->n[0].resets, 1);
    ck_assert_uint_eq(s->n[0].reset_inc, 102);
    sim_free(s);
}
END_TEST

static int
both_reset(struct sim *s)
{
    return s->n[0].resets > 0 && s->n[1].resets > 0;
}

/*
 * Both nodes restart at once and each first hears the other's new
 * incarnation: the challenges cross, each answers the other's, and
 * messages flow in both directions.
 */
START_TEST(test_rel_restart_both)
{
    struct rel_config cfg;
    struct sim *s;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    sim_msg(s, 0, 1, 100);
    sim_msg(s, 1, 0, 100);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    /* each knows the other's old incarnation */
    node_start(s, 0, &cfg, 7000);
    node_start(s, 1, &cfg, 8000);
    ck_assert_int_eq(rel_peer_set(s->n[0].r, 2,
                                  (struct sockaddr *)&s->n[1].addr,
                                  sizeof s->n[1].addr, 101),
                     0);
    ck_assert_int_eq(rel_peer_set(s->n[1].r, 1,
                                  (struct sockaddr *)&s->n[0].addr,
                                  sizeof s->n[0].addr, 100),
                     0);
    /* what each queues to the other's old incarnation is dropped by
       the adoption (ops->reset) */
    memset(&s->ex, 0, sizeof s->ex);
    sim_msg(s, 0, 1, 4000);
    sim_msg(s, 1, 0, 4000);
    ck_assert_int_eq(sim_run(s, both_reset, s->now + 1000000), 1);
    ck_assert_uint_eq(s->n[0].reset_inc, 8000);
    ck_assert_uint_eq(s->n[1].reset_inc, 7000);
    ck_assert_uint_eq(rel_queued(s->n[0].r, 2), 0);
    ck_assert_uint_eq(rel_queued(s->n[1].r, 1), 0);
    memset(&s->ex, 0, sizeof s->ex);
    sim_msg(s, 0, 1, 4000);
    sim_msg(s, 1, 0, 4000);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(s->n[0].resets, 1);
    ck_assert_int_eq(s->n[1].resets, 1);
    sim_free(s);
}
END_TEST

/* Builds one DATA datagram from hid 2 (inc 102) to hid 1 (inc 100). */
static size_t
make_data(uint8_t *buf, uint32_t seq, uint32_t msg_id, uint32_t msg_len,
          uint16_t idx, uint16_t cnt, const uint8_t *data, uint16_t len)
{
    struct dgram_hdr h;

    memset(&h, 0, sizeof h);
    h.version = DGRAM_VERSION;
    h.type = DGRAM_DATA;
    h.src_hid = 2;
    h.dst_hid = 1;
    h.src_inc = 102;
    h.dst_inc = 100;
    h.seq = seq;
    h.ack = 1;
    h.msg_id = msg_id;
    h.msg_len = msg_len;
    h.frag_idx = idx;
    h.frag_cnt = cnt;
    h.len = len;
    dgram_put(buf, &h);
    if (len > 0)
        memcpy(buf + DGRAM_HDR_LEN, data, len);
    return DGRAM_HDR_LEN + (size_t)len;
}

/* Pops the newest datagram node `from' queued and decodes its header. */
static void
last_sent(struct sim *s, int from, struct dgram_hdr *h)
{
    size_t i, best = SIZE_MAX;

    for (i = 0; i < s->hn; i++)
        if (s->heap[i].from == from &&
            (best == SIZE_MAX || s->heap[i].order > s->heap[best].order))
            best = i;
    ck_assert_uint_ne(best, SIZE_MAX);
    ck_assert_int_eq(dgram_get(s->heap[best].data, s->heap[best].len, h), 0);
}

/*
 * The ACK fields: cumulative ack, SACK bit i = seq ack+1+i, tsval echo of
 * the latest DATA, seq and msg_id the latest two DATA held beyond the ack.
 */
START_TEST(test_rel_ack_fields)
{
    struct rel_config cfg;
    struct sim *s;
    struct dgram_hdr h;
    uint8_t buf[256], d[8] = {0};
    size_t n;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    /* seq 3 before seq 1 and 2: out of order, acked at once */
    n = make_data(buf, 3, 2, 8, 0, 1, d, 8);
    buf[46] = 0x12;
    buf[47] = 0x34; /* tsval */
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    last_sent(s, 0, &h);
    ck_assert_int_eq(h.type, DGRAM_ACK);
    ck_assert_uint_eq(h.ack, 1);
    ck_assert_uint_eq(h.sack, 1u << 1); /* seq 3 = ack + 1 + 1 */
    ck_assert_uint_eq(h.tsval, 0x1234);
    ck_assert_uint_eq(h.seq, 3);
    ck_assert_uint_eq(h.msg_id, 0);
    ck_assert_uint_eq(h.src_inc, 100);
    ck_assert_uint_eq(h.dst_inc, 102);
    /* seq 70: beyond the bitmap, but reported by seq, 3 by msg_id */
    n = make_data(buf, 70, 9, 8, 0, 1, d, 8);
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    last_sent(s, 0, &h);
    ck_assert_uint_eq(h.ack, 1);
    ck_assert_uint_eq(h.sack, 1u << 1);
    ck_assert_uint_eq(h.seq, 70);
    ck_assert_uint_eq(h.msg_id, 3);
    /* seq 1 fills the first hole: ack 2 at once, 70 and 3 still held */
    n = make_data(buf, 1, 1, 8, 0, 1, d, 8);
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    last_sent(s, 0, &h);
    ck_assert_uint_eq(h.ack, 2);
    ck_assert_uint_eq(h.sack, 1u << 0);
    ck_assert_uint_eq(h.seq, 70);
    ck_assert_uint_eq(h.msg_id, 3);
    /* seq 2 takes the ack past 3: only 70 is left to report */
    n = make_data(buf, 2, 1, 8, 0, 1, d, 8);
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    last_sent(s, 0, &h);
    ck_assert_uint_eq(h.ack, 4);
    ck_assert_uint_eq(h.seq, 70);
    ck_assert_uint_eq(h.msg_id, 0);
    sim_free(s);
}
END_TEST

/*
 * REL_SEND_ACKNOW: a small message that asks for it goes out with
 * DGRAM_F_ACKNOW and its receiver acks at once; the same message without
 * it waits for its reply or for ack_delay_us (the delayed ack).
 */
static int
sim_sent_by(const struct sim *s, int from)
{
    size_t i;
    int n = 0;

    for (i = 0; i < s->hn; i++)
        n += s->heap[i].from == from;
    return n;
}

START_TEST(test_rel_acknow)
{
    struct rel_config cfg;
    struct sim *s;
    struct dgram_hdr h;
    struct iovec iov;
    uint8_t msg[40];
    int flagged;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    /* settle: both incarnations known, nothing in flight */
    sim_msg(s, 0, 1, 10);
    sim_msg(s, 1, 0, 10);
    ck_assert(sim_run(s, sim_all_done, s->now + 5000000));
    sim_run(s, NULL, s->now + 1000000);
    ck_assert_uint_eq(s->hn, 0);
    iov.iov_base = msg;
    iov.iov_len = sizeof msg;
    for (flagged = 0; flagged <= 1; flagged++) {
        struct expect *e = &s->ex[0][1];
        struct pkt p;
        uint64_t due;

        e->len[e->sent] = sizeof msg;
        e->seed[e->sent] = sim_rand(&s->rng);
        fill(msg, sizeof msg, e->seed[e->sent]);
        e->sent++;
        ck_assert_int_eq(rel_sendvf(s->n[0].r, 2, &iov, 1,
                                    flagged ? REL_SEND_ACKNOW : 0, s->now),
                         0);
        ck_assert_int_eq(sim_sent_by(s, 0), 1);
        last_sent(s, 0, &h);
        ck_assert_int_eq(h.type, DGRAM_DATA);
        ck_assert_int_eq(!!(h.flags & DGRAM_F_ACKNOW), flagged);
        p = heap_pop(s);
        rel_input(s->n[1].r, (struct sockaddr *)&s->n[0].addr,
                  sizeof s->n[0].addr, p.data, p.len, s->now);
        free(p.data);
        due = rel_next_timeout(s->n[1].r);
        if (flagged) {
            /* acked in the same call: nothing left for a timer */
            ck_assert_int_eq(sim_sent_by(s, 1), 1);
            last_sent(s, 1, &h);
            ck_assert_int_eq(h.type, DGRAM_ACK);
            ck_assert_uint_ne(due, s->now + cfg.ack_delay_us);
        } else {
            /* nothing yet: the delayed ack is due in ack_delay_us */
            ck_assert_int_eq(sim_sent_by(s, 1), 0);
            ck_assert_uint_eq(due, s->now + cfg.ack_delay_us);
        }
        /* the ack (or the delayed ack) reaches the sender */
        ck_assert(sim_run(s, sim_all_done, s->now + 1000000));
        sim_run(s, NULL, s->now + 1000000);
        ck_assert_uint_eq(s->hn, 0);
    }
    ck_assert_int_eq(s->errors, 0);
    sim_free(s);
}
END_TEST

/* Unknown sources, garbage, wrong hid: dropped and counted. */
START_TEST(test_rel_unknown_source)
{
    struct rel_config cfg;
    struct rel_stats st;
    struct sim *s;
    struct sockaddr_in stranger;
    uint8_t buf[256], junk[100], abc[3];
    size_t n;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    fill(abc, 3, 77);
    n = make_data(buf, 1, 1, 3, 0, 1, abc, 3);
    node_addr(&stranger, 3);
    rel_input(s->n[0].r, (struct sockaddr *)&stranger, sizeof stranger, buf, n,
              s->now);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.unknown_src, 1);
    /* a hid nobody registered, from a known address */
    buf[5] = 9;
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.unknown_src, 2);
    memset(junk, 0xa5, sizeof junk);
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              junk, sizeof junk, s->now);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.bad_dgrams, 1);
    ck_assert_uint_eq(st.dgrams_in, 3);
    ck_assert_int_eq(s->ex[1][0].got, 0);
    /* the real one is delivered */
    buf[5] = 2;
    s->ex[1][0].sent = 1;
    s->ex[1][0].len[0] = 3;
    s->ex[1][0].seed[0] = 77;
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    ck_assert_int_eq(s->ex[1][0].got, 1);
    ck_assert_uint_eq(rel_last_heard(s->n[0].r, 2), s->now);
    ck_assert_uint_eq(rel_last_heard(s->n[0].r, 3), 0);
    sim_free(s);
}
END_TEST

/* max_message on both sides; inconsistent fragments are refused. */
START_TEST(test_rel_max_message)
{
    struct rel_config cfg;
    struct rel_stats st;
    struct sim *s;
    struct iovec iov;
    uint8_t buf[256], d[64];
    size_t n;

    small_config(&cfg);
    cfg.max_message = 10000;
    s = sim_new(2, &cfg);
    iov.iov_base = d;
    iov.iov_len = 10001;
    ck_assert_int_eq(rel_sendv(s->n[0].r, 2, &iov, 1, s->now), COLLS_EMSGSIZE);
    ck_assert_int_eq(rel_sendv(s->n[0].r, 3, &iov, 1, s->now), COLLS_ENOENT);
    memset(d, 'x', sizeof d);
    /* seq 1: claims 20000 bytes: refused before allocation */
    n = make_data(buf, 1, 1, 20000, 0, 15, d, 64);
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    /* seq 2: the next fragment of it: discarded with it */
    n = make_data(buf, 2, 1, 20000, 1, 15, d, 64);
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.bad_dgrams, 1);
    /* seq 3, 4: msg_len changes between fragments */
    n = make_data(buf, 3, 2, 128, 0, 2, d, 64);
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    n = make_data(buf, 4, 2, 129, 1, 2, d, 64);
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.bad_dgrams, 2);
    /* seq 5: does not start at fragment 0 */
    n = make_data(buf, 5, 3, 128, 1, 2, d, 64);
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.bad_dgrams, 3);
    ck_assert_int_eq(s->ex[1][0].got, 0);
    /* a sender with a larger limit: its big message is lost, later ok */
    rel_free(s->n[1].r);
    s->n[1].r = NULL;
    cfg.max_message = 1 << 20;
    node_start(s, 1, &cfg, 103);
    {
        struct rel_peer_stats ps;
        sim_msg(s, 1, 0, 50000);
        s->ex[1][0].sent = 0; /* the receiver refuses it */
        sim_msg(s, 1, 0, 5000);
        ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
        ck_assert_int_eq(s->errors, 0);
        ck_assert_int_eq(s->ex[1][0].got, 1);
        ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
        ck_assert_uint_eq(ps.msgs_recv, 1);
    }
    sim_free(s);
}
END_TEST

/*
 * A peer with a larger MTU: its DATA would not fit the reorder ring, so it
 * is refused and counted, never copied; small messages still get through.
 */
START_TEST(test_rel_mtu_mismatch)
{
    struct rel_config cfg;
    struct rel_stats st;
    struct sim *s;

    small_config(&cfg);
    cfg.mtu = 512;
    s = sim_new(2, &cfg);
    rel_free(s->n[1].r);
    s->n[1].r = NULL;
    cfg.mtu = 1472;
    node_start(s, 1, &cfg, 101);
    sim_msg(s, 1, 0, 400);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    s->ex[1][0].sent++; /* this one cannot arrive */
    sim_msg(s, 1, 0, 3000);
    s->ex[1][0].sent--;
    sim_run(s, NULL, s->now + 200000);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_gt(st.bad_dgrams, 0);
    ck_assert_int_eq(s->ex[1][0].got, 1);
    ck_assert_int_eq(s->errors, 0);
    sim_free(s);
}
END_TEST

/* Removing a peer (also from inside deliver) and bad arguments. */
static void
remove_in_deliver(void *ctx, int hid, uint8_t *msg, size_t len)
{
    struct node *nd = ctx;

    free(msg);
    (void)len;
    nd->sim->ex[hid - 1][nd->idx].got++;
    rel_peer_remove(nd->r, hid);
}

/* Makes node 1 of s remove node 0 when node 0's first message arrives. */
static void
sim_remover(struct sim *s, const struct rel_config *cfg)
{
    static struct rel_ops ops;
    struct sockaddr_in a;

    ops = sim_ops;
    ops.deliver = remove_in_deliver;
    rel_free(s->n[1].r);
    s->n[1].r = rel_new(cfg, &ops, &s->n[1], 2, 101);
    node_addr(&a, 0);
    ck_assert_int_eq(
        rel_peer_set(s->n[1].r, 1, (struct sockaddr *)&a, sizeof a, 0), 0);
}

START_TEST(test_rel_remove)
{
    struct rel_config cfg;
    struct sim *s;
    struct sockaddr_in a;

    small_config(&cfg);
    ck_assert_ptr_null(rel_new(&cfg, NULL, NULL, 1, 1));
    cfg.mtu = DGRAM_HDR_LEN;
    ck_assert_ptr_null(rel_new(&cfg, &sim_ops, NULL, 1, 1));
    small_config(&cfg);
    cfg.window = 0;
    ck_assert_ptr_null(rel_new(&cfg, &sim_ops, NULL, 1, 1));
    small_config(&cfg);
    s = sim_new(2, &cfg);
    node_addr(&a, 1);
    ck_assert_int_eq(
        rel_peer_set(s->n[0].r, 0, (struct sockaddr *)&a, sizeof a, 0),
        COLLS_EINVAL);
    ck_assert_int_eq(
        rel_peer_set(s->n[0].r, 4096, (struct sockaddr *)&a, sizeof a, 0),
        COLLS_EINVAL);
    /* node 1 removes node 0 when the first message arrives */
    sim_remover(s, &cfg);
    sim_msg(s, 0, 1, 3);
    sim_msg(s, 0, 1, 4);
    sim_msg(s, 0, 1, 3000);
    sim_run(s, NULL, s->now + 100000);
    ck_assert_int_eq(s->ex[0][1].got, 1);
    /* ops->reset told node 1's owner that node 0 went */
    ck_assert_int_eq(s->n[1].resets, 1);
    ck_assert_uint_eq(s->n[1].reset_inc, 0);
    ck_assert_int_eq(rel_peer_stats(s->n[1].r, 1, &(struct rel_peer_stats){0}),
                     COLLS_ENOENT);
    /* node 0 removes node 1 with data queued */
    sim_msg(s, 0, 1, 100000);
    rel_peer_remove(s->n[0].r, 2);
    ck_assert_int_eq(s->n[0].resets, 1);
    ck_assert_uint_eq(s->n[0].reset_inc, 0);
    ck_assert_uint_eq(rel_queued(s->n[0].r, 2), 0);
    sim_free(s);
}
END_TEST

/* A peer removed from inside deliver is sent the ack it is owed first
   (a daemon that leaves announces it in its last message and waits for
   that ack before it exits), before any timer would have sent it. */
START_TEST(test_rel_remove_acks)
{
    struct rel_config cfg;
    struct rel_peer_stats st;
    struct sim *s;

    small_config(&cfg);
    cfg.ack_delay_us = 50000; /* the delayed ack would come too late */
    s = sim_new(2, &cfg);
    sim_remover(s, &cfg);
    sim_msg(s, 0, 1, 100);
    sim_run(s, NULL, s->now + 20000);
    ck_assert_int_eq(s->ex[0][1].got, 1);
    ck_assert_int_eq(s->n[1].resets, 1);
    ck_assert_uint_eq(rel_queued(s->n[0].r, 2), 0);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &st), 0);
    ck_assert_uint_ge(st.acks_recv, 1);
    ck_assert_uint_eq(st.retransmits + st.timeouts, 0);
    sim_free(s);
}
END_TEST

/* One test case per test, so CK_RUN_CASE=name runs one. */
/* ---- udp.c over loopback --------------------------------------------- */

struct udp_rx {
    uint8_t data[200][1500];
    size_t len[200];
    int n;
};

static void
udp_rx_cb(void *arg, const struct sockaddr *from, socklen_t alen,
          const uint8_t *data, size_t len)
{
    struct udp_rx *x = arg;

    (void)from;
    (void)alen;
    if (x->n < 200 && len <= sizeof x->data[0]) {
        memcpy(x->data[x->n], data, len);
        x->len[x->n] = len;
    }
    x->n++;
}

/*
 * udp_send_ref: headers copied, data referenced, runs of one size sent
 * as GSO messages of scattered pieces (the kernel cuts at the segment
 * size, not at iovec boundaries): every datagram arrives intact, in
 * order, and the data may be overwritten once udp_flush returned.  With
 * COLLS_GSO=off in the environment (the daemon's --gso twin; qemu-user
 * does not translate UDP_SEGMENT) both sockets have their offloads off
 * and the same datagrams go out one by one: the checks stay the same.
 */
START_TEST(test_udp_send_ref)
{
    struct udp *a, *b;
    struct sockaddr_in to;
    struct udp_rx *x = calloc(1, sizeof *x);
    uint8_t *data = malloc(100 * 1424), hdr[100][DGRAM_HDR_LEN];
    const char *name;
    int i, tries;

    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_nonnull(data);
    ck_assert_int_eq(udp_open("127.0.0.1:0", &a), 0);
    ck_assert_int_eq(udp_open("127.0.0.1:0", &b), 0);
    if (getenv("COLLS_GSO") != NULL &&
        strcmp(getenv("COLLS_GSO"), "off") == 0) {
        ck_assert_int_eq(udp_set_offload(a, UDP_OFFLOAD_OFF), 0);
        ck_assert_int_eq(udp_set_offload(b, UDP_OFFLOAD_OFF), 0);
        ck_assert_str_eq(udp_offload_name(a), "off");
    }
    name = strrchr(udp_local_name(b), ':');
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_port = htons((uint16_t)atoi(name + 1));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fill(data, 100 * 1424, 5);
    /* 1472-byte datagrams, a 7-byte one, a copied one, a short last one */
    for (i = 0; i < 100; i++) {
        struct iovec iov[2];
        size_t n = i == 50 ? 7 : i == 99 ? 1000 : 1424;

        memset(hdr[i], i, DGRAM_HDR_LEN);
        iov[0].iov_base = hdr[i];
        iov[0].iov_len = DGRAM_HDR_LEN;
        iov[1].iov_base = data + (size_t)i * 1424;
        iov[1].iov_len = n;
        ck_assert_int_eq(
            i == 70
                ? udp_send(a, (struct sockaddr *)&to, sizeof to, iov, 2)
                : udp_send_ref(a, (struct sockaddr *)&to, sizeof to, iov, 2),
            0);
    }
    ck_assert_int_eq(udp_flush(a), 0);
    ck_assert_int_eq(udp_pending(a), 0);
    memset(data, 0xee, 100 * 1424); /* no longer referenced */
    fill(data, 100 * 1424, 5);      /* what was sent, to compare */
    for (tries = 0; x->n < 100 && tries < 200; tries++) {
        struct pollfd pf = {.fd = udp_fd(b), .events = POLLIN};
        if (poll(&pf, 1, 50) > 0)
            udp_recv_batch(b, udp_rx_cb, x);
    }
    ck_assert_int_eq(x->n, 100);
    for (i = 0; i < 100; i++) {
        size_t n = i == 50 ? 7 : i == 99 ? 1000 : 1424, k;

        ck_assert_uint_eq(x->len[i], DGRAM_HDR_LEN + n);
        for (k = 0; k < DGRAM_HDR_LEN; k++)
            ck_assert_uint_eq(x->data[i][k], (uint8_t)i);
        ck_assert_int_eq(
            memcmp(x->data[i] + DGRAM_HDR_LEN, data + (size_t)i * 1424, n), 0);
    }
    udp_close(a);
    udp_close(b);
    free(data);
    free(x);
}
END_TEST

/*
 * Bulk data through a 100 Mbit bottleneck with a 2 ms queue, no
 * rate_bps: the delivery rate estimate finds the bottleneck, DATA is
 * paced near it, and everything arrives intact.
 */
START_TEST(test_rel_bottleneck)
{
    struct rel_config cfg;
    struct rel_peer_stats ps;
    struct sim *s;
    int k;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    s->bn_rate = 12.5; /* bytes/us */
    s->bn_qmax = 2000;
    for (k = 0; k < 16; k++)
        sim_msg(s, 0, 1, 1u << 20);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 60000000), 1);
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    printf("bottleneck: %lu drops, %llu retransmits, %llu timeouts, "
           "bw %llu B/s\n",
           s->bn_drops, (unsigned long long)ps.retransmits,
           (unsigned long long)ps.timeouts, (unsigned long long)ps.bw_bps);
    fflush(stdout);
    ck_assert_uint_ge(ps.bw_bps, 12500000 * 8 / 10);
    ck_assert_uint_le(ps.bw_bps, 12500000 * 13 / 10);
    ck_assert_uint_ge(ps.pacing_bps, 12500000 * 7 / 10);
    ck_assert_uint_le(ps.pacing_bps, 12500000 * 13 / 10);
    ck_assert_uint_gt(ps.min_rtt_us, 2 * SIM_LATENCY);
    ck_assert_uint_gt(s->bn_drops, 0); /* startup overshoots once */
    sim_free(s);
}
END_TEST

/*
 * Trains after idleness through a 10 Mbit bottleneck with a 20 ms queue
 * (tbf's latency 20ms at 10mbit): once a bulk transfer has found the
 * rate, each later train of 12 messages of 8 KiB (4 queues' worth),
 * sent after 100 ms of silence, is paced at that rate and loses nothing.
 * Restarting the unpaced startup after every silence sent each train at once,
 * and the queue dropped most of it (on emulated hosts: half of the datagrams of
 * collsctl tune's trains were retransmissions, which doubled g(1 KiB)).
 */
START_TEST(test_rel_bottleneck_idle)
{
    struct rel_config cfg;
    struct rel_peer_stats ps;
    struct sim *s;
    unsigned long drops;
    int k, t;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    s->bn_rate = 1.25; /* bytes/us */
    s->bn_qmax = 20000;
    sim_msg(s, 0, 1, 2u << 20);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 60000000), 1);
    drops = s->bn_drops;
    for (t = 0; t < 5; t++) {
        s->now += 100000;
        for (k = 0; k < 12; k++)
            sim_msg(s, 0, 1, 8192);
        ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 60000000), 1);
    }
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    printf("bottleneck after idleness: %lu drops in the trains (%lu in "
           "the bulk), %llu retransmits\n",
           s->bn_drops - drops, drops, (unsigned long long)ps.retransmits);
    fflush(stdout);
    ck_assert_uint_eq(s->bn_drops, drops);
    sim_free(s);
}
END_TEST

/*
 * Bulk messages, each after a short silence, through a 10 Mbit link
 * shaped as tbf shapes it with a bucket of 4 KB and a 20 ms queue (tune-
 * bench's 8:10mbit:4kb): a datagram that finds the bucket full passes at
 * once, so the least round trip is far below the link's time per
 * datagram, and rate samples over intervals just longer than it count
 * the bucket's burst.  Everything arrives intact, no faster than the
 * rate and the bucket allow, and within twice the link's time, and it
 * resends less than 1/8 of the datagrams: 1,526 of 5,948 (a quarter, as
 * on the emulated hosts of docs/collectives.md) before a paced sender's
 * rate samples were capped at its pacing rate (relsend.c, rate_sample).
 * The sim's model of the shaper is checked by the least RTT, below a
 * datagram's time at the rate.
 */
START_TEST(test_rel_bucket)
{
    struct rel_config cfg;
    struct rel_peer_stats ps;
    struct sim *s;
    uint64_t t0, took, link = (uint64_t)(6.0 * (1u << 20) / 1.25);
    int k;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    s->bn_rate = 1.25; /* bytes/us */
    s->bn_qmax = 20000;
    s->bn_burst = 4096;
    t0 = s->now;
    for (k = 0; k < 6; k++) {
        sim_msg(s, 0, 1, 1u << 20);
        ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 60000000), 1);
        s->now += 5000;
    }
    took = s->now - t0 - 6 * 5000;
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    printf("bucket: 6 MiB in %llu us (%llu at the link's rate), %lu drops, "
           "%llu retransmits of %llu sent, %llu timeouts, bw %llu B/s, "
           "least RTT %llu us\n",
           (unsigned long long)took, (unsigned long long)link, s->bn_drops,
           (unsigned long long)ps.retransmits,
           (unsigned long long)ps.dgrams_sent, (unsigned long long)ps.timeouts,
           (unsigned long long)ps.bw_bps, (unsigned long long)ps.min_rtt_us);
    fflush(stdout);
    /* a full datagram takes about 1,150 us at the rate */
    ck_assert_uint_lt(ps.min_rtt_us, 1000);
    /* each silence refills the bucket: 4 KB at most per message */
    ck_assert_uint_ge(took, link - 6 * 4096 / 1.25);
    ck_assert_uint_lt(took, 2 * link);
    ck_assert_uint_lt(8 * ps.retransmits, ps.dgrams_sent);
    sim_free(s);
}
END_TEST

/*
 * A fresh peer whose only rate samples come from small messages sent one
 * at a time (heartbeats, a join: app-limited, a few KB/s), then a bulk of
 * 4 MiB into a fast link (100 MB/s) whose queue (200 us, 14 datagrams)
 * the first unpaced round overflows.  Startup must end at once and pace
 * the retransmissions: the round's end, which used to start pacing, waits
 * for the cumulative ack, hence for the lost datagrams, whose unpaced
 * retransmissions went into the full queue again and again.  And the
 * pacing must not stall the peer (in 10x the link's time).
 */
START_TEST(test_rel_overflow_fresh)
{
    struct rel_config cfg;
    struct rel_peer_stats ps;
    struct sim *s;
    uint64_t t0, took;
    int k;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    s->bn_rate = 100.0; /* bytes/us */
    s->bn_qmax = 200;
    for (k = 0; k < 10; k++) {
        sim_msg(s, 0, 1, 64);
        ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 60000000), 1);
        s->now += 50000;
    }
    t0 = s->now;
    sim_msg(s, 0, 1, 4u << 20);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 600000000), 1);
    took = s->now - t0;
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    printf("overflow on a fresh peer: 4 MiB in %llu us (%llu at the link's "
           "rate), %lu drops, %llu retransmits, %llu sent, %llu overflow "
           "rounds, pacing %llu B/s\n",
           (unsigned long long)took, (unsigned long long)((4u << 20) / 100),
           s->bn_drops, (unsigned long long)ps.retransmits,
           (unsigned long long)ps.dgrams_sent,
           (unsigned long long)ps.overflow_rounds,
           (unsigned long long)ps.pacing_bps);
    fflush(stdout);
    ck_assert_uint_gt(ps.overflow_rounds, 0); /* the case in question */
    /* the queue takes 14 datagrams: the first burst loses most of a
       window, nothing after it should (47,096 retransmissions of 50,052
       datagrams sent when only the round's end started pacing) */
    ck_assert_uint_lt(2 * ps.retransmits, ps.dgrams_sent);
    /* simulated time: within 10x of the link's (42 ms) */
    ck_assert_uint_lt(took, 10 * (4u << 20) / 100);
    sim_free(s);
}
END_TEST

/*
 * A stream of small messages, each sent before the last was acked (so
 * never from idle), then a bulk transfer behind it.  The stream's rate
 * samples are app-limited: they measure the application, not the path,
 * and rounds of them must not end startup (BBR skips them too).  When
 * they did, the bulk was paced at the stream's rate (tests/netns/flow.sh
 * under load: 307 B/s, 16 datagrams of a 1 MiB flood in 6 s).
 */
START_TEST(test_rel_applim_stream)
{
    struct rel_config cfg;
    struct rel_peer_stats ps;
    struct sim *s;
    uint64_t t0, took;
    int k;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    s->bn_rate = 25.0; /* bytes/us: 200 Mbit/s */
    s->bn_qmax = 1000000;
    s->bn_rate = 0.04; /* a receiver short of CPU: 2.5 ms an ack */
    for (k = 0; k < 40; k++) {
        uint64_t next = s->now + 2000;
        sim_msg(s, 0, 1, 64);
        sim_run(s, NULL, next);
        if (s->now < next)
            s->now = next;
    }
    s->bn_rate = 25.0; /* bytes/us: 200 Mbit/s */
    t0 = s->now;
    for (k = 0; k < 16; k++)
        sim_msg(s, 0, 1, 64u << 10);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 600000000), 1);
    took = s->now - t0;
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    printf("a bulk transfer behind a stream of small messages: 1 MiB in "
           "%llu us (%llu at the link's rate), pacing %llu B/s\n",
           (unsigned long long)took, (unsigned long long)((1u << 20) / 25),
           (unsigned long long)ps.pacing_bps);
    fflush(stdout);
    ck_assert_uint_lt(took, 3 * (1u << 20) / 25);
    sim_free(s);
}
END_TEST

/*
 * Random loss is not a queue's overflow: a round of a few datagrams that
 * loses one of them loses more than 1/8, but only a run of losses (at
 * least REL_LOSSY_MIN) counts as an overflow round, which would end
 * startup and keep the peer paced after idleness.  30 messages of 3
 * datagrams, each from idle, 20 % loss.
 */
START_TEST(test_rel_few_losses)
{
    struct rel_config cfg;
    struct rel_peer_stats ps;
    struct sim *s;
    int k;

    small_config(&cfg);
    s = sim_new(2, &cfg);
    s->loss = 0.2;
    for (k = 0; k < 30; k++) {
        sim_msg(s, 0, 1, 3000);
        ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 60000000), 1);
        s->now += 10000;
    }
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    printf("few losses: %llu retransmits of %llu datagrams, %llu overflow "
           "rounds\n",
           (unsigned long long)ps.retransmits,
           (unsigned long long)ps.dgrams_sent,
           (unsigned long long)ps.overflow_rounds);
    fflush(stdout);
    ck_assert_uint_gt(ps.retransmits, 0); /* the case in question */
    ck_assert_uint_eq(ps.overflow_rounds, 0);
    sim_free(s);
}
END_TEST

/* ---- keyed: authenticated datagrams --------------------------------- */

/* Every size under loss, dup and reorder, sealed (and encrypted). */
START_TEST(test_rel_keyed_sizes)
{
    sim_use_key(1, 0);
    run_sizes_zc(3, 0.05, 0.02, 0.1, 0, 0);
    /* zero copy falls back to sealing in place (send_buf), with and
       without would-block */
    run_sizes_zc(2, 0.02, 0, 0.05, 0, 1);
    run_sizes_zc(2, 0, 0, 0, 7, 1);
    sim_use_key(1, 1);
    run_sizes_zc(3, 0.05, 0.02, 0.1, 0, 0);
    run_sizes_zc(3, 0.05, 0.02, 0.1, 0, 1);
    sim_use_key(0, 0);
}
END_TEST

/*
 * Feeds node 0 a datagram from node 1's address with node 1's identity
 * (hid 2, its incarnation, node 0's incarnation): type, seq, message
 * fields and fragment data as given; sealed with `with' (NULL: no
 * trailer, as a keyless attacker sends it).
 */
static void
forge(struct sim *s, struct auth *with, int type, uint32_t seq, uint32_t ack,
      uint32_t msg_id, uint32_t msg_len, uint16_t idx, uint16_t cnt,
      uint16_t len)
{
    uint8_t buf[DGRAM_HDR_LEN + 1024 + AUTH_TRAILER_LEN], junk[1024];
    size_t n;

    memset(junk, 0xee, sizeof junk);
    n = make_data(buf, seq, msg_id, msg_len, idx, cnt, junk, len);
    /* the fields make_data does not take, as dgram.h places them */
    buf[1] = (uint8_t)type;
    put_u16(buf + 2, with != NULL ? DGRAM_F_AUTH : 0);
    put_u32(buf + 8, s->n[1].inc);
    put_u32(buf + 12, s->n[0].inc);
    put_u32(buf + 20, ack);
    put_u64(buf + 24, ~0ull);
    if (with != NULL)
        n = auth_seal(with, buf + 4, buf, DGRAM_HDR_LEN, n);
    rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr, sizeof s->n[1].addr,
              buf, n, s->now);
}

/* Runs the attacks of one kind of forger (no key, or another key)
   against node 0 in the middle of a stream from node 1; returns the
   number of forged datagrams. */
static unsigned
forge_all(struct sim *s, struct auth *with)
{
    unsigned k, n = 0;
    uint32_t nxt;
    struct rel_peer_stats ps;

    rel_peer_stats(s->n[1].r, 1, &ps);
    nxt = (uint32_t)ps.dgrams_sent; /* about where the live stream is */
    /* one of each type, with plausible fields */
    forge(s, with, DGRAM_DATA, nxt + 1, 1, 1, 4, 0, 1, 4);
    forge(s, with, DGRAM_ACK, 0, nxt + 500, 0, 0, 0, 0, 0);
    forge(s, with, DGRAM_RESET, 0, 0, 0, 0, 0, 0, 0);
    forge(s, with, DGRAM_PROBE, 0, 0, 77, 0, 0, 0, 0);
    n += 4;
    /* a blind sequence spray (DATA of a small message each) */
    for (k = 1; k <= 2000; k++, n++)
        forge(s, with, DGRAM_DATA, k, 1, 900000 + k, 8, 0, 1, 8);
    /* 100 fragments 20 sequence numbers ahead of the live stream */
    for (k = 0; k < 100; k++, n++)
        forge(s, with, DGRAM_DATA, nxt + 20 + k, 1, 12345, 100 * 1000,
              (uint16_t)k, 100, 1000);
    return n;
}

/*
 * Forged datagrams with a member's identity, from its address, while
 * node 1 streams to node 0: without the key (no trailer, a trailer of
 * another key, or of the same key in another mode) each is dropped and
 * counted before rel looks at it, and the stream loses nothing.
 */
START_TEST(test_rel_keyed_forged)
{
    struct rel_config cfg;
    struct rel_stats st;
    struct rel_peer_stats ps;
    struct auth other, other_enc, enc;
    uint8_t key[AUTH_KEY_LEN];
    struct sim *s;
    unsigned k, forged = 0;

    sim_use_key(1, 0);
    small_config(&cfg);
    s = sim_new(2, &cfg);
    memset(key, 0x11, sizeof key);
    ck_assert_int_eq(auth_init(&other, key, 0, AUTH_CIPHER_AUTO), 0);
    ck_assert_int_eq(auth_init(&other_enc, key, 1, AUTH_CIPHER_AUTO), 0);
    memset(key, 0x5c, sizeof key);
    ck_assert_int_eq(auth_init(&enc, key, 1, AUTH_CIPHER_AUTO), 0);
    for (k = 0; k < 40; k++)
        sim_msg(s, 1, 0, 50000 + k);
    sim_msg(s, 0, 1, 10);
    /* let the stream get going, then attack at three points of it */
    for (k = 0; k < 3; k++) {
        sim_run(s, NULL, s->now + 2000);
        forged += forge_all(s, k == 0 ? NULL : k == 1 ? &other : &other_enc);
    }
    /* the right key in the other mode: refused where there is a payload
       (without one the two modes seal alike, and the sender holds the
       key anyway) */
    for (k = 0; k < 10; k++, forged++)
        forge(s, &enc, DGRAM_DATA, 100000 + k, 1, 1, 4, 0, 1, 4);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 10000000), 1);
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(s->ex[1][0].got, 40);
    ck_assert_int_eq(s->n[0].resets, 0);
    ck_assert_int_eq(s->n[1].resets, 0);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.auth_failures, forged);
    ck_assert_uint_eq(st.replays, 0);
    ck_assert_uint_eq(st.challenges, 0);
    ck_assert_uint_eq(st.stale_inc, 0);
    ck_assert_int_eq(rel_peer_stats(s->n[0].r, 2, &ps), 0);
    ck_assert_uint_eq(ps.auth_failures, forged);
    ck_assert_uint_eq(ps.msgs_recv, 40);
    /* a keyless rel refuses sealed datagrams likewise */
    sim_free(s);
    sim_use_key(0, 0);
    small_config(&cfg);
    s = sim_new(2, &cfg);
    sim_msg(s, 1, 0, 5000);
    sim_run(s, NULL, s->now + 200);
    forge(s, &other, DGRAM_DATA, 1, 1, 1, 4, 0, 1, 4);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    ck_assert_int_eq(s->errors, 0);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.auth_failures, 1);
    sim_free(s);
}
END_TEST

/*
 * Genuine datagrams replayed: every datagram node 1 sent is captured
 * and fed to node 0 again after the stream ended, and again while a new
 * one runs: each is dropped as a replay (counted), nothing is delivered
 * twice and the new stream loses nothing.
 */
START_TEST(test_rel_keyed_replay)
{
    struct rel_config cfg;
    struct rel_stats st;
    struct sim *s;
    struct pkt *cap;
    size_t ncap = 0, i, hn;
    unsigned k;

    sim_use_key(1, 0);
    small_config(&cfg);
    s = sim_new(2, &cfg);
    cap = calloc(4096, sizeof *cap);
    ck_assert_ptr_nonnull(cap);
    for (k = 0; k < 10; k++)
        sim_msg(s, 1, 0, 20000 + k);
    /* capture node 1's datagrams as they go on the wire */
    while (!sim_all_done(s)) {
        hn = s->hn;
        for (i = 0; i < hn && ncap < 4096; i++)
            if (s->heap[i].from == 1 && s->heap[i].time > s->now) {
                uint64_t seen = s->heap[i].order;
                size_t j;

                for (j = 0; j < ncap && cap[j].order != seen; j++)
                    ;
                if (j < ncap)
                    continue;
                cap[ncap] = s->heap[i];
                cap[ncap].data = malloc(s->heap[i].len);
                memcpy(cap[ncap].data, s->heap[i].data, s->heap[i].len);
                ncap++;
            }
        sim_run(s, NULL, s->now + 20);
        s->now += 20;
    }
    ck_assert_uint_gt(ncap, 10);
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(s->ex[1][0].got, 10);
    for (i = 0; i < ncap; i++)
        rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr,
                  sizeof s->n[1].addr, cap[i].data, cap[i].len, s->now);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.replays, ncap);
    ck_assert_uint_eq(st.auth_failures, 0);
    /* a new stream, with the old datagrams replayed into it */
    for (k = 0; k < 10; k++)
        sim_msg(s, 1, 0, 30000 + k);
    sim_run(s, NULL, s->now + 300);
    for (i = 0; i < ncap; i++)
        rel_input(s->n[0].r, (struct sockaddr *)&s->n[1].addr,
                  sizeof s->n[1].addr, cap[i].data, cap[i].len, s->now);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 10000000), 1);
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(s->ex[1][0].got, 20);
    ck_assert_int_eq(s->n[0].resets, 0);
    rel_stats(s->n[0].r, &st);
    ck_assert_uint_eq(st.replays, 2 * ncap);
    for (i = 0; i < ncap; i++)
        free(cap[i].data);
    free(cap);
    sim_free(s);
    sim_use_key(0, 0);
}
END_TEST

/*
 * A keyed peer restarts (new incarnation, new salt): the challenge
 * (authenticated like everything) adopts it, its packet numbers start a
 * new window, and traffic flows again both ways.
 */
START_TEST(test_rel_keyed_restart)
{
    struct rel_config cfg;
    struct sim *s;

    sim_use_key(1, 0);
    small_config(&cfg);
    s = sim_new(2, &cfg);
    sim_msg(s, 0, 1, 3000);
    sim_msg(s, 1, 0, 3000);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 1000000), 1);
    node_start(s, 1, &cfg, 555);
    memset(&s->ex[0][1], 0, sizeof s->ex[0][1]);
    memset(&s->ex[1][0], 0, sizeof s->ex[1][0]);
    sim_msg(s, 1, 0, 4000);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 5000000), 1);
    ck_assert_int_eq(s->n[0].resets, 1);
    ck_assert_uint_eq(s->n[0].reset_inc, 555);
    sim_msg(s, 1, 0, 4000);
    sim_msg(s, 0, 1, 4000);
    ck_assert_int_eq(sim_run(s, sim_all_done, s->now + 5000000), 1);
    ck_assert_int_eq(s->errors, 0);
    ck_assert_int_eq(s->n[0].resets, 1);
    sim_free(s);
    sim_use_key(0, 0);
}
END_TEST

static void
add(Suite *s, const char *name, const TTest *t)
{
    TCase *tc = tcase_create(name);

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t);
    suite_add_tcase(s, tc);
}

/* SipHash-2-4 (the challenge nonces' and join cookies' PRF) against the
   test vectors of its paper: key 00..0f, messages 00..(n-1). */
START_TEST(test_siphash_vectors)
{
    static const struct {
        size_t len;
        uint64_t want;
    } v[] = {
        {0, 0x726fdb47dd0e0e31ull},
        {15, 0xa129ca6149be45e5ull},
    };
    uint8_t key[SIPHASH_KEY_LEN], msg[64];
    size_t i;

    for (i = 0; i < sizeof(key); i++)
        key[i] = (uint8_t)i;
    for (i = 0; i < sizeof(msg); i++)
        msg[i] = (uint8_t)i;
    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        ck_assert_msg(siphash24(key, msg, v[i].len) == v[i].want,
                      "siphash of %zu bytes: %016llx", v[i].len,
                      (unsigned long long)siphash24(key, msg, v[i].len));
    /* every byte of key and message counts */
    for (i = 0; i < 16; i++) {
        uint64_t h0 = siphash24(key, msg, 16);

        key[i] ^= 1;
        ck_assert(siphash24(key, msg, 16) != h0);
        key[i] ^= 1;
        msg[i] ^= 0x80;
        ck_assert(siphash24(key, msg, 16) != h0);
        msg[i] ^= 0x80;
    }
}
END_TEST

Suite *
suite_rel(void)
{
    Suite *s = suite_create("rel");

    add(s, "siphash_vectors", test_siphash_vectors);
    add(s, "lossless", test_rel_lossless);
    add(s, "loss5", test_rel_loss5);
    add(s, "loss20", test_rel_loss20);
    add(s, "batched", test_rel_batched);
    add(s, "dup_reorder", test_rel_dup_reorder);
    add(s, "eagain", test_rel_eagain);
    add(s, "blocked", test_rel_blocked);
    add(s, "32mb", test_rel_32mb);
    add(s, "many_fragments", test_rel_many_fragments);
    add(s, "injection", test_rel_injection);
    add(s, "pacing", test_rel_pacing);
    add(s, "rto_backoff", test_rel_rto_backoff);
    add(s, "spurious_rto", test_rel_spurious_rto);
    add(s, "zero_copy", test_rel_zero_copy);
    add(s, "bottleneck", test_rel_bottleneck);
    add(s, "bottleneck_idle", test_rel_bottleneck_idle);
    add(s, "bucket", test_rel_bucket);
    add(s, "overflow_fresh", test_rel_overflow_fresh);
    add(s, "few_losses", test_rel_few_losses);
    add(s, "applim_stream", test_rel_applim_stream);
    add(s, "udp_send_ref", test_udp_send_ref);
    add(s, "zero_copy_free", test_rel_zero_copy_free);
    add(s, "incarnation", test_rel_incarnation);
    add(s, "spoofed_incarnation", test_rel_spoofed_incarnation);
    add(s, "restart_both", test_rel_restart_both);
    add(s, "reset_reply", test_rel_reset_reply);
    add(s, "unknown_source", test_rel_unknown_source);
    add(s, "max_message", test_rel_max_message);
    add(s, "remove", test_rel_remove);
    add(s, "remove_acks", test_rel_remove_acks);
    add(s, "ack_fields", test_rel_ack_fields);
    add(s, "acknow", test_rel_acknow);
    add(s, "mtu_mismatch", test_rel_mtu_mismatch);
    add(s, "keyed_sizes", test_rel_keyed_sizes);
    add(s, "keyed_forged", test_rel_keyed_forged);
    add(s, "keyed_replay", test_rel_keyed_replay);
    add(s, "keyed_restart", test_rel_keyed_restart);
    return s;
}
