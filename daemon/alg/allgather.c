/*
 * allgather.c -- allgather[v] algorithms.  SEND holds the own block;
 * RECV gets every rank's block at alg_boff (displs for allgatherv).
 *
 *   butterfly   recursive doubling over pof2 new ranks; an even rank
 *               r < 2 rem first hands its block to r + 1 and gets
 *               everything back at the end
 *               sum_k (L + g(2^k n)) + 2 [P != pof2] (L + g(P n))
 *   bruck       ceil(log2 P) steps; step k sends min(2^k, P - 2^k) blocks
 *               to r - 2^k       sum_k (L + g(min(2^k, P-2^k) n))
 *   ring        (P-1) (L + g(n))
 *   tournament  binomial gather to rank 0 + binomial bcast of all blocks
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

/* Real ranks [*lo, *lo + *cnt) of new ranks [b, b + m) (see alg_halving). */
static void
allgather_window(int b, int m, int rem, int *lo, int *cnt)
{
    int last = b + m - 1;
    int first = b < rem ? 2 * b : b + rem;
    int end = last < rem ? 2 * last + 1 : last + rem;

    *lo = first;
    *cnt = end - first + 1;
}

static int
alg_allgather_butterfly(struct sched *s, const struct alg_args *a)
{
    int P = a->P, r = a->rank, pof2 = topo_pof2(P), rem = P - pof2, nr;
    int mask, lo, cnt;

    sched_copy(s, R, alg_boff(a, r), S, 0, alg_blen(a, r));
    if (r < 2 * rem && r % 2 == 0) {
        sched_send(s, r + 1, S, 0, alg_blen(a, r));
        sched_round(s);
        alg_xfer_blocks(s, SCHED_RECV, r + 1, R, a, r + 1, P - 1);
        return 0;
    }
    if (r < 2 * rem) {
        sched_recv(s, r - 1, R, alg_boff(a, r - 1), alg_blen(a, r - 1));
        nr = r / 2;
    } else {
        nr = r - rem;
    }
    sched_round(s);
    for (mask = 1; mask < pof2; mask <<= 1) {
        int base = nr & ~(mask - 1), peer = alg_halving_rank(nr ^ mask, rem);

        allgather_window(base, mask, rem, &lo, &cnt);
        alg_xfer_blocks(s, SCHED_SEND, peer, R, a, lo, cnt);
        allgather_window(base ^ mask, mask, rem, &lo, &cnt);
        alg_xfer_blocks(s, SCHED_RECV, peer, R, a, lo, cnt);
        sched_round(s);
    }
    if (r < 2 * rem)
        alg_xfer_blocks(s, SCHED_SEND, r - 1, R, a, r, P - 1);
    return 0;
}

static double
cost_allgather_butterfly(const struct plogp *p, int P, size_t n, size_t seg)
{
    int pof2 = topo_pof2(P), k;
    double t = 0.0;

    (void)seg;
    for (k = 1; k < pof2; k <<= 1)
        t += p->L + topo_plogp_g(p, (size_t)k * n);
    if (P != pof2)
        t += 2 * p->L + topo_plogp_g(p, n) + topo_plogp_g(p, (size_t)P * n);
    return t;
}

/*
 * Bruck: scratch position j holds block (r + j) mod P at tpre[j].  In the
 * step of distance d, the first min(d, P - d) positions go to r - d and
 * positions d .. come from r + d; finally blocks are copied into place.
 */
static int
alg_allgather_bruck(struct sched *s, const struct alg_args *a)
{
    int P = a->P, r = a->rank, d, j, t;
    size_t *tpre = malloc(((size_t)P + 1) * sizeof(*tpre));

    if (tpre == NULL)
        return COLLS_ENOMEM;
    tpre[0] = 0;
    for (j = 0; j < P; j++)
        tpre[j + 1] = tpre[j] + alg_blen(a, (r + j) % P);
    t = sched_tmp(s, tpre[P]);
    sched_copy(s, t, 0, S, 0, alg_blen(a, r));
    sched_round(s);
    for (d = 1; d < P; d <<= 1) {
        int cnt = d < P - d ? d : P - d;

        sched_send(s, (r - d + P) % P, t, 0, tpre[cnt]);
        sched_recv(s, (r + d) % P, t, tpre[d], tpre[d + cnt] - tpre[d]);
        sched_round(s);
    }
    for (j = 0; j < P; j++)
        sched_copy(s, R, alg_boff(a, (r + j) % P), t, tpre[j],
                   alg_blen(a, (r + j) % P));
    free(tpre);
    return 0;
}

static double
cost_allgather_bruck(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return alg_doubling_cost(p, P, n, 1);
}

static int
alg_allgather_ring(struct sched *s, const struct alg_args *a)
{
    int P = a->P, r = a->rank, i;

    sched_copy(s, R, alg_boff(a, r), S, 0, alg_blen(a, r));
    sched_round(s);
    for (i = 0; i < P - 1; i++) {
        alg_xfer_blocks(s, SCHED_SEND, (r + 1) % P, R, a, (r - i + P) % P, 1);
        alg_xfer_blocks(s, SCHED_RECV, (r - 1 + P) % P, R, a,
                        (r - i - 1 + 2 * P) % P, 1);
        sched_round(s);
    }
    return 0;
}

static double
cost_allgather_ring(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return (P - 1) * (p->L + topo_plogp_g(p, n));
}

/* Tournament: binomial gather to rank 0, binomial bcast of all blocks. */
static int
alg_allgather_tournament(struct sched *s, const struct alg_args *a)
{
    struct alg_args b = *a;
    int rc;

    b.root = 0;
    if ((rc = alg_gather_binomial(s, &b)) != 0)
        return rc;
    sched_round(s);
    return alg_bcast_binomial(s, &b);
}

static double
cost_allgather_tournament(const struct plogp *p, int P, size_t n, size_t seg)
{
    double t = 0.0;
    int k;

    (void)seg;
    for (k = 0; (1 << k) < P; k++)
        t += 2 * p->L + topo_plogp_g(p, ((size_t)1 << k) * n) +
             topo_plogp_g(p, (size_t)P * n);
    return t;
}

/* ---- the busiest port of each row (struct alg.port) ---- */

/* new rank 0 (real ranks 0 and 1 folded) sends the most: the blocks of
   new ranks [0, 2^i) in step i, then P - 1 blocks to its partner */
static double
port_allgather_butterfly(const struct plogp *p, int P, size_t n, size_t seg)
{
    int pof2 = topo_pof2(P), rem = P - pof2, k, lo, cnt;
    double t = 0.0;

    (void)seg;
    for (k = 1; k < pof2; k <<= 1) {
        allgather_window(0, k, rem, &lo, &cnt);
        t += topo_plogp_rate(p, (size_t)cnt * n);
    }
    if (rem > 0)
        t += topo_plogp_rate(p, (size_t)(P - 1) * n);
    return t;
}

/* the root sends every block to each of its children */
static double
port_allgather_tournament(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_plogp_port(p, topo_ceil_log2(P), (size_t)P * n);
}

const struct alg alg_allgather_table[] = {
    {"butterfly", alg_allgather_butterfly, cost_allgather_butterfly,
     ALG_ALLPAIRS, NULL,
     "sum(i = 0..log2 p2 - 1) (L + g(2^i n)) + [P != p2] (2 L + g(n) + g(P "
     "n))",
     port_allgather_butterfly,
     "sum(i = 0..log2 p2 - 1) gap(c_i n) + [P != p2] gap((P-1) n), c_i = ranks "
     "folded into new ranks 0..2^i - 1"},
    {"bruck", alg_allgather_bruck, cost_allgather_bruck, ALG_ALLPAIRS, NULL,
     "sum(d = 1, 2, 4, .. < P) (L + g(min(d, P-d) n))", alg_port_doubling,
     "sum(d = 1, 2, 4, .. < P) gap(min(d, P-d) n)"},
    {"ring", alg_allgather_ring, cost_allgather_ring, ALG_ALLPAIRS, NULL,
     "(P-1) (L + g(n))", alg_port_linear, "(P-1) gap(n)"},
    {"tournament", alg_allgather_tournament, cost_allgather_tournament,
     ALG_OVERLAP, NULL, "sum(i = 0..lgP - 1) (2 L + g(2^i n) + g(P n))",
     port_allgather_tournament, "lgP gap(P n)", alg_senders_tree},
};
const size_t alg_allgather_count =
    sizeof(alg_allgather_table) / sizeof(alg_allgather_table[0]);
