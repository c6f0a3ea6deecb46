/*
 * cmd_tune.c -- `collsctl tune`: the pLogP parameters the daemons choose
 * algorithms from (docs/collectives.md "Measuring the network").
 *
 *   collsctl tune            has the local daemon measure every peer that
 *                            is up with the thorough ladder (1 B .. 4 MiB;
 *                            a progress bar on stderr), measures this
 *                            task's hop to its daemon (an allreduce of 8 B
 *                            and of 1 MiB on a group of one member,
 *                            through the daemon), has every daemon send at
 *                            once (1 KiB up: gl), commits the summary and
 *                            prints it;
 *   --params                 prints the parameters in force and every
 *                            peer's row, measuring nothing;
 *   --show OP                per size (--sizes, default 4 B .. 1 MiB by
 *                            powers of 4) and for P ranks (-n, default the
 *                            hosts up), every algorithm's predicted time
 *                            through the daemons at its best segment, and
 *                            the pick (*);
 *     --measure              also runs each algorithm, forced, with
 *                            `collsctl bench OP --hier --latency` (P
 *                            members forked here, attached to --sockets
 *                            in turn; one operation's latency, which the
 *                            rows predict;
 *                            a segmented row at the segment of its
 *                            prediction), and the pick, and prints
 *                            measured times and
 *                            the prediction's error;
 *     --plot FILE.png        draws predicted (and measured) curves per
 *                            algorithm with gnuplot.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colls.h"
#include "daemon/plogp.h"
#include "daemon/tune.h"
#include "proto/collop.h"
#include "tools/collsctl.h"

#define TUNE_MAX_SIZES  16
#define TUNE_MAX_ALGS   12
#define TUNE_TIMEOUT_MS 120000
/* The daemon's --request-timeout by default (collsd(8)): assumed when
   its statistics do not say (tune_request_ms). */
#define TUNE_REQUEST_MS 2000u

struct tune_opts {
    int params, show, measure;
    size_t ladder_max; /* largest size measured */
    int op, P;
    size_t min, max;
    const char *plot, *sockets;
};

/* ---- measuring ---- */

static void
tune_bar(int done, int total, int hid)
{
    int i, w = 30, fill = total ? done * w / total : w;

    fprintf(stderr, "\rmeasuring [");
    for (i = 0; i < w; i++)
        fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %d/%d hosts", done, total);
    if (hid > 0)
        fprintf(stderr, ", host %d ", hid);
    else
        fprintf(stderr, "         \n");
    fflush(stderr);
}

/*
 * Half the time of a collective of len bytes on a group of one member,
 * this task, run through its daemon: the two hops, and the work of the
 * daemon's collective machinery, that every collective through the
 * daemons pays besides its algorithm.  Measured as collsctl bench
 * measures (the mean of a run of RUN operations, the best of RUNS runs).
 */
static int
tune_hop(colls_t *c, size_t len, double *half_us)
{
    enum { RUNS = 20, RUN = 10, WARM = 3 };
    char name[64];
    colls_group_t *g = NULL;
    double best = -1.0;
    char *buf = calloc(1, len ? len : 1), *out = calloc(1, len ? len : 1);
    int i, r, rc;

    if (buf == NULL || out == NULL) {
        free(buf);
        free(out);
        return COLLS_ENOMEM;
    }
    snprintf(name, sizeof(name), "collsctl-tune-%ld-%zu", (long)getpid(), len);
    rc = colls_group_join(c, name, 1, &g);
    if (rc >= 0)
        rc = colls_group_set_mode(g, COLLS_MODE_HIER);
    for (i = 0; i < WARM && rc >= 0; i++)
        rc = colls_allreduce(g, buf, out, len, COLLS_BYTE, COLLS_BOR);
    for (r = 0; r < RUNS && rc >= 0; r++) {
        double t0 = collsctl_now_us(), t;

        for (i = 0; i < RUN && rc >= 0; i++)
            rc = colls_allreduce(g, buf, out, len, COLLS_BYTE, COLLS_BOR);
        t = (collsctl_now_us() - t0) / RUN;
        if (best < 0.0 || t < best)
            best = t;
    }
    if (g != NULL)
        colls_group_leave(g);
    free(buf);
    free(out);
    if (rc < 0)
        return rc;
    *half_us = best / 2.0;
    return 0;
}

static void
tune_print_row(const colls_plogp_t *p)
{
    int i;

    printf("%10s %10s %10s %10s %10s %10s %10s\n", "bytes", "g_us", "gap_us",
           "rtt_us", "gl_us", "o_s_us", "o_r_us");
    for (i = 0; i < p->n; i++)
        printf("%10zu %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", p->m[i],
               p->g[i], p->gap[i], p->rtt[i], p->gl[i], p->o_s[i], p->o_r[i]);
}

static void
tune_print_params(const colls_plogp_t *m, const colls_plogp_t *peers, int n)
{
    int i;

    if (m->epoch == 0) {
        printf("no parameters measured yet: the daemon chooses by its rules "
               "table (collsctl tune measures)\n");
    } else {
        printf("machine, epoch %llu: L %.2f us (%.2f while every daemon "
               "sends), gamma %.6f us/byte, hop %.2f us + %.6f us/byte each "
               "way\n",
               (unsigned long long)m->epoch, m->L, m->Ll, m->gamma, m->hop_us,
               m->hop_byte_us);
        tune_print_row(m);
    }
    for (i = 0; i < n; i++) {
        printf("\nhost %d: L %.2f us\n", peers[i].hid, peers[i].L);
        tune_print_row(&peers[i]);
    }
}

/*
 * How long a measurement over sizes may take before collsctl gives up:
 * what the daemon allows each of its probes (an echo and a train per size
 * and repetition), which is more than a slow link needs (the thorough
 * ladder to 1 MiB took 100 s per peer on 8 hosts at 10 Mbit/s, near the
 * 120 s that every request had before), so the daemon always answers
 * first, with its own error if a probe was lost.
 */
static int
tune_ladder_ms(const size_t *sizes, int n, unsigned request_ms)
{
    uint64_t ms =
        TUNE_TIMEOUT_MS +
        plogp_ladder_us(sizes, (size_t)n, PLOGP_THOROUGH_REPS, request_ms) /
            1000u;

    return ms < 3600000u ? (int)ms : 3600000;
}

/* The --request-timeout of the daemon that measures (its statistics'
   "request_timeout_ms"), which its probes' deadlines grow from; else
   TUNE_REQUEST_MS. */
static unsigned
tune_request_ms(colls_t *c)
{
    char *json = NULL;
    long ms = -1;

    if (colls_stats_json(c, &json) == 0)
        ms = collsctl_json_long(json, "request_timeout_ms", -1);
    colls_free(json);
    return ms > 0 && ms <= 3600000 ? (unsigned)ms : TUNE_REQUEST_MS;
}

static int
tune_measure_all(colls_t *c, size_t max)
{
    size_t sizes[PLOGP_MAX_SIZES], lsizes[PLOGP_MAX_SIZES];
    int ns = 0, nl;
    colls_hostinfo_t *hosts = NULL;
    colls_plogp_t row, m;
    double h8, h1m, hop_b;
    int n, i, up = 0, done = 0, rc;
    unsigned request_ms = tune_request_ms(c);

    if ((rc = colls_hosts(c, &hosts, &n)) < 0) {
        collsctl_perror(c, "tune: hosts", rc);
        return COLLSCTL_FAIL;
    }
    for (i = 0; i < (int)plogp_thorough_n; i++)
        if (plogp_thorough[i] <= max)
            sizes[ns++] = plogp_thorough[i];
    for (i = 0; i < n; i++)
        up += hosts[i].state == COLLS_HOST_UP && hosts[i].rtt_us > 0.0;
    for (i = 0; i < n; i++) {
        if (hosts[i].state != COLLS_HOST_UP || hosts[i].rtt_us <= 0.0)
            continue; /* down, or ourselves */
        tune_bar(done, up, hosts[i].hid);
        colls_set_timeout(c, tune_ladder_ms(sizes, ns, request_ms));
        rc = colls_plogp_measure(c, hosts[i].hid, sizes, ns, 0, &row);
        if (rc < 0) {
            fprintf(stderr, "\n");
            collsctl_perror(c, "tune: measure", rc);
            colls_free(hosts);
            return COLLSCTL_FAIL;
        }
        done++;
    }
    tune_bar(done, up, 0);
    colls_free(hosts);
    if (up == 0) {
        fprintf(stderr, "collsctl tune: no other host is up: nothing to "
                        "measure\n");
        return COLLSCTL_FAIL;
    }
    /* every daemon at once, from 1 KiB (below, latency rules) */
    for (i = 0, nl = 0; i < ns; i++)
        if (sizes[i] >= 1024)
            lsizes[nl++] = sizes[i];
    fprintf(stderr, "measuring with every daemon sending at once ...\n");
    colls_set_timeout(c, tune_ladder_ms(lsizes, nl, request_ms));
    if (nl > 0 && (rc = colls_plogp_load(c, lsizes, nl, 0, &row)) < 0) {
        collsctl_perror(c, "tune: under load", rc);
        return COLLSCTL_FAIL;
    }
    colls_set_timeout(c, TUNE_TIMEOUT_MS);
    if ((rc = tune_hop(c, 8, &h8)) < 0 ||
        (rc = tune_hop(c, 1 << 20, &h1m)) < 0) {
        collsctl_perror(c, "tune: hop to the daemon", rc);
        return COLLSCTL_FAIL;
    }
    hop_b = h1m > h8 ? (h1m - h8) / (double)((1 << 20) - 8) : 0.0;
    if ((rc = colls_plogp_commit(c, h8, hop_b, &m)) < 0) {
        collsctl_perror(c, "tune: commit", rc);
        return COLLSCTL_FAIL;
    }
    tune_print_params(&m, NULL, 0);
    return COLLSCTL_OK;
}

/* ---- showing ---- */

/* The daemon's summary as the tuner's input; -1 after saying why not. */
static int
tune_current(colls_t *c, struct plogp_params *pp)
{
    colls_plogp_t m;
    int rc = colls_plogp_get(c, &m, NULL, NULL), i;

    if (rc < 0) {
        collsctl_perror(c, "tune", rc);
        return -1;
    }
    if (m.epoch == 0) {
        fprintf(stderr, "collsctl tune: no parameters measured yet (run "
                        "`collsctl tune` first)\n");
        return -1;
    }
    memset(pp, 0, sizeof(*pp));
    pp->epoch = m.epoch;
    pp->L = m.L;
    pp->Ll = m.Ll;
    pp->gamma = m.gamma;
    pp->hop_us = m.hop_us;
    pp->hop_byte_us = m.hop_byte_us;
    pp->n = (size_t)m.n;
    for (i = 0; i < m.n; i++) {
        pp->m[i] = m.m[i];
        pp->g[i] = m.g[i];
        pp->gap[i] = m.gap[i];
        pp->rtt[i] = m.rtt[i];
        pp->gl[i] = m.gl[i];
        pp->o_s[i] = m.o_s[i];
        pp->o_r[i] = m.o_r[i];
    }
    return plogp_check(pp) == 0 ? 0 : -1;
}

/* Hosts up, for the default P. */
static int
tune_hosts_up(colls_t *c)
{
    colls_hostinfo_t *hosts;
    int n, i, up = 0;

    if (colls_hosts(c, &hosts, &n) < 0)
        return 1;
    for (i = 0; i < n; i++)
        up += hosts[i].state == COLLS_HOST_UP;
    colls_free(hosts);
    return up > 0 ? up : 1;
}

/*
 * Runs `collsctl bench OP --hier --latency -n P --sizes A:B [--algo
 * SPEC]`, A and B the first and last of sizes[], and reads its rows into
 * us[] (by size index, -1 where missing).
 */
static int
tune_bench(const struct tune_opts *o, const char *spec, const size_t *sizes,
           int ns, double *us)
{
    char cmd[1024], line[512], self[512];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    FILE *f;
    int i, n = 0;

    if (sl <= 0)
        return -1;
    self[sl] = '\0';
    for (i = 0; i < ns; i++)
        us[i] = -1.0;
    snprintf(cmd, sizeof(cmd),
             "'%s' bench %s --hier --latency -n %d --sizes %zu:%zu%s%s%s%s "
             "--runs 3",
             self, collop_name(o->op), o->P, sizes[0], sizes[ns - 1],
             spec ? " --algo " : "", spec ? spec : "",
             o->sockets ? " --sockets " : "", o->sockets ? o->sockets : "");
    f = popen(cmd, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        size_t b;
        double t;

        if (line[0] == '#' || sscanf(line, "%zu %lf", &b, &t) != 2)
            continue;
        for (i = 0; i < ns; i++)
            if (sizes[i] == b)
                us[i] = t, n++;
    }
    return pclose(f) == 0 && n > 0 ? 0 : -1;
}

/* The prediction of alg for size n (us, with the hops), its segment. */
static double
tune_predict(const struct tune_opts *o, const struct plogp_params *pp,
             const struct alg *alg, size_t n, size_t *seg)
{
    struct alg_args a = {.op = o->op,
                         .P = o->P,
                         .size = n,
                         .dtype = COLLS_INT32,
                         .rop = COLLS_SUM};
    struct plogp v;
    size_t in, out;

    plogp_view(pp, &v);
    if (!alg_usable(alg, &a))
        return -1.0;
    collop_task_bytes(o->op, o->P, n, &in, &out);
    return plogp_with_hops(pp, in, out, tune_alg_cost(&a, &v, alg, seg));
}

static int
tune_plot(const struct tune_opts *o, const struct alg *t, size_t nalg,
          const size_t *sizes, int ns, double pred[][TUNE_MAX_SIZES],
          double meas[][TUNE_MAX_SIZES])
{
    char cmd[600];
    FILE *g;
    size_t a;
    int i, first = 1, kind;

    snprintf(cmd, sizeof(cmd), "gnuplot");
    g = popen(cmd, "w");
    if (g == NULL) {
        fprintf(stderr, "collsctl tune: --plot needs gnuplot (Debian: "
                        "gnuplot-nox)\n");
        return -1;
    }
    fprintf(g,
            "set terminal pngcairo size 900,600 noenhanced\n"
            "set output '%s'\nset logscale xy\nset key left top\n"
            "set xlabel 'bytes per rank'\nset ylabel 'us per operation'\n"
            "set title '%s, P=%d: predicted (lines) and measured "
            "(points)'\nplot ",
            o->plot, collop_name(o->op), o->P);
    for (kind = 0; kind < (o->measure ? 2 : 1); kind++)
        for (a = 0; a < nalg; a++) {
            if (pred[a][0] < 0.0)
                continue;
            fprintf(g, "%s'-' using 1:2 with %s lc %zu title '%s %s'",
                    first ? "" : ", ", kind ? "points pt 7" : "lines lw 2",
                    a + 1, t[a].name, kind ? "measured" : "predicted");
            first = 0;
        }
    fprintf(g, "\n");
    for (kind = 0; kind < (o->measure ? 2 : 1); kind++)
        for (a = 0; a < nalg; a++) {
            if (pred[a][0] < 0.0)
                continue;
            for (i = 0; i < ns; i++) {
                double v = kind ? meas[a][i] : pred[a][i];

                if (v > 0.0)
                    fprintf(g, "%zu %g\n", sizes[i], v);
            }
            fprintf(g, "e\n");
        }
    if (pclose(g) != 0) {
        fprintf(stderr, "collsctl tune: gnuplot failed (Debian package "
                        "gnuplot-nox)\n");
        return -1;
    }
    return 0;
}

static int
tune_show(colls_t *c, struct tune_opts *o)
{
    static double pred[TUNE_MAX_ALGS][TUNE_MAX_SIZES],
        meas[TUNE_MAX_ALGS][TUNE_MAX_SIZES];
    static size_t segs[TUNE_MAX_ALGS][TUNE_MAX_SIZES];
    double autot[TUNE_MAX_SIZES];
    struct plogp_params pp;
    size_t sizes[TUNE_MAX_SIZES], nalg, a, s;
    const struct alg *t = alg_table(o->op, &nalg);
    int ns = 0, i, picks_near = 0, points = 0;
    double errs[TUNE_MAX_SIZES];
    int nerr = 0;

    if (tune_current(c, &pp) < 0)
        return COLLSCTL_FAIL;
    if (o->P <= 0)
        o->P = tune_hosts_up(c);
    for (s = o->min; s <= o->max && ns < TUNE_MAX_SIZES; s *= 4) {
        sizes[ns++] = s;
        if (s == 0)
            break;
    }
    if (nalg > TUNE_MAX_ALGS)
        nalg = TUNE_MAX_ALGS;
    for (a = 0; a < nalg; a++)
        for (i = 0; i < ns; i++)
            pred[a][i] = tune_predict(o, &pp, &t[a], sizes[i], &segs[a][i]);
    if (o->measure) {
        for (a = 0; a < nalg; a++) {
            if (pred[a][0] < 0.0)
                continue;
            fprintf(stderr, "measuring %s ...\n", t[a].name);
            if (!(t[a].flags & ALG_SEGMENTED)) {
                if (tune_bench(o, t[a].name, sizes, ns, meas[a]) < 0)
                    fprintf(stderr, "collsctl tune: bench of %s failed\n",
                            t[a].name);
                continue;
            }
            /* a segmented row at the segment of its prediction, the one
               the pick would run it at (bench's default segment judged
               chain_seg by 64 KiB segments where the tuner chose 4 KiB:
               395 ms forced against 110 ms picked, 8 hosts, 10 Mbit/s) */
            for (i = 0; i < ns; i++) {
                char spec[96];

                snprintf(spec, sizeof(spec), "%s:%zu", t[a].name,
                         segs[a][i] ? segs[a][i] : (size_t)ALG_DEFAULT_SEG);
                fprintf(stderr, "  %zu B: --algo %s\n", sizes[i], spec);
                if (tune_bench(o, spec, &sizes[i], 1, &meas[a][i]) < 0)
                    fprintf(stderr,
                            "collsctl tune: bench of %s at %zu B failed\n",
                            spec, sizes[i]);
            }
        }
        fprintf(stderr, "measuring the daemons' own pick ...\n");
        if (tune_bench(o, NULL, sizes, ns, autot) < 0)
            fprintf(stderr, "collsctl tune: bench of the pick failed\n");
    }
    printf("# %s, P=%d, epoch %llu: predicted us through the daemons "
           "(2 hops + the algorithm)%s; * the pick\n",
           collop_name(o->op), o->P, (unsigned long long)pp.epoch,
           o->measure ? ", measured (forced, collsctl bench --hier "
                        "--latency) and the error |pred-meas|/meas"
                      : "");
    for (i = 0; i < ns; i++) {
        struct alg_args aa = {.op = o->op,
                              .P = o->P,
                              .size = sizes[i],
                              .dtype = COLLS_INT32,
                              .rop = COLLS_SUM};
        struct tune_choice ch;
        struct plogp v;
        double best_meas = -1.0, pick_meas = -1.0;

        plogp_view(&pp, &v);
        if (tune_choose(&aa, &v, "", &ch) != 0)
            continue;
        printf("%zu bytes:\n", sizes[i]);
        for (a = 0; a < nalg; a++) {
            if (pred[a][i] < 0.0)
                continue;
            printf("  %c %-18s", (int)a == ch.index ? '*' : ' ', t[a].name);
            if (segs[a][i])
                printf(" seg %-8zu", segs[a][i]);
            else
                printf(" %-12s", "");
            printf(" predicted %10.1f", pred[a][i]);
            if (o->measure && meas[a][i] > 0.0) {
                printf("  measured %10.1f  error %5.0f %%", meas[a][i],
                       100.0 * fabs(pred[a][i] - meas[a][i]) / meas[a][i]);
                if (best_meas < 0.0 || meas[a][i] < best_meas)
                    best_meas = meas[a][i];
                if ((int)a == ch.index) {
                    pick_meas = meas[a][i];
                    errs[nerr++] = fabs(pred[a][i] - meas[a][i]) / meas[a][i];
                }
            }
            printf("\n");
        }
        if (o->measure && autot[i] > 0.0)
            printf("    the daemons' pick, run unforced: %.1f us\n", autot[i]);
        if (o->measure && pick_meas > 0.0 && best_meas > 0.0) {
            points++;
            picks_near += pick_meas <= 1.1 * best_meas;
            printf("    pick / fastest measured: %.2f\n",
                   pick_meas / best_meas);
        }
    }
    if (o->measure && points > 0)
        printf("# the pick within 1.1x of the fastest at %d of %d sizes; "
               "median error of the pick's prediction %.0f %%\n",
               picks_near, points,
               100.0 * (nerr ? collsctl_median(errs, nerr) : 0.0));
    if (o->plot != NULL && tune_plot(o, t, nalg, sizes, ns, pred, meas) < 0)
        return COLLSCTL_FAIL;
    return COLLSCTL_OK;
}

/* ---- the command ---- */

static int
tune_exec(int argc, char **argv)
{
    struct tune_opts o = {.min = 4, .max = 1 << 20, .ladder_max = 4 << 20};
    colls_t *c;
    int opt, rc;
    long v;

    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, &cmd_tune)) != -1) {
        switch (opt) {
        case 'p':
            o.params = 1;
            break;
        case 'w':
            o.show = 1;
            if ((o.op = collsctl_parse_op(&cmd_tune, optarg)) < 0)
                return COLLSCTL_USAGE;
            break;
        case 'm':
            o.measure = 1;
            break;
        case 'n':
            if (collsctl_opt_long(&cmd_tune, opt, optarg, 1, 4096, &v) != 0)
                return COLLSCTL_USAGE;
            o.P = (int)v;
            break;
        case 's': {
            const char *colon = strchr(optarg, ':');

            if (colon == NULL ||
                collsctl_parse_size(optarg, colon, 1ull << 30, &o.min) < 0 ||
                collsctl_parse_size(colon + 1, NULL, 1ull << 30, &o.max) < 0 ||
                o.min == 0 || o.min > o.max)
                return collsctl_badopt(&cmd_tune, opt, optarg,
                                       "A:B, 1 <= A <= B <= 1G");
            break;
        }
        case 'o':
            o.plot = optarg;
            break;
        case 'M':
            if (collsctl_parse_size(optarg, NULL, PLOGP_MAX_BYTES,
                                    &o.ladder_max) < 0 ||
                o.ladder_max < 1024)
                return collsctl_badopt(&cmd_tune, opt, optarg, "1K .. 16M");
            break;
        case 'S':
            o.sockets = optarg;
            break;
        default:
            return collsctl_usage(&cmd_tune);
        }
    }
    if (optind != argc || (o.params && o.show) ||
        ((o.params || o.show) && o.ladder_max != (size_t)4 << 20) ||
        ((o.measure || o.plot || o.P || o.sockets) && !o.show))
        return collsctl_usage(&cmd_tune);
    if (collsctl_attach(&c) < 0)
        return COLLSCTL_FAIL;
    colls_set_timeout(c, TUNE_TIMEOUT_MS);
    if (o.show) {
        rc = tune_show(c, &o);
    } else if (o.params) {
        colls_plogp_t m, *peers = NULL;
        int n = 0;

        rc = colls_plogp_get(c, &m, &peers, &n);
        if (rc < 0) {
            collsctl_perror(c, "tune", rc);
            rc = COLLSCTL_FAIL;
        } else {
            tune_print_params(&m, peers, n);
            rc = COLLSCTL_OK;
        }
        colls_free(peers);
    } else {
        rc = tune_measure_all(c, o.ladder_max);
    }
    colls_detach(c);
    return rc;
}

static const struct collsctl_opt tune_opts_table[] = {
    {"params", 'p', 0, NULL,
     "print the parameters in force and every peer's row; measure nothing"},
    {"show", 'w', 0, "OP",
     "per size, every algorithm's predicted time and the pick"},
    {"measure", 'm', 0, NULL,
     "with --show: also run every algorithm (forced, bench --hier "
     "--latency) and print measured times and the prediction's error"},
    {"procs", 'n', COLLSCTL_OPT_SHORT, "P",
     "with --show: ranks (default: the hosts up; --measure forks P members)"},
    {"sizes", 's', 0, "A:B",
     "with --show: bytes per rank from A to B by powers of 4 (default "
     "4:1M)"},
    {"max", 'M', 0, "SIZE",
     "measuring: the thorough ladder up to SIZE bytes only (default 4M; "
     "at least 1K), for slow links"},
    {"plot", 'o', 0, "FILE.png",
     "with --show: draw the curves with gnuplot (package gnuplot-nox)"},
    {"sockets", 'S', 0, "A,B,...",
     "with --measure: the members' daemons' sockets, as bench takes them"},
    {NULL, 0, 0, NULL, NULL},
};

const struct collsctl_cmd cmd_tune = {
    .name = "tune",
    .args = "",
    .help = "measure the pLogP parameters; show predicted (and measured) "
            "algorithm times",
    .detail = "Without options the local daemon measures every peer that is "
              "up (echoes and trains of 1 B .. 4 MiB), then every daemon at "
              "once (trains to the next, 1 KiB up), this task measures its "
              "hop to the daemon, and the daemon takes the summary in a "
              "new epoch: groups formed from then on choose every algorithm "
              "and segment size by predicted cost.  Measuring needs admin "
              "rights.  --params prints what is in force; --show OP the "
              "predictions (docs/collectives.md).",
    .opts = tune_opts_table,
    .needs_daemon = 1,
    .exec = tune_exec,
};
