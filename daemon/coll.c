/*
 * coll.c -- collective instances, task requests, peer messages and
 * aborts; see coll.h.  What an instance runs is chosen in collplan.c and
 * started in collrun.c (the records they share are in collint.h); the
 * schedule executor is daemon/exec.c, the host-local phase daemon/hier.c,
 * the FPC protocol daemon/collfpc.c.
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
 * instance it is working on except through coll_inst_maybe_end as its
 * last act; every item an instance holds is in this daemon's byte order
 * (a task's input is swapped in coll_task_req, a peer's payload in
 * coll_peer_data, when their order differs; docs/protocol.md, "Byte
 * order").
 *
 * Owns: struct coll_state (d->gs->cs: early messages, schedule cache,
 * counters) and every instance (on its group's list).  May call: the
 * other coll*.c files, daemon/exec.h, daemon/group.h (lookups), task.h
 * (answers), net.h and host.h (aborts), stats.h, log.h.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/coll.h"
#include "daemon/collint.h"
#include "daemon/collfpc.h"
#include "daemon/exec.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/group.h"
#include "daemon/host.h"
#include "daemon/log.h"
#include "daemon/net.h"
#include "daemon/platform.h"
#include "daemon/sched.h"
#include "daemon/stats.h"
#include "daemon/task.h"
#include "proto/collop.h"
#include "proto/dtype.h"
#include "proto/envelope.h"
#include "proto/list.h"

#define COLL_EARLY_MAX_US (120u * 1000000u) /* unknown gid: kept this long */
#define COLL_SCHED_CACHE  512               /* slots of the schedule cache */

static void coll_progress(struct daemon *d, struct coll_inst *ci);
static void coll_peer_abort(struct daemon *d, struct group *g, uint64_t seq,
                            int status, const char *why);

/* ---- messages ------------------------------------------------------- */

void
coll_msg_free(struct coll_msg *m)
{
    free(m->owner);
    free(m->why);
    free(m);
}

/* Frees every message of list h. */
static void
coll_msgs_free(struct list_node *h)
{
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE (n, tmp, h) {
        list_del(n);
        coll_msg_free(list_entry(n, struct coll_msg, m.node));
    }
}

/* Tells every other daemon of g that (gid, seq) failed with status, for
   the reason why. */
static void
coll_send_abort(struct daemon *d, struct group *g, uint64_t seq, int status,
                const char *why)
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
    cd.abort_why = (char *)why;
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
    free(ci->out);
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

    LIST_FOREACH (n, &g->insts) {
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
    ci->out = calloc(nl, sizeof(*ci->out));
    ci->in = calloc(nl, sizeof(uint8_t *));
    ci->inlen = calloc(nl, sizeof(size_t));
    ci->inown = calloc(nl, sizeof(void *));
    ci->a2a = calloc(nl, sizeof(size_t *));
    if (!ci->reqd || !ci->answered || !ci->req_id || !ci->out || !ci->in ||
        !ci->inlen || !ci->inown || !ci->a2a) {
        coll_inst_free_arrays(ci);
        return NULL;
    }
    list_add_head(&g->insts, &ci->node);
    return ci;
}

/* Fills r as the COLL_RESULT (status, body cr) of task tid's request
   (group, seq, req_id). */
static void
coll_result_env(const struct daemon *d, Envelope *r, CollResult *cr,
                uint32_t tid, const char *group, uint64_t seq, uint64_t req_id,
                int status)
{
    group_reply_env(d, r, KIND__COLL_RESULT, tid, req_id, group, status);
    r->seq = seq;
    r->body_case = ENVELOPE__BODY_COLL_RESULT;
    r->coll_result = cr;
}

/* Sends COLL_RESULT to local member i of ci; owner (or NULL): the
   allocation data lies in, which the answer takes (freed in any case);
   share (or NULL): the shared block data lies in, of which the answer
   takes a reference. */
static void
coll_answer_own(struct daemon *d, struct coll_inst *ci, int i, int status,
                const uint8_t *data, size_t len, uint8_t *owner,
                struct task_share *share)
{
    struct group *g = ci->g;
    struct task *t = task_find(d, g->tids[g->local[i]]);
    CollResult cr = COLL_RESULT__INIT;
    char alg[COLL_ALG_SPEC_MAX + 8];
    Envelope r;

    if (ci->answered[i] || t == NULL || status != 0) {
        free(owner);
        owner = NULL;
    }
    if (ci->answered[i])
        return;
    ci->answered[i] = 1;
    ci->nans++;
    if (t == NULL)
        return;
    coll_result_env(d, &r, &cr, t->tid, g->name, ci->seq, ci->req_id[i],
                    status);
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
    cr.why = status != 0 ? ci->why : "";
    if (status == 0 && len > 0 && ci->out[i].addr != 0 &&
        len == ci->out[i].len &&
        task_cma_write(t, ci->out[i].addr, data, len) == 0) {
        /* single copy: the result is in the task's buffer already */
        cr.placed = 1;
        free(owner);
        task_queue_env(t, &r, NULL, 0, NULL);
        return;
    }
    if (share != NULL && status == 0)
        task_queue_env_shared(t, &r, data, len, share);
    else
        task_queue_env(t, &r, status == 0 ? data : NULL, status == 0 ? len : 0,
                       owner);
}

void
coll_answer(struct daemon *d, struct coll_inst *ci, int i, int status,
            const uint8_t *data, size_t len)
{
    coll_answer_own(d, ci, i, status, data, len, NULL, NULL);
}

/* 1 if len > 0 bytes at data lie in the size bytes at mem (not NULL). */
static int
coll_within(const void *mem, size_t size, const uint8_t *data, size_t len)
{
    uintptr_t p = (uintptr_t)data, o = (uintptr_t)mem;

    return mem != NULL && len > 0 && p >= o && p - o <= size &&
           len <= size - (p - o);
}

/* 1 if len > 0 bytes at data lie in the receive buffer x allocated. */
static int
coll_in_own(const struct exec *x, const uint8_t *data, size_t len)
{
    return coll_within(x->own[SCHED_BUF_RECV], x->bsz[SCHED_BUF_RECV], data,
                       len);
}

void
coll_answer_last(struct daemon *d, struct coll_inst *ci, int i, struct exec *x,
                 const uint8_t *data, size_t len)
{
    uint8_t *own = x->own[SCHED_BUF_RECV];

    if (!coll_in_own(x, data, len)) {
        coll_answer(d, ci, i, 0, data, len);
        return;
    }
    x->own[SCHED_BUF_RECV] = NULL;
    x->buf[SCHED_BUF_RECV] = NULL;
    coll_answer_own(d, ci, i, 0, data, len, own, NULL);
}

int
coll_answer_shared(struct daemon *d, struct coll_inst *ci, int i,
                   struct exec *x, struct task_share **share,
                   const uint8_t *data, size_t len)
{
    /* the buffer moves into *share at the first answer; bsz stays */
    const void *mem = *share != NULL ? (*share)->mem : x->own[SCHED_BUF_RECV];

    if (!coll_within(mem, x->bsz[SCHED_BUF_RECV], data, len))
        return 0;
    if (*share == NULL) {
        if ((*share = task_share_new(x->own[SCHED_BUF_RECV])) == NULL)
            return 0;
        x->own[SCHED_BUF_RECV] = NULL;
        x->buf[SCHED_BUF_RECV] = NULL;
    }
    coll_answer_own(d, ci, i, 0, data, len, NULL, *share);
    return 1;
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

/* Fails ci with status: answers who asked (with ci->why, the reason, if
   any), frees the work; abort: tell the other daemons.  Logs the reason
   once, where the failure was found. */
static void
coll_inst_fail(struct daemon *d, struct coll_inst *ci, int status, int abort)
{
    int i;

    if (ci->state == CI_FAILED)
        return;
    if (abort) {
        d->gs->cs->cnt.aborts++;
        log_info("group %s collective %llu failed: %s%s%s", ci->g->name,
                 (unsigned long long)ci->seq, log_errstr(status),
                 ci->why[0] != '\0' ? ": " : "", ci->why);
        coll_send_abort(d, ci->g, ci->seq, status, ci->why);
    }
    d->gs->cs->cnt.failed_ops++;
    ci->state = CI_FAILED;
    ci->status = status;
    coll_inst_release(ci);
    for (i = 0; i < ci->g->nlocal; i++)
        if (ci->reqd[i])
            coll_answer(d, ci, i, status, NULL, 0);
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

            err = exec_advance(x, &ci->inbox, &collrun_ops, ci, &moved);
            if (err != 0 && x->why[0] != '\0')
                snprintf(ci->why, sizeof(ci->why), "%s", x->why);
            if (err == 0 && x->finished && ci->mode == COLLS_MODE_FLAT &&
                !ci->answered[i]) {
                int r = ci->g->local[i];

                coll_answer_last(d, ci, i, x, x->buf[SCHED_BUF_RECV],
                                 collplan_out_len(ci, r, ci->a2a[i]));
            }
        }
    } while (moved && err == 0);
    if (err == 0 && ci->fpc && ci->ex[0].finished && !ci->ex[1].started) {
        err = collrun_fpc_payload(d, ci);
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
            err = collrun_fpc_finish(d, ci);
        if (err == 0)
            err = collrun_hier_finish(d, ci);
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

    cr.alg = "";
    coll_result_env(t->d, &r, &cr, t->tid, e->group, e->seq, e->req_id, status);
    task_queue_env(t, &r, NULL, 0, NULL);
}

void
coll_task_req(struct task *t, const Envelope *e, const uint8_t *payload,
              size_t plen, uint8_t *owner)
{
    struct daemon *d = t->d;
    const CollReq *q;
    struct group *g;
    struct coll_inst *ci;
    int r, i, rc, first, cma_in;

    if (e->body_case != ENVELOPE__BODY_COLL_REQ) {
        d->gs->cs->cnt.bad_requests++;
        coll_refuse(t, e, COLLS_EINVAL);
        goto out;
    }
    q = e->coll_req;
    cma_in = q->in_addr != 0;
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
    if (q->out_addr != 0 && task_cma_granted(t)) {
        ci->out[i].addr = q->out_addr;
        ci->out[i].len = q->out_len;
    }
    if (ci->state == CI_FAILED) {
        coll_answer(d, ci, i, ci->status, NULL, 0);
        coll_inst_maybe_end(ci);
        goto out;
    }
    first = !ci->have;
    if (first) {
        ci->t0 = platform_now_us();
        ci->first_rank = r;
        rc = collplan_params(d, ci, e);
        if (rc == 0)
            rc = collplan_choose(d, ci);
        if (rc == 0 && ci->mode == COLLS_MODE_FLAT) {
            ci->ex = calloc((size_t)g->nlocal, sizeof(*ci->ex));
            ci->nex = g->nlocal;
            if (ci->ex == NULL)
                rc = COLLS_ENOMEM;
        }
    } else {
        rc = collplan_same(ci, e, r);
    }
    if (rc == 0 && ci->op == SCHED_OP_ALLTOALLV)
        rc = collplan_a2a_counts(d, ci, e->coll_req, &ci->a2a[i]);
    if (rc == 0 && cma_in &&
        (plen > 0 || !task_cma_granted(t) ||
         q->in_len > (uint64_t)d->cfg->max_message)) {
        snprintf(ci->why, sizeof(ci->why),
                 "rank %d: input in its memory refused (single copy %s)", r,
                 task_cma_granted(t) ? "with a payload, or too large"
                                     : "not granted");
        rc = COLLS_EINVAL;
    }
    if (rc == 0 && cma_in)
        plen = (size_t)q->in_len;
    if (rc == 0 && plen != collplan_in_len(ci, r, ci->a2a[i])) {
        snprintf(ci->why, sizeof(ci->why),
                 "%zu bytes of input from rank %d, %zu expected", plen, r,
                 collplan_in_len(ci, r, ci->a2a[i]));
        rc = COLLS_ECOUNT;
    }
    if (rc != 0) {
        d->gs->cs->cnt.bad_requests++;
        log_debug("group %s collective %llu: bad request from t%x: %s", g->name,
                  (unsigned long long)e->seq, t->tid, log_errstr(rc));
        coll_inst_fail(d, ci, rc, 1);
        coll_inst_maybe_end(ci);
        goto out;
    }
    /* keep the input: single copy reads it from the task's memory */
    if (cma_in) {
        ci->inown[i] = malloc(plen ? plen : 1);
        rc = ci->inown[i] == NULL
                 ? COLLS_ENOMEM
                 : task_cma_read(t, q->in_addr, ci->inown[i], plen);
        if (rc != 0) {
            snprintf(ci->why, sizeof(ci->why),
                     "rank %d: its input could not be read (%s)", r,
                     log_errstr(rc));
            coll_inst_fail(d, ci, rc, 1);
            coll_inst_maybe_end(ci);
            goto out;
        }
        ci->in[i] = ci->inown[i];
    } else if (owner != NULL) {
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
    /* a task of the other byte order: its items into this daemon's order,
       once, before any schedule reads them (docs/protocol.md, "Byte
       order"); a task of this daemon's order costs one comparison */
    if (plen > 0 && ci->esize > 1 && (int)e->byte_order != dtype_native_order())
        dtype_swap(ci->dtype, ci->in[i], plen / ci->esize);
    rc = 0;
    if (ci->mode == COLLS_MODE_FLAT) {
        ci->state = CI_RUN;
        rc = collrun_flat_start(d, ci, i);
    } else if (ci->nreq == g->nlocal) {
        ci->state = CI_RUN;
        rc = collrun_hier_start(d, ci);
    }
    if (rc != 0) {
        log_warn("group %s collective %llu: cannot start: %s", g->name,
                 (unsigned long long)ci->seq, log_errstr(rc));
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
            coll_peer_abort(d, g, m->seq, m->m.phase, m->why);
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

/* An abort of (g, seq) from another daemon, for the reason why (or
   NULL). */
static void
coll_peer_abort(struct daemon *d, struct group *g, uint64_t seq, int status,
                const char *why)
{
    struct coll_inst *ci;

    if (g->status != 0 && seq >= g->fail_from)
        return;
    ci = coll_inst_get(d, g, seq, 1);
    if (ci == NULL)
        return;
    if (ci->state != CI_FAILED)
        snprintf(ci->why, sizeof(ci->why), "%s", why != NULL ? why : "");
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
        if (cd->abort_why != NULL && cd->abort_why[0] != '\0')
            m->why = strdup(cd->abort_why); /* NULL: no words, that is all */
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
    LIST_FOREACH_SAFE (n, tmp, &cs->early) {
        struct coll_msg *m = list_entry(n, struct coll_msg, m.node);

        if (m->gid == g->gid) {
            list_del(n);
            cs->early_bytes -= m->m.len;
            list_add_tail(&mine, n);
        }
    }
    LIST_FOREACH_SAFE (n, tmp, &mine) {
        list_del(n);
        coll_deliver(d, g, list_entry(n, struct coll_msg, m.node));
    }
}

void
coll_group_failed(struct daemon *d, struct group *g)
{
    struct list_node *n, *tmp;

    LIST_FOREACH_SAFE (n, tmp, &g->insts) {
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

    LIST_FOREACH_SAFE (n, tmp, &cs->early) {
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
    X(hier_runs, "Collectives run hierarchically (host, then hosts).")         \
    X(flat_runs, "Collectives run flat (one schedule per rank).")              \
    X(hier_as_flat, "Hierarchical requests run flat.")                         \
    X(fallbacks, "Forced algorithms replaced by the default (unusable).")      \
    X(aborts, "Collectives aborted on every daemon of the group.")             \
    X(failed_ops, "Collectives that failed here.")                             \
    X(bad_requests, "Collective and group requests refused as invalid.")       \
    X(early_msgs, "Collective data kept until its group or instance came.")    \
    X(stale_msgs, "Collective data dropped as stale.")
/* the group counters (struct group_counters) that follow them */
#define COLL_GROUP_COUNTERS(X)                                                 \
    X(groups_formed, "Groups formed.")                                         \
    X(groups_failed, "Groups that failed (a member died or timed out).")
/* clang-format on */

/* The collective counters, with the bad requests group.c refused. */
static struct coll_counters
coll_counters_get(const struct daemon *d)
{
    struct coll_counters c = d->gs->cs->cnt;

    c.bad_requests += d->gs->cnt.bad_requests;
    return c;
}

/* Calls fn for every (operation, mode, algorithm row) that ran or fell
   back here, in a fixed order. */
static void
coll_opstats_each(const struct daemon *d,
                  void (*fn)(void *arg, int op, int flat, const char *alg,
                             const struct coll_opstats *os),
                  void *arg)
{
    int op, m;
    size_t k, nalg;

    for (op = 0; op < SCHED_OP_MAX; op++)
        for (m = 0; m < 2; m++) {
            const struct alg *t =
                alg_table(m ? op : collop_get(op)->leader, &nalg);

            for (k = 0; k < nalg && k < COLL_MAX_ALGS; k++) {
                const struct coll_opstats *os = &d->gs->cs->ops[op][m][k];

                if (os->runs != 0 || os->fallbacks != 0)
                    fn(arg, op, m, t[k].name, os);
            }
        }
}

/* coll_opstats_each: one object of the "collectives" array. */
static void
coll_opstats_json(void *arg, int op, int flat, const char *alg,
                  const struct coll_opstats *os)
{
    struct stats_json *j = arg;

    stats_json_obj_begin(j, NULL);
    stats_json_str(j, "op", collop_name(op));
    stats_json_str(j, "mode", flat ? "flat" : "hier");
    stats_json_str(j, "alg", alg);
    stats_json_u64(j, "runs", os->runs);
    stats_json_u64(j, "bytes", os->bytes);
    stats_json_u64(j, "fallbacks", os->fallbacks);
    stats_json_hist(j, "us", &os->us);
    stats_json_obj_end(j);
}

void
coll_stats_json(struct daemon *d, struct stats_json *j)
{
    const struct coll_counters cnt = coll_counters_get(d), *c = &cnt;
    const struct group_counters *gc = &d->gs->cnt;
    uint64_t hits, misses, evictions;

    stats_json_obj_begin(j, "coll");
#define X(n, help) stats_json_u64(j, #n, c->n);
    COLL_COUNTERS(X)
#undef X
#define X(n, help) stats_json_u64(j, #n, gc->n);
    COLL_GROUP_COUNTERS(X)
#undef X
    sched_cache_stats(d->gs->cs->cache, &hits, &misses, &evictions);
    stats_json_u64(j, "sched_cache_hits", hits);
    stats_json_u64(j, "sched_cache_misses", misses);
    stats_json_u64(j, "sched_cache_evictions", evictions);
    collfpc_stats_json(&d->gs->cs->fpc, j);
    stats_json_obj_end(j);
    stats_json_arr_begin(j, "collectives");
    coll_opstats_each(d, coll_opstats_json, j);
    stats_json_arr_end(j);
}

/* The Prometheus families of the per-(op, mode, alg) counters; the last
   is a histogram of the operations' durations. */
static const struct {
    const char *name, *help;
} coll_prom_family[4] = {
    {"collsd_coll_alg_runs_total", "Collective runs, by operation, mode "
                                   "and algorithm."},
    {"collsd_coll_alg_bytes_total", "Bytes of the collective runs."},
    {"collsd_coll_alg_fallbacks_total",
     "Runs where a forced algorithm fell back to this one."},
    {"collsd_coll_alg_duration_seconds", "Durations of the collective runs "
                                         "here, request to result."},
};

/* What coll_opstats_prom writes into. */
struct coll_prom {
    struct buf *b;
    int *err;
    int f; /* the family being written */
};

/* coll_opstats_each: the line(s) of one run in family p->f. */
static void
coll_opstats_prom(void *arg, int op, int flat, const char *alg,
                  const struct coll_opstats *os)
{
    struct coll_prom *p = arg;
    const uint64_t v[3] = {os->runs, os->bytes, os->fallbacks};
    const char *fam = coll_prom_family[p->f].name;
    char labels[128];

    snprintf(labels, sizeof(labels), "op=\"%s\",mode=\"%s\",alg=\"%s\"",
             collop_name(op), flat ? "flat" : "hier", alg);
    if (p->f == 3)
        stats_prom_hist(p->b, p->err, fam, labels, &os->us, 1e-6);
    else
        stats_prom(p->b, p->err, "%s{%s} %llu\n", fam, labels,
                   (unsigned long long)v[p->f]);
}

int
coll_stats_prometheus(struct daemon *d, struct buf *b)
{
    const struct coll_counters cnt = coll_counters_get(d), *c = &cnt;
    const struct group_counters *gc = &d->gs->cnt;
    int err = 0;
    struct coll_prom p = {b, &err, 0};

#define X(n, help)                                                             \
    stats_prom_counter(b, &err, "collsd_coll_", #n, help,                      \
                       (unsigned long long)c->n);
    COLL_COUNTERS(X)
#undef X
#define X(n, help)                                                             \
    stats_prom_counter(b, &err, "collsd_coll_", #n, help,                      \
                       (unsigned long long)gc->n);
    COLL_GROUP_COUNTERS(X)
#undef X
    collfpc_stats_prometheus(&d->gs->cs->fpc, b, &err);
    /* one family after the other, every (op, mode, alg) run in each */
    for (p.f = 0; p.f < 4; p.f++) {
        stats_prom_family(b, &err, coll_prom_family[p.f].name,
                          p.f < 3 ? "counter" : "histogram",
                          coll_prom_family[p.f].help);
        coll_opstats_each(d, coll_opstats_prom, &p);
    }
    return err;
}
