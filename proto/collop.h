/*
 * collop.h -- the traits of every collective operation, in one table.
 *
 * The daemon (request checks, hierarchical decomposition, algorithm
 * tables, tuner, schedule names), the client library (argument checks,
 * names) and the tests all ask this table what an operation is: rooted or
 * not, a reduction or not, a v-variant or not, which algorithm table and
 * rules it shares, and which operation the leaders run for it in
 * hierarchical mode (docs/collectives.md, "Hierarchical decomposition").
 * Indices are COLLS_COLL_* of colls.h, which daemon/sched.h's
 * SCHED_OP_* mirror.  Nothing here allocates or does I/O.
 */
#ifndef COLLS_PROTO_COLLOP_H
#define COLLS_PROTO_COLLOP_H

#include "colls.h"

/* Which buffer of a task carries what, for the host-local phase. */
enum collop_family {
    COLLOP_BARRIER = 0, /* no data */
    COLLOP_ONE_TO_ALL,  /* bcast, scatter[v] */
    COLLOP_ALL_TO_ONE,  /* reduce, gather[v] */
    COLLOP_ALL_TO_ALL1, /* allreduce, allgather[v], reduce_scatter */
    COLLOP_ALL_TO_ALL2, /* alltoall[v] */
    COLLOP_PREFIX       /* scan, exscan */
};

struct collop {
    const char *name;       /* "reduce_scatter"; COLLS_ALG_<NAME> upper-cased */
    unsigned rooted : 1;    /* has a root rank */
    unsigned reduction : 1; /* combines data with a COLLS_* operator */
    unsigned vector : 1;    /* takes per-rank counts (gatherv, ...) */
    unsigned blocks : 1;    /* data is one block per rank (gather family) */
    int family;             /* enum collop_family */
    int base;   /* its plain form: the operation whose rules it uses */
    int algs;   /* operation whose algorithm table it runs (exscan: scan) */
    int leader; /* operation the leaders run in hierarchical mode */
};

/* The traits of op, or NULL when op is not a COLLS_COLL_*. */
const struct collop *collop_get(int op);
/* "bcast", ...; "?" when op is out of range. */
const char *collop_name(int op);
/* Operation named name (case-insensitive), or -1. */
int collop_lookup(const char *name);

/*
 * The bytes of a task's two hops in an operation of P ranks and n bytes
 * per rank (per block where the data are blocks): *in, the most any task
 * hands its daemon (a scatter's root hands it P blocks, an alltoall's
 * every task P), and *out, the most any task gets back (a gather's root P
 * blocks, an allgather's every task P).  Barrier: 0 and 0.  An unknown op
 * counts n each way.
 */
void collop_task_bytes(int op, int P, size_t n, size_t *in, size_t *out);

/* Shorthands for the traits; 0 for an unknown op. */
int collop_is_rooted(int op);
int collop_is_reduction(int op);
int collop_is_vector(int op);

#endif
