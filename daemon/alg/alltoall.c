/*
 * alltoall.c -- alltoall[v] algorithms.
 *
 *   pairwise  step i (1..P-1): send to r + i, receive from r - i
 *             (P-1) (L + g(n))
 *   bruck     rotate, ceil(log2 P) steps exchanging the blocks whose index
 *             has bit k set with r +- 2^k, rotate back (regular only)
 *             sum_k (L + g(n * |{j < P: j & 2^k}|))
 *
 * Owns its rows of the algorithm table; may call what daemon/alg/alg.c
 * says the files of daemon/alg/ may call.
 */
#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"

#define S SCHED_BUF_SEND
#define R SCHED_BUF_RECV

/* Send block j: bytes and offset in SEND; receive block j: in RECV. */
static size_t
a2a_slen(const struct alg_args *a, int j)
{
    return a->scounts ? a->scounts[j] : a->size;
}

static size_t
a2a_soff(const struct alg_args *a, int j)
{
    return a->sdispls ? a->sdispls[j] : (size_t)j * a->size;
}

static size_t
a2a_rlen(const struct alg_args *a, int j)
{
    return a->rcounts ? a->rcounts[j] : a->size;
}

static size_t
a2a_roff(const struct alg_args *a, int j)
{
    return a->rdispls ? a->rdispls[j] : (size_t)j * a->size;
}

static int
alg_alltoall_pairwise(struct sched *s, const struct alg_args *a)
{
    int P = a->P, r = a->rank, i;

    sched_copy(s, R, a2a_roff(a, r), S, a2a_soff(a, r), a2a_rlen(a, r));
    sched_round(s);
    for (i = 1; i < P; i++) {
        int to = (r + i) % P, from = (r - i + P) % P;

        sched_send(s, to, S, a2a_soff(a, to), a2a_slen(a, to));
        sched_recv(s, from, R, a2a_roff(a, from), a2a_rlen(a, from));
        sched_round(s);
    }
    return 0;
}

static double
cost_alltoall_pairwise(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return (P - 1) * (p->L + topo_plogp_g(p, n));
}

/*
 * Bruck: scratch A position j holds the block for rank r + j; a block
 * moves by 2^k for every bit k of its index, so after the steps position
 * j holds the block from rank r - j.  Receives land in B and are copied
 * into A in the next round, keeping each round free of hazards.
 */
static int
alg_alltoall_bruck(struct sched *s, const struct alg_args *a)
{
    int P = a->P, r = a->rank, j, k;
    size_t n = a->size;
    int A = sched_tmp(s, (size_t)P * n), B = sched_tmp(s, (size_t)P * n);

    for (j = 0; j < P; j++)
        sched_copy(s, A, (size_t)j * n, S, (size_t)((r + j) % P) * n, n);
    sched_round(s);
    for (k = 1; k < P; k <<= 1) {
        for (j = k; j < P; j += 2 * k) {
            int cnt = j + k <= P ? k : P - j;

            sched_send(s, (r + k) % P, A, (size_t)j * n, (size_t)cnt * n);
            sched_recv(s, (r - k + P) % P, B, (size_t)j * n, (size_t)cnt * n);
        }
        sched_round(s);
        for (j = k; j < P; j += 2 * k) {
            int cnt = j + k <= P ? k : P - j;

            sched_copy(s, A, (size_t)j * n, B, (size_t)j * n, (size_t)cnt * n);
        }
        sched_round(s);
    }
    for (j = 0; j < P; j++)
        sched_copy(s, R, (size_t)((r - j + P) % P) * n, A, (size_t)j * n, n);
    return 0;
}

static double
cost_alltoall_bruck(const struct plogp *p, int P, size_t n, size_t seg)
{
    double t = 0.0;
    int k, j, cnt;

    (void)seg;
    for (k = 1; k < P; k <<= 1) {
        for (cnt = 0, j = 0; j < P; j++)
            cnt += (j & k) != 0;
        t += p->L + topo_plogp_g(p, (size_t)cnt * n);
    }
    return t;
}

/* ---- the busiest port of each row (struct alg.port) ---- */

/* a step sends each run of consecutive blocks with bit k set as one
   message */
static double
port_alltoall_bruck(const struct plogp *p, int P, size_t n, size_t seg)
{
    double t = 0.0;
    int k, j, run;

    (void)seg;
    for (k = 1; k < P; k <<= 1)
        for (run = 0, j = 0; j <= P; j++) {
            if (j < P && (j & k) != 0) {
                run++;
                continue;
            }
            if (run > 0)
                t += topo_plogp_rate(p, (size_t)run * n);
            run = 0;
        }
    return t;
}

const struct alg alg_alltoall_table[] = {
    {"pairwise", alg_alltoall_pairwise, cost_alltoall_pairwise, ALG_ALLPAIRS,
     NULL, "(P-1) (L + g(n))", alg_port_linear, "(P-1) gap(n)"},
    {"bruck", alg_alltoall_bruck, cost_alltoall_bruck, ALG_NO_V | ALG_ALLPAIRS,
     NULL, "sum(i = 0..lgP - 1) (L + g(c_i n)), c_i = ranks with bit i set",
     port_alltoall_bruck,
     "sum(i = 0..lgP - 1) sum(runs of blocks with bit i) gap(run n)"},
};
const size_t alg_alltoall_count =
    sizeof(alg_alltoall_table) / sizeof(alg_alltoall_table[0]);
