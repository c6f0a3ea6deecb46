/*
 * cmd_algorithms.c -- `collsctl algorithms [OP]`: every algorithm of every
 * collective operation (or of OP), with its pLogP cost formula, its
 * busiest port, its constraints, and the rows of the default rules table
 * that pick it.
 *
 * Read straight from the daemon's tables, linked in (daemon/alg/ rows,
 * daemon/tune.c's tune_default_rules[]), so the list is the one the
 * daemon chooses from; nothing here attaches.  The names are what
 * COLLS_ALG_<OP>, colls_group_set_alg and `collsctl bench --algo` take.
 */
#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "colls.h"
#include "daemon/tune.h"
#include "proto/collop.h"
#include "tools/collsctl.h"

/* bytes as "512 KiB", "4 MiB" or "100" into buf. */
static const char *
algs_bytes(size_t v, char *buf, size_t cap)
{
    if (v >= 1024 * 1024 && v % (1024 * 1024) == 0)
        snprintf(buf, cap, "%zu MiB", v / (1024 * 1024));
    else if (v >= 1024 && v % 1024 == 0)
        snprintf(buf, cap, "%zu KiB", v / 1024);
    else
        snprintf(buf, cap, "%zu B", v);
    return buf;
}

/* The conditions of rule r: "P <= 15, n <= 512 KiB" into buf. */
static void
algs_rule_text(const struct tune_rule *r, char *buf, size_t cap)
{
    char p[48], a[24], b[24], n[64];

    if (r->pmin <= 1 && r->pmax == INT_MAX)
        snprintf(p, sizeof(p), "any P");
    else if (r->pmax == INT_MAX)
        snprintf(p, sizeof(p), "P >= %d", r->pmin);
    else if (r->pmin <= 1)
        snprintf(p, sizeof(p), "P <= %d", r->pmax);
    else
        snprintf(p, sizeof(p), "%d <= P <= %d", r->pmin, r->pmax);
    if (r->smin == 0 && r->smax == SIZE_MAX)
        snprintf(n, sizeof(n), "any n");
    else if (r->smax == SIZE_MAX)
        snprintf(n, sizeof(n), "n > %s", algs_bytes(r->smin - 1, a, sizeof(a)));
    else if (r->smin == 0)
        snprintf(n, sizeof(n), "n <= %s", algs_bytes(r->smax, b, sizeof(b)));
    else
        snprintf(n, sizeof(n), "%s <= n <= %s",
                 algs_bytes(r->smin, a, sizeof(a)),
                 algs_bytes(r->smax, b, sizeof(b)));
    if (r->seg != 0)
        snprintf(buf, cap, "%s, %s, segments of %s", p, n,
                 algs_bytes(r->seg, a, sizeof(a)));
    else
        snprintf(buf, cap, "%s, %s", p, n);
}

/* The constraints of row a for op, as words ("" when none). */
static void
algs_flags(const struct alg *a, char *buf, size_t cap)
{
    static const struct {
        unsigned flag;
        const char *text;
    } names[] = {
        {ALG_POW2, "P a power of two"},
        {ALG_COMMUTATIVE, "commutative operators"},
        {ALG_SEGMENTED, "segmented (NAME:SEG sets the segment)"},
        {ALG_RANK_ORDER, "combines in rank order"},
        {ALG_SAME_RESULT, "bitwise the same result on every rank"},
        {ALG_ALLPAIRS, "every rank sends at once: costed with g under load"},
        {ALG_OVERLAP, "pairs transfer at once from 4 ranks on: costed there "
                      "with g + (gl - g) (c - 1) / (P - 1)"},
    };
    size_t i, o = 0;

    _Static_assert(ALG_OVERLAP_MIN_P == 4, "ALG_OVERLAP's text says 4 ranks");

    buf[0] = '\0';
    for (i = 0; i < sizeof(names) / sizeof(names[0]) && o < cap; i++)
        if (a->flags & names[i].flag)
            o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? "; " : "",
                                  names[i].text);
    /* ALG_OVERLAP is the last of names: its c (struct alg.senders) */
    if ((a->flags & ALG_OVERLAP) && o < cap)
        snprintf(buf + o, cap - o, ", c = %s senders at once",
                 a->senders == NULL                ? "P"
                 : a->senders == alg_senders_chain ? "P-1"
                                                   : "floor(P/2)");
}

/* Prints op's algorithms: formula, constraints, the rules that pick it. */
static void
algs_print_op(int op)
{
    const struct collop *co = collop_get(op);
    size_t n, i, j, len;
    const struct alg *t = alg_table(op, &n);
    char env[64] = "COLLS_ALG_", text[256];
    int printed = 0;

    len = strlen(env);
    for (j = 0; co->name[j] != '\0' && len + 1 < sizeof(env); j++)
        env[len++] = (char)toupper((unsigned char)co->name[j]);
    env[len] = '\0';
    printf("%s (force one with %s=NAME[:SEG])\n", co->name, env);
    for (i = 0; i < n; i++) {
        const struct alg *a = &t[i];
        int ruled = 0;

        if ((a->flags & ALG_NO_V) && co->vector)
            continue;
        printf("  %-18s %s\n", a->name,
               a->formula != NULL ? a->formula : "(no formula)");
        if (a->port_formula != NULL)
            printf("  %-18s busiest port: %s\n", "", a->port_formula);
        algs_flags(a, text, sizeof(text));
        if (text[0] != '\0')
            printf("  %-18s traits: %s\n", "", text);
        for (j = 0; j < tune_default_nrules; j++) {
            const struct tune_rule *r = &tune_default_rules[j];

            if (r->op != co->base || strcmp(r->alg, a->name) != 0)
                continue;
            algs_rule_text(r, text, sizeof(text));
            printf("  %-18s rules row %zu: %s\n", "", j + 1, text);
            ruled = 1;
        }
        if (!ruled)
            printf("  %-18s rules: none; runs when forced\n", "");
        printed++;
    }
    if (printed == 0)
        printf("  (none)\n");
}

int
collsctl_check_alg(const struct collsctl_cmd *cmd, int op, const char *spec)
{
    const struct alg *a = NULL;
    size_t seg, n, i;
    const struct alg *t = alg_table(op, &n);
    char name[64];

    if (tune_parse_force(spec, name, sizeof(name), &seg) != 0) {
        fprintf(stderr,
                "collsctl %s: bad algorithm '%s': NAME or NAME:SEG (SEG "
                "bytes, more than 0, k/m suffixes)\n",
                cmd->name, spec);
        return -1;
    }
    a = alg_find(op, name, NULL);
    if (a != NULL && !((a->flags & ALG_NO_V) && collop_is_vector(op)))
        return 0;
    fprintf(stderr,
            "collsctl %s: unknown algorithm %s for %s (one of:", cmd->name,
            name, collop_name(op));
    for (i = 0; i < n; i++)
        if (!((t[i].flags & ALG_NO_V) && collop_is_vector(op)))
            fprintf(stderr, " %s", t[i].name);
    fprintf(stderr, ")\n");
    return -1;
}

static int
algorithms_exec(int argc, char **argv)
{
    int opt, op;

    optind = 1;
    while ((opt = collsctl_getopt(argc, argv, &cmd_algorithms)) != -1)
        return collsctl_usage(&cmd_algorithms);
    if (optind + 1 < argc)
        return collsctl_usage(&cmd_algorithms);
    if (optind < argc) {
        op = collsctl_parse_op(&cmd_algorithms, argv[optind]);
        if (op < 0)
            return COLLSCTL_USAGE;
        algs_print_op(op);
        return COLLSCTL_OK;
    }
    printf("Costs in microseconds, pLogP: P ranks, n bytes per rank, L the "
           "latency (while\nevery daemon is busy), g(m) what a message of "
           "m bytes costs on its own beyond L,\ngap(m) each further one "
           "its sender sends back to back, gamma the reduction\ntime per "
           "byte; lgP = ceil(log2 P), p2 the largest power of two <= P, s "
           "the\nsegment, k = ceil(n/s), [c] 1 if c holds.\nThe rules "
           "rows are tried in order; the first whose algorithm can run "
           "wins.\n");
    for (op = 0; op < COLLS_COLL_MAX; op++) {
        printf("\n");
        algs_print_op(op);
    }
    return COLLSCTL_OK;
}

const struct collsctl_cmd cmd_algorithms = {
    .name = "algorithms",
    .args = "[OP]",
    .help = "every algorithm of every operation (or of OP): cost formula, "
            "where the rules pick it",
    .detail = "OP is an operation as `collsctl bench` takes it (barrier, "
              "bcast, ..., exscan).  Each algorithm is listed with its pLogP "
              "cost formula, its busiest port (the gaps of what its busiest "
              "rank sends or receives: the daemons predict the larger of "
              "the two, the port less the rest a barrier before an "
              "operation that is not rooted gives a shaper's bucket), what "
              "it needs (a power of two, commutative "
              "operators) and the rows of the daemon's default rules table "
              "that choose it (by P and n, the bytes per rank; the first row "
              "whose algorithm can run wins); the others run only when "
              "forced (COLLS_ALG_<OP>, colls_group_set_alg, bench --algo).  "
              "Runs without a daemon.",
    .operands = COLLSCTL_OPS,
    .needs_daemon = 0,
    .exec = algorithms_exec,
};
