/*
 * coll.c -- collective instances and the schedule executor; see coll.h.
 *
 * Instance life: created by the first local COLL_REQ or COLL_DATA of
 * (gid, seq); parameters come from the first request and every later one
 * must agree; hierarchical mode starts the leader schedule when all local
 * members have asked, flat mode starts each local rank's schedule when its
 * member asks.  An instance ends when every local member has been
 * answered; a failed one answers those that asked, frees its buffers and
 * stays as a tombstone until the rest have asked too.  COLL_DATA of a
 * (gid, seq) every local member has already passed is stale and dropped.
 *
 * Invariants: every size from a task or a peer is checked against
 * cfg->max_message before allocation; incoming data of an instance is
 * matched per (phase, src, dst) in arrival order; no callback frees the
 * instance it is working on except through coll_inst_end as its last act.
 *
 * FPC compression (docs/collectives.md, "Compression"): a hierarchical
 * bcast of doubles may run as two bcasts among the leaders, a header and
 * the payload; daemon/collfpc.c owns the protocol and its counters, this
 * file runs the two bcasts.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"
#include "daemon/coll.h"
#include "daemon/collfpc.h"
#include "daemon/exec.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/group.h"
#include "daemon/hier.h"
#include "daemon/host.h"
#include "daemon/log.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/sched.h"
#include "daemon/stats.h"
#include "daemon/task.h"
#include "daemon/tune.h"
#include "proto/collop.h"
#include "proto/dtype.h"
#include "proto/envelope.h"
#include "proto/list.h"
#include "proto/reduce.h"

#define COLL_ALG_SPEC_MAX 64
#define COLL_EARLY_MAX_US (120u * 1000000u) /* unknown gid: kept this long */
#define COLL_SCHED_CACHE  512               /* slots of the schedule cache */
#define PHASE_LEADER      0
#define PHASE_FLAT        1

/* One COLL_DATA message (or an in-memory one between local ranks); m is
   on an instance's inbox or on the early list. */
struct coll_msg {
    struct exec_msg m;
    uint64_t gid, seq;
    int hid;
    void *owner; /* allocation holding data */
    uint64_t at_us;
};

/* Counters per (operation, algorithm row). */
#define COLL_MAX_ALGS 16
struct coll_opstats {
    uint64_t runs, bytes, fallbacks;
    struct stats_hist us;
};

struct coll_counters {
    uint64_t hier_runs, flat_runs, hier_as_flat, fallbacks, aborts;
    uint64_t bad_requests, early_msgs, stale_msgs, failed_ops;
};

/* The collective state of a daemon (d->gs->cs). */
struct coll_state {
    struct list_node early; /* COLL_DATA for groups not installed yet */
    size_t early_bytes;
    struct sched_cache *cache; /* schedules of non-v operations */
    struct coll_counters cnt;
    /* [op][0 hier, 1 flat][row in the table of the schedule's op] */
    struct coll_opstats ops[SCHED_OP_MAX][2][COLL_MAX_ALGS];
    struct collfpc_counters fpc;
};

enum coll_inst_state { CI_COLLECT = 0, CI_RUN, CI_FAILED };

struct coll_inst {
    struct list_node node; /* on g->insts */
    struct daemon *d;
    struct group *g;
    uint64_t seq;
    int state, status;
    /* parameters, from the first request */
    int have;
    int op, dtype, rop, root, reqmode, mode, P;
    size_t count, esize, n;
    char spec[COLL_ALG_SPEC_MAX];
    int compress;   /* COLLS_COMPRESS_* of the request */
    uint64_t *rawv; /* gatherv family: counts of the request */
    size_t nrawv;
    size_t *vb, *vd; /* gatherv family: bytes and packed offsets per rank */
    size_t vtotal;
    /* the algorithm */
    const struct alg *alg;
    int alg_index, fallback;
    size_t seg;
    /* per local member */
    int nreq, nans;
    uint8_t *reqd, *answered;
    uint64_t *req_id;
    uint8_t **in;
    size_t *inlen;
    void **inown;
    size_t **a2a; /* alltoallv: 4 * P entries: sc, sd, rc, rd (bytes) */
    /* execution */
    struct list_node inbox; /* struct exec_msg of struct coll_msg */
    struct exec *ex;        /* hier: 1 (FPC: 2); flat: nlocal */
    int nex;
    size_t *cnt, *dsp;     /* hier: per host, bytes (6 arrays, hl's) */
    struct hier_layout hl; /* hier: the host-local phase */
    uint64_t t0;
    /* FPC protocol (hier bcast of doubles; ex[0] header, ex[1] payload) */
    int fpc;            /* this instance runs it */
    int wire_dtype;     /* datatype stamped on COLL_DATA being sent */
    struct collfpc fpx; /* its state */
};

static void coll_progress(struct daemon *d, struct coll_inst *ci);
static void coll_peer_abort(struct daemon *d, struct group *g, uint64_t seq,
                            int status);

/* The gatherv family: one count per rank (alltoallv has count pairs). */
static int
coll_is_gv(int op)
{
    return collop_is_vector(op) && op != SCHED_OP_ALLTOALLV;
}

/* a * b, or 0 with *ovf set on overflow or above lim. */
static size_t
coll_mul(size_t a, size_t b, size_t lim, int *ovf)
{
    if (a != 0 && b > lim / a) {
        *ovf = 1;
        return 0;
    }
    return a * b;
}

/* ---- messages ------------------------------------------------------- */

static void
coll_msg_free(struct coll_msg *m)
{
    free(m->owner);
    free(m);
}

/* Frees every message of list h. */
static void
coll_msgs_free(struct list_node *h)
{
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE(n, tmp, h)
    {
        list_del(n);
        coll_msg_free(list_entry(n, struct coll_msg, m.node));
    }
}

/* Daemon of schedule rank r in phase. */
static int
coll_rank_hid(const struct coll_inst *ci, int phase, int r)
{
    const struct group *g = ci->g;

    if (phase == PHASE_LEADER)
        return g->hids[g->H.leader[r]];
    return g->hids[r];
}

/* exec_ops.send: len bytes of data from (phase, src) to (phase, dst) of
   instance arg, over the transport or into its own inbox. */
static int
coll_exec_send(void *arg, int phase, int src, int dst, const uint8_t *data,
               size_t len)
{
    struct coll_inst *ci = arg;
    struct daemon *d = ci->d;
    int hid = coll_rank_hid(ci, phase, dst);
    CollData cd = COLL_DATA__INIT;
    Envelope f;

    if (hid == d->hid) {
        struct coll_msg *m = calloc(1, sizeof(*m));

        if (m == NULL || (m->owner = malloc(len ? len : 1)) == NULL) {
            free(m);
            return COLLS_ENOMEM;
        }
        memcpy(m->owner, data, len);
        m->m.data = m->owner;
        m->m.len = len;
        m->gid = ci->g->gid;
        m->seq = ci->seq;
        m->m.phase = phase;
        m->m.src = src;
        m->m.dst = dst;
        m->hid = hid;
        list_add_tail(&ci->inbox, &m->m.node);
        return 0;
    }
    if (!host_is_up(d, hid))
        return COLLS_EHOSTDOWN;
    envelope_init(&f);
    f.kind = KIND__COLL_DATA;
    f.src = COLLS_DAEMON_TID(d->hid);
    f.dst = COLLS_DAEMON_TID(hid);
    f.seq = ci->seq;
    cd.gid = ci->g->gid;
    cd.src_rank = (uint32_t)src;
    cd.dst_rank = (uint32_t)dst;
    cd.phase = (uint32_t)phase;
    f.body_case = ENVELOPE__BODY_COLL_DATA;
    f.coll_data = &cd;
    f.dtype = (uint32_t)ci->wire_dtype;
    f.encoding = COLLS_ENC_RAW;
    f.byte_order = (uint32_t)dtype_native_order();
    return net_send(d, hid, &f, data, len);
}

/* exec_ops.consumed: a message matched a RECV. */
static void
coll_exec_consumed(void *arg, struct exec_msg *m)
{
    (void)arg;
    coll_msg_free((struct coll_msg *)(void *)m);
}

static const struct exec_ops coll_exec_ops = {coll_exec_send,
                                              coll_exec_consumed};

/* Tells every other daemon of g that (gid, seq) failed with status. */
static void
coll_send_abort(struct daemon *d, struct group *g, uint64_t seq, int status)
{
    unsigned char *sent = calloc(DAEMON_MAX_HID + 1, 1);
    CollData cd = COLL_DATA__INIT;
    Envelope f;
    int r;

    if (sent == NULL)
        return;
    envelope_init(&f);
    f.kind = KIND__COLL_DATA;
    f.src = COLLS_DAEMON_TID(d->hid);
    f.seq = seq;
    cd.gid = g->gid;
    cd.abort_status = status;
    f.body_case = ENVELOPE__BODY_COLL_DATA;
    f.coll_data = &cd;
    sent[d->hid] = 1;
    for (r = 0; r < g->P; r++) {
        int hid = g->hids[r];

        if (sent[hid])
            continue;
        sent[hid] = 1;
        f.dst = COLLS_DAEMON_TID(hid);
        if (host_is_up(d, hid))
            net_send(d, hid, &f, NULL, 0);
    }
    free(sent);
}

/* ---- instances ------------------------------------------------------ */

/* Frees the execution state and inputs of ci (not the record). */
static void
coll_inst_release(struct coll_inst *ci)
{
    int i;

    for (i = 0; i < ci->nex; i++)
        exec_free(&ci->ex[i]);
    free(ci->ex);
    ci->ex = NULL;
    ci->nex = 0;
    coll_msgs_free(&ci->inbox);
    if (ci->inown != NULL)
        for (i = 0; i < ci->g->nlocal; i++) {
            free(ci->inown[i]);
            ci->inown[i] = NULL;
            ci->in[i] = NULL;
        }
    if (ci->a2a != NULL)
        for (i = 0; i < ci->g->nlocal; i++) {
            free(ci->a2a[i]);
            ci->a2a[i] = NULL;
        }
    free(ci->cnt);
    ci->cnt = ci->dsp = NULL;
    collfpc_release(&ci->fpx);
}

/* Frees an instance's per-member arrays and the instance itself (any of
   the arrays may be NULL: a half-made instance is freed the same way). */
static void
coll_inst_free_arrays(struct coll_inst *ci)
{
    free(ci->rawv);
    free(ci->vb);
    free(ci->reqd);
    free(ci->answered);
    free(ci->req_id);
    free(ci->in);
    free(ci->inlen);
    free(ci->inown);
    free(ci->a2a);
    free(ci);
}

/* Unlinks and frees ci. */
static void
coll_inst_free(struct coll_inst *ci)
{
    list_del(&ci->node);
    coll_inst_release(ci);
    coll_inst_free_arrays(ci);
}

/* Finds or creates the instance (g, seq); NULL on allocation failure. */
static struct coll_inst *
coll_inst_get(struct daemon *d, struct group *g, uint64_t seq, int create)
{
    struct coll_inst *ci;
    struct list_node *n;
    size_t nl = (size_t)g->nlocal;

    LIST_FOREACH(n, &g->insts)
    {
        ci = list_entry(n, struct coll_inst, node);
        if (ci->seq == seq)
            return ci;
    }
    if (!create || (ci = calloc(1, sizeof(*ci))) == NULL)
        return NULL;
    list_init(&ci->inbox);
    ci->d = d;
    ci->g = g;
    ci->seq = seq;
    ci->P = g->P;
    ci->reqd = calloc(nl, 1);
    ci->answered = calloc(nl, 1);
    ci->req_id = calloc(nl, sizeof(uint64_t));
    ci->in = calloc(nl, sizeof(uint8_t *));
    ci->inlen = calloc(nl, sizeof(size_t));
    ci->inown = calloc(nl, sizeof(void *));
    ci->a2a = calloc(nl, sizeof(size_t *));
    if (!ci->reqd || !ci->answered || !ci->req_id || !ci->in || !ci->inlen ||
        !ci->inown || !ci->a2a) {
        coll_inst_free_arrays(ci);
        return NULL;
    }
    list_add_head(&g->insts, &ci->node);
    return ci;
}

/* Sends COLL_RESULT to local member i of ci. */
static void
coll_answer(struct daemon *d, struct coll_inst *ci, int i, int status,
            const uint8_t *data, size_t len)
{
    struct group *g = ci->g;
    struct task *t = task_find(d, g->tids[g->local[i]]);
    CollResult cr = COLL_RESULT__INIT;
    char alg[COLL_ALG_SPEC_MAX + 8];
    Envelope r;

    if (ci->answered[i])
        return;
    ci->answered[i] = 1;
    ci->nans++;
    if (t == NULL)
        return;
    envelope_init(&r);
    r.kind = KIND__COLL_RESULT;
    r.src = COLLS_DAEMON_TID(d->hid);
    r.dst = t->tid;
    r.group = g->name;
    r.seq = ci->seq;
    r.req_id = ci->req_id[i];
    r.status = status;
    r.dtype = (uint32_t)(ci->have ? ci->dtype : COLLS_BYTE);
    r.count = ci->esize ? len / ci->esize : len;
    r.encoding = COLLS_ENC_RAW;
    r.byte_order = (uint32_t)dtype_native_order();
    snprintf(alg, sizeof(alg), "%s%s", ci->alg != NULL ? ci->alg->name : "",
             ci->fpx.kind == COLLFPC_STREAM ? "+fpc" : "");
    cr.alg = alg;
    cr.mode = (uint32_t)(ci->mode ? ci->mode : COLLS_MODE_HIER);
    cr.us = (double)(platform_now_us() - ci->t0);
    cr.fallback = ci->fallback != 0;
    r.body_case = ENVELOPE__BODY_COLL_RESULT;
    r.coll_result = &cr;
    task_queue_env(t, &r, status == 0 ? data : NULL, status == 0 ? len : 0,
                   NULL);
}

/* Frees ci once every local member that can still ask was answered. */
static void
coll_inst_maybe_end(struct coll_inst *ci)
{
    struct group *g = ci->g;
    int i;

    if (ci->state == CI_FAILED && g->status != 0 && ci->seq >= g->fail_from) {
        coll_inst_free(ci);
        return;
    }
    for (i = 0; i < g->nlocal; i++)
        if (!ci->answered[i] && !g->gone[g->local[i]])
            return;
    coll_inst_free(ci);
}

/* Fails ci with status: answers who asked, frees the work; abort: tell
   the other daemons. */
static void
coll_inst_fail(struct daemon *d, struct coll_inst *ci, int status, int abort)
{
    int i;

    if (ci->state == CI_FAILED)
        return;
    if (abort) {
        d->gs->cs->cnt.aborts++;
        coll_send_abort(d, ci->g, ci->seq, status);
    }
    d->gs->cs->cnt.failed_ops++;
    ci->state = CI_FAILED;
    ci->status = status;
    coll_inst_release(ci);
    for (i = 0; i < ci->g->nlocal; i++)
        if (ci->reqd[i])
            coll_answer(d, ci, i, status, NULL, 0);
}

/* ---- parameters ----------------------------------------------------- */

/* Checks a request's parameters and stores them in ci (first request).
   0 or a COLLS_E* code. */
static int
coll_params(struct daemon *d, struct coll_inst *ci, const Envelope *e)
{
    const CollReq *q = e->coll_req;
    size_t lim = (size_t)d->cfg->max_message, total = 0;
    int ovf = 0, r, op = (int)q->op;

    if (q->op >= SCHED_OP_MAX || q->mode > COLLS_MODE_FLAT ||
        q->compress > COLLS_COMPRESS_AUTO ||
        (q->alg != NULL && strlen(q->alg) >= COLL_ALG_SPEC_MAX))
        return COLLS_EINVAL;
    if (op == SCHED_OP_BARRIER) {
        ci->dtype = COLLS_BYTE;
        ci->count = 0;
    } else {
        if (!dtype_valid((int)e->dtype))
            return COLLS_EDTYPE;
        ci->dtype = (int)e->dtype;
        ci->count = (size_t)e->count;
    }
    ci->op = op;
    ci->rop = collop_is_reduction(op) ? (int)q->rop : COLLS_SUM;
    if (collop_is_reduction(op) && reduce_check(ci->rop, ci->dtype) != 0)
        return reduce_check(ci->rop, ci->dtype);
    ci->root = collop_is_rooted(op) ? q->root : 0;
    if (ci->root < 0 || ci->root >= ci->P)
        return COLLS_EINVAL;
    ci->reqmode = (int)q->mode;
    ci->compress = (int)q->compress;
    ci->wire_dtype = ci->dtype;
    snprintf(ci->spec, sizeof(ci->spec), "%s", q->alg ? q->alg : "");
    ci->esize = dtype_size(ci->dtype);
    ci->n = coll_mul(ci->count, ci->esize, lim, &ovf);
    coll_mul(ci->n, (size_t)ci->P, lim, &ovf);
    if (ovf)
        return COLLS_EMSGSIZE;
    if (coll_is_gv(op)) {
        if (q->n_counts != (size_t)ci->P)
            return COLLS_EINVAL;
        ci->rawv = calloc((size_t)ci->P, sizeof(uint64_t));
        ci->vb = calloc(2 * (size_t)ci->P, sizeof(size_t));
        if (ci->rawv == NULL || ci->vb == NULL)
            return COLLS_ENOMEM;
        ci->nrawv = (size_t)ci->P;
        ci->vd = ci->vb + ci->P;
        for (r = 0; r < ci->P; r++) {
            ci->rawv[r] = q->counts[r];
            if (q->counts[r] > lim) /* items; bytes checked next */
                return COLLS_EMSGSIZE;
            ci->vb[r] = coll_mul((size_t)q->counts[r], ci->esize, lim, &ovf);
            ci->vd[r] = total;
            total += ci->vb[r];
            if (ovf || total > lim)
                return COLLS_EMSGSIZE;
        }
        ci->vtotal = total;
    }
    ci->have = 1;
    return 0;
}

/* Does request e agree with ci's parameters? */
static int
coll_same(const struct coll_inst *ci, const Envelope *e)
{
    const CollReq *q = e->coll_req;
    size_t r;

    if ((int)q->op != ci->op || (int)q->mode != ci->reqmode ||
        strcmp(q->alg ? q->alg : "", ci->spec) != 0)
        return 0;
    if (ci->op == SCHED_OP_BARRIER)
        return 1;
    if ((int)e->dtype != ci->dtype || e->count != ci->count)
        return 0;
    if (collop_is_reduction(ci->op) && (int)q->rop != ci->rop)
        return 0;
    if (collop_is_rooted(ci->op) && q->root != ci->root)
        return 0;
    if (ci->op == SCHED_OP_BCAST && ci->dtype == COLLS_DOUBLE &&
        (int)q->compress != ci->compress)
        return 0; /* the FPC protocol must be agreed */
    if (coll_is_gv(ci->op)) {
        if (q->n_counts != ci->nrawv)
            return 0;
        for (r = 0; r < ci->nrawv; r++)
            if (q->counts[r] != ci->rawv[r])
                return 0;
    }
    return 1;
}

/* Input bytes rank r must send; alltoallv: from its counts (a2a). */
static size_t
coll_in_len(const struct coll_inst *ci, int r, const size_t *a2a)
{
    size_t P = (size_t)ci->P;

    switch (ci->op) {
    case SCHED_OP_BARRIER:
        return 0;
    case SCHED_OP_BCAST:
    case SCHED_OP_SCATTER:
        return r == ci->root ? (ci->op == SCHED_OP_BCAST ? ci->n : P * ci->n)
                             : 0;
    case SCHED_OP_SCATTERV:
        return r == ci->root ? ci->vtotal : 0;
    case SCHED_OP_GATHERV:
    case SCHED_OP_ALLGATHERV:
        return ci->vb[r];
    case SCHED_OP_ALLTOALL:
    case SCHED_OP_REDUCE_SCATTER:
        return P * ci->n;
    case SCHED_OP_ALLTOALLV: {
        size_t t = 0, j;

        for (j = 0; j < P; j++)
            t += a2a[j];
        return t;
    }
    default:
        return ci->n;
    }
}

/* Output bytes of rank r. */
static size_t
coll_out_len(const struct coll_inst *ci, int r, const size_t *a2a)
{
    size_t P = (size_t)ci->P, j, t = 0;

    switch (ci->op) {
    case SCHED_OP_BARRIER:
        return 0;
    case SCHED_OP_REDUCE:
        return r == ci->root ? ci->n : 0;
    case SCHED_OP_GATHER:
        return r == ci->root ? P * ci->n : 0;
    case SCHED_OP_GATHERV:
        return r == ci->root ? ci->vtotal : 0;
    case SCHED_OP_SCATTERV:
        return ci->vb[r];
    case SCHED_OP_ALLGATHER:
    case SCHED_OP_ALLTOALL:
        return P * ci->n;
    case SCHED_OP_ALLGATHERV:
        return ci->vtotal;
    case SCHED_OP_ALLTOALLV:
        for (j = 0; j < P; j++)
            t += a2a[2 * P + j];
        return t;
    case SCHED_OP_EXSCAN:
        return r == 0 ? 0 : ci->n;
    default:
        return ci->n;
    }
}

/* Chooses the algorithm for a (forced by spec if it can run) into ci;
   logs and counts a fallback.  0 or a COLLS_E* code. */
static int
coll_choose_alg(struct daemon *d, struct coll_inst *ci,
                const struct alg_args *a, const char *spec)
{
    struct tune_choice ch;
    int rc;

    rc = tune_choose(a, NULL, spec, &ch);
    if (rc != 0)
        return rc;
    ci->alg = ch.alg;
    ci->alg_index = ch.index;
    ci->seg = ch.seg;
    if (ch.fallback != TUNE_FALLBACK_NONE) {
        ci->fallback = 1;
        d->gs->cs->cnt.fallbacks++;
        if (ch.index >= 0 && ch.index < COLL_MAX_ALGS)
            d->gs->cs->ops[ci->op][ci->mode == COLLS_MODE_FLAT][ch.index]
                .fallbacks++;
        log_warn(
            "group %s collective %llu: forced algorithm \"%s\" for "
            "%s cannot run (%s); running %s",
            ci->g->name, (unsigned long long)ci->seq, spec, collop_name(a->op),
            ch.fallback == TUNE_FALLBACK_UNKNOWN ? "unknown" : "not applicable",
            ch.alg->name);
    }
    return 0;
}

/* Chooses mode and algorithm (same inputs on every daemon). */
static int
coll_choose(struct daemon *d, struct coll_inst *ci)
{
    struct group *g = ci->g;
    const struct collop *o = collop_get(ci->op);
    struct alg_args a;
    int needs_contig;

    ci->mode =
        ci->reqmode == COLLS_MODE_FLAT ? COLLS_MODE_FLAT : COLLS_MODE_HIER;
    /* the host-local phase packs blocks per host in rank order */
    needs_contig = (o->blocks && o->family != COLLOP_ALL_TO_ALL2) ||
                   o->family == COLLOP_PREFIX;
    if (ci->mode == COLLS_MODE_HIER && needs_contig && !g->H.contiguous) {
        ci->mode = COLLS_MODE_FLAT;
        d->gs->cs->cnt.hier_as_flat++;
    }
    memset(&a, 0, sizeof(a));
    a.dtype = ci->dtype;
    a.rop = ci->rop;
    if (ci->mode == COLLS_MODE_FLAT) {
        a.op = ci->op;
        a.P = ci->P;
        a.root = ci->root;
        a.size = ci->op == SCHED_OP_ALLTOALLV ? 0 : ci->n;
        a.counts = ci->vb;
        a.displs = ci->vd;
    } else {
        int NH = g->H.nhosts;
        struct hier_layout *L = &ci->hl;

        /* per-host block bytes of the gather family (global knowledge) */
        ci->cnt = calloc(6 * (size_t)NH, sizeof(size_t));
        if (ci->cnt == NULL)
            return COLLS_ENOMEM;
        L->op = ci->op;
        L->dtype = ci->dtype;
        L->rop = ci->rop;
        L->root = ci->root;
        L->count = ci->count;
        L->n = ci->n;
        L->P = ci->P;
        L->H = &g->H;
        L->myhost = g->myhost;
        L->vb = ci->vb;
        L->a2a = ci->op == SCHED_OP_ALLTOALLV ? ci->a2a : NULL;
        L->cnt = ci->cnt;
        L->dsp = ci->dsp = ci->cnt + NH;
        L->sc = ci->dsp + NH;
        L->sd = L->sc + NH;
        L->rc = L->sd + NH;
        L->rd = L->rc + NH;
        hier_blocks(L);
        a.op = collop_get(ci->op)->leader;
        a.P = NH;
        a.root = g->H.host[ci->root];
        a.size =
            ci->op == SCHED_OP_REDUCE_SCATTER ? ci->n * (size_t)ci->P : ci->n;
        if (coll_is_gv(a.op)) {
            a.counts = ci->cnt;
            a.displs = ci->dsp;
        }
    }
    ci->fpc =
        collfpc_applies(ci->op, ci->dtype, ci->compress,
                        ci->mode == COLLS_MODE_HIER, g->H.nhosts, ci->count);
    if (ci->fpc) {
        /* the header's bcast; the payload's is chosen once its length is
           known (coll_fpc_payload) */
        a.dtype = COLLS_BYTE;
        a.size = COLLFPC_HDR;
        return coll_choose_alg(d, ci, &a, "");
    }
    return coll_choose_alg(d, ci, &a, ci->spec);
}

/* ---- the executor --------------------------------------------------- */

/* Deep copy of a finished schedule; 0 or COLLS_ENOMEM. */
static int
coll_sched_copy(struct sched *dst, const struct sched *src)
{
    *dst = *src;
    dst->steps = malloc((src->nsteps ? src->nsteps : 1) * sizeof(*src->steps));
    dst->round_end =
        malloc((src->nrounds ? src->nrounds : 1) * sizeof(*src->round_end));
    if (dst->steps == NULL || dst->round_end == NULL) {
        sched_free(dst);
        return COLLS_ENOMEM;
    }
    if (src->nsteps)
        memcpy(dst->steps, src->steps, src->nsteps * sizeof(*src->steps));
    if (src->nrounds)
        memcpy(dst->round_end, src->round_end,
               src->nrounds * sizeof(*src->round_end));
    dst->scap = src->nsteps;
    dst->rcap = src->nrounds;
    return 0;
}

/*
 * The schedule of a into s: a copy of the cached one, or built (and a
 * copy cached).  v-variants depend on count arrays and are not cached.
 * Each execution owns its copy, so evictions never touch a running one.
 * A built schedule is checked for hazards (exec_check) once, before it is
 * cached: a builder's bug fails the operation with COLLS_EINVAL.
 */
static int
coll_sched_get(struct daemon *d, const struct coll_inst *ci,
               const struct alg_args *a, struct sched *s)
{
    struct sched_key key;
    const struct sched *c;
    struct sched keep;
    char why[160];
    int rc, v = a->counts != NULL || a->scounts != NULL;

    memset(&key, 0, sizeof(key));
    key.op = a->op;
    key.P = a->P;
    key.rank = a->rank;
    key.root = a->root;
    key.dtype = a->dtype;
    key.rop = a->rop;
    key.alg = ci->alg_index;
    key.size = a->size;
    key.seg = a->seg;
    if (!v && (c = sched_cache_get(d->gs->cs->cache, &key)) != NULL)
        return coll_sched_copy(s, c);
    rc = alg_build(ci->alg, a, s);
    if (rc == 0 && (rc = exec_check(s, why, sizeof(why))) != 0)
        log_warn("algorithm %s of %s: %s", ci->alg->name, collop_name(a->op),
                 why);
    if (rc != 0) {
        sched_free(s);
        return rc;
    }
    if (!v && coll_sched_copy(&keep, s) == 0)
        sched_cache_put(d->gs->cs->cache, &key, &keep);
    return 0;
}

/* Sets up x to run schedule args a with SEND/RECV buffers of at least
   ssz / rsz bytes (allocated when sbuf is NULL; RECV always is). */
static int
coll_exec_init(struct daemon *d, struct exec *x, const struct coll_inst *ci,
               int phase, const struct alg_args *a, uint8_t *sbuf, size_t ssz,
               size_t rsz)
{
    struct sched s;
    int rc;

    memset(x, 0, sizeof(*x));
    rc = coll_sched_get(d, ci, a, &s);
    if (rc != 0)
        return rc;
    return exec_init(x, phase, &s, 1, sbuf, ssz, NULL, rsz);
}

/* ---- FPC compression (hierarchical bcast of doubles) ----------------- */

/* The leaders' bcast of ci for size bytes of dtype into a. */
static void
coll_fpc_args(const struct coll_inst *ci, struct alg_args *a, int dtype,
              size_t size)
{
    memset(a, 0, sizeof(*a));
    a->op = SCHED_OP_BCAST;
    a->P = ci->g->H.nhosts;
    a->rank = ci->g->myhost;
    a->root = ci->g->H.host[ci->root];
    a->dtype = dtype;
    a->rop = ci->rop;
    a->size = size;
    a->seg = ci->seg;
}

/* Starts bcast a (one of the two of the FPC protocol) on x; the root's
   daemon provides the a->size bytes at data.  0 or a COLLS_E* code. */
static int
coll_fpc_bcast(struct daemon *d, struct coll_inst *ci, struct exec *x,
               const struct alg_args *a, const uint8_t *data)
{
    int rc = coll_exec_init(d, x, ci, PHASE_LEADER, a, NULL, 0, a->size);

    if (rc != 0)
        return rc;
    if (a->rank == a->root)
        memcpy(x->buf[SCHED_BUF_RECV], data, a->size);
    ci->wire_dtype = a->dtype;
    return exec_start(x, &coll_exec_ops, ci);
}

/* Starts the header bcast among the leaders (the root's daemon makes the
   payload first).  0 or a COLLS_E* code. */
static int
coll_fpc_start(struct daemon *d, struct coll_inst *ci)
{
    struct group *g = ci->g;
    uint8_t hdr[COLLFPC_HDR] = {0};
    struct alg_args a;
    int rc;

    ci->ex = calloc(2, sizeof(*ci->ex));
    if (ci->ex == NULL)
        return COLLS_ENOMEM;
    ci->nex = 2;
    if (g->myhost == g->H.host[ci->root]) {
        rc = collfpc_encode(&ci->fpx, &d->gs->cs->fpc,
                            ci->in[group_local_index(g, ci->root)], ci->count,
                            ci->compress, (size_t)d->cfg->max_message,
                            d->cfg->link_mbit, hdr);
        if (rc != 0)
            return rc;
    }
    coll_fpc_args(ci, &a, COLLS_BYTE, COLLFPC_HDR);
    return coll_fpc_bcast(d, ci, &ci->ex[0], &a, hdr);
}

/* The header is in: starts the payload bcast, with the algorithm chosen
   for the payload's length.  0 or a COLLS_E* code. */
static int
coll_fpc_payload(struct daemon *d, struct coll_inst *ci)
{
    struct group *g = ci->g;
    const uint8_t *data = NULL;
    struct alg_args a;
    int rc;

    rc = collfpc_header(&ci->fpx, ci->ex[0].buf[SCHED_BUF_RECV], ci->count,
                        (size_t)d->cfg->max_message);
    if (rc != 0) {
        log_warn("group %s collective %llu: bad FPC header", g->name,
                 (unsigned long long)ci->seq);
        return rc;
    }
    coll_fpc_args(ci, &a,
                  ci->fpx.kind == COLLFPC_STREAM ? COLLS_BYTE : ci->dtype,
                  ci->fpx.len);
    rc = coll_choose_alg(d, ci, &a, ci->spec);
    if (rc != 0)
        return rc;
    a.seg = ci->seg;
    if (a.rank == a.root)
        data = ci->fpx.data != NULL ? ci->fpx.data
                                    : ci->in[group_local_index(g, ci->root)];
    rc = coll_fpc_bcast(d, ci, &ci->ex[1], &a, data);
    free(ci->fpx.data); /* copied into the payload bcast's buffer */
    ci->fpx.data = NULL;
    return rc;
}

/* The payload is in: decodes it (once) into the n bytes the local members
   get.  0, COLLS_EBADMSG (logged) or COLLS_ENOMEM. */
static int
coll_fpc_finish(struct daemon *d, struct coll_inst *ci)
{
    struct group *g = ci->g;
    int rc;

    rc = collfpc_decode(&ci->fpx, &d->gs->cs->fpc,
                        ci->ex[1].buf[SCHED_BUF_RECV], ci->count,
                        g->myhost == g->H.host[ci->root]
                            ? ci->in[group_local_index(g, ci->root)]
                            : NULL);
    if (rc == COLLS_EBADMSG)
        log_warn("group %s collective %llu: FPC stream of %zu bytes does "
                 "not decode to %zu doubles",
                 g->name, (unsigned long long)ci->seq, ci->fpx.len, ci->count);
    return rc;
}

/* ---- hierarchical mode ---------------------------------------------- */

/* Builds the leader schedule and its input; 0 or a COLLS_E* code. */
static int
coll_hier_start(struct daemon *d, struct coll_inst *ci)
{
    struct group *g = ci->g;
    struct hier_layout *L = &ci->hl;
    int NH = g->H.nhosts;
    size_t lss, lrs, lim = (size_t)d->cfg->max_message;
    struct alg_args a;
    struct exec *x;
    int rc;

    if (ci->fpc)
        return coll_fpc_start(d, ci);
    hier_sizes(L, &lss, &lrs);
    if (lss > lim || lrs > lim || L->sd[NH - 1] + L->sc[NH - 1] > lim ||
        L->rd[NH - 1] + L->rc[NH - 1] > lim)
        return COLLS_EMSGSIZE;
    memset(&a, 0, sizeof(a));
    a.op = collop_get(ci->op)->leader;
    a.P = NH;
    a.rank = g->myhost;
    a.root = g->H.host[ci->root];
    a.dtype = ci->dtype;
    a.rop = ci->rop;
    a.size = a.op == SCHED_OP_BCAST ? ci->n : lss;
    a.seg = ci->seg;
    if (coll_is_gv(a.op)) {
        a.counts = L->cnt;
        a.displs = L->dsp;
    }
    if (a.op == SCHED_OP_ALLTOALLV) {
        a.scounts = L->sc;
        a.sdispls = L->sd;
        a.rcounts = L->rc;
        a.rdispls = L->rd;
    }
    ci->ex = calloc(1, sizeof(*ci->ex));
    if (ci->ex == NULL)
        return COLLS_ENOMEM;
    ci->nex = 1;
    x = &ci->ex[0];
    rc = coll_exec_init(d, x, ci, PHASE_LEADER, &a, NULL, lss, lrs);
    if (rc == 0)
        rc = hier_combine(L, (const uint8_t *const *)ci->in, ci->inlen,
                          x->buf[SCHED_BUF_SEND], x->buf[SCHED_BUF_RECV]);
    if (rc != 0)
        return rc;
    return exec_start(x, &coll_exec_ops, ci);
}

/* The leader schedule finished: answers every local member. */
static int
coll_hier_finish(struct daemon *d, struct coll_inst *ci)
{
    const struct hier_layout *L = &ci->hl;
    const uint8_t *lr = ci->fpc ? ci->fpx.out : ci->ex[0].buf[SCHED_BUF_RECV];
    const uint8_t *data;
    size_t ssz = hier_scratch(L), len;
    uint8_t *scratch = NULL;
    int i, rc = 0;

    if (ssz > 0 && (scratch = malloc(ssz)) == NULL)
        return COLLS_ENOMEM;
    for (i = 0; i < ci->g->nlocal && rc == 0; i++) {
        rc = hier_result(L, i, lr, (const uint8_t *const *)ci->in, scratch,
                         &data, &len);
        if (rc == 0)
            coll_answer(d, ci, i, 0, data, len);
    }
    free(scratch);
    return rc;
}

/* ---- flat mode ------------------------------------------------------ */

/* Starts the schedule of local member i. */
static int
coll_flat_start(struct daemon *d, struct coll_inst *ci, int i)
{
    struct group *g = ci->g;
    struct exec *x = &ci->ex[i];
    int r = g->local[i], rc;
    const size_t *v = ci->a2a[i];
    struct alg_args a;

    memset(&a, 0, sizeof(a));
    a.op = ci->op;
    a.P = ci->P;
    a.rank = r;
    a.root = ci->root;
    a.dtype = ci->dtype;
    a.rop = ci->rop;
    a.size = ci->n;
    a.seg = ci->seg;
    a.counts = ci->vb;
    a.displs = ci->vd;
    if (ci->op == SCHED_OP_ALLTOALLV) {
        size_t P = (size_t)ci->P;

        a.scounts = v;
        a.sdispls = v + P;
        a.rcounts = v + 2 * P;
        a.rdispls = v + 3 * P;
    }
    rc = coll_exec_init(d, x, ci, PHASE_FLAT, &a, ci->in[i], ci->inlen[i],
                        coll_out_len(ci, r, v));
    if (rc != 0)
        return rc;
    if (ci->op == SCHED_OP_BCAST && r == ci->root)
        memcpy(x->buf[SCHED_BUF_RECV], ci->in[i], ci->n);
    return exec_start(x, &coll_exec_ops, ci);
}

/* ---- progress ------------------------------------------------------- */

/* Records ci's statistics (it completed here). */
static void
coll_account(struct daemon *d, struct coll_inst *ci)
{
    struct coll_opstats *os;

    ci->g->ncoll++;
    if (ci->mode == COLLS_MODE_FLAT)
        d->gs->cs->cnt.flat_runs++;
    else
        d->gs->cs->cnt.hier_runs++;
    if (ci->alg_index < 0 || ci->alg_index >= COLL_MAX_ALGS)
        return;
    os = &d->gs->cs->ops[ci->op][ci->mode == COLLS_MODE_FLAT][ci->alg_index];
    os->runs++;
    os->bytes += (ci->vb != NULL ? ci->vtotal / (size_t)ci->P : ci->n) *
                 (size_t)ci->g->nlocal;
    stats_hist_add(&os->us, platform_now_us() - ci->t0);
}

/*
 * Runs ci as far as its messages allow; answers members whose schedule
 * finished; ends the instance when everyone is answered.  May free ci.
 */
static void
coll_progress(struct daemon *d, struct coll_inst *ci)
{
    int moved, i, err = 0, all;

    if (ci->state != CI_RUN)
        return;
again:
    do {
        moved = 0;
        for (i = 0; i < ci->nex && err == 0; i++) {
            struct exec *x = &ci->ex[i];

            err = exec_advance(x, &ci->inbox, &coll_exec_ops, ci, &moved);
            if (err == COLLS_EINVAL && x->why[0] != '\0')
                log_warn("group %s collective %llu: %s", ci->g->name,
                         (unsigned long long)ci->seq, x->why);
            if (err == 0 && x->finished && ci->mode == COLLS_MODE_FLAT &&
                !ci->answered[i]) {
                int r = ci->g->local[i];

                coll_answer(d, ci, i, 0, x->buf[SCHED_BUF_RECV],
                            coll_out_len(ci, r, ci->a2a[i]));
            }
        }
    } while (moved && err == 0);
    if (err == 0 && ci->fpc && ci->ex[0].finished && !ci->ex[1].started) {
        err = coll_fpc_payload(d, ci);
        if (err == 0)
            goto again;
    }
    if (err != 0) {
        coll_inst_fail(d, ci, err, 1);
        coll_inst_maybe_end(ci);
        return;
    }
    for (i = 0, all = ci->nex > 0; i < ci->nex; i++)
        if (!ci->ex[i].finished)
            all = 0;
    if (ci->mode == COLLS_MODE_HIER && all) {
        if (ci->fpc)
            err = coll_fpc_finish(d, ci);
        if (err == 0)
            err = coll_hier_finish(d, ci);
        if (err != 0) {
            coll_inst_fail(d, ci, err, 1);
            coll_inst_maybe_end(ci);
            return;
        }
    }
    if (ci->nans == ci->g->nlocal) {
        coll_account(d, ci);
        coll_inst_free(ci);
    }
}

/* ---- requests from tasks -------------------------------------------- */

/* Answers a request that has no instance (or a failed one). */
static void
coll_refuse(struct task *t, const Envelope *e, int status)
{
    CollResult cr = COLL_RESULT__INIT;
    Envelope r;

    envelope_init(&r);
    r.kind = KIND__COLL_RESULT;
    r.src = COLLS_DAEMON_TID(t->d->hid);
    r.dst = t->tid;
    r.group = e->group;
    r.seq = e->seq;
    r.req_id = e->req_id;
    r.status = status;
    cr.alg = "";
    r.body_case = ENVELOPE__BODY_COLL_RESULT;
    r.coll_result = &cr;
    task_queue_env(t, &r, NULL, 0, NULL);
}

/* alltoallv: member's byte counts and packed offsets, 4 * P entries. */
static int
coll_a2a_counts(struct daemon *d, struct coll_inst *ci, const CollReq *q,
                size_t **out)
{
    size_t P = (size_t)ci->P, lim = (size_t)d->cfg->max_message, j;
    size_t so = 0, ro = 0, *v;
    int ovf = 0;

    *out = NULL;
    if (q->n_counts != P || q->n_rcounts != P)
        return COLLS_EINVAL;
    v = calloc(4 * P, sizeof(size_t));
    if (v == NULL)
        return COLLS_ENOMEM;
    for (j = 0; j < P; j++) {
        if (q->counts[j] > lim || q->rcounts[j] > lim)
            ovf = 1;
        v[j] = coll_mul((size_t)q->counts[j], ci->esize, lim, &ovf);
        v[P + j] = so;
        so += v[j];
        v[2 * P + j] = coll_mul((size_t)q->rcounts[j], ci->esize, lim, &ovf);
        v[3 * P + j] = ro;
        ro += v[2 * P + j];
        if (ovf || so > lim || ro > lim) {
            free(v);
            return COLLS_EMSGSIZE;
        }
    }
    *out = v;
    return 0;
}

void
coll_task_req(struct task *t, const Envelope *e, const uint8_t *payload,
              size_t plen, uint8_t *owner)
{
    struct daemon *d = t->d;
    struct group *g;
    struct coll_inst *ci;
    int r, i, rc, first;

    if (e->body_case != ENVELOPE__BODY_COLL_REQ) {
        d->gs->cs->cnt.bad_requests++;
        coll_refuse(t, e, COLLS_EINVAL);
        goto out;
    }
    g = group_find(d, e->coll_req->gid);
    if (g == NULL) {
        coll_refuse(t, e, COLLS_ENOENT);
        goto out;
    }
    r = group_rank_of(g, t->tid);
    i = r >= 0 ? group_local_index(g, r) : -1;
    if (i < 0 || g->gone[r] || e->seq != g->next_seq[i]) {
        d->gs->cs->cnt.bad_requests++;
        coll_refuse(t, e, COLLS_EINVAL);
        goto out;
    }
    g->next_seq[i]++;
    if (g->status != 0 && e->seq >= g->fail_from) {
        coll_refuse(t, e, g->status);
        goto out;
    }
    ci = coll_inst_get(d, g, e->seq, 1);
    if (ci == NULL) {
        coll_refuse(t, e, COLLS_ENOMEM);
        goto out;
    }
    ci->reqd[i] = 1;
    ci->nreq++;
    ci->req_id[i] = e->req_id;
    if (ci->state == CI_FAILED) {
        coll_answer(d, ci, i, ci->status, NULL, 0);
        coll_inst_maybe_end(ci);
        goto out;
    }
    first = !ci->have;
    if (first) {
        ci->t0 = platform_now_us();
        rc = coll_params(d, ci, e);
        if (rc == 0)
            rc = coll_choose(d, ci);
        if (rc == 0 && ci->mode == COLLS_MODE_FLAT) {
            ci->ex = calloc((size_t)g->nlocal, sizeof(*ci->ex));
            ci->nex = g->nlocal;
            if (ci->ex == NULL)
                rc = COLLS_ENOMEM;
        }
    } else {
        rc = coll_same(ci, e) ? 0 : COLLS_EINVAL;
    }
    if (rc == 0 && ci->op == SCHED_OP_ALLTOALLV)
        rc = coll_a2a_counts(d, ci, e->coll_req, &ci->a2a[i]);
    if (rc == 0 && plen != coll_in_len(ci, r, ci->a2a[i]))
        rc = COLLS_EINVAL;
    if (rc != 0) {
        d->gs->cs->cnt.bad_requests++;
        log_debug("group %s collective %llu: bad request from t%x: error %d",
                  g->name, (unsigned long long)e->seq, t->tid, rc);
        coll_inst_fail(d, ci, rc, 1);
        coll_inst_maybe_end(ci);
        goto out;
    }
    /* keep the input */
    if (owner != NULL) {
        ci->in[i] = (uint8_t *)payload;
        ci->inown[i] = owner;
        owner = NULL;
    } else {
        ci->inown[i] = malloc(plen ? plen : 1);
        if (ci->inown[i] == NULL) {
            coll_inst_fail(d, ci, COLLS_ENOMEM, 1);
            coll_inst_maybe_end(ci);
            goto out;
        }
        memcpy(ci->inown[i], payload, plen);
        ci->in[i] = ci->inown[i];
    }
    ci->inlen[i] = plen;
    rc = 0;
    if (ci->mode == COLLS_MODE_FLAT) {
        ci->state = CI_RUN;
        rc = coll_flat_start(d, ci, i);
    } else if (ci->nreq == g->nlocal) {
        ci->state = CI_RUN;
        rc = coll_hier_start(d, ci);
    }
    if (rc != 0) {
        log_warn("group %s collective %llu: cannot start: error %d", g->name,
                 (unsigned long long)ci->seq, rc);
        coll_inst_fail(d, ci, rc, 1);
        coll_inst_maybe_end(ci);
        goto out;
    }
    coll_progress(d, ci);
out:
    free(owner);
}

/* ---- messages from daemons ------------------------------------------ */

/* Delivers m (checked against g) to its instance.  Takes m. */
static void
coll_deliver(struct daemon *d, struct group *g, struct coll_msg *m)
{
    struct coll_inst *ci;
    uint64_t minseq = UINT64_MAX;
    int i, bound = m->m.phase == PHASE_LEADER ? g->H.nhosts : g->P;

    if (m->m.phase < 0) {
        for (i = 0; i < g->P; i++)
            if (g->hids[i] == m->hid)
                break;
        if (i < g->P && m->m.phase >= -4095)
            coll_peer_abort(d, g, m->seq, m->m.phase);
        coll_msg_free(m);
        return;
    }
    if (m->m.phase != PHASE_LEADER && m->m.phase != PHASE_FLAT)
        goto bad;
    if (m->m.src < 0 || m->m.src >= bound || m->m.dst < 0 || m->m.dst >= bound)
        goto bad;
    if (m->m.phase == PHASE_LEADER
            ? (m->m.dst != g->myhost ||
               g->hids[g->H.leader[m->m.src]] != m->hid)
            : (g->hids[m->m.dst] != d->hid || g->hids[m->m.src] != m->hid))
        goto bad;
    if (g->status != 0 && m->seq >= g->fail_from)
        goto drop;
    ci = coll_inst_get(d, g, m->seq, 0);
    if (ci == NULL) {
        for (i = 0; i < g->nlocal; i++)
            if (!g->gone[g->local[i]] && g->next_seq[i] < minseq)
                minseq = g->next_seq[i];
        if (m->seq < minseq)
            goto drop; /* every member here is past it */
        ci = coll_inst_get(d, g, m->seq, 1);
        if (ci == NULL)
            goto drop;
        d->gs->cs->cnt.early_msgs++;
    }
    if (ci->state == CI_FAILED)
        goto drop;
    list_add_tail(&ci->inbox, &m->m.node);
    coll_progress(d, ci);
    return;
bad:
    d->st.bad_peer_msgs++;
drop:
    d->gs->cs->cnt.stale_msgs++;
    coll_msg_free(m);
}

/* An abort of (g, seq) from another daemon. */
static void
coll_peer_abort(struct daemon *d, struct group *g, uint64_t seq, int status)
{
    struct coll_inst *ci;

    if (g->status != 0 && seq >= g->fail_from)
        return;
    ci = coll_inst_get(d, g, seq, 1);
    if (ci == NULL)
        return;
    coll_inst_fail(d, ci, status, 0);
    coll_inst_maybe_end(ci);
}

void
coll_peer_data(struct daemon *d, int hid, const Envelope *e, uint8_t *msg,
               size_t len, size_t off)
{
    struct coll_state *cs = d->gs->cs;
    const CollData *cd = e->coll_data;
    struct group *g;
    struct coll_msg *m;

    /* the fields are checked before they are used: ranks fit a group,
       the phase is one of the two, an abort carries a COLLS_E* code */
    if (e->src != COLLS_DAEMON_TID(hid) ||
        e->body_case != ENVELOPE__BODY_COLL_DATA ||
        (cd->abort_status == 0
             ? cd->phase > PHASE_FLAT || cd->src_rank >= GROUP_SIZE_MAX ||
                   cd->dst_rank >= GROUP_SIZE_MAX
             : cd->abort_status > 0 || cd->abort_status < -4095)) {
        d->st.bad_peer_msgs++;
        free(msg);
        return;
    }
    g = group_find(d, cd->gid);
    m = calloc(1, sizeof(*m));
    if (m == NULL) {
        free(msg);
        return;
    }
    list_init(&m->m.node);
    m->owner = msg;
    m->m.data = msg + off;
    m->m.len = len - off;
    m->gid = cd->gid;
    m->seq = e->seq;
    m->m.phase = (int)cd->phase;
    m->m.src = (int)cd->src_rank;
    m->m.dst = (int)cd->dst_rank;
    m->hid = hid;
    m->at_us = platform_now_us();
    if (cd->abort_status != 0) {       /* an abort: no payload */
        m->m.phase = cd->abort_status; /* negative: see coll_deliver */
        m->m.len = 0;
        m->m.src = m->m.dst = 0;
    }
    if (m->m.len > 0 && (int)e->byte_order != dtype_native_order()) {
        size_t es = dtype_size((int)e->dtype);

        if (es == 0 || m->m.len % es != 0) {
            d->st.bad_peer_msgs++;
            coll_msg_free(m);
            return;
        }
        dtype_swap((int)e->dtype, msg + off, m->m.len / es);
    }
    if (g == NULL) {
        if (cs->early_bytes + m->m.len > (size_t)d->cfg->max_message * 4) {
            cs->cnt.stale_msgs++;
            coll_msg_free(m);
            return;
        }
        cs->early_bytes += m->m.len;
        cs->cnt.early_msgs++;
        list_add_tail(&cs->early, &m->m.node);
        return;
    }
    coll_deliver(d, g, m);
}

void
coll_group_installed(struct daemon *d, struct group *g)
{
    struct coll_state *cs = d->gs->cs;
    struct list_node mine, *n, *tmp;

    list_init(&mine);
    LIST_FOREACH_SAFE(n, tmp, &cs->early)
    {
        struct coll_msg *m = list_entry(n, struct coll_msg, m.node);

        if (m->gid == g->gid) {
            list_del(n);
            cs->early_bytes -= m->m.len;
            list_add_tail(&mine, n);
        }
    }
    LIST_FOREACH_SAFE(n, tmp, &mine)
    {
        list_del(n);
        coll_deliver(d, g, list_entry(n, struct coll_msg, m.node));
    }
}

void
coll_group_failed(struct daemon *d, struct group *g)
{
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE(n, tmp, &g->insts)
    {
        struct coll_inst *ci = list_entry(n, struct coll_inst, node);

        if (ci->seq >= g->fail_from) {
            coll_inst_fail(d, ci, g->status, 0);
            coll_inst_free(ci);
        }
    }
}

void
coll_group_free(struct daemon *d, struct group *g)
{
    (void)d;
    while (!list_empty(&g->insts))
        coll_inst_free(list_entry(g->insts.next, struct coll_inst, node));
}

/* Drops early messages matching (hid, or older than cutoff). */
static void
coll_early_drop(struct daemon *d, int hid, uint64_t cutoff)
{
    struct coll_state *cs = d->gs->cs;
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE(n, tmp, &cs->early)
    {
        struct coll_msg *m = list_entry(n, struct coll_msg, m.node);

        if (m->hid == hid || m->at_us < cutoff) {
            list_del(n);
            cs->early_bytes -= m->m.len;
            cs->cnt.stale_msgs++;
            coll_msg_free(m);
        }
    }
}

void
coll_host_down(struct daemon *d, int hid)
{
    coll_early_drop(d, hid, 0);
}

void
coll_cron(struct daemon *d, uint64_t now_us)
{
    if (d->gs != NULL && now_us > COLL_EARLY_MAX_US)
        coll_early_drop(d, -1, now_us - COLL_EARLY_MAX_US);
}

int
coll_init(struct daemon *d)
{
    struct coll_state *cs = calloc(1, sizeof(*cs));

    if (cs == NULL)
        return COLLS_ENOMEM;
    list_init(&cs->early);
    cs->cache = sched_cache_new(COLL_SCHED_CACHE);
    if (cs->cache == NULL) {
        free(cs);
        return COLLS_ENOMEM;
    }
    d->gs->cs = cs;
    return 0;
}

void
coll_free_early(struct daemon *d)
{
    coll_msgs_free(&d->gs->cs->early);
    d->gs->cs->early_bytes = 0;
}

void
coll_free(struct daemon *d)
{
    if (d->gs->cs == NULL)
        return;
    coll_free_early(d);
    sched_cache_free(d->gs->cs->cache);
    free(d->gs->cs);
    d->gs->cs = NULL;
}

/* clang-format off: the collective counters, one per line, shared by the
   JSON and Prometheus writers. */
#define COLL_COUNTERS(X)                                                       \
    X(hier_runs)                                                               \
    X(flat_runs)                                                               \
    X(hier_as_flat)                                                            \
    X(fallbacks)                                                               \
    X(aborts)                                                                  \
    X(failed_ops)                                                              \
    X(bad_requests)                                                            \
    X(early_msgs)                                                              \
    X(stale_msgs)
/* the group counters (struct group_counters) that follow them */
#define COLL_GROUP_COUNTERS(X)                                                 \
    X(groups_formed)                                                           \
    X(groups_failed)
/* clang-format on */

/* The collective counters, with the bad requests group.c refused. */
static struct coll_counters
coll_counters_get(const struct daemon *d)
{
    struct coll_counters c = d->gs->cs->cnt;

    c.bad_requests += d->gs->cnt.bad_requests;
    return c;
}

void
coll_stats_json(struct daemon *d, struct stats_json *j)
{
    const struct coll_counters cnt = coll_counters_get(d), *c = &cnt;
    const struct group_counters *gc = &d->gs->cnt;
    uint64_t hits, misses, evictions;
    int op, m;
    size_t k, nalg;

    stats_json_obj_begin(j, "coll");
#define X(n) stats_json_u64(j, #n, c->n);
    COLL_COUNTERS(X)
#undef X
#define X(n) stats_json_u64(j, #n, gc->n);
    COLL_GROUP_COUNTERS(X)
#undef X
    sched_cache_stats(d->gs->cs->cache, &hits, &misses, &evictions);
    stats_json_u64(j, "sched_cache_hits", hits);
    stats_json_u64(j, "sched_cache_misses", misses);
    stats_json_u64(j, "sched_cache_evictions", evictions);
    collfpc_stats_json(&d->gs->cs->fpc, j);
    stats_json_obj_end(j);
    stats_json_arr_begin(j, "collectives");
    for (op = 0; op < SCHED_OP_MAX; op++)
        for (m = 0; m < 2; m++) {
            const struct alg *t =
                alg_table(m ? op : collop_get(op)->leader, &nalg);

            for (k = 0; k < nalg && k < COLL_MAX_ALGS; k++) {
                const struct coll_opstats *os = &d->gs->cs->ops[op][m][k];

                if (os->runs == 0 && os->fallbacks == 0)
                    continue;
                stats_json_obj_begin(j, NULL);
                stats_json_str(j, "op", collop_name(op));
                stats_json_str(j, "mode", m ? "flat" : "hier");
                stats_json_str(j, "alg", t[k].name);
                stats_json_u64(j, "runs", os->runs);
                stats_json_u64(j, "bytes", os->bytes);
                stats_json_u64(j, "fallbacks", os->fallbacks);
                stats_json_hist(j, "us", &os->us);
                stats_json_obj_end(j);
            }
        }
    stats_json_arr_end(j);
}

int
coll_stats_prometheus(struct daemon *d, struct buf *b)
{
    const struct coll_counters cnt = coll_counters_get(d), *c = &cnt;
    const struct group_counters *gc = &d->gs->cnt;
    int op, m, err = 0;
    size_t k, nalg;

    /* the last: a histogram of the operations' times */
    static const char *const family[4] = {
        "collsd_coll_alg_runs_total", "collsd_coll_alg_bytes_total",
        "collsd_coll_alg_fallbacks_total", "collsd_coll_alg_time_us"};
    int f;

#define X(n)                                                                   \
    stats_prom_one(b, &err, "collsd_coll_" #n "_total", "counter",             \
                   (unsigned long long)c->n);
    COLL_COUNTERS(X)
#undef X
#define X(n)                                                                   \
    stats_prom_one(b, &err, "collsd_coll_" #n "_total", "counter",             \
                   (unsigned long long)gc->n);
    COLL_GROUP_COUNTERS(X)
#undef X
    collfpc_stats_prometheus(&d->gs->cs->fpc, b, &err);
    /* one family after the other, every (op, mode, alg) run in each */
    for (f = 0; f < 4; f++) {
        stats_prom_type(b, &err, family[f], f < 3 ? "counter" : "histogram");
        for (op = 0; op < SCHED_OP_MAX; op++)
            for (m = 0; m < 2; m++) {
                const struct alg *t =
                    alg_table(m ? op : collop_get(op)->leader, &nalg);

                for (k = 0; k < nalg && k < COLL_MAX_ALGS; k++) {
                    const struct coll_opstats *os = &d->gs->cs->ops[op][m][k];
                    const uint64_t v[3] = {os->runs, os->bytes, os->fallbacks};
                    char labels[128];

                    if (os->runs == 0 && os->fallbacks == 0)
                        continue;
                    snprintf(labels, sizeof(labels),
                             "op=\"%s\",mode=\"%s\",alg=\"%s\"",
                             collop_name(op), m ? "flat" : "hier", t[k].name);
                    if (f == 3)
                        stats_prom_hist(b, &err, family[f], labels, &os->us);
                    else
                        stats_prom(b, &err, "%s{%s} %llu\n", family[f], labels,
                                   (unsigned long long)v[f]);
                }
            }
    }
    return err;
}
