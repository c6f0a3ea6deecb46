/*
 * alg.c -- the registry of algorithm tables, argument checking, and small
 * helpers shared by the builders in daemon/alg/.
 *
 * alg_build() is the one entry point that validates arguments coming from
 * outside (sizes, ranks, datatype/operator pairs, overflow of P * size)
 * before a builder runs; builders may then trust them.
 *
 * Owns the algorithm tables (one per operation, rows in the other files of
 * daemon/alg/). The files of daemon/alg/ may call daemon/sched.h,
 * daemon/alg/topo.h, proto/collop.h and proto/reduce.h only: no I/O, no daemon
 * state.
 */
#include <stdint.h>
#include <string.h>

#include "colls.h"
#include "proto/collop.h"
#include "proto/dtype.h"
#include "proto/reduce.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"

/* The table of each operation that has its own (collop's algs). */
static const struct {
    const struct alg *t;
    const size_t *n;
} alg_tables[SCHED_OP_MAX] = {
    [SCHED_OP_BARRIER] = {alg_barrier_table, &alg_barrier_count},
    [SCHED_OP_BCAST] = {alg_bcast_table, &alg_bcast_count},
    [SCHED_OP_REDUCE] = {alg_reduce_table, &alg_reduce_count},
    [SCHED_OP_ALLREDUCE] = {alg_allreduce_table, &alg_allreduce_count},
    [SCHED_OP_GATHER] = {alg_gather_table, &alg_gather_count},
    [SCHED_OP_SCATTER] = {alg_scatter_table, &alg_scatter_count},
    [SCHED_OP_ALLGATHER] = {alg_allgather_table, &alg_allgather_count},
    [SCHED_OP_ALLTOALL] = {alg_alltoall_table, &alg_alltoall_count},
    [SCHED_OP_REDUCE_SCATTER] = {alg_reduce_scatter_table,
                                 &alg_reduce_scatter_count},
    [SCHED_OP_SCAN] = {alg_scan_table, &alg_scan_count},
};

const struct alg *
alg_table(int op, size_t *n)
{
    const struct collop *o = collop_get(op);

    if (o == NULL || alg_tables[o->algs].t == NULL) {
        *n = 0;
        return NULL;
    }
    *n = *alg_tables[o->algs].n;
    return alg_tables[o->algs].t;
}

const struct alg *
alg_find(int op, const char *name, int *index)
{
    size_t i, n;
    const struct alg *t = alg_table(op, &n);

    for (i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0) {
            if (index != NULL)
                *index = (int)i;
            return &t[i];
        }
    return NULL;
}

int
alg_usable(const struct alg *alg, const struct alg_args *a)
{
    if ((alg->flags & ALG_POW2) && (a->P & (a->P - 1)) != 0)
        return 0;
    if ((alg->flags & ALG_NO_V) && collop_is_vector(a->op))
        return 0;
    /* Every operator of colls.h is commutative; a future one that is not
       must be refused here for ALG_COMMUTATIVE rows. */
    if ((alg->flags & ALG_COMMUTATIVE) && collop_is_reduction(a->op) &&
        (a->rop < 0 || a->rop >= COLLS_OP_MAX))
        return 0;
    if (alg->applicable != NULL && !alg->applicable(a))
        return 0;
    return 1;
}

/* Checks that the P counts are whole items of esize bytes and that they
   (and their offsets) fit in size_t together. */
static int
alg_check_v(int P, const size_t *counts, const size_t *displs, size_t esize)
{
    size_t total = 0;
    int r;

    if (counts == NULL || displs == NULL)
        return COLLS_EINVAL;
    for (r = 0; r < P; r++) {
        if (total + counts[r] < total || displs[r] + counts[r] < displs[r] ||
            counts[r] % esize != 0)
            return COLLS_EINVAL;
        total += counts[r];
    }
    return 0;
}

/* Validates a (see alg_build). */
static int
alg_check(const struct alg_args *a)
{
    int rc;

    if (a->P < 1 || a->rank < 0 || a->rank >= a->P || a->root < 0 ||
        a->root >= a->P || a->op < 0 || a->op >= SCHED_OP_MAX)
        return COLLS_EINVAL;
    if (a->op != SCHED_OP_BARRIER && !dtype_valid(a->dtype))
        return COLLS_EDTYPE;
    if (collop_is_reduction(a->op) &&
        (rc = reduce_check(a->rop, a->dtype)) != 0)
        return rc;
    /* whole items everywhere: segments and chunks are cut on item
       boundaries so each can be translated or reduced on its own */
    if (a->op != SCHED_OP_BARRIER && a->size % dtype_size(a->dtype) != 0)
        return COLLS_EINVAL;
    if ((size_t)a->P > SIZE_MAX / 2 / (a->size ? a->size : 1))
        return COLLS_EINVAL;
    switch (a->op) {
    case SCHED_OP_GATHERV:
    case SCHED_OP_SCATTERV:
    case SCHED_OP_ALLGATHERV:
        return alg_check_v(a->P, a->counts, a->displs, dtype_size(a->dtype));
    case SCHED_OP_ALLTOALLV:
        if ((rc = alg_check_v(a->P, a->scounts, a->sdispls,
                              dtype_size(a->dtype))) != 0)
            return rc;
        return alg_check_v(a->P, a->rcounts, a->rdispls, dtype_size(a->dtype));
    default:
        return 0;
    }
}

double
alg_doubling_cost(const struct plogp *p, int P, size_t n, int bruck)
{
    double hops = 0.0, root = 0.0;
    int d;

    /* the path of first children, or the root's messages back to back
       (topo_plogp_tree); with gap = g the first */
    for (d = 1; d < P; d <<= 1) {
        size_t m = (size_t)(bruck && P - d < d ? P - d : d) * n;

        hops += p->L + topo_plogp_g(p, m);
        root += d == 1 ? p->L + topo_plogp_g(p, m) : topo_plogp_gap(p, m);
    }
    return hops > root ? hops : root;
}

double
alg_port_linear(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_plogp_port(p, P - 1, n);
}

double
alg_port_log(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_plogp_port(p, topo_ceil_log2(P), n);
}

double
alg_port_one(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_plogp_port(p, P > 1, n);
}

int
alg_senders_tree(int P)
{
    return P / 2;
}

int
alg_senders_chain(int P)
{
    return P - 1;
}

double
alg_port_chain_seg(const struct plogp *p, int P, size_t n, size_t seg)
{
    size_t segsz;

    (void)topo_nseg(n, seg, 1, &segsz);
    return P > 1 ? topo_plogp_segs_port(p, n, segsz) : 0.0;
}

double
alg_port_doubling(const struct plogp *p, int P, size_t n, size_t seg)
{
    double t = 0.0;
    int d;

    (void)seg;
    for (d = 1; d < P; d <<= 1)
        t += topo_plogp_rate(p, (size_t)(P - d < d ? P - d : d) * n);
    return t;
}

int
alg_build(const struct alg *alg, const struct alg_args *a, struct sched *s)
{
    int rc;

    sched_init(s, a->op, a->P > 0 ? a->P : 1, 0, a->dtype, a->rop);
    if ((rc = alg_check(a)) != 0)
        return rc;
    if (!alg_usable(alg, a))
        return COLLS_ENOTSUP;
    sched_init(s, a->op, a->P, a->rank, a->dtype, a->rop);
    rc = alg->build(s, a);
    if (rc == 0)
        return sched_finish(s);
    sched_free(s);
    return rc;
}

size_t
alg_esize(const struct alg_args *a)
{
    size_t e = a->op == SCHED_OP_BARRIER ? 1 : dtype_size(a->dtype);

    return e ? e : 1;
}

size_t
alg_blen(const struct alg_args *a, int r)
{
    return a->counts != NULL ? a->counts[r] : a->size;
}

size_t
alg_boff(const struct alg_args *a, int r)
{
    return a->displs != NULL ? a->displs[r] : (size_t)r * a->size;
}

size_t
alg_btotal(const struct alg_args *a)
{
    size_t t = 0;
    int r;

    for (r = 0; r < a->P; r++)
        t += alg_blen(a, r);
    return t;
}

void
alg_xfer_blocks(struct sched *s, int kind, int peer, int buf,
                const struct alg_args *a, int lo, int cnt)
{
    int i = 0;

    while (i < cnt) {
        int b = (lo + i) % a->P;
        size_t off = alg_boff(a, b), len = alg_blen(a, b);

        for (i++; i < cnt; i++) {
            int nb = (lo + i) % a->P;

            if (alg_boff(a, nb) != off + len)
                break;
            len += alg_blen(a, nb);
        }
        if (kind == SCHED_SEND)
            sched_send(s, peer, buf, off, len);
        else
            sched_recv(s, peer, buf, off, len);
    }
}

void
alg_xfer_all(struct sched *s, int kind, int peer, const struct alg_args *a)
{
    if (a->op == SCHED_OP_ALLGATHER || a->op == SCHED_OP_ALLGATHERV)
        alg_xfer_blocks(s, kind, peer, SCHED_BUF_RECV, a, 0, a->P);
    else if (kind == SCHED_SEND)
        sched_send(s, peer, SCHED_BUF_RECV, 0, a->size);
    else
        sched_recv(s, peer, SCHED_BUF_RECV, 0, a->size);
}

size_t
alg_seg(const struct alg_args *a)
{
    return a->seg ? a->seg : ALG_DEFAULT_SEG;
}
