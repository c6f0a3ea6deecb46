/*
 * alg.h -- the algorithm library: one table of algorithms per operation.
 *
 * An algorithm is a row { name, builder, cost formula, flags, predicate,
 * the cost formula as text }.
 * The builder compiles the arguments of one participant into a schedule
 * (daemon/sched.h); the cost formula predicts the operation's time from
 * pLogP parameters (Kielmann et al., "Fast measurement of LogP parameters
 * for message passing platforms", 2000): L the end-to-end latency, g(m)
 * the gap (the time a sender is busy with, and the interval between,
 * messages of m bytes; it includes the send overhead), plus gamma, the
 * time per byte of a local reduction.  Costs are in microseconds.
 *
 * Buffers per operation (sizes in bytes; n = args.size, the bytes of one
 * rank's block; v-variants use counts[] and displs[] instead):
 *   barrier          none; every message is empty
 *   bcast            RECV n: the root's data on entry, everyone's on exit
 *   reduce           SEND n on every rank; RECV n at the root only
 *   allreduce        SEND n -> RECV n
 *   gather[v]        SEND n (counts[rank]); RECV at the root: block r at
 *                    r * n (displs[r])
 *   scatter[v]       SEND at the root, blocks as gather's RECV; RECV n
 *                    (counts[rank])
 *   allgather[v]     SEND n (counts[rank]); RECV blocks as gather's
 *   alltoall         SEND P * n, block j for rank j; RECV P * n, block j
 *                    from rank j
 *   alltoallv        SEND: scounts[j] bytes at sdispls[j] for rank j; RECV:
 *                    rcounts[j] bytes at rdispls[j] from rank j
 *   reduce_scatter   SEND P * n; RECV n: block rank reduced over all ranks
 *   scan / exscan    SEND n -> RECV n (exscan: rank 0's RECV is untouched)
 * Blocks of a v-variant may be in any order in the buffer but must not
 * overlap.  Sizes of reduced data are multiples of the datatype's size.
 * Roots may be any rank: tree algorithms work on virtual ranks
 * (rank - root) mod P.
 *
 * Result order.  Integer operators wrap and are associative and
 * commutative, so every algorithm gives the same integers.  Floating SUM
 * and PROD depend on the order of combination.  Every allreduce algorithm
 * here gives bitwise the same result on every rank (ALG_SAME_RESULT):
 * butterfly because both partners of an exchange evaluate the same
 * expression (lower ranks' partial on the left, SCHED_F_SRC_FIRST), the
 * others because each element is combined once, by one rank, and then
 * copied.  ALG_RANK_ORDER marks algorithms that combine strictly as
 * x0 op x1 op ... (valid for non-commutative operators); the others need
 * ALG_COMMUTATIVE operators (all of COLLS_SUM .. COLLS_BXOR are).
 */
#ifndef COLLS_DAEMON_ALG_ALG_H
#define COLLS_DAEMON_ALG_ALG_H

#include <stddef.h>

#include "daemon/sched.h"

/* pLogP parameters: L and g(m) at increasing sizes m[0] < m[1] < ... */
struct plogp {
    double L;        /* latency, us */
    double Ll;       /* L while every daemon sends (with gl); 0: L */
    double gamma;    /* local reduction, us per byte */
    size_t n;        /* points in the ladder, >= 1 */
    const size_t *m; /* message sizes, bytes, increasing */
    const double *g; /* gap at each size, us */
    /* g at each size while every daemon sends at once (daemon/plogp.h),
       which ALG_ALLPAIRS and ALG_OVERLAP rows are costed with (tune.c);
       NULL: g */
    const double *gl;
    /* the gap of back-to-back messages at each size (topo_plogp_rate);
       NULL: g */
    const double *gap;
    /* the send and receive overheads at each size, the CPU a daemon
       spends per message (daemon/plogp.h; topo_plogp_relay); NULL: 0 */
    const double *o_s, *o_r;
};

/* Arguments of one participant (see the buffer table above). */
struct alg_args {
    int op;            /* enum sched_op */
    int P, rank, root; /* root: rooted operations; 0 for the others */
    int dtype, rop;    /* COLLS_* datatype and reduction operator */
    size_t size;       /* n: bytes of one rank's block */
    size_t seg;        /* segment bytes (ALG_SEGMENTED); 0: ALG_DEFAULT_SEG */
    /* gatherv, scatterv, allgatherv: bytes and offsets of every rank's
       block, P entries each (every participant knows all of them). */
    const size_t *counts, *displs;
    /* alltoallv: this participant's send and receive blocks, P entries. */
    const size_t *scounts, *sdispls, *rcounts, *rdispls;
};

/* Builds the schedule of a->rank into s (initialised by the caller with
   sched_init).  Returns 0 or a COLLS_E* code. */
typedef int (*alg_build_fn)(struct sched *s, const struct alg_args *a);
/* Predicted time, us, of the whole operation for P ranks, n bytes per
   rank, segment seg (segmented algorithms). */
typedef double (*alg_cost_fn)(const struct plogp *p, int P, size_t n,
                              size_t seg);

#define ALG_POW2        0x1  /* P must be a power of two */
#define ALG_COMMUTATIVE 0x2  /* needs a commutative operator */
#define ALG_SEGMENTED   0x4  /* pipelines segments of args.seg bytes */
#define ALG_NO_V        0x8  /* not for the v-variant of the operation */
#define ALG_RANK_ORDER  0x10 /* combines in rank order */
#define ALG_SAME_RESULT 0x20 /* bitwise identical result on every rank */
/* In most steps every rank sends (rings, butterflies, pairwise
   exchanges): costed with g under load (struct plogp.gl), since all the
   daemons then share whatever the hosts share -- CPUs, a switch */
#define ALG_ALLPAIRS 0x40
/* From 4 ranks on, different pairs transfer at once in most steps (trees
   below their first level, pipelines once filled): costed with g under
   load as well, scaled to the ranks that send (struct alg.senders).  On
   4 emulated hosts on 2 CPUs, costed with g, a tournament allreduce of
   1 MiB was predicted below Rabenseifner and took 1.44x as long, a
   binomial scatter of 1 MiB blocks 1.29x a flat one's; costed with gl, a
   binary bcast of 1 MiB was predicted at 4.2x what it took
   (docs/collectives.md) */
#define ALG_OVERLAP 0x80
/* The least P at which ALG_OVERLAP rows are costed under load: below it
   a tree's steps carry one transfer each (binomial and binary at P = 3
   send from the root alone).  A segmented chain of 3 does overlap its
   two hops; it is costed with g there all the same */
#define ALG_OVERLAP_MIN_P 4

#define ALG_DEFAULT_SEG ((size_t)64 * 1024)

struct alg {
    const char *name;
    alg_build_fn build;
    alg_cost_fn cost;
    unsigned flags;
    /* Extra applicability test, or NULL. */
    int (*applicable)(const struct alg_args *a);
    /* The formula cost computes, as text for people (`collsctl
       algorithms`): P ranks, n bytes per rank, L, g(m) an isolated
       message beyond L, gap(m) each further message its sender sends
       back to back (topo.h), gamma; lgP = ceil(log2 P); p2 the
       largest power of two <= P; s the segment and k = ceil(n / s)
       segments; [c] 1 when c holds, else 0; in a heap-ordered tree
       (children 2v+1, 2v+2), depth(v) the edges from the root to v and
       right(v) how many of them lead to a second child. */
    const char *formula;
    /* The busiest port's share, us: the gap(m) of every message that
       the busiest participant sends (or receives, whichever is more),
       summed.  Operations that follow each other cannot run faster than
       that: behind a token bucket an isolated message passes sooner
       than its gap (g < gap) and the formula above falls below it
       (docs/collectives.md, "The busiest port"); tune.c takes the larger
       of the two, the port less the rest a barrier before an operation
       that is not rooted gives a shaper's bucket (tune_port_rest).  Its
       text, in the formula's terms. */
    alg_cost_fn port;
    const char *port_formula;
    /* ALG_OVERLAP rows: how many of P ranks send at once in the row's
       busiest step (a tree's widest level, a filled pipeline's all but
       the last).  gl was measured with all P sending at once and g is
       one sender alone; such a row is costed with g + (gl - g) (senders
       - 1) / (P - 1) (tune.c).  NULL: P. */
    int (*senders)(int P);
};

/* The table of op (gatherv shares gather's, ...); *n rows. */
const struct alg *alg_table(int op, size_t *n);
/* The row named name for op (case-sensitive), or NULL; *index its row. */
const struct alg *alg_find(int op, const char *name, int *index);
/* 1 if a can run with args (flags, P, predicate); 0 if not. */
int alg_usable(const struct alg *alg, const struct alg_args *a);
/* Checks args (P, rank, root, dtype/op pairs, sizes) and builds the
   schedule with alg; 0 or COLLS_EINVAL / COLLS_EDTYPE / COLLS_EOP /
   COLLS_ENOTSUP (alg not usable) / COLLS_ENOMEM.  On success s holds
   the schedule; release it with sched_free. */
int alg_build(const struct alg *alg, const struct alg_args *a, struct sched *s);

/* Tables, one per file: alg_<name>_table[] with alg_<name>_count rows. */
#define ALG_TABLE(name)                                                        \
    extern const struct alg alg_##name##_table[];                              \
    extern const size_t alg_##name##_count
ALG_TABLE(barrier);
ALG_TABLE(bcast);
ALG_TABLE(reduce);
ALG_TABLE(allreduce);
ALG_TABLE(allgather);
ALG_TABLE(gather);
ALG_TABLE(scatter);
ALG_TABLE(alltoall);
ALG_TABLE(reduce_scatter);
ALG_TABLE(scan);
#undef ALG_TABLE

/* ---- helpers for the builders (alg.c) ---- */

/* Bytes of one item of a's datatype (1 for barrier and byte data). */
size_t alg_esize(const struct alg_args *a);
/* Length and offset of rank r's block in the gathered layout. */
size_t alg_blen(const struct alg_args *a, int r);
size_t alg_boff(const struct alg_args *a, int r);
/* Sum of every block's length. */
size_t alg_btotal(const struct alg_args *a);
/*
 * Sends (kind SCHED_SEND) or receives (SCHED_RECV) the blocks of ranks
 * lo, lo+1, ... (cnt of them, mod P) of buffer buf to or from peer, one
 * message per run of blocks that are adjacent in the buffer.  Both sides
 * call it with the same blocks, so the messages match.
 */
void alg_xfer_blocks(struct sched *s, int kind, int peer, int buf,
                     const struct alg_args *a, int lo, int cnt);
/* Sends or receives the whole payload of a bcast-like step: all blocks
   for the allgather family, else bytes [0, size) of SCHED_BUF_RECV. */
void alg_xfer_all(struct sched *s, int kind, int peer,
                  const struct alg_args *a);
/* a->seg, or ALG_DEFAULT_SEG when 0. */
size_t alg_seg(const struct alg_args *a);

/* Builders shared between operations (composite algorithms). */
int alg_reduce_binomial(struct sched *s, const struct alg_args *a);
int alg_bcast_binomial(struct sched *s, const struct alg_args *a);
int alg_gather_binomial(struct sched *s, const struct alg_args *a);

/*
 * The first half of Rabenseifner's algorithms (allreduce.c): total bytes
 * of SEND are copied to buffer acc and reduce-scattered by recursive
 * halving among pof2 = topo_pof2(P) "new ranks" after a pre-step that
 * folds each even rank r < 2 * rem (rem = P - pof2) into r + 1.  chunk()
 * gives the byte range of new rank c's part (contiguous, increasing in c).
 * Returns the caller's new rank (-1 for a folded rank); on return new
 * rank c holds the reduction of chunk c in acc.  tmp is a scratch buffer
 * of total bytes.
 */
typedef void (*alg_chunk_fn)(const struct alg_args *a, int pof2, int c,
                             size_t *off, size_t *len);
int alg_halving(struct sched *s, const struct alg_args *a, size_t total,
                int acc, int tmp, alg_chunk_fn chunk);
/* Real rank of new rank nr in alg_halving's numbering. */
int alg_halving_rank(int nr, int rem);
/* Byte range [*off, *off + *len) of new-rank chunks [c0, c1). */
void alg_halving_window(const struct alg_args *a, int pof2, int c0, int c1,
                        alg_chunk_fn chunk, size_t *off, size_t *len);
/* Predicted time of alg_halving: pre-step plus log2(pof2) halvings. */
double alg_halving_cost(const struct plogp *p, int P, size_t total);
/* alg_halving_cost plus the gathering back by recursive doubling (the
   reduce-scatter + gather of Rabenseifner's reduce and allreduce). */
double alg_rsag_cost(const struct plogp *p, int P, size_t n);
/* Its busiest port (struct alg.port): a rank receives (and sends) in
   every halving and again in the gathering, [P != p2] gap(n) + 2 sum(i =
   1..log2 p2) gap(n / 2^i). */
double alg_rsag_port(const struct plogp *p, int P, size_t n, size_t seg);
/* A binomial gather or scatter: the larger of the sum over d = 1, 2, 4,
   ... < P of L + g(d n) (the path of first children) and L + g(n) plus
   the sum over d = 2, 4, ... of gap(d n) (the root's messages back to
   back); bruck: sizes min(d, P - d) n (the last step is short). */
double alg_doubling_cost(const struct plogp *p, int P, size_t n, int bruck);
/* Busiest ports (struct alg.port) that several rows share: a rank that
   sends or receives P - 1 messages of n bytes (flat rows, rings of
   blocks, pairwise exchanges), lgP of them (binomial roots, recursive
   doubling), one (a chain), one per segment of seg (a segmented chain);
   and the root of alg_doubling_cost's gather or scatter: the sum over d =
   1, 2, 4, ... < P of gap(min(d, P - d) n). */
double alg_port_linear(const struct plogp *p, int P, size_t n, size_t seg);
double alg_port_log(const struct plogp *p, int P, size_t n, size_t seg);
double alg_port_one(const struct plogp *p, int P, size_t n, size_t seg);
double alg_port_chain_seg(const struct plogp *p, int P, size_t n, size_t seg);
double alg_port_doubling(const struct plogp *p, int P, size_t n, size_t seg);
/* Ranks that send at once (struct alg.senders): a binomial or binary
   tree's widest level (the leaves' parents in a bcast, the leaves in a
   reduce), floor(P / 2); a segmented chain's P - 1. */
int alg_senders_tree(int P);
int alg_senders_chain(int P);
/* The busiest port of alg_halving (total bytes): [P != p2] gap(total)
   plus the sum over the halvings of gap(total / 2^i). */
double alg_halving_port(const struct plogp *p, int P, size_t total);

#endif
