/*
 * simnet.c -- runs the schedules of all P participants in memory on the
 * daemon's own executor (daemon/exec.c); see simnet.h.
 *
 * This file is only the network: one queue of messages in flight, sends
 * appended in the order they happen, each rank's executor taking the
 * messages addressed to it in that order.  The main loop advances every
 * rank until all are finished or nothing moves (a deadlock); what the
 * executor does with the bytes is the daemon's code, run as it is.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/exec.h"
#include "tests/unit/simnet.h"

/* A message in flight, with the sender's vector clock of its round. */
struct sim_msg {
    struct exec_msg m;
    int *vc;
    uint8_t data[];
};

struct sim {
    int P;
    struct exec *x;
    int **vc;           /* per rank: its vector clock */
    int **vc_round;     /* per rank: the clock when its round started */
    size_t *round_seen; /* per rank: the round vc_round belongs to */
    struct list_node q; /* messages in flight, in sending order */
    struct simnet_result *res;
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

/* exec_ops.send: queues a copy, stamped with the sender's round clock. */
static int
sim_send(void *arg, int phase, int src, int dst, const uint8_t *data,
         size_t len)
{
    struct sim *sn = arg;
    struct sim_msg *m = malloc(sizeof(*m) + len + 1);
    size_t P = (size_t)sn->P;

    if (m == NULL || (m->vc = malloc(P * sizeof(int))) == NULL) {
        free(m);
        return COLLS_ENOMEM;
    }
    if (sn->round_seen[src] != sn->x[src].round + 1) {
        /* first send of this round: the clock at the round's start */
        memcpy(sn->vc_round[src], sn->vc[src], P * sizeof(int));
        sn->round_seen[src] = sn->x[src].round + 1;
    }
    memcpy(m->vc, sn->vc_round[src], P * sizeof(int));
    memcpy(m->data, data, len);
    m->m.phase = phase;
    m->m.src = src;
    m->m.dst = dst;
    m->m.data = m->data;
    m->m.len = len;
    list_add_tail(&sn->q, &m->m.node);
    return 0;
}

static void
sim_msg_free(struct exec_msg *em)
{
    struct sim_msg *m = (struct sim_msg *)(void *)em;

    free(m->vc);
    free(m);
}

/* exec_ops.consumed: the receiver learns what the sender knew. */
static void
sim_consumed(void *arg, struct exec_msg *em)
{
    struct sim *sn = arg;
    struct sim_msg *m = (struct sim_msg *)(void *)em;
    int x;

    for (x = 0; x < sn->P; x++)
        if (m->vc[x] > sn->vc[em->dst][x])
            sn->vc[em->dst][x] = m->vc[x];
    sn->res->messages++;
    sn->res->bytes += em->len;
    sim_msg_free(em);
}

static const struct exec_ops sim_ops = {sim_send, sim_consumed};

/* Sets up rank r's executor on its schedule and the caller's buffers. */
static int
sim_rank_init(struct sim *sn, const struct sched *s, int r, uint8_t *sbuf,
              size_t ssz, uint8_t *rbuf, size_t rsz)
{
    struct exec *x = &sn->x[r];
    char why[200];
    int t;

    if (s->P != sn->P || s->rank != r)
        return sim_fail(sn->res, "schedule %d is for rank %d of %d", r, s->rank,
                        s->P);
    if (exec_check(s, why, sizeof(why)) != 0)
        return sim_fail(sn->res, "%s", why);
    if (s->extent[SCHED_BUF_SEND] > ssz || s->extent[SCHED_BUF_RECV] > rsz)
        return sim_fail(sn->res,
                        "rank %d: schedule uses %zu/%zu bytes, buffers "
                        "have %zu/%zu",
                        r, s->extent[SCHED_BUF_SEND], s->extent[SCHED_BUF_RECV],
                        ssz, rsz);
    /* a buffer of 0 bytes may be NULL; the executor wants one */
    if (exec_init(x, 0, s, 0, sbuf != NULL ? sbuf : (uint8_t *)"", ssz,
                  rbuf != NULL ? rbuf : (uint8_t *)"", rsz) != 0)
        return sim_fail(sn->res, "rank %d: cannot set up its run", r);
    for (t = 0; t < s->ntmp; t++) /* poisoned: reads before writes show */
        memset(x->buf[SCHED_BUF_TMP + t], 0xa5, s->tmp_size[t]);
    if (s->nrounds > sn->res->max_rounds)
        sn->res->max_rounds = s->nrounds;
    sn->vc[r] = calloc((size_t)sn->P, sizeof(int));
    sn->vc_round[r] = calloc((size_t)sn->P, sizeof(int));
    if (sn->vc[r] == NULL || sn->vc_round[r] == NULL)
        return sim_fail(sn->res, "out of memory");
    sn->vc[r][r] = 1;
    return 0;
}

/* Fails the run with where every rank stands. */
static int
sim_deadlock(struct sim *sn)
{
    char *p = sn->res->err;
    size_t cap = sizeof(sn->res->err);
    int w = snprintf(p, cap, "deadlock:"), r;

    for (r = 0; r < sn->P && w > 0 && (size_t)w < cap; r++) {
        p += w;
        cap -= (size_t)w;
        w = snprintf(p, cap, " r%d@%zu/%zu", r, sn->x[r].round,
                     sn->x[r].s->nrounds);
    }
    return -1;
}

/* Runs every rank to the end; 0 or -1 with res->err set. */
static int
sim_loop(struct sim *sn)
{
    int r, b, rc, moved, finished;

    for (r = 0; r < sn->P; r++)
        if ((rc = exec_start(&sn->x[r], &sim_ops, sn)) != 0)
            return sim_fail(sn->res, "rank %d: %s (error %d)", r, sn->x[r].why,
                            rc);
    for (;;) {
        moved = 0;
        finished = 1;
        for (r = 0; r < sn->P; r++) {
            rc = exec_advance(&sn->x[r], &sn->q, &sim_ops, sn, &moved);
            if (rc != 0)
                return sim_fail(sn->res, "rank %d: %s (error %d)", r,
                                sn->x[r].why, rc);
            if (!sn->x[r].finished)
                finished = 0;
        }
        if (finished)
            break;
        if (!moved)
            return sim_deadlock(sn);
    }
    if (!list_empty(&sn->q)) {
        struct exec_msg *m = list_entry(sn->q.next, struct exec_msg, node);

        return sim_fail(sn->res, "message %d->%d of %zu bytes never received",
                        m->src, m->dst, m->len);
    }
    sn->res->knows_all = 1;
    for (r = 0; r < sn->P; r++)
        for (b = 0; b < sn->P; b++)
            if (sn->vc[r][b] == 0)
                sn->res->knows_all = 0;
    return 0;
}

int
simnet_run(struct sched *const *s, int P, uint8_t *const *sbuf,
           const size_t *ssz, uint8_t *const *rbuf, const size_t *rsz,
           struct simnet_result *res)
{
    struct sim sn = {.P = P, .res = res};
    struct list_node *n, *tmp;
    int r, rc = -1;

    memset(res, 0, sizeof(*res));
    list_init(&sn.q);
    sn.x = calloc((size_t)P, sizeof(*sn.x));
    sn.vc = calloc((size_t)P, sizeof(int *));
    sn.vc_round = calloc((size_t)P, sizeof(int *));
    sn.round_seen = calloc((size_t)P, sizeof(size_t));
    if (!sn.x || !sn.vc || !sn.vc_round || !sn.round_seen) {
        sim_fail(res, "out of memory");
        goto out;
    }
    for (r = 0; r < P; r++)
        if (sim_rank_init(&sn, s[r], r, sbuf[r], ssz[r], rbuf[r], rsz[r]) != 0)
            goto out;
    rc = sim_loop(&sn);
out:
    LIST_FOREACH_SAFE (n, tmp, &sn.q) {
        list_del(n);
        sim_msg_free(list_entry(n, struct exec_msg, node));
    }
    for (r = 0; r < P && sn.x != NULL; r++) {
        exec_free(&sn.x[r]);
        if (sn.vc != NULL)
            free(sn.vc[r]);
        if (sn.vc_round != NULL)
            free(sn.vc_round[r]);
    }
    free(sn.x);
    free(sn.vc);
    free(sn.vc_round);
    free(sn.round_seen);
    return rc;
}
