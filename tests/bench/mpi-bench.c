/*
 * mpi-bench.c -- the MPI side of the side-by-side comparisons
 * (tests/bench/mpi-bench.sh): one collective per message size, timed
 * exactly as `collsctl bench` times ours (tools/cmd_bench.c).
 *
 *   mpi-bench OP [A:B] [--runs R] [--iters N] [--label L]
 *
 * Every process runs, per size, 3 discarded warm-up operations, then R
 * runs (default 5) of N back-to-back operations (default 50), each run
 * started after an MPI_Barrier; a process keeps its least per-operation
 * time over the runs, and the figure is the maximum of those minima over
 * the processes (MPI_Allreduce MAX); before the first size, 20 barriers
 * and alltoalls make the connections between ranks.  Data are int32, reductions
 * MPI_SUM, a size is the bytes of one rank's block (for alltoall, gather,
 * scatter, allgather and reduce_scatter: per destination or source rank, as
 * collsctl bench).  Sizes go from A to B by powers of 4 (default 4 B ..
 * 4 MiB); barrier runs once.  Rank 0 prints one line per size:
 *
 *   L OP BYTES US
 *
 * OP is one of barrier bcast reduce allreduce gather scatter allgather
 * alltoall reduce_scatter scan.  Built only where configure found mpicc
 * (any MPI: the script builds it once per implementation).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ops[] = {
    "barrier", "bcast",     "reduce",   "allreduce",      "gather",
    "scatter", "allgather", "alltoall", "reduce_scatter", "scan"};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

/* One operation of op on count int32 per block. */
static void
one(int op, int *s, int *r, int count, int P, int *counts)
{
    switch (op) {
    case 0:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case 1:
        MPI_Bcast(r, count, MPI_INT, 0, MPI_COMM_WORLD);
        break;
    case 2:
        MPI_Reduce(s, r, count, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case 3:
        MPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case 4:
        MPI_Gather(s, count, MPI_INT, r, count, MPI_INT, 0, MPI_COMM_WORLD);
        break;
    case 5:
        MPI_Scatter(s, count, MPI_INT, r, count, MPI_INT, 0, MPI_COMM_WORLD);
        break;
    case 6:
        MPI_Allgather(s, count, MPI_INT, r, count, MPI_INT, MPI_COMM_WORLD);
        break;
    case 7:
        MPI_Alltoall(s, count, MPI_INT, r, count, MPI_INT, MPI_COMM_WORLD);
        break;
    case 8:
        MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    default:
        MPI_Scan(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
    (void)P;
}

/* This process's best per-operation time (us) at count int32. */
static double
time_size(int op, int *s, int *r, int count, int P, int *counts, int runs,
          int iters)
{
    double best = 1e300;
    int k, i;

    for (i = 0; i < P; i++)
        counts[i] = count;
    for (k = 0; k < 3; k++)
        one(op, s, r, count, P, counts);
    for (k = 0; k < runs; k++) {
        double t0, t;

        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (i = 0; i < iters; i++)
            one(op, s, r, count, P, counts);
        t = (MPI_Wtime() - t0) * 1e6 / iters;
        if (t < best)
            best = t;
    }
    return best;
}

int
main(int argc, char **argv)
{
    long lo = 4, hi = 4L << 20;
    int runs = 5, iters = 50, op = -1, rank, P, i, *s, *r, *counts;
    const char *label = "mpi";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--label") == 0 && i + 1 < argc)
            label = argv[++i];
        else if (strchr(argv[i], ':') != NULL)
            sscanf(argv[i], "%ld:%ld", &lo, &hi);
        else {
            int k;

            for (k = 0; k < NOPS; k++)
                if (strcmp(argv[i], ops[k]) == 0)
                    op = k;
        }
    }
    if (op < 0 || lo < 4 || hi < lo || runs < 1 || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi-bench OP [A:B] [--runs R] "
                            "[--iters N] [--label L]\n");
        MPI_Finalize();
        return 2;
    }
    s = calloc((size_t)P, (size_t)hi);
    r = calloc((size_t)P, (size_t)hi);
    counts = calloc((size_t)P, sizeof *counts);
    if (s == NULL || r == NULL || counts == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (i = 0; i < P * (int)(hi / 4); i++)
        s[i] = rank + i;
    /* Connections between ranks are made lazily (Open MPI's TCP BTL):
       make them before anything is timed. */
    for (i = 0; i < 20; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD);
    }
    for (long n = lo;; n = n * 4 > hi ? hi : n * 4) {
        double mine = time_size(op, s, r, (int)(n / 4), P, counts, runs, iters),
               all;

        MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%s %s %ld %.2f\n", label, ops[op], op == 0 ? 0 : n, all);
        if (op == 0 || n >= hi)
            break;
    }
    free(s);
    free(r);
    free(counts);
    MPI_Finalize();
    return 0;
}
