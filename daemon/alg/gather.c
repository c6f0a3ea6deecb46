/*
 * gather.c -- gather[v] and scatter[v] algorithms.  Blocks are laid out by
 * alg_blen/alg_boff (counts/displs for the v-variants).
 *
 *   gather flat      everyone sends to the root     L + (P-1) g(n)
 *   gather binomial  binomial tree; each node forwards its subtree's blocks
 *                    sum_{k<ceil(log2 P)} (L + g(2^k n))
 *   scatter flat     root sends to everyone         L + (P-1) g(n)
 *   scatter binomial the reverse of gather binomial, same cost
 *
 * The binomial versions keep a subtree's blocks contiguous in virtual-rank
 * order in a scratch buffer (offset pre[u] for virtual rank u); the root
 * copies between that order and the caller's layout.
 */
#include <stdlib.h>

#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"

#define S SCHED_BUF_SEND
#define R SCHED_BUF_RECV

/* pre[u] = bytes of virtual ranks 0..u-1; P + 1 entries; NULL: no memory */
static size_t *
gather_prefix(const struct alg_args *a)
{
    size_t *pre = malloc(((size_t)a->P + 1) * sizeof(*pre));
    int u;

    if (pre == NULL)
        return NULL;
    pre[0] = 0;
    for (u = 0; u < a->P; u++)
        pre[u + 1] = pre[u] + alg_blen(a, topo_rank(u, a->root, a->P));
    return pre;
}

static int
alg_gather_flat(struct sched *s, const struct alg_args *a)
{
    int r;

    if (a->rank != a->root) {
        sched_send(s, a->root, S, 0, alg_blen(a, a->rank));
        return 0;
    }
    for (r = 0; r < a->P; r++)
        if (r != a->root)
            sched_recv(s, r, R, alg_boff(a, r), alg_blen(a, r));
    sched_copy(s, R, alg_boff(a, a->root), S, 0, alg_blen(a, a->root));
    return 0;
}

static double
cost_gather_flat(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return p->L + (P - 1) * topo_plogp_g(p, n);
}

int
alg_gather_binomial(struct sched *s, const struct alg_args *a)
{
    int P = a->P, v = topo_vrank(a->rank, a->root, P), ch[32], i, nch, u;
    int sz = topo_binomial_size(v, P), t = -1;
    size_t *pre = gather_prefix(a), base;

    if (pre == NULL)
        return COLLS_ENOMEM;
    base = pre[v];
    nch = topo_binomial_children(v, P, ch);
    if (v > 0 || nch > 0)
        t = sched_tmp(s, pre[v + sz] - base);
    if (v > 0)
        sched_copy(s, t, 0, S, 0, alg_blen(a, a->rank));
    else
        sched_copy(s, R, alg_boff(a, a->rank), S, 0, alg_blen(a, a->rank));
    for (i = 0; i < nch; i++) {
        int c = ch[i], csz = topo_binomial_size(c, P);

        sched_recv(s, topo_rank(c, a->root, P), t, pre[c] - base,
                   pre[c + csz] - pre[c]);
    }
    sched_round(s);
    if (v > 0) {
        sched_send(s, topo_rank(topo_binomial_parent(v), a->root, P), t, 0,
                   pre[v + sz] - base);
    } else {
        for (u = 1; u < P; u++) {
            int r = topo_rank(u, a->root, P);

            sched_copy(s, R, alg_boff(a, r), t, pre[u], alg_blen(a, r));
        }
    }
    free(pre);
    return 0;
}

/* sum over levels k of L + g(2^k n): the subtree sizes a root child sends */
static double
cost_gather_binomial(const struct plogp *p, int P, size_t n, size_t seg)
{
    double t = 0.0;
    int k;

    (void)seg;
    for (k = 0; (1 << k) < P; k++)
        t += p->L + topo_plogp_g(p, ((size_t)1 << k) * n);
    return t;
}

static int
alg_scatter_flat(struct sched *s, const struct alg_args *a)
{
    int r;

    if (a->rank != a->root) {
        sched_recv(s, a->root, R, 0, alg_blen(a, a->rank));
        return 0;
    }
    for (r = 0; r < a->P; r++)
        if (r != a->root)
            sched_send(s, r, S, alg_boff(a, r), alg_blen(a, r));
    sched_copy(s, R, 0, S, alg_boff(a, a->root), alg_blen(a, a->root));
    return 0;
}

static int
alg_scatter_binomial(struct sched *s, const struct alg_args *a)
{
    int P = a->P, v = topo_vrank(a->rank, a->root, P), ch[32], i, nch, u;
    int sz = topo_binomial_size(v, P), t = -1;
    size_t *pre = gather_prefix(a), base;

    if (pre == NULL)
        return COLLS_ENOMEM;
    base = pre[v];
    nch = topo_binomial_children(v, P, ch);
    if (v > 0 || nch > 0)
        t = sched_tmp(s, pre[v + sz] - base);
    if (v == 0) {
        for (u = 1; u < P; u++) {
            int r = topo_rank(u, a->root, P);

            sched_copy(s, t, pre[u], S, alg_boff(a, r), alg_blen(a, r));
        }
        sched_copy(s, R, 0, S, alg_boff(a, a->rank), alg_blen(a, a->rank));
    } else {
        sched_recv(s, topo_rank(topo_binomial_parent(v), a->root, P), t, 0,
                   pre[v + sz] - base);
    }
    sched_round(s);
    for (i = nch - 1; i >= 0; i--) {
        int c = ch[i], csz = topo_binomial_size(c, P);

        sched_send(s, topo_rank(c, a->root, P), t, pre[c] - base,
                   pre[c + csz] - pre[c]);
    }
    if (v > 0)
        sched_copy(s, R, 0, t, 0, alg_blen(a, a->rank));
    free(pre);
    return 0;
}

const struct alg alg_gather_table[] = {
    {"flat", alg_gather_flat, cost_gather_flat, 0, NULL},
    {"binomial", alg_gather_binomial, cost_gather_binomial, 0, NULL},
};
const size_t alg_gather_count =
    sizeof(alg_gather_table) / sizeof(alg_gather_table[0]);

const struct alg alg_scatter_table[] = {
    {"flat", alg_scatter_flat, cost_gather_flat, 0, NULL},
    {"binomial", alg_scatter_binomial, cost_gather_binomial, 0, NULL},
};
const size_t alg_scatter_count =
    sizeof(alg_scatter_table) / sizeof(alg_scatter_table[0]);
