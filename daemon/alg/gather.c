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
 *
 * Owns its rows of the algorithm table; may call what daemon/alg/alg.c
 * says the files of daemon/alg/ may call.
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

/* The binomial tree of gather and scatter at a->rank: its virtual rank
   v, subtree size sz, nch children ch, and scratch buffer t (-1: none) for
   its subtree's blocks in virtual rank order, at pre[u] - base. */
struct gather_tree {
    int v, sz, nch, t;
    int ch[32];
    size_t *pre, base; /* pre: gather_prefix, freed by the caller */
};

/* Fills g for a->rank; 0 or COLLS_ENOMEM. */
static int
gather_tree(struct sched *s, const struct alg_args *a, struct gather_tree *g)
{
    g->v = topo_vrank(a->rank, a->root, a->P);
    g->sz = topo_binomial_size(g->v, a->P);
    g->t = -1;
    g->pre = gather_prefix(a);
    if (g->pre == NULL)
        return COLLS_ENOMEM;
    g->base = g->pre[g->v];
    g->nch = topo_binomial_children(g->v, a->P, g->ch);
    if (g->v > 0 || g->nch > 0)
        g->t = sched_tmp(s, g->pre[g->v + g->sz] - g->base);
    return 0;
}

/* Binomial gather: each rank's subtree's blocks, gathered from its
   children, go up to its parent; the root unpacks them. */
static void
gather_up(struct sched *s, const struct alg_args *a,
          const struct gather_tree *b)
{
    int P = a->P, i, u;

    if (b->v > 0)
        sched_copy(s, b->t, 0, S, 0, alg_blen(a, a->rank));
    else
        sched_copy(s, R, alg_boff(a, a->rank), S, 0, alg_blen(a, a->rank));
    for (i = 0; i < b->nch; i++) {
        int c = b->ch[i], csz = topo_binomial_size(c, P);

        sched_recv(s, topo_rank(c, a->root, P), b->t, b->pre[c] - b->base,
                   b->pre[c + csz] - b->pre[c]);
    }
    sched_round(s);
    if (b->v > 0) {
        sched_send(s, topo_rank(topo_binomial_parent(b->v), a->root, P), b->t,
                   0, b->pre[b->v + b->sz] - b->base);
    } else {
        for (u = 1; u < P; u++) {
            int r = topo_rank(u, a->root, P);

            sched_copy(s, R, alg_boff(a, r), b->t, b->pre[u], alg_blen(a, r));
        }
    }
}

/* Binomial scatter: the mirror image; the root packs, each rank passes
   its children's subtrees down (largest last) and keeps its block. */
static void
scatter_down(struct sched *s, const struct alg_args *a,
             const struct gather_tree *b)
{
    int P = a->P, i, u;

    if (b->v == 0) {
        for (u = 1; u < P; u++) {
            int r = topo_rank(u, a->root, P);

            sched_copy(s, b->t, b->pre[u], S, alg_boff(a, r), alg_blen(a, r));
        }
        sched_copy(s, R, 0, S, alg_boff(a, a->rank), alg_blen(a, a->rank));
    } else {
        sched_recv(s, topo_rank(topo_binomial_parent(b->v), a->root, P), b->t,
                   0, b->pre[b->v + b->sz] - b->base);
    }
    sched_round(s);
    for (i = b->nch - 1; i >= 0; i--) {
        int c = b->ch[i], csz = topo_binomial_size(c, P);

        sched_send(s, topo_rank(c, a->root, P), b->t, b->pre[c] - b->base,
                   b->pre[c + csz] - b->pre[c]);
    }
    if (b->v > 0)
        sched_copy(s, R, 0, b->t, 0, alg_blen(a, a->rank));
}

/* Binomial gather (gather 1) or scatter (0) of the blocks. */
static int
gather_binomial(struct sched *s, const struct alg_args *a, int gather)
{
    struct gather_tree b;

    if (gather_tree(s, a, &b) != 0)
        return COLLS_ENOMEM;
    if (gather)
        gather_up(s, a, &b);
    else
        scatter_down(s, a, &b);
    free(b.pre);
    return 0;
}

/*
 * Linear gather (kind SCHED_RECV at the root: blocks from everyone into
 * RECV) or scatter (SCHED_SEND at the root: blocks of SEND to everyone);
 * the root copies its own block.
 */
static int
alg_linear(struct sched *s, const struct alg_args *a, int kind)
{
    int r, gather = kind == SCHED_RECV;

    if (a->rank != a->root) {
        if (gather)
            sched_send(s, a->root, S, 0, alg_blen(a, a->rank));
        else
            sched_recv(s, a->root, R, 0, alg_blen(a, a->rank));
        return 0;
    }
    for (r = 0; r < a->P; r++)
        if (r != a->root)
            (gather ? sched_recv : sched_send)(s, r, gather ? R : S,
                                               alg_boff(a, r), alg_blen(a, r));
    sched_copy(s, R, gather ? alg_boff(a, a->root) : 0, S,
               gather ? 0 : alg_boff(a, a->root), alg_blen(a, a->root));
    return 0;
}

static int
alg_gather_flat(struct sched *s, const struct alg_args *a)
{
    return alg_linear(s, a, SCHED_RECV);
}

static double
cost_gather_flat(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_plogp_train(p, P - 1, n);
}

int
alg_gather_binomial(struct sched *s, const struct alg_args *a)
{
    return gather_binomial(s, a, 1);
}

/* the subtree sizes 2^k n the root sends or receives, one per level
   (alg_doubling_cost) */
static double
cost_gather_binomial(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return alg_doubling_cost(p, P, n, 0);
}

static int
alg_scatter_flat(struct sched *s, const struct alg_args *a)
{
    return alg_linear(s, a, SCHED_SEND);
}

static int
alg_scatter_binomial(struct sched *s, const struct alg_args *a)
{
    return gather_binomial(s, a, 0);
}

const struct alg alg_gather_table[] = {
    {"flat", alg_gather_flat, cost_gather_flat, 0, NULL,
     "L + g(n) + (P-2) gap(n)", alg_port_linear, "(P-1) gap(n)"},
    {"binomial", alg_gather_binomial, cost_gather_binomial, ALG_OVERLAP, NULL,
     "max(sum(d = 1, 2, 4, .. < P) (L + g(d n)), L + g(n) + sum(d = 2, 4, .. "
     "< P) gap(d n))",
     alg_port_doubling, "sum(d = 1, 2, 4, .. < P) gap(min(d, P-d) n)",
     alg_senders_tree},
};
const size_t alg_gather_count =
    sizeof(alg_gather_table) / sizeof(alg_gather_table[0]);

const struct alg alg_scatter_table[] = {
    {"flat", alg_scatter_flat, cost_gather_flat, 0, NULL,
     "L + g(n) + (P-2) gap(n)", alg_port_linear, "(P-1) gap(n)"},
    {"binomial", alg_scatter_binomial, cost_gather_binomial, ALG_OVERLAP, NULL,
     "max(sum(d = 1, 2, 4, .. < P) (L + g(d n)), L + g(n) + sum(d = 2, 4, .. "
     "< P) gap(d n))",
     alg_port_doubling, "sum(d = 1, 2, 4, .. < P) gap(min(d, P-d) n)",
     alg_senders_tree},
};
const size_t alg_scatter_count =
    sizeof(alg_scatter_table) / sizeof(alg_scatter_table[0]);
