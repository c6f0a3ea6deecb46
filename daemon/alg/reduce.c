/*
 * reduce.c -- reduce algorithms.  SEND (n bytes) on every rank, result in
 * the root's RECV.  Non-root ranks accumulate in scratch buffers.
 *
 *   flat          root receives everything, combines in rank order
 *                 L + (P-1) g(n) + (P-1) gamma n            RANK_ORDER
 *   binomial      binomial combining tree over virtual ranks
 *                 ceil(log2 P) (L + g(n) + gamma n)
 *   chain_seg     pipelined chain, k = ceil(n / seg) segments
 *                 (P-1+k-1) (L + g(s) + gamma s)
 *   rsag          reduce-scatter (recursive halving) + binomial gather
 *                 (Rabenseifner)   halving + sum_k (L + g(n / 2^k))
 *
 * Owns its rows of the algorithm table; may call what daemon/alg/alg.c
 * says the files of daemon/alg/ may call.
 */
#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"

#define S SCHED_BUF_SEND
#define R SCHED_BUF_RECV

/* Flat: one round of receives, then combine in rank order around the
   root's own contribution (x0 op (... op (x_root op ... x_{P-1}))). */
static int
alg_reduce_flat(struct sched *s, const struct alg_args *a)
{
    size_t n = a->size;
    int r, t;

    if (a->rank != a->root) {
        sched_send(s, a->root, S, 0, n);
        return 0;
    }
    t = sched_tmp(s, (size_t)(a->P - 1) * n);
    for (r = 0; r < a->P; r++)
        if (r != a->root)
            sched_recv(s, r, t, (size_t)(r < a->root ? r : r - 1) * n, n);
    sched_copy(s, R, 0, S, 0, n);
    sched_round(s);
    for (r = a->root - 1; r >= 0; r--) {
        sched_reduce(s, R, 0, t, (size_t)r * n, n, SCHED_F_SRC_FIRST);
        sched_round(s);
    }
    for (r = a->root + 1; r < a->P; r++) {
        sched_reduce(s, R, 0, t, (size_t)(r - 1) * n, n, 0);
        sched_round(s);
    }
    return 0;
}

static double
cost_reduce_flat(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_plogp_train(p, P - 1, n) + (P - 1) * p->gamma * (double)n;
}

/* Binomial: receive every child's partial result, combine them in virtual
   rank order after the own contribution, pass the result to the parent. */
int
alg_reduce_binomial(struct sched *s, const struct alg_args *a)
{
    int ch[32], i, nch, v = topo_vrank(a->rank, a->root, a->P);
    int acc = R, t = -1;
    size_t n = a->size;

    nch = topo_binomial_children(v, a->P, ch);
    if (v > 0)
        acc = sched_tmp(s, n);
    if (nch > 0)
        t = sched_tmp(s, (size_t)nch * n);
    sched_copy(s, acc, 0, S, 0, n);
    for (i = 0; i < nch; i++)
        sched_recv(s, topo_rank(ch[i], a->root, a->P), t, (size_t)i * n, n);
    sched_round(s);
    for (i = 0; i < nch; i++) {
        sched_reduce(s, acc, 0, t, (size_t)i * n, n, 0);
        sched_round(s);
    }
    if (v > 0)
        sched_send(s, topo_rank(topo_binomial_parent(v), a->root, a->P), acc, 0,
                   n);
    return 0;
}

static double
cost_reduce_binomial(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    int d = topo_ceil_log2(P);

    return topo_plogp_tree(p, d, n) + d * p->gamma * (double)n;
}

/*
 * Pipelined chain from virtual rank P-1 down to the root.  A middle rank
 * in round t receives segment t, combines segment t-1 (own value on the
 * left) and forwards segment t-2.
 */
static int
alg_reduce_chain_seg(struct sched *s, const struct alg_args *a)
{
    int P = a->P, v = topo_vrank(a->rank, a->root, P);
    int prev = topo_rank(v + 1, a->root, P),
        next = topo_rank(v - 1 + P, a->root, P);
    size_t segsz, k, t, off, len, n = a->size;
    int acc = R, tmp;

    k = topo_nseg(n, alg_seg(a), alg_esize(a), &segsz);
    if (P == 1) {
        sched_copy(s, R, 0, S, 0, n);
        return 0;
    }
    if (v == P - 1) {
        for (t = 0; t < k; t++) {
            topo_seg(n, segsz, t, &off, &len);
            sched_send(s, next, S, off, len);
        }
        return 0;
    }
    if (v > 0)
        acc = sched_tmp(s, n);
    tmp = sched_tmp(s, n);
    for (t = 0; t <= k + 1; t++) {
        if (t == 0)
            sched_copy(s, acc, 0, S, 0, n);
        if (t < k) {
            topo_seg(n, segsz, t, &off, &len);
            sched_recv(s, prev, tmp, off, len);
        }
        if (t >= 1 && t <= k) {
            topo_seg(n, segsz, t - 1, &off, &len);
            sched_reduce(s, acc, off, tmp, off, len, 0);
        }
        if (t >= 2 && v > 0) {
            topo_seg(n, segsz, t - 2, &off, &len);
            sched_send(s, next, acc, off, len);
        }
        sched_round(s);
    }
    return 0;
}

static double
cost_reduce_chain_seg(const struct plogp *p, int P, size_t n, size_t seg)
{
    size_t segsz, k = topo_nseg(n, seg, 1, &segsz);
    size_t m = n < segsz ? n : segsz;

    if (P == 1)
        return 0.0;
    return (P - 1) * (p->L + topo_plogp_g(p, m) + p->gamma * (double)m) +
           (double)(k - 1) * (topo_plogp_relay(p, P, m) + p->gamma * (double)m);
}

/* Chunk c of the vector: near-equal whole-item parts. */
static void
reduce_chunk(const struct alg_args *a, int pof2, int c, size_t *off,
             size_t *len)
{
    topo_split(a->size, (size_t)pof2, alg_esize(a), (size_t)c, off, len);
}

/*
 * Rabenseifner's reduce: recursive-halving reduce-scatter, then a binomial
 * gather of the chunks to new rank 0, which forwards the vector to the
 * root if the root is someone else.
 */
static int
alg_reduce_rsag(struct sched *s, const struct alg_args *a)
{
    int pof2 = topo_pof2(a->P), rem = a->P - pof2, nr, mask;
    int r0 = alg_halving_rank(0, rem);
    int acc = (a->rank == a->root && a->root == r0) ? R : sched_tmp(s, a->size);
    int tmp = sched_tmp(s, a->size);
    size_t off, len;

    nr = alg_halving(s, a, a->size, acc, tmp, reduce_chunk);
    if (nr >= 0) {
        /* receive the windows of the children, then send ours up */
        for (mask = 1; mask < pof2 && !(nr & mask); mask <<= 1) {
            alg_halving_window(a, pof2, nr + mask, nr + 2 * mask, reduce_chunk,
                               &off, &len);
            sched_recv(s, alg_halving_rank(nr + mask, rem), acc, off, len);
        }
        sched_round(s);
        if (nr > 0) {
            alg_halving_window(a, pof2, nr, nr + mask, reduce_chunk, &off,
                               &len);
            sched_send(s, alg_halving_rank(nr - mask, rem), acc, off, len);
        }
        sched_round(s);
    }
    if (a->root != r0) {
        if (a->rank == r0)
            sched_send(s, a->root, acc, 0, a->size);
        if (a->rank == a->root)
            sched_recv(s, r0, R, 0, a->size);
    }
    return 0;
}

static double
cost_reduce_rsag(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return alg_rsag_cost(p, P, n);
}

const struct alg alg_reduce_table[] = {
    {"flat", alg_reduce_flat, cost_reduce_flat, ALG_RANK_ORDER, NULL,
     "L + g(n) + (P-2) gap(n) + (P-1) gamma n", alg_port_linear,
     "(P-1) gap(n)"},
    {"binomial", alg_reduce_binomial, cost_reduce_binomial,
     ALG_COMMUTATIVE | ALG_OVERLAP, NULL,
     "max(lgP (L + g(n)), L + g(n) + (lgP-1) gap(n)) + lgP gamma n",
     alg_port_log, "lgP gap(n)", alg_senders_tree},
    {"chain_seg", alg_reduce_chain_seg, cost_reduce_chain_seg,
     ALG_SEGMENTED | ALG_COMMUTATIVE | ALG_OVERLAP, NULL,
     "(P-1) (L + g(s) + gamma s) + (k-1) (relay(s) + gamma s)",
     alg_port_chain_seg, "k gap(s)", alg_senders_chain},
    {"rsag", alg_reduce_rsag, cost_reduce_rsag, ALG_COMMUTATIVE | ALG_ALLPAIRS,
     NULL,
     "[P != p2] (L + g(n) + gamma n) + sum(i = 1..log2 p2) (2 L + 2 g(n/2^i) + "
     "gamma n/2^i)",
     alg_rsag_port, "[P != p2] gap(n) + 2 sum(i = 1..log2 p2) gap(n/2^i)"},
};
const size_t alg_reduce_count =
    sizeof(alg_reduce_table) / sizeof(alg_reduce_table[0]);
