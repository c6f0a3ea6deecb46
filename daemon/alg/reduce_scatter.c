/*
 * reduce_scatter.c -- reduce_scatter algorithms (equal blocks: SEND holds
 * P blocks of n bytes, RECV gets block rank reduced over all ranks).
 *
 *   halving  Rabenseifner's recursive halving (alg_halving) on P n bytes;
 *            a new rank's chunk is the blocks of the real ranks it stands
 *            for; a folding partner gets its block at the end
 *            halving(P n) + [P != pof2] (L + g(n))
 *   ring     (P-1) (L + g(n) + gamma n)
 *
 * Owns its rows of the algorithm table; may call what daemon/alg/alg.c
 * says the files of daemon/alg/ may call.
 */
#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"

#define S SCHED_BUF_SEND
#define R SCHED_BUF_RECV

/* New rank c stands for real ranks 2c, 2c+1 (c < rem) or c + rem. */
static void
rs_chunk(const struct alg_args *a, int pof2, int c, size_t *off, size_t *len)
{
    int rem = a->P - pof2;
    int first = c < rem ? 2 * c : c + rem, nb = c < rem ? 2 : 1;

    *off = (size_t)first * a->size;
    *len = (size_t)nb * a->size;
}

static int
alg_reduce_scatter_halving(struct sched *s, const struct alg_args *a)
{
    int P = a->P, r = a->rank, rem = P - topo_pof2(P), nr;
    size_t n = a->size, total = (size_t)P * n;
    int A = sched_tmp(s, total), B = sched_tmp(s, total);

    nr = alg_halving(s, a, total, A, B, rs_chunk);
    if (nr < 0) {
        sched_recv(s, r + 1, R, 0, n);
        return 0;
    }
    if (r < 2 * rem)
        sched_send(s, r - 1, A, (size_t)(r - 1) * n, n);
    sched_copy(s, R, 0, A, (size_t)r * n, n);
    return 0;
}

static double
cost_reduce_scatter_halving(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return alg_halving_cost(p, P, (size_t)P * n) +
           (P != topo_pof2(P) ? p->L + topo_plogp_g(p, n) : 0.0);
}

/* Ring: step i sends the partial of block r-1-i to r+1 and adds r-1's
   partial of block r-2-i, so rank r ends with block r complete. */
static int
alg_reduce_scatter_ring(struct sched *s, const struct alg_args *a)
{
    int P = a->P, r = a->rank, i, next = (r + 1) % P, prev = (r - 1 + P) % P;
    size_t n = a->size, total = (size_t)P * n, off;
    int A = sched_tmp(s, total), B = sched_tmp(s, n);

    sched_copy(s, A, 0, S, 0, total);
    sched_round(s);
    for (i = 0; i < P - 1; i++) {
        sched_send(s, next, A, (size_t)((r - 1 - i + 2 * P) % P) * n, n);
        off = (size_t)((r - 2 - i + 2 * P) % P) * n;
        sched_recv(s, prev, B, 0, n);
        sched_round(s);
        sched_reduce(s, A, off, B, 0, n, 0);
        sched_round(s);
    }
    sched_copy(s, R, 0, A, (size_t)r * n, n);
    return 0;
}

static double
cost_reduce_scatter_ring(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return (P - 1) * (p->L + topo_plogp_g(p, n) + p->gamma * (double)n);
}

/* ---- the busiest port of each row (struct alg.port) ---- */

static double
port_reduce_scatter_halving(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return alg_halving_port(p, P, (size_t)P * n);
}

const struct alg alg_reduce_scatter_table[] = {
    {"halving", alg_reduce_scatter_halving, cost_reduce_scatter_halving,
     ALG_COMMUTATIVE | ALG_ALLPAIRS, NULL,
     "[P != p2] (2 L + g(P n) + gamma P n + g(n)) + sum(i = 1..log2 p2) (L + "
     "g(P n/2^i) + gamma P n/2^i)",
     port_reduce_scatter_halving,
     "[P != p2] gap(P n) + sum(i = 1..log2 p2) gap(P n/2^i)"},
    {"ring", alg_reduce_scatter_ring, cost_reduce_scatter_ring,
     ALG_COMMUTATIVE | ALG_ALLPAIRS, NULL, "(P-1) (L + g(n) + gamma n)",
     alg_port_linear, "(P-1) gap(n)"},
};
const size_t alg_reduce_scatter_count =
    sizeof(alg_reduce_scatter_table) / sizeof(alg_reduce_scatter_table[0]);
