/*
 * cmd_bench.c -- `collsctl bench OP`: time one collective per message size,
 * the classic way.
 *
 * Every participating process runs the same loop: per size, 3 discarded
 * warm-up operations, then --runs runs (default 5) of --iters back-to-back
 * operations (default 50), each run started after a barrier; a process
 * keeps its minimum per-operation time over the runs, and the figure shown
 * is the maximum of those minima over the processes (an allreduce MAX).
 * Rank 0 prints, per size, microseconds per operation, the algorithm that
 * ran (colls_group_last_alg) and the mode.  Data are int32 (reductions:
 * SUM), a size is the bytes of one rank's block; v-variants use equal
 * blocks.  Sizes go from A to B by powers of 4 (default 4 B .. 4 MiB).
 *
 * --roundrobin forms the group with round-robin placement (ranks dealt
 * over the hosts) instead of contiguous.
 *
 * --latency times one operation on its own (every operation but
 * barrier), which is what the cost models of daemon/alg/ predict
 * (docs/collectives.md, "What the model leaves out").  Rooted ones: back
 * to back, the root of a bcast or
 * scatter returns as soon as its buffer may be reused (and every rank of
 * a reduce or gather but the root), so consecutive operations overlap and
 * the classic figure is the busiest rank's share.  The method is de
 * Supinski and Karonis' (1999): for each rank i but the root, the
 * operations of a run are chained through rank i by an empty message on
 * the direct route -- after a bcast, scatter or scatterv rank i
 * acknowledges to the root, which starts the next one when the
 * acknowledgement is in; before a reduce, gather or gatherv rank i waits
 * for the root's release, sent when the root's previous one ended.  The
 * root's time per operation is then the latency from the root to rank i
 * (from rank i to the root) plus the empty message's one way, which is
 * measured the same way (half a round trip between the root and rank i)
 * and subtracted.  The figure is the maximum over i of each one's best
 * run: P - 1 times the classic method's operations.  With the others
 * reduce and gather ranks free to run ahead, a root-last operation is
 * timed as if rank i came last, which leaves out the root's wait for the
 * others that a simultaneous start would add (a flat reduce's (P-1) g).
 * For the other operations (every rank ends with a result) --latency
 * separates the operations by barriers: a run of iterations of a barrier
 * and the operation, less a run of barriers alone, each process's best
 * of each; the figure is the maximum over the processes.  Back to back
 * they overlap too, less visibly: a rank that ends first starts the next
 * operation while its partners still receive, and on a slow link the two
 * share their ports (a butterfly allgather of 64 KiB over 8 emulated hosts
 * at 10 Mbit/s took 923-989 ms per operation back to back, 471 ms one at
 * a time, where a ring took 501 and 455: docs/collectives.md).  Barrier
 * stays classic.
 *
 * --compress off|on|auto sets colls_group_set_compress (FPC, which the
 * daemons apply to hierarchical bcasts of doubles; docs/collectives.md)
 * and makes the data doubles (reductions: SUM) in every buffer: a smooth
 * ramp 1 + k/1000, which FPC predicts well.  Sizes are rounded up to
 * whole doubles.  Compare the three modes with the same data, e.g. at
 * 100 Mbit/s; "+fpc" after the algorithm says the payload went compressed.
 *
 * Processes: with --group NAME -n P this process is one of the P members
 * of group NAME (start P of them, on any daemons, with --socket); without
 * --group, -n P (default 2) forks P members here, member i attached to the
 * i-th socket of --sockets A,B,... (round robin; default the usual one).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"
#include "proto/collop.h"
#include "tools/collsctl.h"

#define BENCH_WARMUP      3
#define BENCH_MAX_PROCS   256
#define BENCH_MAX_SOCKETS 64
#define BENCH_SIZE_MAX    (1ull << 30)
#define BENCH_MAX_REPS    1000000
/* The tag of --latency's empty messages (not a library tag: those are
   INT_MIN and the direct collectives', which no receive can match). */
#define BENCH_ACK_TAG 0x6c617400

struct bench_opts {
    int op;
    size_t min, max;
    const char *algo;
    int mode;
    int placement;
    int compress; /* COLLS_COMPRESS_*, -1: not given (int32 data) */
    const char *group;
    int nprocs;
    int runs, iters;
    int latency; /* --latency: one operation's latency */
    int json;    /* rank 0 prints one JSON document */
    char *sockets[BENCH_MAX_SOCKETS];
    int nsockets;
};

/* Parses "A:B" into opts->min, opts->max. */
static int
bench_sizes(const char *s, struct bench_opts *o)
{
    const char *colon = strchr(s, ':');

    if (colon == NULL)
        return collsctl_parse_size(s, NULL, BENCH_SIZE_MAX, &o->min) < 0
                   ? -1
                   : (o->max = o->min, 0);
    if (collsctl_parse_size(s, colon, BENCH_SIZE_MAX, &o->min) < 0 ||
        collsctl_parse_size(colon + 1, NULL, BENCH_SIZE_MAX, &o->max) < 0 ||
        o->min > o->max)
        return -1;
    return 0;
}

/*
 * One operation of o->op on blocks of count items of dt.  counts and
 * displs are P entries describing equal blocks, for the v-variants.
 */
static int
bench_one(colls_group_t *g, int op, int dt, void *sbuf, void *rbuf,
          size_t count, const size_t *counts, const size_t *displs)
{
    switch (op) {
    case COLLS_COLL_BARRIER:
        return colls_barrier(g);
    case COLLS_COLL_BCAST:
        return colls_bcast(g, rbuf, count, dt, 0);
    case COLLS_COLL_REDUCE:
        return colls_reduce(g, sbuf, rbuf, count, dt, COLLS_SUM, 0);
    case COLLS_COLL_ALLREDUCE:
        return colls_allreduce(g, sbuf, rbuf, count, dt, COLLS_SUM);
    case COLLS_COLL_GATHER:
        return colls_gather(g, sbuf, rbuf, count, dt, 0);
    case COLLS_COLL_GATHERV:
        return colls_gatherv(g, sbuf, count, rbuf, counts, displs, dt, 0);
    case COLLS_COLL_SCATTER:
        return colls_scatter(g, sbuf, rbuf, count, dt, 0);
    case COLLS_COLL_SCATTERV:
        return colls_scatterv(g, sbuf, counts, displs, rbuf, count, dt, 0);
    case COLLS_COLL_ALLGATHER:
        return colls_allgather(g, sbuf, rbuf, count, dt);
    case COLLS_COLL_ALLGATHERV:
        return colls_allgatherv(g, sbuf, count, rbuf, counts, displs, dt);
    case COLLS_COLL_ALLTOALL:
        return colls_alltoall(g, sbuf, rbuf, count, dt);
    case COLLS_COLL_ALLTOALLV:
        return colls_alltoallv(g, sbuf, counts, displs, rbuf, counts, displs,
                               dt);
    case COLLS_COLL_REDUCE_SCATTER:
        return colls_reduce_scatter(g, sbuf, rbuf, count, dt, COLLS_SUM);
    case COLLS_COLL_SCAN:
        return colls_scan(g, sbuf, rbuf, count, dt, COLLS_SUM);
    case COLLS_COLL_EXSCAN:
        return colls_exscan(g, sbuf, rbuf, count, dt, COLLS_SUM);
    default:
        return COLLS_EINVAL;
    }
}

/* --latency: 1 if the root of op returns first (its rank i acknowledges),
   -1 if it returns last (rank i waits for its release), 0 if every rank
   ends with the result (the classic figure is the latency). */
static int
bench_rooted(int op)
{
    switch (op) {
    case COLLS_COLL_BCAST:
    case COLLS_COLL_SCATTER:
    case COLLS_COLL_SCATTERV:
        return 1;
    case COLLS_COLL_REDUCE:
    case COLLS_COLL_GATHER:
    case COLLS_COLL_GATHERV:
        return -1;
    default:
        return 0;
    }
}

/* bench_chained's i for --latency's operations separated by barriers. */
#define BENCH_SEPARATED (-1)

/* An empty message of --latency's to rank r, and the wait for one from
   rank r; on the direct route (the least noise to subtract). */
static int
bench_ping(colls_group_t *g, colls_t *c, int r)
{
    char none = 0;

    return colls_send_route(c, colls_group_tid(g, r), BENCH_ACK_TAG, &none, 0,
                            COLLS_ROUTE_DIRECT);
}

static int
bench_pong(colls_group_t *g, colls_t *c, int r)
{
    char none;

    return colls_recv(c, colls_group_tid(g, r), BENCH_ACK_TAG, &none,
                      sizeof none, NULL);
}

/*
 * One iteration of a run: with i 0 the operation alone (the classic
 * method); with i BENCH_SEPARATED a barrier, then the operation (op -1:
 * the barrier alone); else --latency's through rank i (root 0): the
 * operation chained by an empty message (rooted, from bench_rooted), or
 * with op -1 a round trip of the empty message alone.  first: the run's first
 * operation, which a root-last rank i does not wait for; last: the run's
 * last, after which the root releases nobody.
 */
static int
bench_chained(colls_group_t *g, colls_t *c, const struct bench_opts *o, int op,
              int i, int first, int last, void *sbuf, void *rbuf, size_t count,
              const size_t *counts, const size_t *displs)
{
    int me = colls_group_rank(g), rooted = op < 0 ? 0 : bench_rooted(op);
    int dt = o->compress >= 0 ? COLLS_DOUBLE : COLLS_INT32, rc = 0;

    if (i == 0)
        return bench_one(g, op, dt, sbuf, rbuf, count, counts, displs);
    if (i == BENCH_SEPARATED) {
        if ((rc = colls_barrier(g)) < 0 || op < 0)
            return rc;
        return bench_one(g, op, dt, sbuf, rbuf, count, counts, displs);
    }
    if (op < 0) { /* the empty message's round trip */
        if (me == 0 && (rc = bench_ping(g, c, i)) == 0)
            rc = bench_pong(g, c, i);
        else if (me == i && (rc = bench_pong(g, c, 0)) == 0)
            rc = bench_ping(g, c, 0);
        return rc;
    }
    if (rooted < 0 && me == i && !first && (rc = bench_pong(g, c, 0)) < 0)
        return rc;
    rc = bench_one(g, op, dt, sbuf, rbuf, count, counts, displs);
    if (rc < 0)
        return rc;
    if (rooted > 0 && me == i)
        rc = bench_ping(g, c, 0);
    else if (rooted > 0 && me == 0)
        rc = bench_pong(g, c, i);
    else if (rooted < 0 && me == 0 && !last)
        rc = bench_ping(g, c, i);
    return rc;
}

/*
 * Times one size: warm-ups, then o->runs runs of o->iters iterations
 * (bench_chained: with i 0 the classic method and with i BENCH_SEPARATED
 * the iterations after barriers, *us = this process's best time per
 * iteration; else chained through rank i, op -1 round trips of the empty
 * message, *us = the root's best time per iteration, 0 elsewhere).
 */
static int
bench_chain_runs(colls_group_t *g, colls_t *c, const struct bench_opts *o,
                 int op, int i, void *sbuf, void *rbuf, size_t count,
                 const size_t *counts, const size_t *displs, double *us)
{
    int k, r, rc;

    *us = -1;
    for (k = 0; k < BENCH_WARMUP; k++) {
        rc = bench_chained(g, c, o, op, i, k == 0, k == BENCH_WARMUP - 1, sbuf,
                           rbuf, count, counts, displs);
        if (rc < 0)
            return rc;
    }
    for (r = 0; r < o->runs; r++) {
        double t0, t;

        rc = colls_barrier(g);
        if (rc < 0)
            return rc;
        t0 = collsctl_now_us();
        for (k = 0; k < o->iters; k++) {
            rc = bench_chained(g, c, o, op, i, k == 0, k == o->iters - 1, sbuf,
                               rbuf, count, counts, displs);
            if (rc < 0)
                return rc;
        }
        t = (collsctl_now_us() - t0) / o->iters;
        if (*us < 0 || t < *us)
            *us = t;
    }
    if (i > 0 && colls_group_rank(g) != 0)
        *us = 0;
    return 0;
}

/*
 * --latency for one size.  A rooted operation: for each rank i but the
 * root, the chained runs less the empty message's one way (half its best
 * round trip); *us = the largest of those at the root, 0 elsewhere.  The
 * others: *us = this process's best iteration of a barrier and the
 * operation less its best iteration of a barrier alone (at least 0).
 */
static int
bench_latency_run(colls_group_t *g, colls_t *c, const struct bench_opts *o,
                  void *sbuf, void *rbuf, size_t count, const size_t *counts,
                  const size_t *displs, double *us)
{
    int i, rc, P = colls_group_size(g);
    double chained, rtt, alone;

    *us = 0;
    if (bench_rooted(o->op) == 0) {
        rc = bench_chain_runs(g, c, o, -1, BENCH_SEPARATED, sbuf, rbuf, count,
                              counts, displs, &alone);
        if (rc == 0)
            rc = bench_chain_runs(g, c, o, o->op, BENCH_SEPARATED, sbuf, rbuf,
                                  count, counts, displs, &chained);
        if (rc == 0 && chained > alone)
            *us = chained - alone;
        return rc;
    }
    for (i = 1; i < P; i++) {
        rc = bench_chain_runs(g, c, o, -1, i, sbuf, rbuf, count, counts, displs,
                              &rtt);
        if (rc == 0)
            rc = bench_chain_runs(g, c, o, o->op, i, sbuf, rbuf, count, counts,
                                  displs, &chained);
        if (rc < 0)
            return rc;
        if (chained - rtt / 2 > *us)
            *us = chained - rtt / 2;
    }
    return 0;
}

/* 1 if o's sizes are timed by bench_latency_run: --latency, an
   operation other than barrier and more than one process. */
static int
bench_latency(const struct bench_opts *o)
{
    return o->latency && o->op != COLLS_COLL_BARRIER && o->nprocs > 1;
}

/* "hier", "flat", "direct" or "auto". */
static const char *
bench_mode_name(int mode)
{
    return mode == COLLS_MODE_HIER     ? "hier"
           : mode == COLLS_MODE_FLAT   ? "flat"
           : mode == COLLS_MODE_DIRECT ? "direct"
                                       : "auto";
}

/* The compress mode's name; NULL when not given. */
static const char *
bench_compress_name(int compress)
{
    return compress < 0                     ? NULL
           : compress == COLLS_COMPRESS_OFF ? "off"
           : compress == COLLS_COMPRESS_ON  ? "on"
                                            : "auto";
}

/* Rank 0's heading: a comment and the columns (every method), or the
   JSON document's start. */
static void
bench_head(const struct bench_opts *o)
{
    const char *comp = bench_compress_name(o->compress);

    if (o->json) {
        printf("{\"op\": \"%s\", \"processes\": %d, \"runs\": %d, "
               "\"iters\": %d, \"warmups\": %d, \"method\": \"%s\", "
               "\"data\": \"%s\", \"compress\": %s%s%s, \"results\": [",
               collop_name(o->op), o->nprocs, o->runs, o->iters, BENCH_WARMUP,
               bench_latency(o) ? "latency" : "classic",
               comp != NULL ? "double" : "int32", comp != NULL ? "\"" : "",
               comp != NULL ? comp : "null", comp != NULL ? "\"" : "");
    } else {
        printf("# collsctl bench %s%s: P=%d, ", collop_name(o->op),
               bench_latency(o) ? " --latency" : "", o->nprocs);
        if (bench_latency(o) && bench_rooted(o->op) == 0)
            printf("%d runs of %d iterations of a barrier and the op, and as "
                   "many of a barrier alone, after %d warm-ups each; us/op = "
                   "max over processes of the best run of the first less "
                   "that of the second",
                   o->runs, o->iters, BENCH_WARMUP);
        else if (bench_latency(o))
            printf("per rank i but the root %d runs of %d ops chained "
                   "through i after %d warm-ups, us/op = max over i of the "
                   "root's best run less the chaining message's one way",
                   o->runs, o->iters, BENCH_WARMUP);
        else
            printf("%d runs of %d ops after %d warm-ups, us/op = max over "
                   "processes of each one's best run",
                   o->runs, o->iters, BENCH_WARMUP);
        if (comp != NULL)
            printf("; double data, compress %s", comp);
        printf("\n%10s %12s  %-24s %s\n", "bytes", "us/op", "algorithm",
               "mode");
    }
    fflush(stdout);
}

/* Rank 0's row i for one size. */
static void
bench_row(const struct bench_opts *o, int i, size_t bytes, double us,
          const char *alg, int mode)
{
    if (o->json) {
        printf("%s\n  {\"bytes\": %zu, \"us_per_op\": %.2f, \"algorithm\": ",
               i ? "," : "", bytes, us);
        collsctl_json_str(stdout, alg);
        printf(", \"mode\": \"%s\"}", bench_mode_name(mode));
    } else {
        printf("%10zu %12.2f  %-24s %s\n", bytes, us, alg,
               bench_mode_name(mode));
    }
    fflush(stdout);
}

/*
 * One member: attaches (socket NULL: the usual one), joins group name of
 * o->nprocs members, runs every size.  Returns the exit status.
 */
static int
bench_member(const struct bench_opts *o, const char *socket, const char *name)
{
    colls_t *c = NULL;
    colls_group_t *g = NULL;
    size_t P, n, ds = o->compress >= 0 ? 8 : 4, *counts = NULL, *displs = NULL;
    uint8_t *sbuf = NULL, *rbuf = NULL;
    char what[80];
    int rank = -1, rc, j, nrows = 0, headed = 0;

    unsetenv("COLLS_ADMIN");
    rc = colls_attach(socket, &c);
    if (rc < 0) {
        char path[256];

        if (socket == NULL)
            collsctl_socket_path(path, sizeof path);
        fprintf(stderr, "collsctl bench: attach %s: %s\n",
                socket ? socket : path, colls_strerror(rc));
        return 1;
    }
    rank = colls_group_join_placed(c, name, o->nprocs, o->placement, &g);
    if (rank < 0) {
        rc = rank;
        fprintf(stderr, "collsctl bench: join %s: %s\n", name,
                colls_strerror(rc));
        goto out;
    }
    P = (size_t)o->nprocs;
    rc = colls_group_set_mode(g, o->mode);
    if (rc == 0 && o->algo != NULL)
        rc = colls_group_set_alg(g, o->op, o->algo);
    if (rc < 0) {
        fprintf(stderr, "collsctl bench: --algo %s: %s\n", o->algo,
                colls_strerror(rc));
        goto out;
    }
    if (o->compress >= 0 &&
        (rc = colls_group_set_compress(g, o->compress)) < 0) {
        fprintf(stderr, "collsctl bench: --compress: %s\n", colls_strerror(rc));
        goto out;
    }
    sbuf = calloc(P, o->max > ds ? o->max : ds);
    rbuf = calloc(P, o->max > ds ? o->max : ds);
    counts = calloc(P, sizeof(*counts));
    displs = calloc(P, sizeof(*displs));
    if (sbuf == NULL || rbuf == NULL || counts == NULL || displs == NULL) {
        rc = COLLS_ENOMEM;
        fprintf(stderr, "collsctl bench: out of memory\n");
        goto out;
    }
    for (n = 0; n < P * (o->max > ds ? o->max : ds); n++)
        sbuf[n] = (uint8_t)(n * 7 + (size_t)rank);
    if (o->compress >= 0)
        for (n = 0; n < P * (o->max > ds ? o->max : ds) / 8; n++) {
            double v = 1.0 + (double)n * 1e-3;

            memcpy(sbuf + 8 * n, &v, 8);
            memcpy(rbuf + 8 * n, &v, 8);
        }
    if (rank == 0) {
        bench_head(o);
        headed = 1;
    }
    for (n = o->min;;) {
        size_t count = o->op == COLLS_COLL_BARRIER ? 0 : (n + ds - 1) / ds;
        double us, worst;
        char alg[64] = "";
        int mode = COLLS_MODE_AUTO;
        for (j = 0; j < (int)P; j++) {
            counts[j] = count;
            displs[j] = (size_t)j * count;
        }
        if (rank == 0) {
            snprintf(what, sizeof(what), "%zu bytes, %d runs of %d ops",
                     count * ds, o->runs, o->iters);
            collsctl_progress("bench", what);
        }
        rc = bench_latency(o) ? bench_latency_run(g, c, o, sbuf, rbuf, count,
                                                  counts, displs, &us)
                              : bench_chain_runs(g, c, o, o->op, 0, sbuf, rbuf,
                                                 count, counts, displs, &us);
        if (rank == 0)
            collsctl_progress("bench", NULL);
        if (rc == 0) {
            snprintf(alg, sizeof(alg), "%s", colls_group_last_alg(g));
            mode = colls_group_last_mode(g);
            rc = colls_allreduce(g, &us, &worst, 1, COLLS_DOUBLE, COLLS_MAX);
        }
        if (rc < 0) {
            /* the daemon's words: what differed, or the algorithm
               names there are */
            fprintf(stderr, "collsctl bench: %s of %zu bytes: %s%s%s\n",
                    collop_name(o->op), count * ds, colls_strerror(rc),
                    colls_errmsg(c)[0] != '\0' ? ": " : "", colls_errmsg(c));
            goto out;
        }
        if (rank == 0)
            bench_row(o, nrows++, count * ds, worst, alg, mode);
        if (o->op == COLLS_COLL_BARRIER || n >= o->max)
            break;
        n = n * 4 > o->max ? o->max : n * 4;
        if (n == 0)
            break;
    }
out:
    if (headed && o->json) { /* a complete document, even after a failure */
        printf("\n]}\n");
        fflush(stdout); /* a forked member ends with _exit */
    }
    if (g != NULL)
        colls_group_leave(g);
    colls_detach(c);
    free(sbuf);
    free(rbuf);
    free(counts);
    free(displs);
    return rc < 0 ? 1 : 0;
}

/* What each forked member needs (bench_fork). */
struct bench_fork_arg {
    const struct bench_opts *o;
    char name[64]; /* the group's name */
};

/* Member i of a forked run: attaches over socket i (round robin). */
static int
bench_fork_member(int i, void *arg)
{
    const struct bench_fork_arg *f = arg;
    const struct bench_opts *o = f->o;

    return bench_member(o, o->nsockets > 0 ? o->sockets[i % o->nsockets] : NULL,
                        f->name);
}

/*
 * Forks o->nprocs members over the sockets and waits for them.  If one
 * fails, the others (which would wait for it forever) are killed.
 */
static int
bench_fork(const struct bench_opts *o)
{
    struct bench_fork_arg f;

    f.o = o;
    snprintf(f.name, sizeof(f.name), "bench-%ld", (long)getpid());
    return collsctl_fork_members(o->nprocs, bench_fork_member, &f,
                                 "collsctl bench: fork");
}

/* Splits a comma-separated socket list into o->sockets (in place). */
static int
bench_sockets(char *list, struct bench_opts *o)
{
    char *save = NULL, *s;

    for (s = strtok_r(list, ",", &save); s != NULL;
         s = strtok_r(NULL, ",", &save)) {
        if (o->nsockets == BENCH_MAX_SOCKETS)
            return -1;
        o->sockets[o->nsockets++] = s;
    }
    return o->nsockets > 0 ? 0 : -1;
}

static int
bench_exec(int argc, char **argv)
{
    struct bench_opts o;
    long v;
    int opt;

    memset(&o, 0, sizeof(o));
    o.op = -1;
    o.min = 4;
    o.max = 4u << 20;
    o.mode = COLLS_MODE_AUTO;
    o.compress = -1;
    o.nprocs = 2;
    o.runs = 5;
    o.iters = 50;
    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, &cmd_bench)) != -1) {
        switch (opt) {
        case 's':
            if (bench_sizes(optarg, &o) < 0 || o.min == 0)
                return collsctl_badopt(&cmd_bench, opt, optarg,
                                       "A or A:B, bytes from 1 to 1g with an "
                                       "optional k, m or g suffix (x1024), "
                                       "A <= B");
            break;
        case 'a':
            o.algo = optarg;
            break;
        case 'H':
            o.mode = COLLS_MODE_HIER;
            break;
        case 'F':
            o.mode = COLLS_MODE_FLAT;
            break;
        case 'D':
            o.mode = COLLS_MODE_DIRECT;
            break;
        case 'R':
            o.placement = COLLS_PLACE_ROUNDROBIN;
            break;
        case 'j':
            o.json = 1;
            break;
        case 'l':
            o.latency = 1;
            break;
        case 'C':
            o.compress = strcmp(optarg, "off") == 0    ? COLLS_COMPRESS_OFF
                         : strcmp(optarg, "on") == 0   ? COLLS_COMPRESS_ON
                         : strcmp(optarg, "auto") == 0 ? COLLS_COMPRESS_AUTO
                                                       : -2;
            if (o.compress == -2)
                return collsctl_badopt(&cmd_bench, opt, optarg,
                                       "off, on or auto");
            break;
        case 'g':
            o.group = optarg;
            break;
        case 'S':
            if (bench_sockets(optarg, &o) < 0)
                return collsctl_badopt(&cmd_bench, opt, optarg,
                                       "socket paths separated by commas, at "
                                       "most 64");
            break;
        case 'n':
            if (collsctl_opt_long(&cmd_bench, opt, optarg, 1, BENCH_MAX_PROCS,
                                  &v) != 0)
                return COLLSCTL_USAGE;
            o.nprocs = (int)v;
            break;
        case 'k':
            if (collsctl_opt_long(&cmd_bench, opt, optarg, 1, BENCH_MAX_REPS,
                                  &v) != 0)
                return COLLSCTL_USAGE;
            o.runs = (int)v;
            break;
        case 'i':
            if (collsctl_opt_long(&cmd_bench, opt, optarg, 1, BENCH_MAX_REPS,
                                  &v) != 0)
                return COLLSCTL_USAGE;
            o.iters = (int)v;
            break;
        default:
            return collsctl_usage(&cmd_bench);
        }
    }
    if (optind + 1 != argc)
        return collsctl_usage(&cmd_bench);
    o.op = collsctl_parse_op(&cmd_bench, argv[optind]);
    if (o.op < 0)
        return COLLSCTL_USAGE;
    if (o.algo != NULL && collsctl_check_alg(&cmd_bench, o.op, o.algo) != 0)
        return COLLSCTL_USAGE;
    if (o.group != NULL)
        return bench_member(&o, NULL, o.group);
    return bench_fork(&o);
}

static const struct collsctl_opt bench_opts[] = {
    {"sizes", 's', 0, "A:B",
     "message sizes from A to B bytes by powers of 4 (or one size A); "
     "bytes of one rank's block, k/m/g suffixes; default 4:4m"},
    {"algo", 'a', 0, "NAME[:SEG]",
     "force the algorithm NAME (segment SEG bytes for a segmented one); "
     "`collsctl algorithms OP` lists them; default: the rules table's"},
    {"hier", 'H', 0, NULL,
     "hierarchical mode: combine on each host, exchange between hosts"},
    {"flat", 'F', 0, NULL, "flat mode: every rank is a peer of the schedule"},
    {"direct", 'D', 0, NULL,
     "direct mode: barrier, bcast, allreduce and allgather among the tasks "
     "over the direct route (default: auto, direct up to COLLS_DIRECT_MAX "
     "bytes, and at any size with one task per host)"},
    {"roundrobin", 'R', 0, NULL,
     "deal the ranks over the hosts round robin (default: contiguous per "
     "host)"},
    {"compress", 'C', 0, "MODE",
     "off, on or auto: FPC compression of bcasts; the data become doubles",
     "off on auto"},
    {"runs", 'k', COLLSCTL_OPT_SHORT, "K",
     "timed runs per size, 1 to 1000000 (default 5); the best one counts"},
    {"iters", 'i', 0, "N",
     "back-to-back operations per run, 1 to 1000000 (default 50)"},
    {"latency", 'l', 0, NULL,
     "time one operation on its own.  Rooted ones (bcast, scatter[v], "
     "reduce, gather[v]): per rank i but the root, operations chained "
     "through i by an empty message on the direct route, less its one way; "
     "the maximum over i (P - 1 times the operations).  The others but "
     "barrier: each operation after a barrier, less barriers alone"},
    {"json", 'j', COLLSCTL_OPT_SHORT, NULL,
     "print one JSON object: op, processes, runs, iters, warmups, method "
     "(classic or latency), data, compress, and results, one object per "
     "size (bytes, us_per_op, algorithm, mode)"},
    {"group", 'g', 0, "NAME",
     "be one member of group NAME of -n P members (start P of them)"},
    {NULL, 'n', COLLSCTL_OPT_SHORT, "P",
     "processes, 1 to 256 (default 2); without --group they are forked "
     "here"},
    {"sockets", 'S', 0, "A,B,...",
     "forked member i attaches to socket i (round robin; default: the "
     "usual one)"},
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_bench = {
    .name = "bench",
    .args = "OP",
    .help = "time a collective per size (us/op, algorithm, mode)",
    .detail = "OP is one of barrier bcast reduce allreduce gather gatherv "
              "scatter scatterv allgather allgatherv alltoall alltoallv "
              "reduce_scatter scan exscan.  Per size: 3 warm-ups, then K "
              "runs of N operations, each run after a barrier; each process "
              "keeps its best run, and the figure is the maximum of those "
              "over the processes.  --latency times one operation on its "
              "own instead (back to back, operations overlap).  "
              "Data are int32 (reductions: SUM).  With "
              "stderr on a terminal a progress line shows the size being "
              "measured.",
    .opts = bench_opts,
    .operands = COLLSCTL_OPS,
    .needs_daemon = 1,
    .exec = bench_exec,
};
