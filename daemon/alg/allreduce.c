/*
 * allreduce.c -- allreduce algorithms, and the recursive-halving core that
 * Rabenseifner's algorithms share (alg_halving).  SEND n -> RECV n.
 * Every algorithm here gives bitwise the same result on every rank (see
 * alg.h); butterfly also combines in rank order.
 *
 *   butterfly    recursive doubling; ranks beyond the largest power of two
 *                pof2 fold into a partner first and get the result last
 *                (log2 pof2 + 2 [P != pof2]) (L + g(n) + gamma n)
 *   tournament   binomial reduce to rank 0 + binomial bcast
 *                ceil(log2 P) (2L + 2g(n) + gamma n)
 *   ring         ring reduce-scatter + ring allgather of P chunks
 *                2 (P-1) (L + g(n/P)) + (P-1) gamma n/P
 *   rabenseifner recursive-halving reduce-scatter + recursive-doubling
 *                allgather   halving + sum_k (L + g(n / 2^k)) + fold-back
 *
 * Owns its rows of the algorithm table; may call what daemon/alg/alg.c
 * says the files of daemon/alg/ may call.
 */
#include "colls.h"
#include "daemon/alg/alg.h"
#include "daemon/alg/topo.h"

#define S SCHED_BUF_SEND
#define R SCHED_BUF_RECV

int
alg_halving_rank(int nr, int rem)
{
    return nr < rem ? 2 * nr + 1 : nr + rem;
}

void
alg_halving_window(const struct alg_args *a, int pof2, int c0, int c1,
                   alg_chunk_fn chunk, size_t *off, size_t *len)
{
    size_t o1, l1;

    chunk(a, pof2, c0, off, len);
    chunk(a, pof2, c1 - 1, &o1, &l1);
    *len = o1 + l1 - *off;
}

/*
 * The fold's receiving side: odd r < 2 rem takes even r - 1's vector into
 * tmp and combines it into acc (rank order: r - 1's first); returns r's
 * new rank.  Closes the round.
 */
static int
alg_fold_in(struct sched *s, int r, int rem, int acc, int tmp, size_t total)
{
    int nr = r - rem;

    if (r < 2 * rem) {
        sched_recv(s, r - 1, tmp, 0, total);
        sched_round(s);
        sched_reduce(s, acc, 0, tmp, 0, total, SCHED_F_SRC_FIRST);
        nr = r / 2;
    }
    sched_round(s);
    return nr;
}

int
alg_halving(struct sched *s, const struct alg_args *a, size_t total, int acc,
            int tmp, alg_chunk_fn chunk)
{
    int pof2 = topo_pof2(a->P), rem = a->P - pof2, r = a->rank, nr;
    int c0 = 0, c1, mask;
    size_t koff, klen, soff, slen;

    /* pre-step: even r < 2 rem hands its vector to r + 1 */
    if (r < 2 * rem && r % 2 == 0) {
        sched_send(s, r + 1, S, 0, total);
        sched_round(s);
        return -1;
    }
    sched_copy(s, acc, 0, S, 0, total);
    nr = alg_fold_in(s, r, rem, acc, tmp, total);
    c1 = pof2;
    for (mask = pof2 / 2; mask >= 1; mask /= 2) {
        int lower = !(nr & mask), peer = alg_halving_rank(nr ^ mask, rem);
        int k0 = lower ? c0 : c0 + mask, s0 = lower ? c0 + mask : c0;

        alg_halving_window(a, pof2, k0, k0 + mask, chunk, &koff, &klen);
        alg_halving_window(a, pof2, s0, s0 + mask, chunk, &soff, &slen);
        sched_send(s, peer, acc, soff, slen);
        sched_recv(s, peer, tmp, koff, klen);
        sched_round(s);
        sched_reduce(s, acc, koff, tmp, koff, klen,
                     lower ? 0 : SCHED_F_SRC_FIRST);
        sched_round(s);
        c0 = k0;
        c1 = k0 + mask;
    }
    (void)c1;
    return nr;
}

double
alg_halving_cost(const struct plogp *p, int P, size_t total)
{
    int pof2 = topo_pof2(P), mask;
    double t = 0.0;

    if (P != pof2)
        t += p->L + topo_plogp_g(p, total) + p->gamma * (double)total;
    for (mask = pof2 / 2; mask >= 1; mask /= 2) {
        size_t m = total / (size_t)pof2 * (size_t)mask;

        t += p->L + topo_plogp_g(p, m) + p->gamma * (double)m;
    }
    return t;
}

double
alg_halving_port(const struct plogp *p, int P, size_t total)
{
    int pof2 = topo_pof2(P), mask;
    double t = P != pof2 ? topo_plogp_rate(p, total) : 0.0;

    for (mask = pof2 / 2; mask >= 1; mask /= 2)
        t += topo_plogp_rate(p, total / (size_t)pof2 * (size_t)mask);
    return t;
}

double
alg_rsag_port(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return 2.0 * alg_halving_port(p, P, n) -
           (P != topo_pof2(P) ? topo_plogp_rate(p, n) : 0.0);
}

double
alg_rsag_cost(const struct plogp *p, int P, size_t n)
{
    int pof2 = topo_pof2(P), mask;
    double t = alg_halving_cost(p, P, n);

    for (mask = pof2 / 2; mask >= 1; mask /= 2)
        t += p->L + topo_plogp_g(p, n / (size_t)pof2 * (size_t)mask);
    return t;
}

/*
 * Butterfly: after the fold, new ranks exchange their whole vector with
 * nr ^ mask for mask = 1, 2, 4, ...; both partners compute
 * (lower ranks' partial) op (upper ranks' partial), so they hold bitwise
 * the same value and the combination follows rank order.
 */
static int
alg_allreduce_butterfly(struct sched *s, const struct alg_args *a)
{
    int pof2 = topo_pof2(a->P), rem = a->P - pof2, r = a->rank, nr, mask;
    size_t n = a->size;
    int tmp = sched_tmp(s, n);

    sched_copy(s, R, 0, S, 0, n);
    if (r < 2 * rem && r % 2 == 0) {
        sched_send(s, r + 1, S, 0, n);
        sched_round(s);
        sched_recv(s, r + 1, R, 0, n);
        return 0;
    }
    nr = alg_fold_in(s, r, rem, R, tmp, n);
    for (mask = 1; mask < pof2; mask <<= 1) {
        int pnr = nr ^ mask, peer = alg_halving_rank(pnr, rem);

        sched_send(s, peer, R, 0, n);
        sched_recv(s, peer, tmp, 0, n);
        sched_round(s);
        sched_reduce(s, R, 0, tmp, 0, n, pnr < nr ? SCHED_F_SRC_FIRST : 0);
        sched_round(s);
    }
    if (r < 2 * rem)
        sched_send(s, r - 1, R, 0, n);
    return 0;
}

static double
cost_allreduce_butterfly(const struct plogp *p, int P, size_t n, size_t seg)
{
    int steps = topo_ceil_log2(topo_pof2(P)) + (P != topo_pof2(P) ? 2 : 0);

    (void)seg;
    return steps * (p->L + topo_plogp_g(p, n) + p->gamma * (double)n);
}

/* Tournament: binomial reduce to rank 0, then binomial bcast from it. */
static int
alg_allreduce_tournament(struct sched *s, const struct alg_args *a)
{
    struct alg_args b = *a;
    int rc;

    b.root = 0;
    b.op = SCHED_OP_REDUCE;
    if ((rc = alg_reduce_binomial(s, &b)) != 0)
        return rc;
    sched_round(s);
    b.op = SCHED_OP_BCAST;
    return alg_bcast_binomial(s, &b);
}

static double
cost_allreduce_tournament(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_ceil_log2(P) *
           (2.0 * (p->L + topo_plogp_g(p, n)) + p->gamma * (double)n);
}

/*
 * Ring: the vector is cut in P chunks.  Reduce-scatter: in step i rank r
 * sends its partial of chunk r-1-i to r+1 and adds r-1's partial of chunk
 * r-2-i; after P-1 steps it holds chunk r complete.  Allgather: chunk
 * r-i goes to r+1 in step i.
 */
static int
alg_allreduce_ring(struct sched *s, const struct alg_args *a)
{
    int P = a->P, r = a->rank, i, next = (r + 1) % P, prev = (r - 1 + P) % P;
    size_t n = a->size, e = alg_esize(a), off, len;
    int tmp = sched_tmp(s, n);

    sched_copy(s, R, 0, S, 0, n);
    sched_round(s);
    for (i = 0; i < P - 1; i++) {
        topo_split(n, (size_t)P, e, (size_t)((r - 1 - i + 2 * P) % P), &off,
                   &len);
        sched_send(s, next, R, off, len);
        topo_split(n, (size_t)P, e, (size_t)((r - 2 - i + 2 * P) % P), &off,
                   &len);
        sched_recv(s, prev, tmp, off, len);
        sched_round(s);
        sched_reduce(s, R, off, tmp, off, len, 0);
        sched_round(s);
    }
    for (i = 0; i < P - 1; i++) {
        topo_split(n, (size_t)P, e, (size_t)((r - i + P) % P), &off, &len);
        sched_send(s, next, R, off, len);
        topo_split(n, (size_t)P, e, (size_t)((r - i - 1 + P) % P), &off, &len);
        sched_recv(s, prev, R, off, len);
        sched_round(s);
    }
    return 0;
}

static double
cost_allreduce_ring(const struct plogp *p, int P, size_t n, size_t seg)
{
    size_t m = n / (size_t)P;

    (void)seg;
    return (P - 1) * (2.0 * (p->L + topo_plogp_g(p, m)) + p->gamma * (double)m);
}

static void
allreduce_chunk(const struct alg_args *a, int pof2, int c, size_t *off,
                size_t *len)
{
    topo_split(a->size, (size_t)pof2, alg_esize(a), (size_t)c, off, len);
}

/* Rabenseifner: halving reduce-scatter, recursive-doubling allgather of
   the chunks, then the folded ranks get the result from their partner. */
static int
alg_allreduce_rabenseifner(struct sched *s, const struct alg_args *a)
{
    int pof2 = topo_pof2(a->P), rem = a->P - pof2, r = a->rank, nr, mask;
    int tmp = sched_tmp(s, a->size);
    size_t off, len;

    nr = alg_halving(s, a, a->size, R, tmp, allreduce_chunk);
    if (nr < 0) {
        sched_recv(s, r + 1, R, 0, a->size);
        return 0;
    }
    for (mask = 1; mask < pof2; mask <<= 1) {
        int base = nr & ~(mask - 1), pbase = base ^ mask;
        int peer = alg_halving_rank(nr ^ mask, rem);

        alg_halving_window(a, pof2, base, base + mask, allreduce_chunk, &off,
                           &len);
        sched_send(s, peer, R, off, len);
        alg_halving_window(a, pof2, pbase, pbase + mask, allreduce_chunk, &off,
                           &len);
        sched_recv(s, peer, R, off, len);
        sched_round(s);
    }
    if (r < 2 * rem)
        sched_send(s, r - 1, R, 0, a->size);
    return 0;
}

static double
cost_allreduce_rabenseifner(const struct plogp *p, int P, size_t n, size_t seg)
{
    double t = alg_rsag_cost(p, P, n);

    (void)seg;
    if (P != topo_pof2(P))
        t += p->L + topo_plogp_g(p, n);
    return t;
}

/* ---- the busiest port of each row (struct alg.port) ---- */

static double
port_allreduce_butterfly(const struct plogp *p, int P, size_t n, size_t seg)
{
    int pof2 = topo_pof2(P);

    (void)seg;
    return topo_plogp_port(p, topo_ceil_log2(pof2) + (P != pof2), n);
}

static double
port_allreduce_ring(const struct plogp *p, int P, size_t n, size_t seg)
{
    (void)seg;
    return topo_plogp_port(p, 2 * (P - 1), n / (size_t)P);
}

const struct alg alg_allreduce_table[] = {
    {"butterfly", alg_allreduce_butterfly, cost_allreduce_butterfly,
     ALG_RANK_ORDER | ALG_SAME_RESULT | ALG_ALLPAIRS, NULL,
     "(log2 p2 + 2 [P != p2]) (L + g(n) + gamma n)", port_allreduce_butterfly,
     "(log2 p2 + [P != p2]) gap(n)"},
    {"tournament", alg_allreduce_tournament, cost_allreduce_tournament,
     ALG_COMMUTATIVE | ALG_SAME_RESULT | ALG_OVERLAP, NULL,
     "lgP (2 (L + g(n)) + gamma n)", alg_port_log, "lgP gap(n)",
     alg_senders_tree},
    {"ring", alg_allreduce_ring, cost_allreduce_ring,
     ALG_COMMUTATIVE | ALG_SAME_RESULT | ALG_ALLPAIRS, NULL,
     "(P-1) (2 (L + g(n/P)) + gamma n/P)", port_allreduce_ring,
     "2 (P-1) gap(n/P)"},
    {"rabenseifner", alg_allreduce_rabenseifner, cost_allreduce_rabenseifner,
     ALG_COMMUTATIVE | ALG_SAME_RESULT | ALG_ALLPAIRS, NULL,
     "[P != p2] (2 L + 2 g(n) + gamma n) + sum(i = 1..log2 p2) (2 L + 2 "
     "g(n/2^i) + gamma n/2^i)",
     alg_rsag_port, "[P != p2] gap(n) + 2 sum(i = 1..log2 p2) gap(n/2^i)"},
};
const size_t alg_allreduce_count =
    sizeof(alg_allreduce_table) / sizeof(alg_allreduce_table[0]);
