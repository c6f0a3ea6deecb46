/*
 * collrun.c -- starting and finishing the runs of an instance: the
 * leader schedule of hierarchical mode (the host-local phase through
 * daemon/hier.c), the FPC protocol's two bcasts (daemon/collfpc.c), each
 * local member's schedule in flat mode, and the exec_ops through which
 * runs send COLL_DATA (or hand a message to a rank of this daemon).  See
 * collint.h.
 *
 * May call: daemon/exec.h, daemon/hier.h, daemon/collfpc.h,
 * daemon/collplan.c (collint.h), daemon/net.h and daemon/host.h (to send),
 * daemon/log.h.
 */
#include <config.h> /* autoconf; "config.h" would be daemon/config.h */

#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/collint.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/group.h"
#include "daemon/host.h"
#include "daemon/log.h"
#include "daemon/net.h"
#include "daemon/task.h"
#include "proto/collop.h"
#include "proto/dtype.h"
#include "proto/envelope.h"

/* Daemon of schedule rank r in phase. */
static int
collrun_rank_hid(const struct coll_inst *ci, int phase, int r)
{
    const struct group *g = ci->g;

    if (phase == PHASE_LEADER)
        return g->hids[g->H.leader[r]];
    return g->hids[r];
}

/* exec_ops.send: len bytes of data from (phase, src) to (phase, dst) of
   instance arg, over the transport or into its own inbox. */
static int
collrun_send(void *arg, int phase, int src, int dst, const uint8_t *data,
             size_t len)
{
    struct coll_inst *ci = arg;
    struct daemon *d = ci->d;
    int hid = collrun_rank_hid(ci, phase, dst);
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
collrun_consumed(void *arg, struct exec_msg *m)
{
    (void)arg;
    coll_msg_free((struct coll_msg *)(void *)m);
}

const struct exec_ops collrun_ops = {collrun_send, collrun_consumed};

/* ---- FPC compression (hierarchical bcast of doubles) ----------------- */

/* The leaders' bcast of ci for size bytes of dtype into a. */
static void
collrun_fpc_args(const struct coll_inst *ci, struct alg_args *a, int dtype,
                 size_t size)
{
    collplan_args(ci, 1, ci->g->myhost, size, a);
    a->dtype = dtype;
}

/* Starts bcast a (one of the two of the FPC protocol) on x; the root's
   daemon provides the a->size bytes at data.  0 or a COLLS_E* code. */
static int
collrun_fpc_bcast(struct daemon *d, struct coll_inst *ci, struct exec *x,
                  const struct alg_args *a, const uint8_t *data)
{
    int rc = collplan_exec_init(d, x, ci, PHASE_LEADER, a, NULL, 0, a->size);

    if (rc != 0)
        return rc;
    if (a->rank == a->root)
        memcpy(x->buf[SCHED_BUF_RECV], data, a->size);
    ci->wire_dtype = a->dtype;
    return exec_start(x, &collrun_ops, ci);
}

/* Starts the header bcast among the leaders (the root's daemon makes the
   payload first).  0 or a COLLS_E* code. */
static int
collrun_fpc_start(struct daemon *d, struct coll_inst *ci)
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
    collrun_fpc_args(ci, &a, COLLS_BYTE, COLLFPC_HDR);
    return collrun_fpc_bcast(d, ci, &ci->ex[0], &a, hdr);
}

/* The header is in: starts the payload bcast, with the algorithm chosen
   for the payload's length.  0 or a COLLS_E* code. */
int
collrun_fpc_payload(struct daemon *d, struct coll_inst *ci)
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
    collrun_fpc_args(ci, &a,
                     ci->fpx.kind == COLLFPC_STREAM ? COLLS_BYTE : ci->dtype,
                     ci->fpx.len);
    rc = collplan_choose_alg(d, ci, &a, ci->spec);
    if (rc != 0)
        return rc;
    a.seg = ci->seg;
    if (a.rank == a.root)
        data = ci->fpx.data != NULL ? ci->fpx.data
                                    : ci->in[group_local_index(g, ci->root)];
    rc = collrun_fpc_bcast(d, ci, &ci->ex[1], &a, data);
    free(ci->fpx.data); /* copied into the payload bcast's buffer */
    ci->fpx.data = NULL;
    return rc;
}

/* The payload is in: decodes it (once) into the n bytes the local members
   get.  0, COLLS_EBADMSG (logged) or COLLS_ENOMEM. */
int
collrun_fpc_finish(struct daemon *d, struct coll_inst *ci)
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
int
collrun_hier_start(struct daemon *d, struct coll_inst *ci)
{
    struct group *g = ci->g;
    struct hier_layout *L = &ci->hl;
    size_t lss, lrs, lim = (size_t)d->cfg->max_message;
    struct alg_args a;
    struct exec *x;
    int rc;

    if (ci->fpc)
        return collrun_fpc_start(d, ci);
    hier_sizes(L, &lss, &lrs);
    /* the leaders' buffers; an alltoall's are its blocks for every host
       (sd, sc), the other operations leave those unused (an allreduce of
       16 MiB by 4 members a host on 2 hosts counted 512 MiB there) */
    if (lss > lim || lrs > lim)
        return COLLS_EMSGSIZE;
    collplan_args(ci, 1, g->myhost,
                  collop_get(ci->op)->leader == SCHED_OP_BCAST ? ci->n : lss,
                  &a);
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
    rc = collplan_exec_init(d, x, ci, PHASE_LEADER, &a, NULL, lss, lrs);
    if (rc == 0)
        rc = hier_combine(L, (const uint8_t *const *)ci->in, ci->inlen,
                          x->buf[SCHED_BUF_SEND], x->buf[SCHED_BUF_RECV]);
    if (rc != 0)
        return rc;
    return exec_start(x, &collrun_ops, ci);
}

/* The leader schedule finished: answers every local member. */
int
collrun_hier_finish(struct daemon *d, struct coll_inst *ci)
{
    const struct hier_layout *L = &ci->hl;
    const uint8_t *lr = ci->fpc ? ci->fpx.out : ci->ex[0].buf[SCHED_BUF_RECV];
    const uint8_t *data;
    size_t ssz = hier_scratch(L), len;
    uint8_t *scratch = NULL;
    struct task_share *share = NULL;
    int i, rc = 0;

    if (ssz > 0 && (scratch = malloc(ssz)) == NULL)
        return COLLS_ENOMEM;
    for (i = 0; i < ci->g->nlocal && rc == 0; i++) {
        rc = hier_result(L, i, lr, (const uint8_t *const *)ci->in, scratch,
                         &data, &len);
        if (rc != 0)
            break;
        if (!ci->fpc && i == ci->g->nlocal - 1 && share == NULL)
            /* no other shares it: the last may take the leader's buffer */
            coll_answer_last(d, ci, i, &ci->ex[0], data, len);
        else if (ci->fpc ||
                 !coll_answer_shared(d, ci, i, &ci->ex[0], &share, data, len))
            coll_answer(d, ci, i, 0, data, len);
    }
    task_share_put(share);
    free(scratch);
    return rc;
}

/* ---- flat mode ------------------------------------------------------ */

/* Starts the schedule of local member i. */
int
collrun_flat_start(struct daemon *d, struct coll_inst *ci, int i)
{
    struct group *g = ci->g;
    struct exec *x = &ci->ex[i];
    int r = g->local[i], rc;
    const size_t *v = ci->a2a[i];
    struct alg_args a;

    collplan_args(ci, 0, r, ci->n, &a);
    if (ci->op == SCHED_OP_ALLTOALLV) {
        size_t P = (size_t)ci->P;

        a.scounts = v;
        a.sdispls = v + P;
        a.rcounts = v + 2 * P;
        a.rdispls = v + 3 * P;
    }
    rc = collplan_exec_init(d, x, ci, PHASE_FLAT, &a, ci->in[i], ci->inlen[i],
                            collplan_out_len(ci, r, v));
    if (rc != 0)
        return rc;
    if (ci->op == SCHED_OP_BCAST && r == ci->root)
        memcpy(x->buf[SCHED_BUF_RECV], ci->in[i], ci->n);
    return exec_start(x, &collrun_ops, ci);
}
