/*
 * bcast.c -- broadcast algorithms.  Data lives in SCHED_BUF_RECV: the
 * root's on entry, everyone's on exit.  Trees use virtual ranks (root 0).
 * k = ceil(n / seg) segments for the segmented ones.
 *
 *   flat              root sends to everyone        L + (P-1) g(n)
 *   chain             v -> v+1                      (P-1) (L + g(n))
 *   chain_seg         pipelined chain               (P-1+k-1) (L + g(n/k))
 *   binary            heap-ordered binary tree      max over ranks v of
 *                                                   depth(v) (L + g(n)) +
 *                                                   right(v) gap(n)
 *   binomial          binomial tree                 ceil(log2 P) (L + g(n))
 *   binomial_seg      pipelined binomial tree       ceil(log2 P) (L + g(s))
 *                                                   + (k-1) ceil(log2 P) g(s)
 *   scatter_allgather binomial scatter of P chunks, ring allgather
 *                     (van de Geijn)                ceil(log2 P) L + g(n)
 *                                                   + (P-1) (L + g(n/P))
 *
 * Owns its rows of the algorithm table; may call what daemon/alg/alg.c
 * says the files of daemon/alg/ may call.
 */
#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"

#define R SCHED_BUF_RECV

static int
alg_bcast_flat(struct sched *s, const struct alg_args *a)
{
    int r;

    if (a->rank != a->root) {
        alg_xfer_all(s, SCHED_RECV, a->root, a);
        return 0;
    }
    for (r = 1; r < a->P; r++)
        alg_xfer_all(s, SCHED_SEND, topo_rank(r, a->root, a->P), a);
    return 0;
}

static double
cost_bcast_flat(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_plogp_train(p, P - 1, n);
}

/*
 * Pipelined chain over virtual ranks.  With k segments, position v > 0
 * receives segment t from v-1 in round t and forwards segment t-1 to v+1
 * in the same round, so k + 1 rounds; the root sends all k at once.
 * k = 1 is the plain chain.
 */
static int
bcast_chain_k(struct sched *s, const struct alg_args *a, size_t segsz, size_t k)
{
    int v = topo_vrank(a->rank, a->root, a->P);
    int prev = topo_rank(v - 1 + a->P, a->root, a->P);
    int next = topo_rank(v + 1, a->root, a->P);
    size_t t, off, len;

    if (a->P == 1)
        return 0;
    if (v == 0) {
        for (t = 0; t < k; t++) {
            topo_seg(a->size, segsz, t, &off, &len);
            sched_send(s, next, R, off, len);
        }
        return 0;
    }
    for (t = 0; t <= k; t++) {
        if (t < k) {
            topo_seg(a->size, segsz, t, &off, &len);
            sched_recv(s, prev, R, off, len);
        }
        if (t >= 1 && v < a->P - 1) {
            topo_seg(a->size, segsz, t - 1, &off, &len);
            sched_send(s, next, R, off, len);
        }
        sched_round(s);
    }
    return 0;
}

static int
alg_bcast_chain(struct sched *s, const struct alg_args *a)
{
    return bcast_chain_k(s, a, a->size ? a->size : 1, 1);
}

static double
cost_bcast_chain(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return (P - 1) * (p->L + topo_plogp_g(p, n));
}

static int
alg_bcast_chain_seg(struct sched *s, const struct alg_args *a)
{
    size_t segsz, k = topo_nseg(a->size, alg_seg(a), alg_esize(a), &segsz);

    return bcast_chain_k(s, a, segsz, k);
}

static double
cost_bcast_chain_seg(const struct plogp *p, int P, size_t n, size_t seg)
{
    size_t segsz, k = topo_nseg(n, seg, 1, &segsz);

    size_t m = n < segsz ? n : segsz;

    if (P == 1)
        return 0.0;
    return (P - 1) * (p->L + topo_plogp_g(p, m)) +
           (double)(k - 1) * topo_plogp_relay(p, P, m);
}

/* Binary tree: receive from the parent, then send to both children. */
static int
alg_bcast_binary(struct sched *s, const struct alg_args *a)
{
    int ch[2], i, n, v = topo_vrank(a->rank, a->root, a->P);

    if (v > 0) {
        alg_xfer_all(s, SCHED_RECV, topo_rank((v - 1) / 2, a->root, a->P), a);
        sched_round(s);
    }
    n = topo_binary_children(v, a->P, ch);
    for (i = 0; i < n; i++)
        alg_xfer_all(s, SCHED_SEND, topo_rank(ch[i], a->root, a->P), a);
    return 0;
}

/* The tree's critical path: v's message leaves its parent L + g(n) after
   the parent has the data, gap(n) later if v is the second child (even
   v); the last rank to have it sets the time.  A tree that is not full
   has fewer second children on its deepest paths than depth (L + g(n) +
   gap(n)) charges: at P = 4 rank 3, a first child, is the last. */
static double
cost_bcast_binary(const struct plogp *p, int P, size_t n, size_t seg)
{
    double hop = p->L + topo_plogp_g(p, n), gap = topo_plogp_gap(p, n);
    double worst = 0.0;
    int v, u;

    (void)seg;
    for (v = 1; v < P; v++) {
        double t = 0.0;

        for (u = v; u > 0; u = (u - 1) / 2)
            t += hop + (u % 2 == 0 ? gap : 0.0);
        if (t > worst)
            worst = t;
    }
    return worst;
}

/* Binomial tree: receive from the parent, then send to the children,
   largest subtree first.  Also the release of composite algorithms. */
int
alg_bcast_binomial(struct sched *s, const struct alg_args *a)
{
    int ch[32], i, n, v = topo_vrank(a->rank, a->root, a->P);

    if (v > 0) {
        alg_xfer_all(s, SCHED_RECV,
                     topo_rank(topo_binomial_parent(v), a->root, a->P), a);
        sched_round(s);
    }
    n = topo_binomial_children(v, a->P, ch);
    for (i = n - 1; i >= 0; i--)
        alg_xfer_all(s, SCHED_SEND, topo_rank(ch[i], a->root, a->P), a);
    return 0;
}

static double
cost_bcast_binomial(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_plogp_tree(p, topo_ceil_log2(P), n);
}

/* Pipelined binomial tree: segment t arrives in round t and is forwarded
   to every child in round t + 1. */
static int
alg_bcast_binomial_seg(struct sched *s, const struct alg_args *a)
{
    int ch[32], i, n, v = topo_vrank(a->rank, a->root, a->P);
    int parent = topo_rank(topo_binomial_parent(v), a->root, a->P);
    size_t segsz, k = topo_nseg(a->size, alg_seg(a), alg_esize(a), &segsz);
    size_t t, off, len;

    n = topo_binomial_children(v, a->P, ch);
    for (t = 0; t <= k; t++) {
        if (v > 0 && t < k) {
            topo_seg(a->size, segsz, t, &off, &len);
            sched_recv(s, parent, R, off, len);
        }
        /* The root has every segment: it sends segment t in round t. */
        if (v == 0 ? t < k : t >= 1) {
            topo_seg(a->size, segsz, v == 0 ? t : t - 1, &off, &len);
            for (i = n - 1; i >= 0; i--)
                sched_send(s, topo_rank(ch[i], a->root, a->P), R, off, len);
        }
        sched_round(s);
    }
    return 0;
}

static double
cost_bcast_binomial_seg(const struct plogp *p, int P, size_t n, size_t seg)
{
    size_t segsz, k = topo_nseg(n, seg, 1, &segsz);
    size_t m = n < segsz ? n : segsz;
    int d = topo_ceil_log2(P);

    return topo_plogp_tree(p, d, m) +
           (double)(k - 1) * d * topo_plogp_gap(p, m);
}

/*
 * Scatter + allgather: the vector is cut in P chunks, chunk u belonging to
 * virtual rank u.  A binomial scatter gives each virtual rank its subtree's
 * chunks; a ring then circulates the chunks (P - 1 rounds).
 */
static int
alg_bcast_scatter_allgather(struct sched *s, const struct alg_args *a)
{
    int P = a->P, v = topo_vrank(a->rank, a->root, P), ch[32], i, n;
    size_t off, len, off2, len2, e = alg_esize(a);

    if (P == 1)
        return 0;
    if (v > 0) {
        /* chunks [v, v + size(v)) are one contiguous range */
        topo_split(a->size, (size_t)P, e, (size_t)v, &off, &len);
        topo_split(a->size, (size_t)P, e,
                   (size_t)(v + topo_binomial_size(v, P) - 1), &off2, &len2);
        sched_recv(s, topo_rank(topo_binomial_parent(v), a->root, P), R, off,
                   off2 + len2 - off);
        sched_round(s);
    }
    n = topo_binomial_children(v, P, ch);
    for (i = n - 1; i >= 0; i--) {
        topo_split(a->size, (size_t)P, e, (size_t)ch[i], &off, &len);
        topo_split(a->size, (size_t)P, e,
                   (size_t)(ch[i] + topo_binomial_size(ch[i], P) - 1), &off2,
                   &len2);
        sched_send(s, topo_rank(ch[i], a->root, P), R, off, off2 + len2 - off);
    }
    sched_round(s);
    for (i = 0; i < P - 1; i++) {
        topo_split(a->size, (size_t)P, e, (size_t)((v - i + P) % P), &off,
                   &len);
        sched_send(s, topo_rank(v + 1, a->root, P), R, off, len);
        topo_split(a->size, (size_t)P, e, (size_t)((v - i - 1 + 2 * P) % P),
                   &off, &len);
        sched_recv(s, topo_rank(v - 1 + P, a->root, P), R, off, len);
        sched_round(s);
    }
    return 0;
}

static double
cost_bcast_scatter_allgather(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_ceil_log2(P) * p->L + topo_plogp_g(p, n - n / (size_t)P) +
           (P - 1) * (p->L + topo_plogp_g(p, n / (size_t)P));
}

/* ---- the busiest port of each row (struct alg.port) ---- */

static double
port_bcast_binary(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_plogp_port(p, P - 1 < 2 ? P - 1 : 2, n);
}

static double
port_bcast_binomial_seg(const struct plogp *p, int P, size_t n, size_t seg)
{
    return topo_ceil_log2(P) * alg_port_chain_seg(p, P, n, seg);
}

/* the root scatters its subtrees' chunks, then every rank passes P - 1
   chunks on */
static double
port_bcast_scatter_allgather(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return alg_port_doubling(p, P, n / (size_t)P, 0) +
           topo_plogp_port(p, P - 1, n / (size_t)P);
}

const struct alg alg_bcast_table[] = {
    {"flat", alg_bcast_flat, cost_bcast_flat, 0, NULL,
     "L + g(n) + (P-2) gap(n)", alg_port_linear, "(P-1) gap(n)"},
    {"chain", alg_bcast_chain, cost_bcast_chain, 0, NULL, "(P-1) (L + g(n))",
     alg_port_one, "gap(n)"},
    {"chain_seg", alg_bcast_chain_seg, cost_bcast_chain_seg,
     ALG_SEGMENTED | ALG_OVERLAP, NULL, "(P-1) (L + g(s)) + (k-1) relay(s)",
     alg_port_chain_seg, "k gap(s)", alg_senders_chain},
    {"binary", alg_bcast_binary, cost_bcast_binary, ALG_OVERLAP, NULL,
     "max(v < P) (depth(v) (L + g(n)) + right(v) gap(n))", port_bcast_binary,
     "2 gap(n)", alg_senders_tree},
    {"binomial", alg_bcast_binomial, cost_bcast_binomial, ALG_OVERLAP, NULL,
     "max(lgP (L + g(n)), L + g(n) + (lgP-1) gap(n))", alg_port_log,
     "lgP gap(n)", alg_senders_tree},
    {"binomial_seg", alg_bcast_binomial_seg, cost_bcast_binomial_seg,
     ALG_SEGMENTED | ALG_OVERLAP, NULL, "binomial(s) + (k-1) lgP gap(s)",
     port_bcast_binomial_seg, "lgP k gap(s)", alg_senders_tree},
    {"scatter_allgather", alg_bcast_scatter_allgather,
     cost_bcast_scatter_allgather, ALG_ALLPAIRS, NULL,
     "lgP L + g(n - n/P) + (P-1) (L + g(n/P))", port_bcast_scatter_allgather,
     "sum(d = 1, 2, 4, .. < P) gap(min(d, P-d) n/P) + (P-1) gap(n/P)"},
};
const size_t alg_bcast_count =
    sizeof(alg_bcast_table) / sizeof(alg_bcast_table[0]);
