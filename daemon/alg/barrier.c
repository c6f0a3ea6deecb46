/*
 * barrier.c -- barrier algorithms.  Every message is empty; what matters
 * is that no rank leaves before every rank has arrived.
 *
 *   dissemination  ceil(log2 P) rounds; in round k rank r signals
 *                  r + 2^k and waits for r - 2^k (mod P).  Any P.
 *   butterfly      pairwise exchange with r ^ 2^k; power of two only.
 *   tournament     binomial combining tree to rank 0, binomial release.
 *   flat           everyone signals rank 0, which then releases everyone.
 *
 * Owns its rows of the algorithm table; may call what daemon/alg/alg.c
 * says the files of daemon/alg/ may call.
 */
#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"

/* Dissemination (Hensgen, Finkel, Manber 1988). */
static int
alg_barrier_dissemination(struct sched *s, const struct alg_args *a)
{
    int k, P = a->P, r = a->rank;

    for (k = 1; k < P; k <<= 1) {
        sched_send(s, (r + k) % P, SCHED_BUF_RECV, 0, 0);
        sched_recv(s, (r - k + P) % P, SCHED_BUF_RECV, 0, 0);
        sched_round(s);
    }
    return 0;
}

/* T = ceil(log2 P) * (L + g(0)) */
static double
cost_barrier_dissemination(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)n;
    (void)seg;
    return topo_ceil_log2(P) * (p->L + topo_plogp_g(p, 0));
}

/* Butterfly: exchange with the partner r ^ 2^k in every round. */
static int
alg_barrier_butterfly(struct sched *s, const struct alg_args *a)
{
    int k;

    for (k = 1; k < a->P; k <<= 1) {
        sched_send(s, a->rank ^ k, SCHED_BUF_RECV, 0, 0);
        sched_recv(s, a->rank ^ k, SCHED_BUF_RECV, 0, 0);
        sched_round(s);
    }
    return 0;
}

/* Tournament: arrival up a binomial tree, release down the same tree. */
static int
alg_barrier_tournament(struct sched *s, const struct alg_args *a)
{
    int ch[32], n, i, v = a->rank, parent = topo_binomial_parent(v);

    n = topo_binomial_children(v, a->P, ch);
    for (i = 0; i < n; i++)
        sched_recv(s, ch[i], SCHED_BUF_RECV, 0, 0);
    sched_round(s);
    if (parent >= 0) {
        sched_send(s, parent, SCHED_BUF_RECV, 0, 0);
        sched_round(s);
        sched_recv(s, parent, SCHED_BUF_RECV, 0, 0);
        sched_round(s);
    }
    for (i = n - 1; i >= 0; i--)
        sched_send(s, ch[i], SCHED_BUF_RECV, 0, 0);
    return 0;
}

/* T = 2 * ceil(log2 P) * (L + g(0)): one message per step */
static double
cost_barrier_tournament(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)n;
    (void)seg;
    return 2.0 * topo_ceil_log2(P) * (p->L + topo_plogp_g(p, 0));
}

/* Flat: P-1 arrivals at rank 0, then P-1 releases. */
static int
alg_barrier_flat(struct sched *s, const struct alg_args *a)
{
    int r;

    if (a->rank != 0) {
        sched_send(s, 0, SCHED_BUF_RECV, 0, 0);
        sched_round(s);
        sched_recv(s, 0, SCHED_BUF_RECV, 0, 0);
        return 0;
    }
    for (r = 1; r < a->P; r++)
        sched_recv(s, r, SCHED_BUF_RECV, 0, 0);
    sched_round(s);
    for (r = 1; r < a->P; r++)
        sched_send(s, r, SCHED_BUF_RECV, 0, 0);
    return 0;
}

/* T = 2 * (L + g(0) + (P - 2) * gap(0)): P - 1 messages back to back,
   in and out */
static double
cost_barrier_flat(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)n;
    (void)seg;
    return 2.0 * topo_plogp_train(p, P - 1, 0);
}

/* ---- the busiest port of each row (struct alg.port) ---- */

static double
port_barrier_log(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)n;
    (void)seg;
    return topo_plogp_port(p, topo_ceil_log2(P), 0);
}

static double
port_barrier_flat(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)n;
    (void)seg;
    return topo_plogp_port(p, P - 1, 0);
}

const struct alg alg_barrier_table[] = {
    {"dissemination", alg_barrier_dissemination, cost_barrier_dissemination,
     ALG_ALLPAIRS, NULL, "lgP (L + g(0))", port_barrier_log, "lgP gap(0)"},
    {"butterfly", alg_barrier_butterfly, cost_barrier_dissemination,
     ALG_POW2 | ALG_ALLPAIRS, NULL, "lgP (L + g(0))", port_barrier_log,
     "lgP gap(0)"},
    {"tournament", alg_barrier_tournament, cost_barrier_tournament, ALG_OVERLAP,
     NULL, "2 lgP (L + g(0))", port_barrier_log, "lgP gap(0)",
     alg_senders_tree},
    {"flat", alg_barrier_flat, cost_barrier_flat, 0, NULL,
     "2 (L + g(0) + (P-2) gap(0))", port_barrier_flat, "(P-1) gap(0)"},
};
const size_t alg_barrier_count =
    sizeof(alg_barrier_table) / sizeof(alg_barrier_table[0]);
