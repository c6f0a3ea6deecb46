/*
 * allreduce.c -- the README's collective demo: N tasks spread over the
 * daemons of the virtual machine join one group and run allreduce, bcast
 * and allgather on known data, each checked against a serial reference;
 * rank 0 prints, per operation, the algorithm the daemons chose, the mode
 * and the microseconds per operation.
 *
 *   allreduce -n N [-c COUNT] [-r REPS] [-t SECONDS] [--flat]
 *             [--socket A,B,C]
 *       forks N tasks; task i attaches to socket i mod (number of sockets)
 *       and joins the group "allreduce-<pid of the parent>".
 *   allreduce --group NAME -N N [...]
 *       one task of group NAME of N members (start N of them by hand).
 *
 * Data: rank r holds x[i] = (r + 1) * 1000 + i as doubles (integers below
 * 2^53, so every order of summation gives the exact reference).  Checked:
 * allreduce SUM and MAX, bcast from the last rank, allgather of every
 * rank's block.  Any mismatch, error or timeout makes the task exit
 * non-zero; the forking parent fails if any task failed.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "colls.h"

#define AR_MAX_TASKS   256
#define AR_MAX_SOCKETS 64

struct ar_opts {
    int ntasks;
    size_t count;
    int reps;
    int timeout_s;
    int mode;
    const char *group;
    char *sockets[AR_MAX_SOCKETS];
    int nsockets;
};

static double
ar_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double
ar_value(int rank, size_t i)
{
    return (double)(rank + 1) * 1000.0 + (double)i;
}

/* Prints one result line on rank 0. */
static void
ar_report(colls_group_t *g, const char *op, size_t bytes, double us)
{
    if (colls_group_rank(g) != 0)
        return;
    printf("  %-10s P=%-3d %9zu bytes  alg=%-16s mode=%-4s %10.1f us  ok\n", op,
           colls_group_size(g), bytes, colls_group_last_alg(g),
           colls_group_last_mode(g) == COLLS_MODE_FLAT ? "flat" : "hier", us);
    fflush(stdout); /* forked tasks end with _exit */
}

/* Checks n doubles against want(i); prints the first mismatch. */
static int
ar_check(const char *op, int rank, const double *got, size_t n,
         double (*want)(size_t, void *), void *arg)
{
    size_t i;

    for (i = 0; i < n; i++) {
        double w = want(i, arg);
        if (got[i] != w) {
            fprintf(stderr,
                    "allreduce: rank %d: %s item %zu is %.17g, "
                    "want %.17g\n",
                    rank, op, i, got[i], w);
            return -1;
        }
    }
    return 0;
}

struct ar_ref {
    int P;
    size_t count;
};

static double
ar_want_sum(size_t i, void *arg)
{
    const struct ar_ref *r = arg;

    return 1000.0 * r->P * (r->P + 1) / 2 + (double)r->P * (double)i;
}

static double
ar_want_max(size_t i, void *arg)
{
    return ar_value(((const struct ar_ref *)arg)->P - 1, i);
}

static double
ar_want_gather(size_t i, void *arg)
{
    const struct ar_ref *r = arg;

    return ar_value((int)(i / r->count), i % r->count);
}

/* Runs op reps times (after one warm-up); *us per operation. */
#define AR_TIME(reps, us, call)                                                \
    do {                                                                       \
        int k_;                                                                \
        double t0_;                                                            \
        rc = (call);                                                           \
        for (k_ = 0, t0_ = ar_now_us(); rc == 0 && k_ < (reps); k_++)          \
            rc = (call);                                                       \
        (us) = (ar_now_us() - t0_) / (reps);                                   \
    } while (0)

/*
 * One task: attach (socket NULL: the default), join, run and check the
 * three operations.  Returns the exit status.
 */
static int
ar_task(const struct ar_opts *o, const char *socket, const char *name)
{
    colls_t *c = NULL;
    colls_group_t *g = NULL;
    double *x = NULL, *y = NULL, *all = NULL, us;
    struct ar_ref ref;
    size_t i, n = o->count;
    int rank, P, rc;

    rc = colls_attach(socket, &c);
    if (rc < 0) {
        fprintf(stderr, "allreduce: attach: %s\n", colls_strerror(rc));
        return 1;
    }
    colls_set_timeout(c, o->timeout_s * 1000);
    rank = colls_group_join(c, name, o->ntasks, &g);
    if (rank < 0) {
        rc = rank;
        fprintf(stderr, "allreduce: join %s: %s\n", name, colls_strerror(rc));
        goto out;
    }
    P = colls_group_size(g);
    ref.P = P;
    ref.count = n;
    colls_group_set_mode(g, o->mode);
    x = malloc(n * sizeof(*x));
    y = malloc(n * sizeof(*y));
    all = malloc((size_t)P * n * sizeof(*all));
    if (x == NULL || y == NULL || all == NULL) {
        rc = COLLS_ENOMEM;
        goto out;
    }
    for (i = 0; i < n; i++)
        x[i] = ar_value(rank, i);
    if (rank == 0) {
        printf("allreduce: %d tasks in group %s, %zu doubles each\n", P, name,
               n);
        fflush(stdout);
    }

    AR_TIME(o->reps, us, colls_allreduce(g, x, y, n, COLLS_DOUBLE, COLLS_SUM));
    if (rc < 0)
        goto fail;
    if (ar_check("allreduce sum", rank, y, n, ar_want_sum, &ref) < 0)
        goto bad;
    ar_report(g, "allreduce", n * sizeof(double), us);

    rc = colls_allreduce(g, x, y, n, COLLS_DOUBLE, COLLS_MAX);
    if (rc < 0)
        goto fail;
    if (ar_check("allreduce max", rank, y, n, ar_want_max, &ref) < 0)
        goto bad;

    AR_TIME(o->reps, us,
            (memcpy(y, x, n * sizeof(*y)),
             colls_bcast(g, y, n, COLLS_DOUBLE, P - 1)));
    if (rc < 0)
        goto fail;
    if (ar_check("bcast", rank, y, n, ar_want_max, &ref) < 0)
        goto bad;
    ar_report(g, "bcast", n * sizeof(double), us);

    AR_TIME(o->reps, us, colls_allgather(g, x, all, n, COLLS_DOUBLE));
    if (rc < 0)
        goto fail;
    if (ar_check("allgather", rank, all, (size_t)P * n, ar_want_gather, &ref) <
        0)
        goto bad;
    ar_report(g, "allgather", n * sizeof(double), us);
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "allreduce: rank %d: %s\n", rank, colls_strerror(rc));
    goto out;
bad:
    rc = -1;
out:
    if (g != NULL)
        colls_group_leave(g);
    colls_detach(c);
    free(x);
    free(y);
    free(all);
    return rc < 0 ? 1 : 0;
}

/* Forks the tasks and waits; kills the others if one fails. */
static int
ar_fork(const struct ar_opts *o)
{
    pid_t pids[AR_MAX_TASKS];
    char name[64];
    int i, status, left, failed = 0;

    snprintf(name, sizeof(name), "allreduce-%ld", (long)getpid());
    fflush(stdout);
    for (i = 0; i < o->ntasks; i++) {
        pids[i] = fork();
        if (pids[i] < 0) {
            perror("allreduce: fork");
            failed = 1;
            break;
        }
        if (pids[i] == 0)
            _exit(ar_task(o, o->nsockets ? o->sockets[i % o->nsockets] : NULL,
                          name));
    }
    left = i;
    while (left > 0) {
        pid_t p = wait(&status);
        if (p < 0)
            break;
        left--;
        for (i = 0; i < o->ntasks; i++)
            if (pids[i] == p)
                pids[i] = 0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            if (!failed)
                for (i = 0; i < o->ntasks; i++)
                    if (pids[i] > 0)
                        kill(pids[i], SIGTERM);
            failed = 1;
        }
    }
    if (!failed)
        printf("allreduce: all %d tasks agree with the serial reference\n",
               o->ntasks);
    return failed;
}

static int
ar_usage(void)
{
    fprintf(stderr,
            "usage: allreduce -n N [-c COUNT] [-r REPS] [-t SECONDS] [--flat]"
            " [--socket A,B,C]\n"
            "       allreduce --group NAME -N N [same options]\n");
    return 2;
}

int
main(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"socket", required_argument, NULL, 'S'},
        {"group", required_argument, NULL, 'g'},
        {"flat", no_argument, NULL, 'F'},
        {NULL, 0, NULL, 0}};
    struct ar_opts o;
    char *save = NULL, *s;
    int opt;

    memset(&o, 0, sizeof(o));
    o.ntasks = 0;
    o.count = 4096;
    o.reps = 20;
    o.timeout_s = 30;
    o.mode = COLLS_MODE_AUTO;
    while ((opt = getopt_long(argc, argv, "n:N:c:r:t:", lopts, NULL)) != -1) {
        switch (opt) {
        case 'n':
        case 'N':
            o.ntasks = atoi(optarg);
            break;
        case 'c':
            o.count = (size_t)strtoul(optarg, NULL, 10);
            break;
        case 'r':
            o.reps = atoi(optarg);
            break;
        case 't':
            o.timeout_s = atoi(optarg);
            break;
        case 'F':
            o.mode = COLLS_MODE_FLAT;
            break;
        case 'g':
            o.group = optarg;
            break;
        case 'S':
            for (s = strtok_r(optarg, ",", &save); s != NULL;
                 s = strtok_r(NULL, ",", &save))
                if (o.nsockets < AR_MAX_SOCKETS)
                    o.sockets[o.nsockets++] = s;
            break;
        default:
            return ar_usage();
        }
    }
    if (optind != argc || o.ntasks < 1 || o.ntasks > AR_MAX_TASKS ||
        o.count < 1 || o.count > (1u << 24) || o.reps < 1 || o.timeout_s < 1)
        return ar_usage();
    if (o.group != NULL)
        return ar_task(&o, o.nsockets ? o.sockets[0] : NULL, o.group);
    return ar_fork(&o);
}
