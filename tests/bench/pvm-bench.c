/*
 * pvm-bench.c -- a PVM 3.4 program that times PVM's group barrier, small
 * reduce, group broadcast of 1 MiB and ping-pong of 8 B, the way
 * `collsctl bench` times ours (tools/cmd_bench.c); run by
 * tests/bench/pvm-bench.sh under Debian's PVM 3.4.6 and, unchanged, under
 * collsd's pvm3 library.  It uses the PVM API only (pvm3.h, -lgpvm3
 * -lpvm3) and POSIX's clock.
 *
 *   pvm-bench [--np P] [--runs K] [--iters N] [--pp-iters M] [--repeat R]
 *             [--bytes B] [--label L] [OP...]
 *
 * Each run of OP is N operations after a barrier, but M round trips for
 * pingpong (default N): the barrier leaves work in the daemons that lands
 * on the first operations of the run, about 2 us per round trip in runs
 * of 50, where a latency benchmark runs thousands (OSU's: 10,000).
 *
 * OP is one of barrier, reduce-int, reduce-double, bcast, pingpong (all,
 * in that order, when none is given).  The process started by hand is the
 * master: it joins the group first (instance 0), then spawns P-1 workers
 * (default: one per host of pvm_config other than its own, so P = hosts),
 * each on a named host (PvmTaskHost), hosts taken in pvm_config's order
 * and round-robin when P exceeds them.  Workers get the master's arguments
 * plus "--np P --worker GROUP" and join the group too.  The program spawns
 * argv[0]: start it by its absolute path (or by a name that PVM's ep= or
 * collsd's --spawn-path finds).
 *
 * For each operation every process runs 3 discarded warm-ups, then K runs
 * (default 5) of N back-to-back operations (default 50), each run started
 * after a pvm_barrier of the whole group; a process keeps its least
 * per-operation time over the runs and the figure is the maximum of those
 * minima over the processes.  That measurement is repeated R times
 * (default 5) and the master prints, per operation,
 *
 *   L OP BYTES MEDIAN MIN MAX        (microseconds per operation)
 *
 * with the median and the spread of the R figures.  The operations:
 *
 *   barrier        pvm_barrier(group, P)
 *   reduce-int     pvm_reduce(PvmSum) of 1 int to instance 0
 *   reduce-double  pvm_reduce(PvmSum) of 1 double to instance 0
 *   bcast          instance 0 packs B bytes (default 1 MiB, PvmDataDefault)
 *                  and calls pvm_bcast; every other member pvm_recv's and
 *                  unpacks it and answers with an empty message; one
 *                  operation ends when instance 0 has every answer, so it
 *                  is the time until every receiver has the data
 *   pingpong       8 B (PvmDataDefault) from instance 0 to instance 1 and
 *                  back on the default route (no pvm_setopt); the figure is
 *                  half a round trip; the other processes only take part
 *                  in the barriers
 *
 * Results are checked: the reduces' sums at instance 0 and the broadcast's
 * last byte at every receiver; a wrong value is reported on stderr and
 * counted, every worker sends its count to the master at the end, and the
 * master's exit status is 1 when the total is not 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_OP   1001 /* the broadcast's message tag */
#define TAG_ACK  1002 /* broadcast answers */
#define TAG_PING 1003 /* ping-pong */
#define TAG_RES  1004 /* per-process figures to the master */
#define TAG_ERR  1005 /* per-process counts of wrong results */
/* pvm_reduce returns at once everywhere but at the root, and PVM's root
   takes the contributions of any sender with the tag: back-to-back
   reduces need tags of their own (TAG_RED + a count modulo NRED), or a
   fast sender's next contribution is summed into the current one. */
#define TAG_RED 10000
#define NRED    4096
#define MAXARGS 64

enum op { OP_BARRIER, OP_RINT, OP_RDBL, OP_BCAST, OP_PING, OP_MAX };

static const char *const op_names[OP_MAX] = {
    "barrier", "reduce-int", "reduce-double", "bcast", "pingpong"};

/* Options, identical in every process (workers get the master's). */
struct opts {
    int np, runs, iters, pp_iters, repeat, bytes;
    const char *label, *group;
    int ops[OP_MAX], nops, worker;
};

static int errors;
static int reduces; /* this process's pvm_reduce calls, for their tags */

static double
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Stops every process of the run with a message; PVM calls that fail
   here leave nothing to measure. */
static void
die(const char *what, int rc)
{
    fprintf(stderr, "pvm-bench: %s: %d\n", what, rc);
    if (rc < 0)
        pvm_perror((char *)what);
    pvm_exit();
    exit(2);
}

/* One operation op by the process of instance inst in a group of np;
   buf holds bytes bytes for the broadcast. */
static void
one(const struct opts *o, int op, int inst, int tid0, int tid1, char *buf)
{
    const int np = o->np;
    int i, rc, ival;
    double dval;

    switch (op) {
    case OP_BARRIER:
        if ((rc = pvm_barrier((char *)o->group, np)) < 0)
            die("pvm_barrier", rc);
        break;
    case OP_RINT:
        ival = inst + 1;
        rc = pvm_reduce(PvmSum, &ival, 1, PVM_INT, TAG_RED + reduces++ % NRED,
                        (char *)o->group, 0);
        if (rc < 0)
            die("pvm_reduce int", rc);
        if (inst == 0 && ival != np * (np + 1) / 2) {
            fprintf(stderr, "pvm-bench: reduce-int gave %d, not %d\n", ival,
                    np * (np + 1) / 2);
            errors++;
        }
        break;
    case OP_RDBL:
        dval = inst + 0.5;
        rc = pvm_reduce(PvmSum, &dval, 1, PVM_DOUBLE,
                        TAG_RED + reduces++ % NRED, (char *)o->group, 0);
        if (rc < 0)
            die("pvm_reduce double", rc);
        if (inst == 0 && dval != np * (np - 1) / 2.0 + np * 0.5) {
            fprintf(stderr, "pvm-bench: reduce-double gave %g\n", dval);
            errors++;
        }
        break;
    case OP_BCAST:
        if (inst == 0) {
            pvm_initsend(PvmDataDefault);
            pvm_pkbyte(buf, o->bytes, 1);
            if ((rc = pvm_bcast((char *)o->group, TAG_OP)) < 0)
                die("pvm_bcast", rc);
            for (i = 1; i < np; i++)
                if ((rc = pvm_recv(-1, TAG_ACK)) < 0)
                    die("pvm_recv ack", rc);
        } else {
            if ((rc = pvm_recv(tid0, TAG_OP)) < 0)
                die("pvm_recv bcast", rc);
            buf[o->bytes - 1] = 0;
            pvm_upkbyte(buf, o->bytes, 1);
            if (buf[o->bytes - 1] != (char)0x5a) {
                fprintf(stderr, "pvm-bench: bcast data wrong\n");
                errors++;
            }
            pvm_initsend(PvmDataDefault);
            if ((rc = pvm_send(tid0, TAG_ACK)) < 0)
                die("pvm_send ack", rc);
        }
        break;
    default: /* OP_PING */
        if (inst == 0) {
            pvm_initsend(PvmDataDefault);
            pvm_pkbyte(buf, 8, 1);
            if ((rc = pvm_send(tid1, TAG_PING)) < 0)
                die("pvm_send ping", rc);
            if ((rc = pvm_recv(tid1, TAG_PING)) < 0)
                die("pvm_recv pong", rc);
            pvm_upkbyte(buf, 8, 1);
        } else if (inst == 1) {
            if ((rc = pvm_recv(tid0, TAG_PING)) < 0)
                die("pvm_recv ping", rc);
            pvm_upkbyte(buf, 8, 1);
            pvm_initsend(PvmDataDefault);
            pvm_pkbyte(buf, 8, 1);
            if ((rc = pvm_send(tid0, TAG_PING)) < 0)
                die("pvm_send pong", rc);
        }
        break;
    }
}

/* This process's least per-operation time (us) over the runs; 0 for the
   processes that take no part in a ping-pong. */
static double
time_op(const struct opts *o, int op, int inst, int tid0, int tid1, char *buf)
{
    double best = 1e300;
    int k, i, n = op == OP_PING ? o->pp_iters : o->iters;

    for (k = 0; k < 3; k++)
        one(o, op, inst, tid0, tid1, buf);
    for (k = 0; k < o->runs; k++) {
        double t0, t;

        if ((i = pvm_barrier((char *)o->group, o->np)) < 0)
            die("pvm_barrier", i);
        t0 = now_us();
        for (i = 0; i < n; i++)
            one(o, op, inst, tid0, tid1, buf);
        t = (now_us() - t0) / n;
        if (op == OP_PING)
            t /= 2;
        if (t < best)
            best = t;
    }
    if (op == OP_PING && inst > 1)
        best = 0;
    return best;
}

/* The maximum of every process's figure, at instance 0 (the others send
   theirs and get 0 back). */
static double
max_over(const struct opts *o, int inst, int tid0, double mine)
{
    int i, rc;
    double v;

    if (inst != 0) {
        pvm_initsend(PvmDataDefault);
        pvm_pkdouble(&mine, 1, 1);
        if ((rc = pvm_send(tid0, TAG_RES)) < 0)
            die("pvm_send result", rc);
        return 0;
    }
    for (i = 1; i < o->np; i++) {
        if ((rc = pvm_recv(-1, TAG_RES)) < 0)
            die("pvm_recv result", rc);
        pvm_upkdouble(&v, 1, 1);
        if (v > mine)
            mine = v;
    }
    return mine;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void
usage(void)
{
    fprintf(stderr, "usage: pvm-bench [--np P] [--runs K] [--iters N] "
                    "[--pp-iters M] [--repeat R] [--bytes B] [--label L] "
                    "[OP...]\n");
    exit(2);
}

static void
parse(struct opts *o, int argc, char **argv)
{
    int i, k;

    memset(o, 0, sizeof *o);
    o->runs = 5;
    o->iters = 50;
    o->repeat = 5;
    o->bytes = 1 << 20;
    o->label = "pvm";
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--np") == 0 && v)
            o->np = atoi(argv[++i]);
        else if (strcmp(a, "--runs") == 0 && v)
            o->runs = atoi(argv[++i]);
        else if (strcmp(a, "--iters") == 0 && v)
            o->iters = atoi(argv[++i]);
        else if (strcmp(a, "--pp-iters") == 0 && v)
            o->pp_iters = atoi(argv[++i]);
        else if (strcmp(a, "--repeat") == 0 && v)
            o->repeat = atoi(argv[++i]);
        else if (strcmp(a, "--bytes") == 0 && v)
            o->bytes = atoi(argv[++i]);
        else if (strcmp(a, "--label") == 0 && v)
            o->label = argv[++i];
        else if (strcmp(a, "--worker") == 0 && v) {
            o->worker = 1;
            o->group = argv[++i];
        } else {
            for (k = 0; k < OP_MAX; k++)
                if (strcmp(a, op_names[k]) == 0)
                    break;
            if (k == OP_MAX || o->nops == OP_MAX)
                usage();
            o->ops[o->nops++] = k;
        }
    }
    if (o->nops == 0)
        for (k = 0; k < OP_MAX; k++)
            o->ops[o->nops++] = k;
    if (o->pp_iters == 0)
        o->pp_iters = o->iters;
    if (o->runs < 1 || o->iters < 1 || o->pp_iters < 1 || o->repeat < 1 ||
        o->bytes < 8 || o->np < 0 || argc > MAXARGS - 5)
        usage();
}

/* The master: spawns the workers one by one on named hosts and prints
   the comment line that says where they run. */
static void
spawn_workers(struct opts *o, int argc, char **argv)
{
    static char np[16];
    struct pvmhostinfo *hosts;
    char *wargv[MAXARGS];
    int nhost, narch, i, k, n = 0, myhost = pvm_tidtohost(pvm_mytid()), rc;

    if ((rc = pvm_config(&nhost, &narch, &hosts)) < 0)
        die("pvm_config", rc);
    if (o->np == 0)
        o->np = nhost;
    for (i = 1; i < argc; i++)
        wargv[n++] = argv[i];
    snprintf(np, sizeof np, "%d", o->np);
    wargv[n++] = "--np"; /* last: it overrides the master's */
    wargv[n++] = np;
    wargv[n++] = "--worker";
    wargv[n++] = (char *)o->group;
    wargv[n] = NULL;
    /* Hosts other than the master's first, then round-robin. */
    for (i = 1, k = 0; i < o->np; k++) {
        struct pvmhostinfo *h = &hosts[k % nhost];
        int tid;

        if (k < nhost && h->hi_tid == myhost && nhost > 1)
            continue;
        rc = pvm_spawn(argv[0], wargv, PvmTaskHost, h->hi_name, 1, &tid);
        if (rc != 1)
            die("pvm_spawn", rc < 0 ? rc : tid);
        i++;
    }
    printf("# %s: %d processes on %d hosts (", o->label, o->np, nhost);
    for (i = 0; i < nhost; i++)
        printf("%s%s", i ? " " : "", hosts[i].hi_name);
    printf("), %d x %d runs x %d ops (pingpong %d), best run per process, "
           "max over processes, median [min..max] of %d\n",
           o->repeat, o->runs, o->iters, o->pp_iters, o->repeat);
    fflush(stdout);
}

int
main(int argc, char **argv)
{
    struct opts o;
    double *fig;
    char *buf, group[64];
    int mytid, inst, tid0, tid1, i, r, rc;

    parse(&o, argc, argv);
    if ((mytid = pvm_mytid()) < 0)
        die("pvm_mytid", mytid);
    /* The master joins first, so that it is instance 0. */
    if (!o.worker)
        snprintf(group, sizeof group, "pvmbench-%x", mytid);
    o.group = o.worker ? o.group : group;
    if ((inst = pvm_joingroup((char *)o.group)) < 0)
        die("pvm_joingroup", inst);
    if (!o.worker && inst != 0)
        die("the master's instance", inst);
    if (!o.worker)
        spawn_workers(&o, argc, argv);
    if ((rc = pvm_barrier((char *)o.group, o.np)) < 0)
        die("pvm_barrier", rc);
    tid0 = pvm_gettid((char *)o.group, 0);
    tid1 = pvm_gettid((char *)o.group, 1);
    if (tid0 < 0 || (o.np > 1 && tid1 < 0))
        die("pvm_gettid", tid0 < 0 ? tid0 : tid1);
    buf = malloc((size_t)o.bytes);
    fig = calloc((size_t)o.repeat, sizeof *fig);
    if (buf == NULL || fig == NULL)
        die("malloc", 0);
    memset(buf, 0x5a, (size_t)o.bytes);
    for (i = 0; i < o.nops; i++) {
        int op = o.ops[i], bytes;

        if (op == OP_PING && o.np < 2)
            continue;
        for (r = 0; r < o.repeat; r++)
            fig[r] = max_over(&o, inst, tid0,
                              time_op(&o, op, inst, tid0, tid1, buf));
        if (inst != 0)
            continue;
        qsort(fig, (size_t)o.repeat, sizeof *fig, cmp_double);
        bytes = op == OP_BARRIER ? 0
                : op == OP_RINT  ? (int)sizeof(int)
                : op == OP_RDBL  ? (int)sizeof(double)
                : op == OP_BCAST ? o.bytes
                                 : 8;
        printf("%s %s %d %.2f %.2f %.2f\n", o.label, op_names[op], bytes,
               o.repeat % 2 ? fig[o.repeat / 2]
                            : (fig[o.repeat / 2 - 1] + fig[o.repeat / 2]) / 2,
               fig[0], fig[o.repeat - 1]);
        fflush(stdout);
    }
    /* The workers' wrong results count in the master's exit status. */
    if (inst != 0) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&errors, 1, 1);
        if ((rc = pvm_send(tid0, TAG_ERR)) < 0)
            die("pvm_send errors", rc);
    } else
        for (i = 1; i < o.np; i++) {
            int e;

            if ((rc = pvm_recv(-1, TAG_ERR)) < 0)
                die("pvm_recv errors", rc);
            pvm_upkint(&e, 1, 1);
            errors += e;
        }
    if ((rc = pvm_barrier((char *)o.group, o.np)) < 0)
        die("pvm_barrier", rc);
    if (errors)
        fprintf(stderr, "pvm-bench: t%x: %d wrong result(s)\n", mytid, errors);
    pvm_lvgroup((char *)o.group);
    pvm_exit();
    free(buf);
    free(fig);
    return errors ? 1 : 0;
}
