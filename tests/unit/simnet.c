/*
 * simnet.c -- runs the schedules of all P participants in memory; see
 * simnet.h for what it enforces.
 *
 * Each rank is a cursor over its rounds.  Starting a round executes its
 * local steps (REDUCE, COPY: the hazard check guarantees they touch
 * nothing the round's messages touch) and posts its SEND and RECV steps,
 * numbering them per peer pair.  The main loop matches a posted RECV with
 * the posted SEND of the same number, copies the bytes, and advances any
 * rank whose round is complete, until everyone is done or nothing moves.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "proto/dtype.h"
#include "proto/reduce.h"
#include "tests/unit/simnet.h"

struct sim_rank {
    const struct sched *s;
    uint8_t *buf[SCHED_NBUF];
    size_t size[SCHED_NBUF];
    size_t round;   /* current round; == nrounds when finished */
    size_t pending; /* steps of the current round not yet complete */
    const struct sched_step *st;
    size_t nst;
    uint8_t *done; /* per step of the current round */
    uint64_t *seq; /* per step: its number within its (src, dst) pair */
    int *vc;       /* vector clock, P entries */
    int *vc_round; /* the clock when the round started (sends carry it) */
};

static int
sim_fail(struct simnet_result *res, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(res->err, sizeof(res->err), fmt, ap);
    va_end(ap);
    return -1;
}

/* Reads and writes of one step: up to two ranges. */
struct sim_range {
    int buf;
    size_t off, len;
    int write;
};

static int
sim_ranges(const struct sched_step *st, struct sim_range *r)
{
    switch (st->kind) {
    case SCHED_SEND:
        r[0] = (struct sim_range){st->buf, st->off, st->len, 0};
        return 1;
    case SCHED_RECV:
        r[0] = (struct sim_range){st->buf, st->off, st->len, 1};
        return 1;
    case SCHED_REDUCE:
    case SCHED_COPY:
        r[0] = (struct sim_range){st->buf, st->off, st->len, 1};
        r[1] = (struct sim_range){st->sbuf, st->soff, st->len, 0};
        return 2;
    default:
        return 0;
    }
}

/* A write overlapping any other access of the same round is a hazard. */
static int
sim_hazards(const struct sched *s, size_t round, struct simnet_result *res)
{
    size_t n, i, j;
    const struct sched_step *st = sched_round_steps(s, round, &n);
    struct sim_range a[2], b[2];
    int na, nb, x, y;

    for (i = 0; i < n; i++) {
        na = sim_ranges(&st[i], a);
        /* a COPY/REDUCE within itself: dst and src must not overlap
           unless identical (in-place REDUCE is not produced) */
        if (na == 2 && a[0].buf == a[1].buf && a[0].len &&
            a[0].off < a[1].off + a[1].len && a[1].off < a[0].off + a[0].len)
            return sim_fail(res,
                            "rank %d round %zu step %zu: %s overlaps "
                            "itself",
                            s->rank, round, i, sched_kind_name(st[i].kind));
        for (j = i + 1; j < n; j++) {
            nb = sim_ranges(&st[j], b);
            for (x = 0; x < na; x++)
                for (y = 0; y < nb; y++) {
                    if (!(a[x].write || b[y].write) || a[x].buf != b[y].buf ||
                        a[x].len == 0 || b[y].len == 0)
                        continue;
                    if (a[x].off < b[y].off + b[y].len &&
                        b[y].off < a[x].off + a[x].len)
                        return sim_fail(res,
                                        "rank %d round %zu: hazard between "
                                        "step %zu (%s) and step %zu (%s) "
                                        "on buffer %d",
                                        s->rank, round, i,
                                        sched_kind_name(st[i].kind), j,
                                        sched_kind_name(st[j].kind), a[x].buf);
                }
        }
    }
    return 0;
}

/* Executes a REDUCE or COPY step. */
static int
sim_local(struct sim_rank *k, const struct sched_step *st,
          struct simnet_result *res)
{
    uint8_t *d = k->buf[st->buf] + st->off;
    const uint8_t *src = k->buf[st->sbuf] + st->soff;
    size_t e;
    int rc;

    if (st->kind == SCHED_COPY) {
        memcpy(d, src, st->len);
        return 0;
    }
    e = dtype_size(k->s->dtype);
    if (e == 0 || st->len % e != 0)
        return sim_fail(res, "rank %d: reduce of %zu bytes, item %zu",
                        k->s->rank, st->len, e);
    if (st->flags & SCHED_F_SRC_FIRST)
        rc = reduce_apply3(k->s->rop, k->s->dtype, d, src, d, st->len / e);
    else
        rc = reduce_apply(k->s->rop, k->s->dtype, d, src, st->len / e);
    if (rc != 0)
        return sim_fail(res, "rank %d: reduce failed: %d", k->s->rank, rc);
    return 0;
}

/* Starts round k->round of rank k (or marks it finished). */
static int
sim_start(struct sim_rank *k, uint64_t *nsend, uint64_t *nrecv, int P,
          struct simnet_result *res)
{
    size_t i;

    if (k->round >= k->s->nrounds) {
        k->nst = 0;
        k->pending = 0;
        return 0;
    }
    if (sim_hazards(k->s, k->round, res) != 0)
        return -1;
    k->st = sched_round_steps(k->s, k->round, &k->nst);
    memcpy(k->vc_round, k->vc, (size_t)P * sizeof(int));
    k->pending = 0;
    for (i = 0; i < k->nst; i++) {
        const struct sched_step *st = &k->st[i];
        int me = k->s->rank;

        k->done[i] = 0;
        if (st->kind == SCHED_SEND) {
            k->seq[i] = nsend[me * P + st->peer]++;
            k->pending++;
        } else if (st->kind == SCHED_RECV) {
            k->seq[i] = nrecv[st->peer * P + me]++;
            k->pending++;
        } else {
            if (sim_local(k, st, res) != 0)
                return -1;
            k->done[i] = 1;
        }
    }
    return 0;
}

/* Tries to match every posted RECV of rank b; returns matches made. */
static int
sim_match(struct sim_rank *ranks, int P, int b, struct simnet_result *res,
          int *progress)
{
    struct sim_rank *rb = &ranks[b];
    size_t i, j;
    int x;

    for (i = 0; i < rb->nst; i++) {
        const struct sched_step *rs = &rb->st[i];
        struct sim_rank *ra;

        if (rb->done[i] || rs->kind != SCHED_RECV)
            continue;
        ra = &ranks[rs->peer];
        for (j = 0; j < ra->nst; j++) {
            const struct sched_step *ss = &ra->st[j];

            if (ra->done[j] || ss->kind != SCHED_SEND || ss->peer != b ||
                ra->seq[j] != rb->seq[i])
                continue;
            if (ss->len != rs->len)
                return sim_fail(res,
                                "message %d->%d #%llu: send %zu bytes, "
                                "receive %zu",
                                rs->peer, b, (unsigned long long)rb->seq[i],
                                ss->len, rs->len);
            memcpy(rb->buf[rs->buf] + rs->off, ra->buf[ss->buf] + ss->off,
                   ss->len);
            for (x = 0; x < P; x++)
                if (ra->vc_round[x] > rb->vc[x])
                    rb->vc[x] = ra->vc_round[x];
            ra->done[j] = rb->done[i] = 1;
            ra->pending--;
            rb->pending--;
            res->messages++;
            res->bytes += ss->len;
            *progress = 1;
            break;
        }
    }
    return 0;
}

int
simnet_run(struct sched *const *s, int P, uint8_t *const *sbuf,
           const size_t *ssz, uint8_t *const *rbuf, const size_t *rsz,
           struct simnet_result *res)
{
    struct sim_rank *ranks = calloc((size_t)P, sizeof(*ranks));
    uint64_t *nsend = calloc((size_t)P * (size_t)P, sizeof(uint64_t));
    uint64_t *nrecv = calloc((size_t)P * (size_t)P, sizeof(uint64_t));
    int r, b, rc = -1, progress, finished;

    memset(res, 0, sizeof(*res));
    if (ranks == NULL || nsend == NULL || nrecv == NULL) {
        sim_fail(res, "out of memory");
        goto out;
    }
    for (r = 0; r < P; r++) {
        struct sim_rank *k = &ranks[r];
        size_t maxst = 0, i, n;
        int t;

        k->s = s[r];
        if (s[r]->P != P || s[r]->rank != r) {
            sim_fail(res, "schedule %d is for rank %d of %d", r, s[r]->rank,
                     s[r]->P);
            goto out;
        }
        if (s[r]->extent[SCHED_BUF_SEND] > ssz[r] ||
            s[r]->extent[SCHED_BUF_RECV] > rsz[r]) {
            sim_fail(res,
                     "rank %d: schedule uses %zu/%zu bytes, buffers "
                     "have %zu/%zu",
                     r, s[r]->extent[SCHED_BUF_SEND],
                     s[r]->extent[SCHED_BUF_RECV], ssz[r], rsz[r]);
            goto out;
        }
        k->buf[SCHED_BUF_SEND] = sbuf[r];
        k->buf[SCHED_BUF_RECV] = rbuf[r];
        for (t = 0; t < s[r]->ntmp; t++) {
            size_t sz = s[r]->tmp_size[t];

            k->buf[SCHED_BUF_TMP + t] = malloc(sz ? sz : 1);
            if (k->buf[SCHED_BUF_TMP + t] == NULL) {
                sim_fail(res, "out of memory");
                goto out;
            }
            memset(k->buf[SCHED_BUF_TMP + t], 0xa5, sz);
        }
        for (i = 0; i < s[r]->nrounds; i++) {
            sched_round_steps(s[r], i, &n);
            if (n > maxst)
                maxst = n;
        }
        if (s[r]->nrounds > res->max_rounds)
            res->max_rounds = s[r]->nrounds;
        k->done = calloc(maxst + 1, 1);
        k->seq = calloc(maxst + 1, sizeof(uint64_t));
        k->vc = calloc((size_t)P, sizeof(int));
        k->vc_round = calloc((size_t)P, sizeof(int));
        if (!k->done || !k->seq || !k->vc || !k->vc_round) {
            sim_fail(res, "out of memory");
            goto out;
        }
        k->vc[r] = 1;
    }
    for (r = 0; r < P; r++)
        if (sim_start(&ranks[r], nsend, nrecv, P, res) != 0)
            goto out;
    for (;;) {
        progress = 0;
        finished = 1;
        for (b = 0; b < P; b++)
            if (sim_match(ranks, P, b, res, &progress) != 0)
                goto out;
        for (r = 0; r < P; r++) {
            struct sim_rank *k = &ranks[r];

            while (k->round < k->s->nrounds && k->pending == 0) {
                k->round++;
                progress = 1;
                if (sim_start(k, nsend, nrecv, P, res) != 0)
                    goto out;
            }
            if (k->round < k->s->nrounds)
                finished = 0;
        }
        if (finished)
            break;
        if (!progress) {
            char *p = res->err;
            size_t cap = sizeof(res->err);
            int w = snprintf(p, cap, "deadlock:");

            for (r = 0; r < P && w > 0 && (size_t)w < cap; r++) {
                p += w;
                cap -= (size_t)w;
                w = snprintf(p, cap, " r%d@%zu/%zu", r, ranks[r].round,
                             ranks[r].s->nrounds);
            }
            goto out;
        }
    }
    res->knows_all = 1;
    for (r = 0; r < P; r++)
        for (b = 0; b < P; b++)
            if (ranks[r].vc[b] == 0)
                res->knows_all = 0;
    rc = 0;
out:
    if (ranks != NULL)
        for (r = 0; r < P; r++) {
            int t;

            for (t = SCHED_BUF_TMP; t < SCHED_NBUF; t++)
                free(ranks[r].buf[t]);
            free(ranks[r].done);
            free(ranks[r].seq);
            free(ranks[r].vc);
            free(ranks[r].vc_round);
        }
    free(ranks);
    free(nsend);
    free(nrecv);
    return rc;
}
