/*
 * tune.c -- algorithm selection: forced name, pLogP cost, or rules table.
 *
 * The rules are data: rows matched top to bottom, first usable match wins
 * (a row whose algorithm cannot run, e.g. bruck for alltoallv, is
 * skipped).  They encode the design's thresholds: butterfly (or
 * its tree analogue, binomial) for very small data, tournament / halving
 * for medium, ring or pipelines for large.  Sizes are bytes per rank.
 *
 * Owns the rules table.  May call: daemon/alg/ (rows, costs),
 * daemon/plogp.h (its constants),
 * proto/collop.h, proto/size.h; called by daemon/collplan.c.
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "daemon/alg/topo.h"
#include "daemon/plogp.h"
#include "daemon/tune.h"
#include "proto/collop.h"
#include "proto/size.h"

#define K        ((size_t)1024)
#define ANY_P    1, INT_MAX
#define UPTO(x)  0, (x)
#define ABOVE(x) (x) + 1, SIZE_MAX
#define ALL      0, SIZE_MAX

const struct tune_rule tune_default_rules[] = {
    {SCHED_OP_BARRIER, ANY_P, ALL, "dissemination", 0},

    {SCHED_OP_BCAST, 1, 3, UPTO(512 * K), "binomial", 0},
    {SCHED_OP_BCAST, ANY_P, UPTO(4 * K), "binomial", 0},
    /* Below 16 ranks the per-message cost of the daemons outweighs the
       bandwidth scatter + allgather saves: measured on 4 hosts x 1 task,
       16 KiB .. 1 MiB, scatter_allgather was 1.3-2.7x slower than
       binomial_seg (1 MiB: 6.4-7.2 ms against 5.1-5.5 ms). */
    {SCHED_OP_BCAST, 1, 15, UPTO(512 * K), "binomial_seg", 64 * K},
    {SCHED_OP_BCAST, ANY_P, UPTO(512 * K), "scatter_allgather", 0},
    {SCHED_OP_BCAST, ANY_P, ALL, "chain_seg", 64 * K},

    {SCHED_OP_REDUCE, ANY_P, UPTO(4 * K), "binomial", 0},
    {SCHED_OP_REDUCE, ANY_P, UPTO(512 * K), "rsag", 0},
    {SCHED_OP_REDUCE, ANY_P, ALL, "chain_seg", 64 * K},

    {SCHED_OP_ALLREDUCE, ANY_P, UPTO(4 * K), "butterfly", 0},
    {SCHED_OP_ALLREDUCE, ANY_P, UPTO(256 * K), "tournament", 0},
    {SCHED_OP_ALLREDUCE, ANY_P, ALL, "ring", 0},

    /* No tournament for medium allgather: gather + bcast funnels P
       blocks through the root.  coll-bench, 1 KiB .. 64 KiB: butterfly
       took 0.6-0.8x tournament's time on 4 hosts x 1 task unshaped,
       0.24-0.48x at 100 Mbit/s, 0.64-0.88x on 2 hosts x 4 tasks. */
    {SCHED_OP_ALLGATHER, ANY_P, UPTO(64 * K), "butterfly", 0},
    {SCHED_OP_ALLGATHER, ANY_P, ALL, "ring", 0},

    {SCHED_OP_GATHER, ANY_P, UPTO(64 * K), "binomial", 0},
    {SCHED_OP_GATHER, ANY_P, ALL, "flat", 0},
    {SCHED_OP_SCATTER, ANY_P, UPTO(64 * K), "binomial", 0},
    {SCHED_OP_SCATTER, ANY_P, ALL, "flat", 0},

    {SCHED_OP_ALLTOALL, ANY_P, UPTO(256), "bruck", 0},
    {SCHED_OP_ALLTOALL, ANY_P, ALL, "pairwise", 0},

    {SCHED_OP_REDUCE_SCATTER, ANY_P, UPTO(64 * K), "halving", 0},
    {SCHED_OP_REDUCE_SCATTER, ANY_P, ALL, "ring", 0},

    {SCHED_OP_SCAN, 1, 2, ALL, "linear", 0},
    {SCHED_OP_SCAN, ANY_P, ALL, "recursive_doubling", 0},
    {SCHED_OP_EXSCAN, 1, 2, ALL, "linear", 0},
    {SCHED_OP_EXSCAN, ANY_P, ALL, "recursive_doubling", 0},
};
const size_t tune_default_nrules =
    sizeof(tune_default_rules) / sizeof(tune_default_rules[0]);

/* Ladder points tune_alg_cost scales under load (PLOGP_MAX_SIZES). */
#define TUNE_MAX_POINTS 16

/* Segment sizes tried for segmented algorithms by the cost model. */
static const size_t tune_segs[] = {4 * K, 16 * K, 64 * K, 256 * K, 1024 * K};

/* Bytes per rank the rules and costs look at (mean block for v). */
static size_t
tune_size(const struct alg_args *a)
{
    size_t t = 0;
    int r;

    if (a->op == SCHED_OP_ALLTOALLV && a->scounts != NULL) {
        for (r = 0; r < a->P; r++)
            t += a->scounts[r];
        return t / (size_t)a->P;
    }
    if (a->counts != NULL) {
        for (r = 0; r < a->P; r++)
            t += a->counts[r];
        return t / (size_t)a->P;
    }
    return a->size;
}

/* Rules: first row matching (op, P, size) whose algorithm is usable. */
static int
tune_by_rules(const struct alg_args *a, struct tune_choice *c)
{
    int op = collop_get(a->op)->base, idx;
    size_t i, n = tune_size(a), cnt;
    const struct alg *t;

    for (i = 0; i < tune_default_nrules; i++) {
        const struct tune_rule *r = &tune_default_rules[i];
        const struct alg *alg;

        if (r->op != op || a->P < r->pmin || a->P > r->pmax || n < r->smin ||
            n > r->smax)
            continue;
        alg = alg_find(a->op, r->alg, &idx);
        if (alg == NULL || !alg_usable(alg, a))
            continue;
        c->alg = alg;
        c->index = idx;
        c->seg = (alg->flags & ALG_SEGMENTED) ? r->seg : 0;
        c->source = TUNE_RULES;
        return 0;
    }
    /* no rule: the first usable algorithm of the table */
    t = alg_table(a->op, &cnt);
    for (i = 0; i < cnt; i++)
        if (alg_usable(&t[i], a)) {
            c->alg = &t[i];
            c->index = (int)i;
            c->seg = (t[i].flags & ALG_SEGMENTED) ? ALG_DEFAULT_SEG : 0;
            c->source = TUNE_RULES;
            return 0;
        }
    return COLLS_EINVAL;
}

double
tune_port_rest(const struct alg_args *a, const struct plogp *p)
{
    double bucket = 0.0, round, rest;
    size_t j;

    if (p->gap == NULL || collop_is_rooted(a->op))
        return 0.0;
    /* a shaper's bucket lets an isolated message through far faster
       than a train's gap; on 2 shared CPUs without one, gap(4 MiB)
       came out 20 % above g(4 MiB) (635 us), which is noise */
    for (j = 0; j < p->n; j++)
        if (p->gap[j] >= PLOGP_BUCKET_FACTOR * p->g[j] &&
            p->gap[j] - p->g[j] > bucket)
            bucket = p->gap[j] - p->g[j];
    /* a round of the barrier less what its own message holds the port */
    round = (p->Ll > p->L ? p->Ll : p->L) + topo_plogp_g(p, 0) -
            topo_plogp_rate(p, 0);
    if (round <= 0.0)
        return 0.0;
    rest = topo_ceil_log2(a->P) * round;
    return rest < bucket ? rest : bucket;
}

double
tune_alg_cost(const struct alg_args *a, const struct plogp *p,
              const struct alg *alg, size_t *seg)
{
    size_t j, n = tune_size(a);
    double best = -1.0, rest = tune_port_rest(a, p);
    struct plogp loaded;
    double gapl[TUNE_MAX_POINTS], gls[TUNE_MAX_POINTS];
    double osl[TUNE_MAX_POINTS], orl[TUNE_MAX_POINTS];

    *seg = 0;
    /* every member takes part in a collective at once: each step's
       latency is the one measured while every daemon echoes (Ll).  On 4
       emulated hosts on 2 CPUs (tune-bench's 4:none and 4:100mbit) the
       pick was within 1.1x of the fastest row at 60 and 60 % of the
       points with L, at 80 and 70 % with Ll; on a cluster Ll ~ L */
    loaded = *p;
    if (p->Ll > p->L)
        loaded.L = p->Ll;
    if (((alg->flags & ALG_ALLPAIRS) ||
         ((alg->flags & ALG_OVERLAP) && a->P >= ALG_OVERLAP_MIN_P)) &&
        p->gl != NULL) {
        /* gl was measured with all P daemons sending at once: a row
           whose busiest step has c senders pays (c - 1) / (P - 1) of
           gl's excess over g (struct alg.senders).  On 4 emulated hosts
           on 2 CPUs a binary bcast of 1 MiB (2 senders at once), costed
           with the whole of gl, was predicted at 4.2x what it took */
        int c = alg->senders != NULL ? alg->senders(a->P) : a->P;

        loaded.g = p->gl;
        if (c < a->P && p->n <= TUNE_MAX_POINTS) {
            double f = c > 1 ? (double)(c - 1) / (a->P - 1) : 0.0;

            for (j = 0; j < p->n; j++)
                gls[j] = p->gl[j] > p->g[j] ? p->g[j] + f * (p->gl[j] - p->g[j])
                                            : p->gl[j];
            loaded.g = gls;
        }
        /* the gap grows under load as g does: gap gl / g (behind a
           shaper's bucket g < gap, and gl alone would be the burst's) */
        loaded.gap = NULL; /* gap = g = gl */
        if (p->gap != NULL && p->n <= TUNE_MAX_POINTS) {
            for (j = 0; j < p->n; j++)
                gapl[j] = p->g[j] > 0.0 && loaded.g[j] > p->g[j]
                              ? p->gap[j] * loaded.g[j] / p->g[j]
                              : p->gap[j];
            loaded.gap = gapl;
        }
        /* and so do the overheads: the CPU a relay needs is shared as
           the links are (emulated hosts share their CPUs) */
        if (p->o_s != NULL && p->o_r != NULL && p->n <= TUNE_MAX_POINTS) {
            for (j = 0; j < p->n; j++) {
                double f = p->g[j] > 0.0 && loaded.g[j] > p->g[j]
                               ? loaded.g[j] / p->g[j]
                               : 1.0;

                osl[j] = p->o_s[j] * f;
                orl[j] = p->o_r[j] * f;
            }
            loaded.o_s = osl;
            loaded.o_r = orl;
        }
    }
    p = &loaded;
    for (j = 0; j < sizeof(tune_segs) / sizeof(tune_segs[0]); j++) {
        size_t s = (alg->flags & ALG_SEGMENTED) ? tune_segs[j] : 0;
        double cost = alg->cost(p, a->P, n, s);
        /* operations that follow each other cannot beat the busiest
           port, less the rest a barrier before the operation gives a
           shaper's bucket (docs/collectives.md, "The busiest port") */
        double port = alg->port != NULL ? alg->port(p, a->P, n, s) : 0.0;

        if (port - rest > cost)
            cost = port - rest;

        if (best < 0.0 || cost < best) {
            best = cost;
            *seg = s;
        }
        /* one evaluation for unsegmented ones, and no segment larger
           than the data matters */
        if (!(alg->flags & ALG_SEGMENTED) || tune_segs[j] >= n)
            break;
    }
    return best;
}

/* Cost: the cheapest usable (algorithm, segment); ties keep the first. */
static int
tune_by_cost(const struct alg_args *a, const struct plogp *p,
             struct tune_choice *c)
{
    size_t i, cnt, seg;
    const struct alg *t = alg_table(a->op, &cnt);
    double best = -1.0;

    for (i = 0; i < cnt; i++) {
        double cost;

        if (!alg_usable(&t[i], a))
            continue;
        cost = tune_alg_cost(a, p, &t[i], &seg);
        if (best < 0.0 || cost < best) {
            best = cost;
            c->alg = &t[i];
            c->index = (int)i;
            c->seg = seg;
        }
    }
    if (best < 0.0)
        return COLLS_EINVAL;
    c->predicted = best;
    c->source = TUNE_COST;
    return 0;
}

int
tune_parse_force(const char *spec, char *name, size_t cap, size_t *seg)
{
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);

    *seg = 0;
    if (len == 0 || len >= cap)
        return COLLS_EINVAL;
    memcpy(name, spec, len);
    name[len] = '\0';
    if (colon != NULL) {
        uint64_t v;

        if (size_parse(colon + 1, NULL, 1ull << 32, &v) != 0 || v == 0)
            return COLLS_EINVAL;
        *seg = (size_t)v;
    }
    return 0;
}

int
tune_check_force(int op, const char *spec, char *why, size_t cap)
{
    const struct alg *t;
    char name[64];
    size_t seg, n, i, o;
    int w;

    if (spec == NULL || spec[0] == '\0')
        return 0;
    if (tune_parse_force(spec, name, sizeof(name), &seg) == 0 &&
        alg_find(op, name, NULL) != NULL)
        return 0;
    w = snprintf(why, cap, "unknown algorithm \"%s\" for %s (one of:", spec,
                 collop_name(op));
    o = w > 0 ? (size_t)w : 0; /* cap or more: cut, nothing to add */
    t = alg_table(op, &n);
    for (i = 0; i < n && o < cap; i++) {
        w = snprintf(why + o, cap - o, "%s %s", i ? "," : "", t[i].name);
        o += w > 0 ? (size_t)w : 0;
    }
    if (o < cap)
        snprintf(why + o, cap - o, ")");
    return COLLS_EINVAL;
}

const char *
tune_env_force(int op)
{
    char var[64] = "COLLS_ALG_";
    const char *name = collop_name(op);
    size_t i, o = strlen(var);

    for (i = 0; name[i] != '\0' && o + 1 < sizeof(var); i++)
        var[o++] = (char)toupper((unsigned char)name[i]);
    var[o] = '\0';
    return getenv(var);
}

int
tune_choose(const struct alg_args *a, const struct plogp *p, const char *force,
            struct tune_choice *out)
{
    char name[64];
    size_t seg;
    int rc, idx, fallback = TUNE_FALLBACK_NONE;

    memset(out, 0, sizeof(*out));
    out->predicted = -1.0;
    if (a->P < 1 || a->op < 0 || a->op >= SCHED_OP_MAX)
        return COLLS_EINVAL;
    if (force == NULL)
        force = tune_env_force(a->op);
    if (force != NULL && force[0] != '\0') {
        const struct alg *alg = NULL;

        if (tune_parse_force(force, name, sizeof(name), &seg) == 0)
            alg = alg_find(a->op, name, &idx);
        if (alg == NULL) {
            fallback = TUNE_FALLBACK_UNKNOWN;
        } else if (!alg_usable(alg, a)) {
            fallback = TUNE_FALLBACK_UNUSABLE;
        } else {
            out->alg = alg;
            out->index = idx;
            out->seg = (alg->flags & ALG_SEGMENTED)
                           ? (seg ? seg : ALG_DEFAULT_SEG)
                           : 0;
            out->source = TUNE_FORCED;
            if (p != NULL)
                out->predicted = alg->cost(p, a->P, tune_size(a), out->seg);
            return 0;
        }
    }
    rc = p != NULL ? tune_by_cost(a, p, out) : tune_by_rules(a, out);
    out->fallback = fallback;
    return rc;
}

int
tune_print(FILE *f, const struct plogp *p, const int *Ps, size_t nP,
           const size_t *sizes, size_t nsizes)
{
    static const int ops[] = {
        SCHED_OP_BARRIER,   SCHED_OP_BCAST,    SCHED_OP_REDUCE,
        SCHED_OP_ALLREDUCE, SCHED_OP_GATHER,   SCHED_OP_SCATTER,
        SCHED_OP_ALLGATHER, SCHED_OP_ALLTOALL, SCHED_OP_REDUCE_SCATTER,
        SCHED_OP_SCAN,      SCHED_OP_EXSCAN};
    size_t o, i, j;
    int lines = 0;

    if (fprintf(f, "%-15s %5s %10s  %-24s %-24s %12s\n", "operation", "P",
                "bytes", "rules", "cost", "predicted_us") < 0)
        return COLLS_EIO;
    lines++;
    for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
        for (i = 0; i < nP; i++)
            for (j = 0; j < nsizes; j++) {
                struct alg_args a = {.op = ops[o],
                                     .P = Ps[i],
                                     .size = sizes[j],
                                     .dtype = COLLS_DOUBLE,
                                     .rop = COLLS_SUM};
                struct tune_choice rc, cc;
                char rbuf[48], cbuf[48] = "-";
                double pred = -1.0;

                if (tune_choose(&a, NULL, "", &rc) != 0)
                    continue;
                if (rc.seg)
                    snprintf(rbuf, sizeof(rbuf), "%s:%zu", rc.alg->name,
                             rc.seg);
                else
                    snprintf(rbuf, sizeof(rbuf), "%s", rc.alg->name);
                if (p != NULL && tune_choose(&a, p, "", &cc) == 0) {
                    if (cc.seg)
                        snprintf(cbuf, sizeof(cbuf), "%s:%zu", cc.alg->name,
                                 cc.seg);
                    else
                        snprintf(cbuf, sizeof(cbuf), "%s", cc.alg->name);
                    pred = cc.predicted;
                }
                if (fprintf(f, "%-15s %5d %10zu  %-24s %-24s %12.1f\n",
                            collop_name(ops[o]), Ps[i], sizes[j], rbuf, cbuf,
                            pred) < 0)
                    return COLLS_EIO;
                lines++;
            }
    return lines;
}
