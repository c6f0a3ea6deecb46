/*
 * hier.c -- the host-local phase of hierarchical collectives; see hier.h.
 *
 * The leader's buffers, per operation family (collop.h):
 *   reductions       SEND: the local members' inputs combined in rank
 *                    order (P blocks of n for reduce_scatter, else n);
 *   gather family    SEND: the local members' blocks, in rank order;
 *                    RECV: every host's blocks, in host order (cnt/dsp);
 *   scatter family   SEND (root's host): the root's input; RECV: this
 *                    host's blocks;
 *   alltoall[v]      SEND: for each host b, member i's block for b's
 *                    member j, i then j (at sd[b], sc[b] bytes); RECV: from
 *                    each host b, b's member k's block for each local
 *                    member i, k then i (at rd[b], rc[b] bytes) -- the
 *                    order b's leader packs in;
 *   bcast            RECV: the root's data (from the root's input on its
 *                    host);
 *   scan, exscan     SEND: the combined inputs; RECV: the exclusive prefix
 *                    of the hosts before this one.
 * Each side sums only its own members' alltoallv counts; a program whose
 * send and receive counts disagree makes the leaders' message lengths
 * disagree, which the executor rejects.
 *
 * Owns nothing (pure functions over the caller's buffers).  May call:
 * daemon/alg/topo.h, proto/reduce.h, proto/collop.h.
 */
#include <string.h>

#include "colls.h"
#include "daemon/hier.h"
#include "proto/collop.h"
#include "proto/reduce.h"

/* Rank of member i of host h. */
#define MEMBER(L, h, i) ((L)->H->members[(L)->H->start[(h)] + (i)])

int
hier_nlocal(const struct hier_layout *L)
{
    return topo_hier_nlocal(L->H, L->myhost);
}

/* Block bytes of rank r (gather family). */
static size_t
hier_blk(const struct hier_layout *L, int r)
{
    return L->vb != NULL ? L->vb[r] : L->n;
}

void
hier_blocks(struct hier_layout *L)
{
    int NH = L->H->nhosts, h, i;

    for (h = 0; h < NH; h++) {
        L->cnt[h] = 0;
        for (i = L->H->start[h]; i < L->H->start[h + 1]; i++)
            L->cnt[h] += hier_blk(L, L->H->members[i]);
        L->dsp[h] = h ? L->dsp[h - 1] + L->cnt[h - 1] : 0;
    }
}

/* alltoallv: sc/rc of each host from the local members' counts. */
static void
hier_a2av_hosts(struct hier_layout *L)
{
    size_t P = (size_t)L->P;
    int NH = L->H->nhosts, nl = hier_nlocal(L), b, i, j;

    for (b = 0; b < NH; b++) {
        int nb = topo_hier_nlocal(L->H, b);

        L->sc[b] = L->rc[b] = 0;
        for (i = 0; i < nl; i++)
            for (j = 0; j < nb; j++) {
                size_t r = (size_t)MEMBER(L, b, j);

                L->sc[b] += L->a2a[i][r];
                L->rc[b] += L->a2a[i][2 * P + r];
            }
    }
}

void
hier_sizes(struct hier_layout *L, size_t *lss, size_t *lrs)
{
    int NH = L->H->nhosts, h = L->myhost, nl = hier_nlocal(L), b;
    size_t so = 0, ro = 0, all = L->dsp[NH - 1] + L->cnt[NH - 1];
    const struct collop *o = collop_get(L->op);

    if (L->op == COLLS_COLL_ALLTOALLV) {
        hier_a2av_hosts(L);
    } else {
        for (b = 0; b < NH; b++) {
            L->sc[b] = L->cnt[h] * (size_t)topo_hier_nlocal(L->H, b);
            L->rc[b] = L->cnt[b] * (size_t)nl;
        }
    }
    for (b = 0; b < NH; b++) {
        L->sd[b] = so;
        so += L->sc[b];
        L->rd[b] = ro;
        ro += L->rc[b];
    }
    *lss = *lrs = 0;
    switch (o != NULL ? o->family : COLLOP_BARRIER) {
    case COLLOP_ONE_TO_ALL:
        if (L->op == COLLS_COLL_BCAST) {
            *lrs = L->n;
        } else {
            *lss = h == L->H->host[L->root] ? all : 0;
            *lrs = L->cnt[h];
        }
        break;
    case COLLOP_ALL_TO_ALL2:
        *lss = so;
        *lrs = ro;
        break;
    case COLLOP_BARRIER:
        break;
    default:
        if (o->reduction) {
            *lss = *lrs =
                L->op == COLLS_COLL_REDUCE_SCATTER ? (size_t)L->P * L->n : L->n;
        } else { /* gather family */
            *lss = L->cnt[h];
            *lrs = all;
        }
        break;
    }
}

/* alltoall[v]: packs the members' blocks for each host b at sd[b]. */
static void
hier_a2a_pack(const struct hier_layout *L, const uint8_t *const *in,
              uint8_t *ls)
{
    size_t P = (size_t)L->P, n = L->n;
    int NH = L->H->nhosts, nl = hier_nlocal(L), b, i, j;

    for (b = 0; b < NH; b++) {
        int nb = topo_hier_nlocal(L->H, b);
        size_t off = L->sd[b];

        for (i = 0; i < nl; i++)
            for (j = 0; j < nb; j++) {
                size_t r = (size_t)MEMBER(L, b, j);

                if (L->a2a != NULL) { /* alltoallv */
                    memcpy(ls + off, in[i] + L->a2a[i][P + r], L->a2a[i][r]);
                    off += L->a2a[i][r];
                } else {
                    memcpy(ls + off, in[i] + r * n, n);
                    off += n;
                }
            }
    }
}

int
hier_combine(const struct hier_layout *L, const uint8_t *const *in,
             const size_t *inlen, uint8_t *ls, uint8_t *lr)
{
    const struct collop *o = collop_get(L->op);
    int nl = hier_nlocal(L), i, rc;
    int here = L->myhost == L->H->host[L->root];
    size_t off = 0, lss, items;

    if (o == NULL || o->family == COLLOP_BARRIER)
        return 0;
    if (o->reduction) {
        lss = L->op == COLLS_COLL_REDUCE_SCATTER ? (size_t)L->P * L->n : L->n;
        items = L->op == COLLS_COLL_REDUCE_SCATTER ? (size_t)L->P * L->count
                                                   : L->count;
        memcpy(ls, in[0], lss);
        for (i = 1; i < nl; i++)
            if ((rc = reduce_apply(L->rop, L->dtype, ls, in[i], items)) != 0)
                return rc;
        return 0;
    }
    switch (o->family) {
    case COLLOP_ONE_TO_ALL: /* the root's input, on its host */
        if (here && L->op == COLLS_COLL_BCAST)
            memcpy(lr, in[L->H->local[L->root]], L->n);
        else if (here)
            memcpy(ls, in[L->H->local[L->root]],
                   L->dsp[L->H->nhosts - 1] + L->cnt[L->H->nhosts - 1]);
        break;
    case COLLOP_ALL_TO_ALL2:
        hier_a2a_pack(L, in, ls);
        break;
    default: /* gather family: the blocks in rank order */
        for (i = 0; i < nl; i++) {
            memcpy(ls + off, in[i], inlen[i]);
            off += inlen[i];
        }
        break;
    }
    return 0;
}

size_t
hier_scratch(const struct hier_layout *L)
{
    size_t P = (size_t)L->P, t, max = 0, j;
    int i;

    switch (L->op) {
    case COLLS_COLL_SCAN:
    case COLLS_COLL_EXSCAN:
        return L->n + 1;
    case COLLS_COLL_ALLTOALL:
        return P * L->n + 1;
    case COLLS_COLL_ALLTOALLV:
        for (i = 0; i < hier_nlocal(L); i++) {
            for (t = 0, j = 0; j < P; j++)
                t += L->a2a[i][2 * P + j];
            if (t > max)
                max = t;
        }
        return max + 1;
    default:
        return 0;
    }
}

/* alltoall[v]: member i's blocks from lr into out; their bytes. */
static size_t
hier_a2a_unpack(const struct hier_layout *L, int i, const uint8_t *lr,
                uint8_t *out)
{
    size_t P = (size_t)L->P, n = L->n, total = 0;
    int NH = L->H->nhosts, nl = hier_nlocal(L), b, i2, k;

    for (b = 0; b < NH; b++) {
        size_t off = L->rd[b];

        for (k = 0; k < topo_hier_nlocal(L->H, b); k++) {
            size_t src = (size_t)MEMBER(L, b, k);

            for (i2 = 0; i2 < nl; i2++) {
                size_t c = L->a2a != NULL ? L->a2a[i2][2 * P + src] : n;

                if (i2 == i) {
                    memcpy(out + (L->a2a != NULL ? L->a2a[i][3 * P + src]
                                                 : src * n),
                           lr + off, c);
                    total += c;
                }
                off += c;
            }
        }
    }
    return total;
}

/* scan and exscan: the running prefix in acc for member i. */
static int
hier_prefix(const struct hier_layout *L, int i, const uint8_t *lr,
            const uint8_t *const *in, uint8_t *acc, size_t *len)
{
    int first = L->myhost == 0, rc = 0;

    if (L->op == COLLS_COLL_EXSCAN) {
        /* acc: the hosts before, then members 0..i-1 */
        if (i == 0 && !first)
            memcpy(acc, lr, L->n);
        else if (i == 1 && first)
            memcpy(acc, in[0], L->n);
        else if (i > 0)
            rc = reduce_apply(L->rop, L->dtype, acc, in[i - 1], L->count);
        *len = i > 0 || !first ? L->n : 0;
        return rc;
    }
    if (i == 0 && first) {
        memcpy(acc, in[0], L->n);
    } else {
        if (i == 0)
            memcpy(acc, lr, L->n);
        rc = reduce_apply(L->rop, L->dtype, acc, in[i], L->count);
    }
    *len = L->n;
    return rc;
}

int
hier_result(const struct hier_layout *L, int i, const uint8_t *lr,
            const uint8_t *const *in, uint8_t *scratch, const uint8_t **data,
            size_t *len)
{
    int r = MEMBER(L, L->myhost, i), NH = L->H->nhosts, k;
    int isroot = r == L->root;
    size_t off = 0;

    *data = lr;
    *len = 0;
    switch (L->op) {
    case COLLS_COLL_BCAST:
        /* the root has its data: it is answered without (collectives.md,
           Result) */
        *len = isroot ? 0 : L->n;
        return 0;
    case COLLS_COLL_ALLREDUCE:
        *len = L->n;
        return 0;
    case COLLS_COLL_REDUCE:
        *len = isroot ? L->n : 0;
        return 0;
    case COLLS_COLL_GATHER:
    case COLLS_COLL_GATHERV:
        *len = isroot ? L->dsp[NH - 1] + L->cnt[NH - 1] : 0;
        return 0;
    case COLLS_COLL_ALLGATHER:
    case COLLS_COLL_ALLGATHERV:
        *len = L->dsp[NH - 1] + L->cnt[NH - 1];
        return 0;
    case COLLS_COLL_REDUCE_SCATTER:
        *data = lr + (size_t)r * L->n;
        *len = L->n;
        return 0;
    case COLLS_COLL_SCATTER:
    case COLLS_COLL_SCATTERV:
        for (k = 0; k < i; k++)
            off += hier_blk(L, MEMBER(L, L->myhost, k));
        *data = lr + off;
        *len = hier_blk(L, r);
        return 0;
    case COLLS_COLL_ALLTOALL:
    case COLLS_COLL_ALLTOALLV:
        *data = scratch;
        *len = hier_a2a_unpack(L, i, lr, scratch);
        return 0;
    case COLLS_COLL_SCAN:
    case COLLS_COLL_EXSCAN:
        *data = scratch;
        return hier_prefix(L, i, lr, in, scratch, len);
    default: /* barrier */
        *data = NULL;
        return 0;
    }
}
