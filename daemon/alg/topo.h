/*
 * topo.h -- shapes shared by the algorithms: trees, rings, chunks and
 * segments, pLogP interpolation, and the two-level hierarchical plan.
 *
 * Trees work on virtual ranks v = (rank - root) mod P, so the root is 0.
 * Everything here is pure arithmetic; nothing allocates except the plan.
 */
#ifndef COLLS_DAEMON_ALG_TOPO_H
#define COLLS_DAEMON_ALG_TOPO_H

#include <stddef.h>

struct plogp;

/* Virtual rank of rank (root -> 0), and back. */
int topo_vrank(int rank, int root, int P);
int topo_rank(int vrank, int root, int P);
/* ceil(log2(P)) for P >= 1; largest power of two <= P. */
int topo_ceil_log2(int P);
int topo_pof2(int P);

/*
 * Binomial tree rooted at virtual rank 0: the parent of v > 0 is v with
 * its lowest set bit cleared; v's subtree is [v, v + topo_binomial_size).
 * children[] (room for 31) gets v's children, nearest (smallest subtree)
 * first; returns how many.
 */
int topo_binomial_parent(int v);
int topo_binomial_size(int v, int P);
int topo_binomial_children(int v, int P, int *children);

/* Binary tree in heap order: children 2v+1, 2v+2; parent (v-1)/2. */
int topo_binary_children(int v, int P, int *children);

/* Splits n bytes of esize-byte items into parts near-equal chunks; chunk i
   is [*off, *off + *len).  Earlier chunks get the spare items. */
void topo_split(size_t n, size_t parts, size_t esize, size_t i, size_t *off,
                size_t *len);
/* Segments of n bytes: *segsz is seg rounded down to whole items (at
   least one item); returns their number, >= 1 (one empty one for n=0). */
size_t topo_nseg(size_t n, size_t seg, size_t esize, size_t *segsz);
/* Range of segment i of n bytes cut in segsz pieces. */
void topo_seg(size_t n, size_t segsz, size_t i, size_t *off, size_t *len);

/* g(m) of p, interpolated linearly between ladder points and extrapolated
   from the last two beyond the ends (never below zero). */
double topo_plogp_g(const struct plogp *p, size_t m);
/*
 * gap(m) of p as the formulas charge it (docs/collectives.md, "The rows'
 * formulas"): what each further message costs that its sender sends
 * right after another, where g(m) is what an isolated one costs beyond L
 * (the LogGP form): the train's gap, at most g(m).  On an unshaped link
 * g > gap: a stream overlaps what one message pays in wake-ups.  Behind
 * a shaper's bucket g < gap, and a burst passes as fast as one message
 * while the bucket lasts: the rate holds back operations that follow
 * each other, which the rows' busiest ports charge (topo_plogp_rate).
 */
double topo_plogp_gap(const struct plogp *p, size_t m);
/* The gap of a train of m-byte messages, the rate a port sustains: what
   the busiest ports (struct alg.port) charge.  Without p->gap g(m). */
double topo_plogp_rate(const struct plogp *p, size_t m);
/*
 * What each further segment of m bytes costs a pipeline whose middle
 * ranks receive every segment and send it on (the segmented chains):
 * gap(m) as topo_plogp_gap charges it, or, where more, the relay's own
 * work, o_r(m) + o_s(m) (p->o_s and p->o_r; without them gap(m)).  A
 * pair's gap is the busier of its two ends, and a relay is both ends; a
 * pipeline of P <= 2 ranks has no relay and pays gap(m).
 */
double topo_plogp_relay(const struct plogp *p, int P, size_t m);
/* When the last of k messages of m bytes that one sender sends back to
   back arrives: L + g(m) + (k - 1) gap(m); 0 for k <= 0. */
double topo_plogp_train(const struct plogp *p, int k, size_t m);
/* A binomial tree of depth d moving m bytes per edge: its root sends d
   messages back to back, each child forwards after its own arrival.  The
   latest leaf is at one end: d hops of L + g(m), or the root's last
   message, L + g(m) + (d - 1) gap(m). */
double topo_plogp_tree(const struct plogp *p, int d, size_t m);
/* k messages of m bytes through one port: k rate(m); 0 for k <= 0. */
double topo_plogp_port(const struct plogp *p, int k, size_t m);
/* n bytes in segments of segsz through one port: the sum of each
   segment's rate. */
double topo_plogp_segs_port(const struct plogp *p, size_t n, size_t segsz);

/*
 * The two-level plan (docs/collectives.md, "Hierarchical mode") of a group:
 * regular subspaces, one per host, and the connecting subspace of one leader
 * per host.  Hosts are numbered 0..nhosts-1 in the order their first rank
 * appears; a rank of the connecting subspace ("leader rank") is a host number,
 * so leader-level schedules are ordinary schedules with P = nhosts.
 */
struct topo_hier {
    int P, nhosts;
    int *host;      /* P: host number of each rank */
    int *local;     /* P: index of each rank among its host's members */
    int *start;     /* nhosts + 1: host h has members[start[h]..start[h+1]) */
    int *members;   /* P: ranks grouped by host, in rank order */
    int *leader;    /* nhosts: the rank acting for the host (its lowest) */
    int contiguous; /* 1: each host's ranks are consecutive, hosts in order
                       (what group formation produces; scan and the
                       gather family need it to decompose by host) */
};

/* Builds the plan from host_id[r], any id per host.  0, COLLS_EINVAL
   (P < 1) or COLLS_ENOMEM. */
int topo_hier_plan(int P, const int *host_id, struct topo_hier *h);
void topo_hier_free(struct topo_hier *h);
/* Number of ranks on host h. */
int topo_hier_nlocal(const struct topo_hier *h, int host);

#endif
