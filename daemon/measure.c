/*
 * measure.c -- the daemon's pLogP parameters (measure.h): jobs of
 * daemon/plogp.c driven over the transport, the machine's summary, its
 * file, and PARAMS_REQ.
 *
 * Owns d->ms.  May call net (probes), task (replies), host, config, log,
 * platform, proto/reduce.h (gamma); called by route.c (PROBE_* and
 * PARAMS_REQ), events.c (hosts), group.c (the summary for GROUP_FORMED)
 * and collsd.c (cron).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/host.h"
#include "daemon/log.h"
#include "daemon/measure.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/rel.h"
#include "daemon/task.h"
#include "daemon/alg/topo.h"
#include "proto/envelope.h"
#include "proto/list.h"
#include "proto/reduce.h"

/* The quick ladder (a peer that came up, or moved); the thorough one is
   plogp.c's (collsctl tune, unless it names sizes). */
static const size_t measure_quick[] = {1, 4096, 65536};
/* A move's check: light (a train of 256 KiB at most), as moves come from
   busy links more often than from new ones; both ladders hold its sizes,
   and a link of another speed differs at 4 KiB already (3.3 ms at
   10 Mbit/s against a few us). */
static const size_t measure_check[] = {1, 4096};
#define MEASURE_QUICK_REPS     3
#define MEASURE_START_DELAY_US 1000000u /* after a peer comes up */
#define MEASURE_STAGGER_US     250000u  /* per hid, mod 16 */
/* A move's check agrees with the row when g at each of its sizes and the
   round trip of the smallest are within this factor. */
#define MEASURE_AGREE          1.5
#define MEASURE_AGREE_FLOOR_US 20.0 /* differences under this agree */
#define MEASURE_RETRIES        3    /* of a failed measurement of our own */
#define MEASURE_RETRY_US       30000000u
#define MEASURE_LOAD_ECHOES    10 /* per daemon in a round's echo step */
#define MEASURE_QUIET_BYTES    (256u * 1024) /* per check, either way */

/* One job, running or waiting. */
struct measure_job {
    struct list_node node;
    struct plogp_job j;
    uint32_t tid;    /* the task that asked (0: the daemon itself) */
    uint64_t req_id; /* its request */
    uint64_t not_before_us;
    uint64_t deadline_us; /* of the probe in flight */
    int check;            /* a move's check (measure_check), compared */
};

/* What this daemon knows of one peer. */
struct measure_peer {
    int have;                 /* row is valid */
    struct plogp_params row;  /* its last measurement */
    uint64_t base_min_rtt_us; /* the transport's least RTT then */
    uint64_t checked_us;      /* last look for a move */
    uint64_t measured_us;     /* when row was measured */
    uint64_t last_bytes;      /* the transport's bytes with every peer then */
    uint64_t last_sent;       /* the transport's bytes sent to it then */
    uint64_t last_sent_all;   /* and to every peer */
    struct plogp_moves moves; /* has its round trip moved? */
    int retries;              /* failed measurements of our own in a row */
    struct plogp_rx rx;       /* its trains to us */
};

/* A round of trains sent by every daemon at once (PARAMS_LOAD), run by
   the daemon collsctl asked. */
struct measure_load {
    int active;
    uint32_t tid; /* who asked */
    uint64_t req_id;
    size_t sizes[PLOGP_MAX_SIZES], n, i;
    int reps, r;
    uint64_t id; /* of the trains in flight */
    int waiting;
    unsigned char asked[DAEMON_MAX_HID + 1];
    double sample[PLOGP_MAX_REPS * 64];
    size_t nsample;
    double gap[PLOGP_MAX_SIZES];
    int echoes; /* steps of echoes of 1 byte done: one before the trains,
                   one after them */
    double rtt; /* the lower of their median round trips */
    uint64_t deadline_us;
};

struct measure_state {
    struct plogp_params cur; /* in force; cur.epoch 0: none */
    int cur_origin;          /* the daemon that made it (0: the file) */
    struct measure_peer *peer[DAEMON_MAX_HID + 1];
    struct list_node jobs; /* head: the running one */
    uint64_t next_id;      /* measure_ids: our hid << 48 | a counter */
    char *path;            /* the parameter file, NULL: none */
    struct measure_load load;
    /* the last round's result (the commit's gl): gap per size while every
       daemon sent */
    size_t load_n;
    size_t load_m[PLOGP_MAX_SIZES];
    double load_gap[PLOGP_MAX_SIZES];
    double load_rtt; /* the round's echoes while every daemon echoed */
    /* our part in a round: the train or echoes in flight, who runs it */
    uint64_t send_id;
    int send_origin, send_to, send_echoes;
    size_t send_m;
    uint64_t send_us;
    double send_rtt[16];
    uint8_t *zeros;
    size_t zeros_len;
    /* the job's train in flight: our CPU clock (measure_cpu_us) when it
       started, its messages, and the transport's retransmissions to its
       peer until then */
    uint64_t train_cpu_us;
    int train_k;
    uint64_t train_rtx;
};

static void measure_load_result(struct daemon *d, int from, uint64_t id, int k,
                                int got, double span_us);
static void measure_load_end(struct daemon *d, int status);
static int measure_queue(struct daemon *d, int hid, const size_t *sizes,
                         size_t n, int reps, uint32_t tid, uint64_t req_id,
                         uint64_t not_before, int check);

/* ---- the file ---- */

static void
measure_load(struct daemon *d)
{
    struct measure_state *ms = d->ms;
    char buf[4096];
    ssize_t n;
    int fd, bad;
    struct plogp_params p;

    fd = open(ms->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT)
            log_warn("%s: %s", ms->path, strerror(errno));
        return;
    }
    n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n < 0 || (size_t)n == sizeof(buf) ||
        plogp_parse(buf, (size_t)n, &p, &bad) != 0) {
        log_warn("%s: not a parameter file (line %d); ignored until the next "
                 "measurement",
                 ms->path, n < 0 ? 0 : bad);
        return;
    }
    ms->cur = p;
    log_info("pLogP parameters of epoch %llu from %s: L %.1f us",
             (unsigned long long)p.epoch, ms->path, p.L);
}

static void
measure_save(struct daemon *d)
{
    struct measure_state *ms = d->ms;
    char buf[4096], tmp[4200];
    int len, fd, ok;

    if (ms->path == NULL)
        return;
    len = plogp_format(&ms->cur, buf, sizeof(buf));
    snprintf(tmp, sizeof(tmp), "%s.tmp", ms->path);
    fd = len < 0 ? -1
                 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_warn("%s: %s", tmp, len < 0 ? "too long" : strerror(errno));
        return;
    }
    ok = write(fd, buf, (size_t)len) == len;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, ms->path) != 0) {
        log_warn("%s: cannot write: %s", ms->path, strerror(errno));
        unlink(tmp);
    }
}

/* ---- wire ---- */

void
measure_wire(const struct plogp_params *p, Plogp *w,
             struct measure_wire_store *store)
{
    size_t i;

    plogp__init(w);
    w->epoch = p->epoch;
    w->l = p->L;
    w->ll = p->Ll;
    w->gamma = p->gamma;
    w->hop_us = p->hop_us;
    w->hop_byte_us = p->hop_byte_us;
    for (i = 0; i < p->n; i++)
        store->m[i] = p->m[i];
    w->n_m = w->n_g = w->n_gap = w->n_rtt = w->n_gl = p->n;
    w->n_o_s = w->n_o_r = p->n;
    w->m = store->m;
    w->g = (double *)(uintptr_t)p->g;
    w->gap = (double *)(uintptr_t)p->gap;
    w->rtt = (double *)(uintptr_t)p->rtt;
    w->gl = (double *)(uintptr_t)p->gl;
    w->o_s = (double *)(uintptr_t)p->o_s;
    w->o_r = (double *)(uintptr_t)p->o_r;
}

int
measure_unwire(const Plogp *w, struct plogp_params *p)
{
    size_t i;

    memset(p, 0, sizeof(*p));
    if (w->n_m < 1 || w->n_m > PLOGP_MAX_SIZES || w->n_g != w->n_m ||
        w->n_gap != w->n_m || w->n_rtt != w->n_m || w->n_gl != w->n_m ||
        (w->n_o_s != 0 && w->n_o_s != w->n_m) ||
        (w->n_o_r != 0 && w->n_o_r != w->n_m))
        return COLLS_EINVAL;
    p->epoch = w->epoch;
    p->L = w->l;
    p->Ll = w->ll;
    p->gamma = w->gamma;
    p->hop_us = w->hop_us;
    p->hop_byte_us = w->hop_byte_us;
    p->n = w->n_m;
    for (i = 0; i < p->n; i++) {
        if (w->m[i] > PLOGP_MAX_BYTES)
            return COLLS_EINVAL;
        p->m[i] = (size_t)w->m[i];
        p->g[i] = w->g[i];
        p->gap[i] = w->gap[i];
        p->rtt[i] = w->rtt[i];
        p->gl[i] = w->gl[i];
        /* a daemon from before o_s and o_r sends none: 0 */
        p->o_s[i] = w->n_o_s != 0 ? w->o_s[i] : 0.0;
        p->o_r[i] = w->n_o_r != 0 ? w->o_r[i] : 0.0;
    }
    return plogp_check(p);
}

/* ---- the summary ---- */

/* Sends the summary in force to hid (0: every peer up). */
static void
measure_share(struct daemon *d, int hid)
{
    struct measure_wire_store st;
    Plogp w;
    Envelope e;
    int h;

    measure_wire(&d->ms->cur, &w, &st);
    w.hid = (uint32_t)d->ms->cur_origin;
    envelope_init(&e);
    e.kind = KIND__PARAMS_SHARE;
    e.src = COLLS_DAEMON_TID(d->hid);
    e.body_case = ENVELOPE__BODY_PLOGP;
    e.plogp = &w;
    for (h = hid ? hid : 1; h <= (hid ? hid : DAEMON_MAX_HID); h++) {
        if (h == d->hid || !host_is_up(d, h))
            continue;
        e.dst = COLLS_DAEMON_TID(h);
        net_send(d, h, &e, NULL, 0);
    }
}

/* PARAMS_SHARE from a peer: taken when (epoch, maker) is greater than
   the summary's in force, so that every daemon ends with the same. */
static void
measure_shared(struct daemon *d, const Envelope *e)
{
    struct measure_state *ms = d->ms;
    struct plogp_params p;
    int origin;

    if (e->body_case != ENVELOPE__BODY_PLOGP ||
        measure_unwire(e->plogp, &p) != 0 || e->plogp->hid > DAEMON_MAX_HID) {
        d->st.bad_peer_msgs++;
        return;
    }
    origin = (int)e->plogp->hid;
    if (p.epoch < ms->cur.epoch ||
        (p.epoch == ms->cur.epoch && origin <= ms->cur_origin))
        return;
    ms->cur = p;
    ms->cur_origin = origin;
    log_info("pLogP parameters of epoch %llu from host %d taken",
             (unsigned long long)p.epoch, origin);
    measure_save(d);
}

/* us per byte of a SUM of doubles, timed here. */
static double
measure_gamma(void)
{
    enum { N = 8192 };
    static double a[N], b[N];
    uint64_t t0, t;
    int i, rounds = 64;

    for (i = 0; i < N; i++) {
        a[i] = 1.0 + i / 1000.0;
        b[i] = 0.5;
    }
    t0 = platform_now_us();
    for (i = 0; i < rounds; i++)
        reduce_apply(COLLS_SUM, COLLS_DOUBLE, a, b, N);
    t = platform_now_us() - t0;
    return (double)t / ((double)rounds * N * sizeof(double));
}

/* The pair's gap at m, from sum's ladder (interpolated as g is). */
static double
measure_gap_at(const struct plogp_params *sum, size_t m)
{
    struct plogp v = {.n = sum->n, .m = sum->m, .g = sum->gap};

    return topo_plogp_g(&v, m);
}

/*
 * Ll of sum from the last round's echoes: their round trip while every
 * daemon echoed, half of it less the smallest size's g (Ll + g(m) is a
 * loaded one-way trip as L + g(m) is one alone), at least L.  gl of sum from
 * its trains: g times the ratio of the gap while every daemon sent to a pair's
 * gap alone (at least 1, and at least the median of the larger sizes' ones:
 * plogp_load_ratios), that of the largest size of the round at most m (its
 * smallest below it).
 */
static void
measure_loaded(const struct measure_state *ms, struct plogp_params *sum)
{
    double ratio[PLOGP_MAX_SIZES];
    size_t i, j, n = ms->load_n;

    for (j = 0; j < n; j++) {
        double alone = measure_gap_at(sum, ms->load_m[j]);

        ratio[j] = alone > 0.0 ? ms->load_gap[j] / alone : 1.0;
        if (!(ratio[j] > 1.0))
            ratio[j] = 1.0;
    }
    plogp_load_ratios(ratio, n);
    for (i = 0; i < sum->n; i++) {
        for (j = 1; j < n && ms->load_m[j] <= sum->m[i]; j++)
            ;
        sum->gl[i] = sum->g[i] * (n > 0 ? ratio[j - 1] : 1.0);
    }
    plogp_monotone(sum);
    sum->Ll = sum->L;
    if (ms->load_rtt > 0.0 && sum->n > 0) {
        double ll = ms->load_rtt / 2.0 - sum->g[0];

        if (ll > sum->Ll)
            sum->Ll = ll;
    }
}

/*
 * Summarises the rows measured with like's ladder into a new epoch, with
 * the hop given (negative: keep the one in force).  0 or COLLS_EINVAL.
 */
static int
measure_commit(struct daemon *d, const struct plogp_params *like, double hop_us,
               double hop_byte_us)
{
    struct measure_state *ms = d->ms;
    struct plogp_params *rows, sum;
    size_t n = 0;
    int hid, rc;

    rows = calloc(64, sizeof(*rows));
    if (rows == NULL)
        return COLLS_ENOMEM;
    for (hid = 1; hid <= DAEMON_MAX_HID && n < 64; hid++) {
        struct measure_peer *mp = ms->peer[hid];

        if (mp == NULL || !mp->have || !host_is_up(d, hid) ||
            mp->row.n != like->n ||
            memcmp(mp->row.m, like->m, like->n * sizeof(like->m[0])) != 0)
            continue;
        rows[n++] = mp->row;
    }
    rc = n > 0 ? plogp_summarise(rows, n, &sum) : COLLS_EINVAL;
    free(rows);
    if (rc != 0)
        return rc;
    measure_loaded(ms, &sum);
    sum.gamma = measure_gamma();
    sum.hop_us = hop_us >= 0.0 ? hop_us : ms->cur.hop_us;
    sum.hop_byte_us = hop_byte_us >= 0.0 ? hop_byte_us : ms->cur.hop_byte_us;
    sum.epoch = ms->cur.epoch + 1;
    if ((rc = plogp_check(&sum)) != 0)
        return rc;
    ms->cur = sum;
    ms->cur_origin = d->hid;
    log_info("pLogP parameters of epoch %llu from %zu peer(s): L %.1f us, "
             "g(%zu) %.1f us",
             (unsigned long long)sum.epoch, n, sum.L, sum.m[sum.n - 1],
             sum.g[sum.n - 1]);
    measure_save(d);
    measure_share(d, 0);
    return 0;
}

const struct plogp_params *
measure_current(const struct daemon *d)
{
    return d->ms != NULL && d->ms->cur.epoch != 0 ? &d->ms->cur : NULL;
}

/* ---- probes ---- */

/* Zeros to send: at least len bytes. */
static const uint8_t *
measure_zeros(struct measure_state *ms, size_t len)
{
    if (len > ms->zeros_len) {
        uint8_t *z = calloc(1, len);

        if (z == NULL)
            return NULL;
        free(ms->zeros);
        ms->zeros = z;
        ms->zeros_len = len;
    }
    return ms->zeros;
}

/* Our CPU time less the time spent polling (--poll-us), us: the work a
   train's messages cost the daemon, o_s and o_r (plogp.h), and not how
   long it spun waiting for them. */
static uint64_t
measure_cpu_us(const struct daemon *d)
{
    uint64_t cpu = platform_cpu_us();

    return cpu > d->st.polled_us ? cpu - d->st.polled_us : 0;
}

static int
measure_send_probe(struct daemon *d, int hid, Kind kind, const Probe *pr,
                   const void *payload, size_t len)
{
    Envelope e;

    envelope_init(&e);
    e.kind = kind;
    e.src = COLLS_DAEMON_TID(d->hid);
    e.dst = COLLS_DAEMON_TID(hid);
    e.count = len;
    e.body_case = ENVELOPE__BODY_PROBE;
    e.probe = (Probe *)(uintptr_t)pr;
    return net_send(d, hid, &e, payload, len);
}

static int
measure_echo(void *ctx, int hid, size_t bytes, uint64_t id)
{
    struct daemon *d = ctx;
    const uint8_t *z = measure_zeros(d->ms, bytes);
    Probe pr = PROBE__INIT;

    if (z == NULL)
        return COLLS_ENOMEM;
    pr.id = id;
    return measure_send_probe(d, hid, KIND__PROBE_REQ, &pr, z, bytes);
}

static int
measure_train(void *ctx, int hid, size_t m, int k, uint64_t id)
{
    struct daemon *d = ctx;
    const uint8_t *z = measure_zeros(d->ms, m);
    Probe pr = PROBE__INIT;
    int i, rc;

    if (z == NULL)
        return COLLS_ENOMEM;
    pr.id = id;
    pr.k = (uint32_t)k;
    for (i = 0; i < k; i++) {
        pr.idx = (uint32_t)i;
        if ((rc = measure_send_probe(d, hid, KIND__PROBE_TRAIN, &pr, z, m)) !=
            0)
            return rc;
    }
    return 0;
}

/* A job's train: our CPU clock at its start, for its o_s (a round under
   load, measure_load_train, sends trains of its own meanwhile, which
   must not move that start). */
static int
measure_job_train(void *ctx, int hid, size_t m, int k, uint64_t id)
{
    struct daemon *d = ctx;
    struct rel_peer_stats ps = {0};

    d->ms->train_cpu_us = measure_cpu_us(d);
    d->ms->train_k = k;
    (void)rel_peer_stats(d->rel, hid, &ps);
    d->ms->train_rtx = ps.retransmits;
    return measure_train(ctx, hid, m, k, id);
}

static const struct plogp_ops measure_ops = {measure_echo, measure_job_train};

/* ---- jobs ---- */

/* Probe ids carry our hid in their top 16 bits, so that ids of different
   daemons never meet (a round under load has trains of several daemons in
   flight to one receiver); a joining daemon learns its hid late. */
static void
measure_ids(struct daemon *d)
{
    uint64_t low = d->ms->next_id & 0xffffffffffffull;

    d->ms->next_id = (uint64_t)d->hid << 48 | (low ? low : 1);
}

static struct measure_peer *
measure_peer(struct daemon *d, int hid)
{
    struct measure_state *ms = d->ms;

    if (hid < 1 || hid > DAEMON_MAX_HID)
        return NULL;
    if (ms->peer[hid] == NULL &&
        (ms->peer[hid] = calloc(1, sizeof(*ms->peer[hid]))) != NULL)
        plogp_moves_init(&ms->peer[hid]->moves);
    return ms->peer[hid];
}

/* Sends PARAMS_REP with p (NULL: status alone) to task tid. */
static void
measure_reply(struct daemon *d, uint32_t tid, uint64_t req_id,
              const struct plogp_params *p, int hid, int status, Plogp **peers,
              size_t npeers)
{
    struct task *t = task_find(d, tid);
    struct measure_wire_store st;
    Plogp w;
    Envelope r;

    if (t == NULL)
        return;
    task_reply_init(&r, t, KIND__PARAMS_REP, req_id, status);
    if (p != NULL) {
        measure_wire(p, &w, &st);
        w.hid = (uint32_t)hid;
        w.n_peers = npeers;
        w.peers = peers;
        r.body_case = ENVELOPE__BODY_PLOGP;
        r.plogp = &w;
    }
    task_queue_env(t, &r, NULL, 0, NULL);
}

static struct measure_job *
measure_head(struct daemon *d)
{
    return list_empty(&d->ms->jobs)
               ? NULL
               : list_entry(d->ms->jobs.next, struct measure_job, node);
}

/* 1 when a measurement of the daemon's own (row) may make a new summary:
   none is in force, or the one in force has row's ladder.  A quick
   measurement never replaces the summary of a thorough one. */
static int
measure_refines(const struct measure_state *ms, const struct plogp_params *row)
{
    return ms->cur.epoch == 0 ||
           (ms->cur.n == row->n &&
            memcmp(ms->cur.m, row->m, row->n * sizeof(row->m[0])) == 0);
}

/* The transport's bytes both ways with every peer up: this host's link. */
static uint64_t
measure_link_bytes(struct daemon *d, uint64_t *sent)
{
    struct rel_peer_stats ps;
    uint64_t t = 0, s = 0;
    int hid;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        if (hid != d->hid && host_is_up(d, hid) &&
            rel_peer_stats(d->rel, hid, &ps) == 0) {
            t += ps.bytes_sent + ps.bytes_recv;
            s += ps.bytes_sent;
        }
    if (sent != NULL)
        *sent = s;
    return t;
}

/* A move's check of hid ended with row (measure_check's sizes): if it
   agrees with what we have, the round trip rose with the traffic of
   others (a queue at the peer's end, which no count of ours sees: on 8
   hosts at 10 Mbit/s every measurement of one pair made others look
   moved), and the next move must last twice as long; else the peer is
   measured again with its row's ladder. */
static void
measure_checked(struct daemon *d, struct measure_peer *mp, int hid,
                const struct plogp_params *row)
{
    int agrees =
        plogp_agrees(&mp->row, row, MEASURE_AGREE, MEASURE_AGREE_FLOOR_US);

    plogp_moves_checked(&mp->moves, agrees);
    if (agrees) {
        log_info("host %d: its parameters did not change (a busy link): "
                 "next check after %d moved checks",
                 hid, mp->moves.need);
        return;
    }
    log_info("host %d: its parameters changed: measuring its whole ladder",
             hid);
    measure_queue(d, hid, mp->row.m, mp->row.n, MEASURE_QUICK_REPS, 0, 0, 0, 0);
}

/* Ends the running job jb: its row to the peer, the answer to whoever
   asked (status 0: measured); the next job may start. */
static void
measure_job_end(struct daemon *d, struct measure_job *jb, int status)
{
    struct plogp_params row;
    struct measure_peer *mp = measure_peer(d, jb->j.hid);
    int rc = status, hid = jb->j.hid;
    uint64_t now = platform_now_us();

    list_del(&jb->node);
    if (rc == 0 && jb->j.lossy_repeats > 0)
        log_info("pLogP measurement of host %d: %d train(s) sent again, the "
                 "transport having retransmitted during them",
                 hid, jb->j.lossy_repeats);
    if (rc == 0 && (rc = plogp_job_result(&jb->j, &row)) == 0 && mp != NULL) {
        struct rel_peer_stats ps = {0};

        mp->checked_us = now;
        mp->last_bytes = measure_link_bytes(d, &mp->last_sent_all);
        mp->retries = 0;
        /* our trains are no bulk of the peer's (measure_moved) */
        if (rel_peer_stats(d->rel, hid, &ps) == 0)
            mp->last_sent = ps.bytes_sent;
        if (jb->check && mp->have) {
            /* the base stays: a round trip risen with others' traffic
               must not be the one the next move is seen from */
            measure_checked(d, mp, hid, &row);
            free(jb);
            return;
        }
        mp->base_min_rtt_us = ps.min_rtt_us;
        mp->measured_us = now;
        mp->row = row;
        mp->have = 1;
    }
    if (rc != 0)
        log_info("pLogP measurement of host %d failed: error %d", hid, rc);
    if (jb->tid != 0)
        measure_reply(d, jb->tid, jb->req_id, rc == 0 ? &row : NULL, hid, rc,
                      NULL, 0);
    else if (rc == 0 && measure_refines(d->ms, &row))
        measure_commit(d, &row, -1.0, -1.0);
    else if (rc != 0 && rc != COLLS_EHOSTDOWN && mp != NULL &&
             ++mp->retries <= MEASURE_RETRIES)
        /* our own, lost to a busy link (the daemons of a slow network
           that start together measure each other at once): later */
        measure_queue(d, hid, jb->j.sizes, jb->j.nsizes, jb->j.reps, 0, 0,
                      now + (uint64_t)mp->retries * MEASURE_RETRY_US +
                          (uint64_t)(d->hid % 16) * MEASURE_STAGGER_US,
                      jb->check);
    free(jb);
}

/* Starts or continues the running job. */
static void
measure_kick(struct daemon *d, uint64_t now)
{
    struct measure_job *jb;
    int rc;

    while ((jb = measure_head(d)) != NULL) {
        if (now < jb->not_before_us)
            return;
        if (!host_is_up(d, jb->j.hid)) {
            measure_job_end(d, jb, COLLS_EHOSTDOWN);
            continue;
        }
        if (jb->j.id != 0)
            return; /* a probe in flight */
        measure_ids(d);
        rc = plogp_job_next(&jb->j, &measure_ops, d, &d->ms->next_id, now);
        if (rc == 2) {
            jb->not_before_us = jb->j.resume_us; /* the cron kicks again */
            return;
        }
        if (rc == 0) {
            /* a 4 MiB train on a 10 Mbit/s link takes seconds, and more
               where a shaper drops its bursts */
            jb->deadline_us =
                now + plogp_deadline_us(plogp_probe_bytes(&jb->j),
                                        (unsigned)d->cfg->request_timeout_ms);
            return;
        }
        measure_job_end(d, jb, rc == 1 ? 0 : rc);
    }
}

/* Queues a job for hid (tid 0: the daemon's own; check: a move's). */
static int
measure_queue(struct daemon *d, int hid, const size_t *sizes, size_t n,
              int reps, uint32_t tid, uint64_t req_id, uint64_t not_before,
              int check)
{
    struct measure_job *jb = calloc(1, sizeof(*jb));
    int rc;

    if (jb == NULL)
        return COLLS_ENOMEM;
    if ((rc = plogp_job_init(&jb->j, hid, sizes, n, reps)) != 0) {
        free(jb);
        return rc;
    }
    jb->tid = tid;
    jb->req_id = req_id;
    jb->not_before_us = not_before;
    jb->check = check;
    list_add_tail(&d->ms->jobs, &jb->node);
    measure_kick(d, platform_now_us());
    return 0;
}

/* 1 when a quick job of the daemon's own for hid already waits. */
static int
measure_queued(struct daemon *d, int hid)
{
    struct list_node *n;

    LIST_FOREACH (n, &d->ms->jobs) {
        struct measure_job *jb = list_entry(n, struct measure_job, node);

        if (jb->j.hid == hid && jb->tid == 0)
            return 1;
    }
    return 0;
}

void
measure_host_up(struct daemon *d, int hid)
{
    if (d->ms == NULL || hid == d->hid)
        return;
    if (d->ms->cur.epoch != 0)
        measure_share(d, hid); /* a newcomer learns what is in force */
    if (!d->cfg->measure || measure_queued(d, hid))
        return;
    /* staggered by our hid: daemons that start together would otherwise
       all measure at once and time each other's traffic */
    measure_queue(d, hid, measure_quick,
                  sizeof(measure_quick) / sizeof(measure_quick[0]),
                  MEASURE_QUICK_REPS, 0, 0,
                  platform_now_us() + MEASURE_START_DELAY_US +
                      (uint64_t)(d->hid % 16) * MEASURE_STAGGER_US,
                  0);
}

void
measure_host_down(struct daemon *d, int hid)
{
    struct measure_peer *mp;

    if (d->ms == NULL || hid < 1 || hid > DAEMON_MAX_HID)
        return;
    if ((mp = d->ms->peer[hid]) != NULL)
        memset(&mp->rx, 0, sizeof(mp->rx));
    if (d->ms->load.active && d->ms->load.asked[hid])
        measure_load_result(d, hid, d->ms->load.id, 0, -1, 0.0);
    measure_kick(d, platform_now_us()); /* its jobs end */
}

/* A counter's growth since then; 0 when it went back (a peer's streams
   started over, a host went down). */
static uint64_t
measure_delta(uint64_t now, uint64_t then)
{
    return now >= then ? now - then : 0;
}

/*
 * Every PLOGP_MOVED_EVERY_US, each measured peer's least round trip in
 * the transport goes to its move detector (plogp_moves_look, which says
 * what a move is), with whether its delivery rate moved
 * (plogp_rate_moved) and whether this host's link was quiet: under
 * MEASURE_QUIET_BYTES with all peers together since the previous look,
 * and no measurement of ours running.  The link is the host's, shared by
 * all its peers: on 8 hosts at 10 Mbit/s, collsctl tune's trains to one
 * peer made the round trips to every other look "moved" and queued quick
 * measurements between tune's.  A peer found moved is checked
 * (measure_checked): measured again with the sizes of its row, so that
 * the summary keeps its ladder, only when a light measurement disagrees
 * with the row.
 */
static void
measure_moved(struct daemon *d, uint64_t now)
{
    uint64_t bytes = 0, sent_all = 0;
    int hid, have_bytes = 0;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        struct measure_peer *mp = d->ms->peer[hid];
        struct rel_peer_stats ps;
        uint64_t a, b;
        double row_Bps;
        int quiet, rate;

        if (mp == NULL || !mp->have || now < mp->checked_us ||
            now - mp->checked_us < PLOGP_MOVED_EVERY_US || !host_is_up(d, hid))
            continue;
        mp->checked_us = now;
        if (!have_bytes) {
            bytes = measure_link_bytes(d, &sent_all);
            have_bytes = 1;
        }
        quiet =
            bytes - mp->last_bytes < MEASURE_QUIET_BYTES && !measure_busy(d);
        mp->last_bytes = bytes;
        /* no figures (the transport lost the peer): look next time,
           from the bytes sent so far */
        if (rel_peer_stats(d->rel, hid, &ps) != 0)
            continue;
        a = ps.min_rtt_us;
        b = mp->base_min_rtt_us;
        /* the delivery rate, except while we measure: our own trains
           and checks are no traffic of the peer's applications */
        row_Bps = plogp_row_rate(&mp->row);
        rate = !measure_busy(d) &&
               plogp_rate_moved(row_Bps, (double)ps.bw_bps,
                                measure_delta(ps.bytes_sent, mp->last_sent),
                                measure_delta(sent_all, mp->last_sent_all));
        mp->last_sent = ps.bytes_sent;
        mp->last_sent_all = sent_all;
        if (!plogp_moves_look(&mp->moves, b, a, quiet, rate,
                              measure_queued(d, hid)))
            continue;
        log_info("host %d: least round trip %llu us (%llu when measured), "
                 "delivery rate %.1f MB/s (%.1f): measuring again",
                 hid, (unsigned long long)a, (unsigned long long)b,
                 (double)ps.bw_bps / 1e6, row_Bps / 1e6);
        measure_queue(d, hid, measure_check,
                      sizeof(measure_check) / sizeof(measure_check[0]),
                      MEASURE_QUICK_REPS, 0, 0, now, 1);
    }
}

void
measure_cron(struct daemon *d, uint64_t now_us)
{
    struct measure_job *jb;

    if (d->ms == NULL)
        return;
    jb = measure_head(d);
    if (jb != NULL && jb->j.id != 0 && now_us >= jb->deadline_us)
        measure_job_end(d, jb, COLLS_ETIMEDOUT);
    if (d->ms->load.active && now_us >= d->ms->load.deadline_us)
        measure_load_end(d, COLLS_ETIMEDOUT);
    if (d->cfg->measure)
        measure_moved(d, now_us);
    measure_kick(d, now_us);
}

int
measure_busy(const struct daemon *d)
{
    return d->ms != NULL && (!list_empty(&d->ms->jobs) || d->ms->load.active);
}

unsigned
measure_jobs(const struct daemon *d)
{
    const struct list_node *n;
    unsigned k = 0;

    if (d->ms == NULL)
        return 0;
    LIST_FOREACH (n, &d->ms->jobs)
        k++;
    return k + (d->ms->load.active ? 1u : 0u);
}

/* ---- rounds under load ---- */

/* The daemon after us in hid order among those up (cyclic); 0: none. */
static int
measure_next_up(struct daemon *d)
{
    int h, i;

    for (i = 1; i <= DAEMON_MAX_HID; i++) {
        h = (d->hid - 1 + i) % DAEMON_MAX_HID + 1;
        if (h != d->hid && host_is_up(d, h))
            return h;
    }
    return 0;
}

/* Our part of round id ends: got of k (k 0: echoes, span_us their median
   round trip), to the daemon that runs the round. */
static void
measure_load_report(struct daemon *d, int origin, uint64_t id, int k, int got,
                    double span_us)
{
    Probe out = PROBE__INIT;

    d->ms->send_id = 0;
    if (origin == d->hid) {
        measure_load_result(d, d->hid, id, k, got, span_us);
        return;
    }
    out.id = id;
    out.k = (uint32_t)k;
    out.got = (uint32_t)got;
    out.span_us = span_us;
    measure_send_probe(d, origin, KIND__PROBE_LOAD_DONE, &out, NULL, 0);
}

/* Our part of a round run by origin, towards the next daemon up: a train
   of k messages of m bytes, or (k 0) MEASURE_LOAD_ECHOES echoes of m
   bytes one after the other. */
static void
measure_load_train(struct daemon *d, int origin, uint64_t id, size_t m, int k)
{
    struct measure_state *ms = d->ms;
    int to = measure_next_up(d), rc;

    /* the round's own sizes only: a train is plogp_train_len(m) long,
       echoes are of 1 byte */
    if (to == 0 || m > PLOGP_MAX_BYTES || (k != 0 && k != plogp_train_len(m)) ||
        (k == 0 && m != 1)) {
        measure_load_report(d, origin, id, k, 0, 0.0);
        return;
    }
    ms->send_id = id;
    ms->send_origin = origin;
    ms->send_to = to;
    ms->send_m = m;
    ms->send_echoes = 0;
    if (k == 0) {
        ms->send_us = platform_now_us();
        rc = measure_echo(d, to, m, id);
    } else {
        rc = measure_train(d, to, m, k, id);
    }
    if (rc != 0)
        measure_load_report(d, origin, id, k, 0, 0.0);
}

/* One of our echoes of a round came back: the next, or the report. */
static void
measure_load_echoed(struct daemon *d, uint64_t now)
{
    struct measure_state *ms = d->ms;

    ms->send_rtt[ms->send_echoes++] = (double)(now - ms->send_us);
    if (ms->send_echoes < MEASURE_LOAD_ECHOES) {
        ms->send_us = now;
        if (measure_echo(d, ms->send_to, ms->send_m, ms->send_id) == 0)
            return;
    }
    measure_load_report(d, ms->send_origin, ms->send_id, 0, 1,
                        plogp_median(ms->send_rtt, (size_t)ms->send_echoes));
}

/* Our train's span came back: to the daemon that runs the round. */
static void
measure_load_spanned(struct daemon *d, const Probe *pr)
{
    measure_load_report(d, d->ms->send_origin, pr->id, (int)pr->k, (int)pr->got,
                        pr->span_us);
}

/* Ends the round with status; its gaps to the task that asked. */
static void
measure_load_end(struct daemon *d, int status)
{
    struct measure_load *l = &d->ms->load;
    struct plogp_params row;
    size_t i;

    l->active = 0;
    if (status != 0) {
        struct task *t = task_find(d, l->tid);

        if (t != NULL)
            task_error(t, l->req_id, status, "measuring under load failed");
        return;
    }
    memset(&row, 0, sizeof(row));
    row.n = l->n;
    row.rtt[0] = d->ms->load_rtt = l->rtt;
    d->ms->load_n = l->n;
    for (i = 0; i < l->n; i++) {
        row.m[i] = d->ms->load_m[i] = l->sizes[i];
        row.gap[i] = row.g[i] = row.gl[i] = d->ms->load_gap[i] = l->gap[i];
    }
    measure_reply(d, l->tid, l->req_id, &row, 0, 0, NULL, 0);
}

/* 1 while the round's step is echoes: before the first size's trains
   and after the last's (n >= 1). */
static int
measure_load_echo(const struct measure_load *l)
{
    return l->echoes == 0 || l->i == l->n;
}

/* Starts the next set of trains of the round, or ends it. */
static void
measure_load_step(struct daemon *d)
{
    struct measure_load *l = &d->ms->load;
    Probe pr = PROBE__INIT;
    size_t m;
    int h, k;

    if (l->echoes == 2) {
        measure_load_end(d, 0);
        return;
    }
    m = measure_load_echo(l) ? 1 : l->sizes[l->i];
    k = measure_load_echo(l) ? 0 : plogp_train_len(m);
    measure_ids(d);
    l->id = d->ms->next_id++;
    l->waiting = 0;
    memset(l->asked, 0, sizeof(l->asked));
    pr.id = l->id;
    pr.m = m;
    pr.k = (uint32_t)k;
    l->deadline_us =
        platform_now_us() +
        plogp_deadline_us((uint64_t)m *
                              (uint64_t)(k ? k : 2 * MEASURE_LOAD_ECHOES),
                          (unsigned)d->cfg->request_timeout_ms);
    for (h = 1; h <= DAEMON_MAX_HID; h++)
        if (h == d->hid || host_is_up(d, h)) {
            l->asked[h] = 1;
            l->waiting++;
        }
    for (h = 1; h <= DAEMON_MAX_HID; h++)
        if (l->asked[h] && h != d->hid &&
            measure_send_probe(d, h, KIND__PROBE_LOAD, &pr, NULL, 0) != 0)
            measure_load_result(d, h, l->id, k, 0, 0.0);
    if (l->active && l->id == pr.id)
        measure_load_train(d, d->hid, pr.id, m, k);
}

/* Daemon from reports its train of round id: got of k, span_us. */
static void
measure_load_result(struct daemon *d, int from, uint64_t id, int k, int got,
                    double span_us)
{
    struct measure_load *l = &d->ms->load;

    if (!l->active || id != l->id || from < 1 || from > DAEMON_MAX_HID ||
        !l->asked[from])
        return;
    l->asked[from] = 0;
    if (span_us >= 0.0 && span_us <= PLOGP_VALUE_MAX &&
        l->nsample < sizeof(l->sample) / sizeof(l->sample[0])) {
        if (measure_load_echo(l) && k == 0 && got == 1)
            l->sample[l->nsample++] = span_us;
        else if (!measure_load_echo(l) && got == k && k >= 2 &&
                 k <= PLOGP_TRAIN_MAX)
            l->sample[l->nsample++] = span_us / plogp_train_intervals(k);
    }
    if (--l->waiting > 0)
        return;
    if (++l->r < l->reps) {
        measure_load_step(d);
        return;
    }
    if (l->nsample == 0) { /* the second echoes are a check, not needed */
        measure_load_end(d, l->echoes == 1 && l->i == l->n ? 0 : COLLS_EIO);
        return;
    }
    if (measure_load_echo(l)) {
        double rtt = plogp_median(l->sample, l->nsample);

        log_info("measuring under load: echoes of 1 byte %s the trains: "
                 "median round trip %.2f us",
                 l->echoes == 0 ? "before" : "after", rtt);
        if (l->echoes++ == 0 || rtt < l->rtt)
            l->rtt = rtt;
    } else
        l->gap[l->i++] = plogp_median(l->sample, l->nsample);
    l->nsample = 0;
    l->r = 0;
    measure_load_step(d);
}

/* PARAMS_LOAD: a round over sizes (increasing), reps times each. */
static int
measure_load_start(struct task *t, const Envelope *e, const size_t *sizes,
                   size_t n, int reps)
{
    struct daemon *d = t->d;
    struct measure_load *l = &d->ms->load;
    size_t i;

    if (l->active)
        return COLLS_EAGAIN;
    if (n < 1 || n > PLOGP_MAX_SIZES || reps < 1 || reps > PLOGP_MAX_REPS)
        return COLLS_EINVAL;
    for (i = 0; i < n; i++)
        if (sizes[i] > PLOGP_MAX_BYTES || (i > 0 && sizes[i] <= sizes[i - 1]))
            return COLLS_EINVAL;
    if (measure_next_up(d) == 0)
        return COLLS_ENOENT;
    memset(l, 0, sizeof(*l));
    l->active = 1;
    l->tid = t->tid;
    l->req_id = e->req_id;
    memcpy(l->sizes, sizes, n * sizeof(sizes[0]));
    l->n = n;
    l->reps = reps;
    measure_load_step(d);
    return 0;
}

/* ---- messages ---- */

void
measure_peer_msg(struct daemon *d, int hid, const Envelope *e,
                 const uint8_t *payload, size_t plen)
{
    const Probe *pr = e->body_case == ENVELOPE__BODY_PROBE ? e->probe : NULL;
    struct measure_peer *mp;
    struct measure_job *jb;
    uint64_t now = platform_now_us();
    Probe out = PROBE__INIT;
    struct rel_peer_stats ps;
    double span, o_r, o_s;
    uint64_t cpu;
    int got, repaired = 0;

    if (d->ms == NULL || (pr == NULL && e->kind != KIND__PARAMS_SHARE) ||
        (mp = measure_peer(d, hid)) == NULL) {
        d->st.bad_peer_msgs++;
        return;
    }
    jb = measure_head(d);
    switch (e->kind) {
    case KIND__PARAMS_SHARE:
        measure_shared(d, e);
        return;
    case KIND__PROBE_REQ:
        out.id = pr->id;
        measure_send_probe(d, hid, KIND__PROBE_REP, &out, payload, plen);
        return;
    case KIND__PROBE_REP:
        if (jb != NULL && jb->j.hid == hid &&
            plogp_job_echoed(&jb->j, pr->id, now))
            measure_kick(d, now);
        else if (pr->id != 0 && pr->id == d->ms->send_id &&
                 hid == d->ms->send_to)
            measure_load_echoed(d, now);
        return;
    case KIND__PROBE_TRAIN:
        if (pr->k > PLOGP_TRAIN_MAX || pr->idx >= pr->k) {
            d->st.bad_peer_msgs++;
            return;
        }
        if (plogp_rx_arrive(&mp->rx, pr->id, (int)pr->idx, (int)pr->k, now,
                            measure_cpu_us(d), &got, &span, &o_r)) {
            out.id = pr->id;
            out.k = pr->k;
            out.got = (uint32_t)got;
            out.span_us = span;
            out.o_r_us = o_r;
            measure_send_probe(d, hid, KIND__PROBE_SPAN, &out, NULL, 0);
        }
        return;
    case KIND__PROBE_SPAN:
        if (jb != NULL && jb->j.hid == hid) {
            /* the sender's overhead: its CPU from the train's start to
               this report, per message (the acks it took in count: our
               transport's sends need them) */
            cpu = measure_cpu_us(d);
            o_s = d->ms->train_k > 0 && cpu >= d->ms->train_cpu_us
                      ? (double)(cpu - d->ms->train_cpu_us) / d->ms->train_k
                      : -1.0;
            /* a train the transport repaired measured the repair */
            if (rel_peer_stats(d->rel, hid, &ps) == 0)
                repaired = ps.retransmits > d->ms->train_rtx;
            if (plogp_job_spanned(&jb->j, pr->id,
                                  pr->got > PLOGP_TRAIN_MAX ? 0 : (int)pr->got,
                                  pr->span_us, o_s, pr->o_r_us, repaired)) {
                measure_kick(d, now);
                return;
            }
        }
        if (pr->id != 0 && pr->id == d->ms->send_id)
            measure_load_spanned(d, pr);
        return;
    case KIND__PROBE_LOAD:
        measure_load_train(d, hid, pr->id, (size_t)pr->m,
                           pr->k > PLOGP_TRAIN_MAX ? 0 : (int)pr->k);
        return;
    case KIND__PROBE_LOAD_DONE:
        measure_load_result(
            d, hid, pr->id, pr->k > PLOGP_TRAIN_MAX ? 0 : (int)pr->k,
            pr->got > PLOGP_TRAIN_MAX ? -1 : (int)pr->got, pr->span_us);
        return;
    default:
        d->st.bad_peer_msgs++;
        return;
    }
}

/* GET: the summary (epoch 0 and no sizes before any) and every row. */
static void
measure_get(struct task *t, const Envelope *e)
{
    struct daemon *d = t->d;
    struct measure_state *ms = d->ms;
    struct plogp_params none = {.n = 0};
    struct measure_wire_store *st;
    Plogp *rows, **ptrs;
    size_t n = 0, have = 0;
    int hid;

    for (hid = 1; hid <= DAEMON_MAX_HID; hid++)
        have += ms->peer[hid] != NULL && ms->peer[hid]->have;
    st = calloc(have + 1, sizeof(*st));
    rows = calloc(have + 1, sizeof(*rows));
    ptrs = calloc(have + 1, sizeof(*ptrs));
    if (st == NULL || rows == NULL || ptrs == NULL) {
        task_error(t, e->req_id, COLLS_ENOMEM, "out of memory");
        goto out;
    }
    for (hid = 1; hid <= DAEMON_MAX_HID; hid++) {
        struct measure_peer *mp = ms->peer[hid];

        if (mp == NULL || !mp->have || n == have)
            continue;
        measure_wire(&mp->row, &rows[n], &st[n]);
        rows[n].hid = (uint32_t)hid;
        ptrs[n] = &rows[n];
        n++;
    }
    measure_reply(d, t->tid, e->req_id, ms->cur.epoch ? &ms->cur : &none, 0, 0,
                  ptrs, n);
out:
    free(st);
    free(rows);
    free(ptrs);
}

void
measure_task_request(struct task *t, const Envelope *e)
{
    struct daemon *d = t->d;
    const ParamsReq *q =
        e->body_case == ENVELOPE__BODY_PARAMS_REQ ? e->params_req : NULL;
    size_t sizes[PLOGP_MAX_SIZES], n, i;
    struct plogp_params like;
    uint64_t newest;
    int hid, rc, reps;

    if (q == NULL || d->ms == NULL) {
        task_error(t, e->req_id, COLLS_EINVAL, "PARAMS_REQ without a body");
        return;
    }
    switch (q->action) {
    case PARAMS_GET:
        measure_get(t, e);
        return;
    case PARAMS_MEASURE:
        hid = q->hid <= DAEMON_MAX_HID ? (int)q->hid : -1;
        if (hid == d->hid || !host_is_up(d, hid)) {
            task_error(t, e->req_id,
                       hid > 0 && d->hosts[hid] != NULL ? COLLS_EHOSTDOWN
                                                        : COLLS_ENOENT,
                       "no such peer up");
            return;
        }
        n = q->n_sizes;
        if (n == 0) {
            n = plogp_thorough_n;
            memcpy(sizes, plogp_thorough, n * sizeof(sizes[0]));
        } else if (n <= PLOGP_MAX_SIZES) {
            for (i = 0; i < n; i++)
                sizes[i] = q->sizes[i] <= PLOGP_MAX_BYTES ? (size_t)q->sizes[i]
                                                          : PLOGP_MAX_BYTES + 1;
        }
        reps = q->reps ? (int)q->reps : PLOGP_THOROUGH_REPS;
        rc =
            n <= PLOGP_MAX_SIZES && q->reps <= PLOGP_MAX_REPS
                ? measure_queue(d, hid, sizes, n, reps, t->tid, e->req_id, 0, 0)
                : COLLS_EINVAL;
        if (rc != 0)
            task_error(t, e->req_id, rc,
                       "sizes must increase, at most 16 of them up to 16 MiB, "
                       "and at most 16 repetitions");
        return;
    case PARAMS_LOAD:
        n = q->n_sizes;
        for (i = 0; i < n && i < PLOGP_MAX_SIZES; i++)
            sizes[i] = q->sizes[i] <= PLOGP_MAX_BYTES ? (size_t)q->sizes[i]
                                                      : PLOGP_MAX_BYTES + 1;
        rc = q->reps <= PLOGP_MAX_REPS
                 ? measure_load_start(t, e, sizes, n,
                                      q->reps ? (int)q->reps
                                              : PLOGP_THOROUGH_REPS)
                 : COLLS_EINVAL;
        if (rc != 0)
            task_error(t, e->req_id, rc,
                       rc == COLLS_EAGAIN   ? "a round under load is running"
                       : rc == COLLS_ENOENT ? "no other daemon is up"
                                            : "sizes must increase, at most "
                                              "16 of them up to 16 MiB, and "
                                              "at most 16 repetitions");
        return;
    case PARAMS_COMMIT:
        /* the ladder of the newest row */
        like.n = 0;
        for (hid = 1, newest = 0; hid <= DAEMON_MAX_HID; hid++) {
            const struct measure_peer *mp = d->ms->peer[hid];

            if (mp != NULL && mp->have && mp->measured_us >= newest) {
                like = mp->row;
                newest = mp->measured_us;
            }
        }
        rc = !(q->hop_us >= 0.0 && q->hop_us <= PLOGP_VALUE_MAX &&
               q->hop_byte_us >= 0.0 && q->hop_byte_us <= PLOGP_VALUE_MAX)
                 ? COLLS_EINVAL
             : like.n == 0
                 ? COLLS_ENOENT
                 : measure_commit(d, &like, q->hop_us, q->hop_byte_us);
        if (rc != 0)
            task_error(t, e->req_id, rc,
                       rc == COLLS_ENOENT ? "no peer measured yet"
                                          : "cannot summarise");
        else
            measure_reply(d, t->tid, e->req_id, &d->ms->cur, 0, 0, NULL, 0);
        return;
    default:
        task_error(t, e->req_id, COLLS_EINVAL, "unknown PARAMS_REQ action");
        return;
    }
}

/* ---- life ---- */

int
measure_new(struct daemon *d)
{
    struct measure_state *ms = calloc(1, sizeof(*ms));
    const char *f = d->cfg->params_file;

    if (ms == NULL)
        return COLLS_ENOMEM;
    list_init(&ms->jobs);
    ms->next_id = 1;
    if (f != NULL && f[0] != '\0' && strcmp(f, "none") != 0) {
        ms->path = strdup(f);
    } else if ((f == NULL || f[0] == '\0') && d->cfg->socket != NULL) {
        const char *sock = d->cfg->socket, *slash = strrchr(sock, '/');
        size_t dl = slash ? (size_t)(slash - sock) + 1 : 0;

        if ((ms->path = malloc(dl + sizeof("collsd.plogp"))) != NULL) {
            memcpy(ms->path, sock, dl);
            memcpy(ms->path + dl, "collsd.plogp", sizeof("collsd.plogp"));
        }
    }
    d->ms = ms;
    if (ms->path != NULL)
        measure_load(d);
    return 0;
}

void
measure_free(struct daemon *d)
{
    struct measure_state *ms = d->ms;
    struct list_node *n, *tmp;
    int hid;

    if (ms == NULL)
        return;
    LIST_FOREACH_SAFE (n, tmp, &ms->jobs)
        free(list_entry(n, struct measure_job, node));
    for (hid = 0; hid <= DAEMON_MAX_HID; hid++)
        free(ms->peer[hid]);
    free(ms->zeros);
    free(ms->path);
    free(ms);
    d->ms = NULL;
}
