/*
 * hier.h -- the host-local phase of hierarchical collectives
 * (docs/collectives.md, "Hierarchical decomposition") as pure functions
 * over buffers.
 *
 * A hierarchical operation runs in three steps on each host: the local
 * members' contributions are combined into the leader's input
 * (hier_combine), the leaders run one schedule among the hosts (the
 * operation collop's `leader` names, over the per-host block sizes
 * computed here), and the leader's output is distributed into each local
 * member's result (hier_result).  This file is the first and the last
 * step and the sizes between them; it knows nothing of daemons, tasks or
 * messages.
 *
 * Owns nothing: struct hier_layout describes the group and the operation
 * and points at arrays the caller owns (the per-host arrays of
 * hier_layout are filled here).  Nothing allocates or does I/O.
 *
 * May call: daemon/alg/topo.h, proto/reduce.h, proto/collop.h.
 */
#ifndef COLLS_DAEMON_HIER_H
#define COLLS_DAEMON_HIER_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/alg/topo.h"

struct hier_layout {
    /* the operation */
    int op;       /* COLLS_COLL_* */
    int dtype;    /* COLLS_* datatype */
    int rop;      /* reduction operator (reductions) */
    int root;     /* rank (rooted operations) */
    size_t count; /* items per rank (per block for gather/alltoall) */
    size_t n;     /* count * item bytes */
    /* the group */
    int P;
    const struct topo_hier *H; /* the two-level plan */
    int myhost;                /* this host in H */
    /* gatherv family: bytes of each rank's block (P), else NULL */
    const size_t *vb;
    /* alltoallv: per local member (in H's order) 4 * P entries: send
       bytes, send offsets, receive bytes, receive offsets */
    size_t *const *a2a;
    /* per host, bytes (nhosts entries each, the caller's arrays):
       cnt/dsp the blocks of the gather family (hier_blocks), sc/sd the
       bytes this host sends to each host and where they sit in the
       leader's input, rc/rd the same for what it receives (hier_sizes) */
    size_t *cnt, *dsp, *sc, *sd, *rc, *rd;
};

/* Number of this host's members (the local ranks are
   H->members[H->start[myhost] + i], i < this, ascending). */
int hier_nlocal(const struct hier_layout *L);
/* Fills L->cnt and L->dsp: each host's members' blocks, packed in host
   order (the counts of the leaders' gatherv family). */
void hier_blocks(struct hier_layout *L);
/* Fills L->sc..L->rd (after hier_blocks; alltoallv needs L->a2a) and
   returns the bytes of the leader's SEND (*lss) and RECV (*lrs) buffers. */
void hier_sizes(struct hier_layout *L, size_t *lss, size_t *lrs);
/*
 * Combines the local members' inputs in[i] (inlen[i] bytes; i in H's
 * order) into the leader's SEND buffer ls (lss bytes) and, for bcast on
 * the root's host, its RECV buffer lr.  0 or an error of the reduction.
 */
int hier_combine(const struct hier_layout *L, const uint8_t *const *in,
                 const size_t *inlen, uint8_t *ls, uint8_t *lr);
/* Bytes of scratch hier_result needs: 0 when it needs none, never 0
   when it does (even for empty data). */
size_t hier_scratch(const struct hier_layout *L);
/*
 * Local member i's result from the leader's output lr: *data (into lr, or
 * into scratch of hier_scratch bytes) and *len.  Call for i = 0, 1, ...
 * in order with the same scratch, and use each result before the next
 * call: scan and exscan carry a running prefix from one member to the
 * next.  0 or an error of the reduction.
 */
int hier_result(const struct hier_layout *L, int i, const uint8_t *lr,
                const uint8_t *const *in, uint8_t *scratch,
                const uint8_t **data, size_t *len);

#endif
