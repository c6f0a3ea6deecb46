/*
 * collop.c -- the operation traits table; see collop.h.
 */
#include <strings.h>

#include "proto/collop.h"

#define R 1 /* rooted */
#define N 0

/* One row per operation. */
static const struct collop collop_table[COLLS_COLL_MAX] = {
    /* name, rooted, reduction, vector, blocks, family,
       base, algs, leader */
    [COLLS_COLL_BARRIER] = {"barrier", N, 0, 0, 0, COLLOP_BARRIER,
                            COLLS_COLL_BARRIER, COLLS_COLL_BARRIER,
                            COLLS_COLL_BARRIER},
    [COLLS_COLL_BCAST] = {"bcast", R, 0, 0, 0, COLLOP_ONE_TO_ALL,
                          COLLS_COLL_BCAST, COLLS_COLL_BCAST, COLLS_COLL_BCAST},
    [COLLS_COLL_REDUCE] = {"reduce", R, 1, 0, 0, COLLOP_ALL_TO_ONE,
                           COLLS_COLL_REDUCE, COLLS_COLL_REDUCE,
                           COLLS_COLL_REDUCE},
    [COLLS_COLL_ALLREDUCE] = {"allreduce", N, 1, 0, 0, COLLOP_ALL_TO_ALL1,
                              COLLS_COLL_ALLREDUCE, COLLS_COLL_ALLREDUCE,
                              COLLS_COLL_ALLREDUCE},
    [COLLS_COLL_GATHER] = {"gather", R, 0, 0, 1, COLLOP_ALL_TO_ONE,
                           COLLS_COLL_GATHER, COLLS_COLL_GATHER,
                           COLLS_COLL_GATHERV},
    [COLLS_COLL_GATHERV] = {"gatherv", R, 0, 1, 1, COLLOP_ALL_TO_ONE,
                            COLLS_COLL_GATHER, COLLS_COLL_GATHER,
                            COLLS_COLL_GATHERV},
    [COLLS_COLL_SCATTER] = {"scatter", R, 0, 0, 1, COLLOP_ONE_TO_ALL,
                            COLLS_COLL_SCATTER, COLLS_COLL_SCATTER,
                            COLLS_COLL_SCATTERV},
    [COLLS_COLL_SCATTERV] = {"scatterv", R, 0, 1, 1, COLLOP_ONE_TO_ALL,
                             COLLS_COLL_SCATTER, COLLS_COLL_SCATTER,
                             COLLS_COLL_SCATTERV},
    [COLLS_COLL_ALLGATHER] = {"allgather", N, 0, 0, 1, COLLOP_ALL_TO_ALL1,
                              COLLS_COLL_ALLGATHER, COLLS_COLL_ALLGATHER,
                              COLLS_COLL_ALLGATHERV},
    [COLLS_COLL_ALLGATHERV] = {"allgatherv", N, 0, 1, 1, COLLOP_ALL_TO_ALL1,
                               COLLS_COLL_ALLGATHER, COLLS_COLL_ALLGATHER,
                               COLLS_COLL_ALLGATHERV},
    [COLLS_COLL_ALLTOALL] = {"alltoall", N, 0, 0, 1, COLLOP_ALL_TO_ALL2,
                             COLLS_COLL_ALLTOALL, COLLS_COLL_ALLTOALL,
                             COLLS_COLL_ALLTOALLV},
    [COLLS_COLL_ALLTOALLV] = {"alltoallv", N, 0, 1, 1, COLLOP_ALL_TO_ALL2,
                              COLLS_COLL_ALLTOALL, COLLS_COLL_ALLTOALL,
                              COLLS_COLL_ALLTOALLV},
    [COLLS_COLL_REDUCE_SCATTER] = {"reduce_scatter", N, 1, 0, 0,
                                   COLLOP_ALL_TO_ALL1,
                                   COLLS_COLL_REDUCE_SCATTER,
                                   COLLS_COLL_REDUCE_SCATTER,
                                   COLLS_COLL_ALLREDUCE},
    [COLLS_COLL_SCAN] = {"scan", N, 1, 0, 0, COLLOP_PREFIX, COLLS_COLL_SCAN,
                         COLLS_COLL_SCAN, COLLS_COLL_EXSCAN},
    [COLLS_COLL_EXSCAN] = {"exscan", N, 1, 0, 0, COLLOP_PREFIX,
                           COLLS_COLL_EXSCAN, COLLS_COLL_SCAN,
                           COLLS_COLL_EXSCAN},
};

const struct collop *
collop_get(int op)
{
    if (op < 0 || op >= COLLS_COLL_MAX)
        return NULL;
    return &collop_table[op];
}

const char *
collop_name(int op)
{
    const struct collop *o = collop_get(op);

    return o != NULL ? o->name : "?";
}

int
collop_lookup(const char *name)
{
    int op;

    for (op = 0; op < COLLS_COLL_MAX; op++)
        if (strcasecmp(collop_table[op].name, name) == 0)
            return op;
    return -1;
}

void
collop_task_bytes(int op, int P, size_t n, size_t *in, size_t *out)
{
    const struct collop *o = collop_get(op);
    size_t all = (size_t)(P > 0 ? P : 1) * n;

    *in = *out = n;
    if (o == NULL)
        return;
    switch (o->family) {
    case COLLOP_BARRIER:
        *in = *out = 0;
        break;
    case COLLOP_ONE_TO_ALL: /* scatter's root */
        *in = o->blocks ? all : n;
        break;
    case COLLOP_ALL_TO_ONE: /* gather's root */
        *out = o->blocks ? all : n;
        break;
    case COLLOP_ALL_TO_ALL1: /* allgather gets P blocks; reduce_scatter
                                hands in P */
        if (o->blocks)
            *out = all;
        else if (o->base == COLLS_COLL_REDUCE_SCATTER)
            *in = all;
        break;
    case COLLOP_ALL_TO_ALL2:
        *in = *out = all;
        break;
    default:
        break;
    }
}

int
collop_is_rooted(int op)
{
    const struct collop *o = collop_get(op);

    return o != NULL && o->rooted;
}

int
collop_is_reduction(int op)
{
    const struct collop *o = collop_get(op);

    return o != NULL && o->reduction;
}

int
collop_is_vector(int op)
{
    const struct collop *o = collop_get(op);

    return o != NULL && o->vector;
}
