/*
 * scan.c -- scan and exscan algorithms (SEND n -> RECV n).  Both combine
 * in rank order (prefix of lower ranks on the left).  exscan leaves rank
 * 0's RECV untouched.
 *
 *   linear              r - 1 -> r -> r + 1     (P-1) (L + g(n) + gamma n)
 *   recursive_doubling  exchange partial results with r ^ 2^k
 *                       ceil(log2 P) (L + g(n) + 2 gamma n)
 *
 * Owns its rows of the algorithm table; may call what daemon/alg/alg.c
 * says the files of daemon/alg/ may call.
 */
#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"

#define S SCHED_BUF_SEND
#define R SCHED_BUF_RECV

static int
alg_scan_linear(struct sched *s, const struct alg_args *a)
{
    int r = a->rank, last = r == a->P - 1, ex = a->op == SCHED_OP_EXSCAN;
    size_t n = a->size;
    int t = sched_tmp(s, n);

    if (r == 0) {
        if (ex) {
            if (!last)
                sched_send(s, 1, S, 0, n);
            return 0;
        }
        sched_copy(s, R, 0, S, 0, n);
        sched_round(s);
        if (!last)
            sched_send(s, 1, R, 0, n);
        return 0;
    }
    if (ex) {
        /* R = prefix of ranks < r; pass R op own on */
        sched_recv(s, r - 1, R, 0, n);
        if (last)
            return 0;
        sched_copy(s, t, 0, S, 0, n);
        sched_round(s);
        sched_reduce(s, t, 0, R, 0, n, SCHED_F_SRC_FIRST);
        sched_round(s);
        sched_send(s, r + 1, t, 0, n);
        return 0;
    }
    sched_recv(s, r - 1, t, 0, n);
    sched_copy(s, R, 0, S, 0, n);
    sched_round(s);
    sched_reduce(s, R, 0, t, 0, n, SCHED_F_SRC_FIRST);
    sched_round(s);
    if (!last)
        sched_send(s, r + 1, R, 0, n);
    return 0;
}

static double
cost_scan_linear(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return (P - 1) * (p->L + topo_plogp_g(p, n) + p->gamma * (double)n);
}

/*
 * Recursive doubling (as MPICH's scan): A is the reduction of a block of
 * 2^k ranks around r; partners exchange A, the upper one adds the lower
 * one's A to its result.  Any P: a partner >= P is skipped.
 */
static int
alg_scan_recursive_doubling(struct sched *s, const struct alg_args *a)
{
    int r = a->rank, mask, ex = a->op == SCHED_OP_EXSCAN, have = !ex;
    size_t n = a->size;
    int A = sched_tmp(s, n), B = sched_tmp(s, n);

    sched_copy(s, A, 0, S, 0, n);
    if (!ex)
        sched_copy(s, R, 0, S, 0, n);
    sched_round(s);
    for (mask = 1; mask < a->P; mask <<= 1) {
        int peer = r ^ mask;

        if (peer >= a->P)
            continue;
        sched_send(s, peer, A, 0, n);
        sched_recv(s, peer, B, 0, n);
        sched_round(s);
        if (peer < r) {
            sched_reduce(s, A, 0, B, 0, n, SCHED_F_SRC_FIRST);
            if (have) {
                sched_reduce(s, R, 0, B, 0, n, SCHED_F_SRC_FIRST);
            } else {
                sched_copy(s, R, 0, B, 0, n);
                have = 1;
            }
        } else {
            sched_reduce(s, A, 0, B, 0, n, 0);
        }
        sched_round(s);
    }
    return 0;
}

static double
cost_scan_recursive_doubling(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_ceil_log2(P) *
           (p->L + topo_plogp_g(p, n) + 2.0 * p->gamma * (double)n);
}

const struct alg alg_scan_table[] = {
    {"linear", alg_scan_linear, cost_scan_linear, ALG_RANK_ORDER, NULL,
     "(P-1) (L + g(n) + gamma n)", alg_port_one, "gap(n)"},
    {"recursive_doubling", alg_scan_recursive_doubling,
     cost_scan_recursive_doubling, ALG_RANK_ORDER | ALG_ALLPAIRS, NULL,
     "lgP (L + g(n) + 2 gamma n)", alg_port_log, "lgP gap(n)"},
};
const size_t alg_scan_count =
    sizeof(alg_scan_table) / sizeof(alg_scan_table[0]);
